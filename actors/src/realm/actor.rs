//! [`RealmActor`]: the single writer of one organization.
//!
//! The actor is a thin shell around [`RealmState`]: it adds ordering (its mailbox),
//! persistence (each handler commits before it replies) and fan-out (events go to the
//! listeners of the users allowed to see them, after the commit). Handlers never panic;
//! if the actor dies anyway, the registry starts a fresh one from the database.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use actix::prelude::*;
use arc_swap::ArcSwap;

use super::model::{Role, User};
use super::state::RealmState;
use super::{commit, Change};
use crate::auth::AuthSnapshot;
use crate::clock;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Outgoing, PushEvent};
use crate::ids::UserId;
use crate::presence::audience::presence_enabled;
use crate::presence::{PresenceEnabledChanged, PresenceState};
use crate::queue::actor::{CloseQueue, GoneReason, QueueGone};
use crate::queue::spec::check_narrow_for_events;
use crate::queue::{QueueActor, QueueEntry, QueueIndex, QueueSpec, SharedQueue};
use crate::reader::{HistoryRead, Read, Readers};
use crate::store::Store;

/// Messages a realm actor queues before senders have to wait (the registry creates its
/// mailbox with this bound). Within it a message is queued the moment it is sent, so
/// arrival order is send order.
pub const MAILBOX_CAPACITY: usize = 1024;

/// Identifies a registered listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(pub u64);

/// Registers a listener (an event queue) for the events `user_id` may receive.
#[derive(Message)]
#[rtype(result = "ListenerId")]
pub struct AddListener {
    pub user_id: UserId,
    pub recipient: Recipient<PushEvent>,
}

/// Removes a listener; unknown ids are ignored.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct RemoveListener(pub ListenerId);

/// Stops the actor (the registry starts a fresh one from the database on next use).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopRealm;

/// Saves every queue of the realm for a restart and stops them; replies with how many.
#[derive(Message, Debug)]
#[rtype(result = "usize")]
pub struct SaveQueues;

/// The actor owning one organization's state.
pub struct RealmActor {
    pub(super) state: RealmState,
    pub(super) store: Store,
    pub(super) config: Arc<ServerConfig>,
    /// Published after every committed change that affects authentication.
    pub(super) auth: Arc<ArcSwap<AuthSnapshot>>,
    /// The state as of the last commit, published for the history readers.
    published: Arc<ArcSwap<RealmState>>,
    pub(super) listeners: HashMap<UserId, Vec<Listener>>,
    /// The listeners registered for `all_public_streams`, apart (every send asks for them).
    public_listeners: Vec<(UserId, Recipient<PushEvent>)>,
    next_listener: u64,
    /// Live event queues by id, shared with the HTTP workers.
    pub(super) queues: Arc<QueueIndex>,
    /// The history readers (shared by every organization).
    readers: Readers,
    /// The presence actor's published rows, for `POST /register`.
    pub(super) presence: Arc<ArcSwap<PresenceState>>,
    /// The presence actor, told when a user's `presence_enabled` changes.
    presence_actor: Option<Recipient<PresenceEnabledChanged>>,
    /// Changes waiting for the group commit at the end of the current run of the mailbox
    /// (`group_commit.rs`), in arrival order.
    pub(super) pending: Vec<Box<dyn PendingChange + Send>>,
    /// Group commits and the changes they carried, for the log.
    pub(super) groups: GroupStats,
    /// The timer armed for the earliest due scheduled message or reminder, with its due
    /// time (see `realm::scheduled::delivery`).
    pub(super) scheduler: Option<(i64, SpawnHandle)>,
    /// A retention run is under way (the timer skips its next turn until it ends).
    pub(super) retention_running: bool,
    /// Queues that took events and whose waiting polls are not answered yet (`fan_out.rs`).
    pub(super) to_wake: Vec<Arc<SharedQueue>>,
    /// When each bot's owner was last told of a message to a missing or empty channel
    /// (Unix seconds; Zulip's `last_reminder`, kept in memory: `notices/bot_alerts.rs`).
    pub(super) bot_alerts: HashMap<UserId, i64>,
}

/// A change that waits for a group commit: planned when the group is written (against the
/// state as the changes before it in the group left it), written inside the group's
/// transaction, applied, and answered after the commit.
pub(super) trait PendingChange {
    /// Plans, writes (in `tx`, inside a savepoint of its own if `savepoint`) and applies
    /// the change: its events, or why not.
    fn stage(
        &mut self,
        actor: &mut RealmActor,
        tx: &rusqlite::Transaction<'_>,
        savepoint: bool,
    ) -> Result<Staged, NotStaged>;

    /// Runs once the group is committed and its events are out, if this change was staged.
    fn after_commit(&mut self, actor: &mut RealmActor);

    /// Answers the request: with the output kept by [`PendingChange::stage`], or `error`.
    fn finish(self: Box<Self>, error: Option<ApiError>);
}

/// Why a change of a group was not staged.
pub(super) enum NotStaged {
    /// Refused with nothing written (by its plan, or by its write inside its savepoint).
    Refused(ApiError),
    /// Its write failed without a savepoint: what it wrote is still in the transaction.
    WriteFailed(ApiError),
}

/// A change of a group, applied but not yet committed.
pub(super) struct Staged {
    pub events: Vec<Outgoing>,
    pub auth: bool,
    pub closed: Vec<UserId>,
}

/// Counters of group commits.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct GroupStats {
    pub commits: u64,
    pub changes: u64,
}

/// Where a user's events go: a client queue, or any other recipient (tests).
pub(super) struct Listener {
    id: ListenerId,
    pub(super) recipient: Recipient<PushEvent>,
    /// Set for event queues: events go straight into their shared state.
    pub(super) queue: Option<QueueEntry>,
}

impl RealmActor {
    /// An actor for a loaded state; `auth` is the slot HTTP workers read, already holding
    /// the snapshot of `state`; `presence` is the organization's presence actor's published
    /// state.
    #[allow(clippy::too_many_arguments, reason = "the registry hands over every shared slot of the organization")]
    pub fn new(
        state: RealmState,
        store: Store,
        config: Arc<ServerConfig>,
        auth: Arc<ArcSwap<AuthSnapshot>>,
        published: Arc<ArcSwap<RealmState>>,
        queues: Arc<QueueIndex>,
        readers: Readers,
        presence: Arc<ArcSwap<PresenceState>>,
        presence_actor: Option<Recipient<PresenceEnabledChanged>>,
    ) -> Self {
        RealmActor {
            state,
            store,
            config,
            auth,
            published,
            listeners: HashMap::new(),
            public_listeners: Vec::new(),
            next_listener: 0,
            queues,
            readers,
            presence,
            presence_actor,
            scheduler: None,
            retention_running: false,
            pending: Vec::new(),
            groups: GroupStats::default(),
            to_wake: Vec::new(),
            bot_alerts: HashMap::new(),
        }
    }

    /// Sends a history read to the reader threads, with the state as of the last commit.
    /// Await it without blocking the mailbox (a `ResponseActFuture` that is not atomic).
    pub(super) fn read<Q: HistoryRead>(&self, query: Q) -> impl std::future::Future<Output = ApiResult<Q::Output>> {
        let request = self.readers.send(Read { state: Arc::clone(&self.published), query });
        async move {
            request.await.map_err(|e| {
                tracing::error!(error = %e, "history readers unavailable");
                ApiError::internal()
            })?
        }
    }

    /// After a commit that may have changed `user`'s `presence_enabled` (which was
    /// `before`): tells the presence actor when it did.
    pub(super) fn presence_setting_changed(&self, user: UserId, before: bool) {
        let Some(after) = self.state.user(user).map(presence_enabled) else { return };
        if let (true, Some(presence)) = (after != before, &self.presence_actor) {
            presence.do_send(PresenceEnabledChanged { user_id: user, enabled: after, now: clock::now_micros() });
        }
    }

    /// The realm's queue index.
    pub fn queue_index(&self) -> &Arc<QueueIndex> {
        &self.queues
    }

    fn add_listener(
        &mut self,
        user_id: UserId,
        recipient: Recipient<PushEvent>,
        queue: Option<QueueEntry>,
        all_public_streams: bool,
    ) -> ListenerId {
        self.next_listener += 1;
        let id = ListenerId(self.next_listener);
        if all_public_streams {
            self.public_listeners.retain(|(_, r)| r.connected());
            self.public_listeners.push((user_id, recipient.clone()));
        }
        self.listeners.entry(user_id).or_default().push(Listener { id, recipient, queue });
        id
    }

    /// The users with a live queue registered for `all_public_streams`.
    pub(super) fn all_public_streams_listeners(&self) -> BTreeSet<UserId> {
        self.public_listeners.iter().filter(|(_, r)| r.connected()).map(|(user, _)| *user).collect()
    }

    /// Takes a queue (new or restored: its actor and its shared state) into the index and
    /// the fan-out.
    pub fn adopt_queue(&mut self, entry: QueueEntry, all_public_streams: bool) {
        self.queues.insert(entry.queue.id(), entry.clone());
        self.add_listener(entry.user_id, entry.addr.clone().recipient(), Some(entry), all_public_streams);
    }

    /// Checks a registration against the user's rights; the user's record on success.
    pub(super) fn check_queue_spec(&self, user_id: UserId, spec: &QueueSpec) -> ApiResult<&User> {
        let user = self.viewer(user_id)?;
        if spec.all_public_streams && user.role == Role::Guest {
            return Err(ApiError::bad_request("User not authorized for this query"));
        }
        check_narrow_for_events(&spec.narrow)?;
        Ok(user)
    }

    /// Starts a (checked) queue actor for `user_id` on this actor's thread.
    pub(super) fn start_queue(&mut self, queue_id: &str, user_id: UserId, spec: QueueSpec, ctx: &mut Context<Self>) {
        let all_public_streams = spec.all_public_streams;
        let queue = QueueActor::new(
            queue_id,
            user_id,
            spec,
            self.config.queues,
            Arc::clone(&self.queues),
            Some(ctx.address().recipient()),
        );
        let shared = Arc::clone(queue.shared());
        let addr = queue.start();
        self.adopt_queue(QueueEntry { user_id, addr, queue: shared }, all_public_streams);
    }

    /// Closes every queue of a user (deactivated).
    pub(super) fn close_queues_of(&mut self, user_id: UserId) {
        let Some(list) = self.listeners.get_mut(&user_id) else { return };
        list.retain(|listener| match &listener.queue {
            Some(entry) => {
                self.queues.remove(entry.queue.id());
                entry.addr.do_send(CloseQueue);
                false
            }
            None => true,
        });
    }

    pub(super) fn publish_auth(&self) {
        let next = self.auth.load().updated(&self.state);
        self.auth.store(Arc::new(next));
        self.publish_state();
    }

    /// Publishes the state for the history readers (a clone costs a few reference counts).
    pub(super) fn publish_state(&self) {
        self.published.store(Arc::new(self.state.clone()));
    }

    /// After a commit: send the events. Changes that touch who can authenticate (accounts,
    /// roles, emails, passwords, the organization's status) use
    /// [`RealmActor::committed_auth`] instead; everything else (messages, typing, flags,
    /// channels...) leaves the published auth index as it is, so the hot paths do not
    /// rebuild it.
    pub(super) fn committed(&mut self, events: Vec<Outgoing>) {
        self.publish_state();
        self.fan_out(events);
        self.wake_queues();
    }

    /// After a commit that may change who can authenticate: publish the new auth index,
    /// then send the events.
    pub(super) fn committed_auth(&mut self, events: Vec<Outgoing>) {
        self.publish_auth();
        self.fan_out(events);
        self.wake_queues();
    }

    /// Commits a planned change: writes it in one transaction, applies it to the state,
    /// publishes the state (and the authentication index if the change touches it), closes
    /// the queues of accounts it deactivated, and fans its events out. The one way features
    /// change the organization.
    pub(super) fn commit<C: Change>(&mut self, change: C) -> ApiResult<C::Output> {
        let applied = commit(&mut self.state, &self.store, change)?;
        if applied.auth {
            self.committed_auth(applied.events);
        } else {
            self.committed(applied.events);
        }
        for user in applied.closed {
            self.close_queues_of(user);
        }
        Ok(applied.output)
    }

    pub(super) fn viewer(&self, id: UserId) -> ApiResult<&User> {
        self.state.user(id).ok_or_else(|| {
            tracing::warn!(realm.id = %self.state.realm().id, user.id = %id, "request for a user this realm does not have");
            ApiError::internal()
        })
    }
}

impl Actor for RealmActor {
    type Context = Context<Self>;

    fn started(&mut self, _ctx: &mut Self::Context) {
        tracing::debug!(realm.id = %self.state.realm().id, "realm actor started");
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        // Nothing accepted is dropped unanswered.
        self.flush_pending();
        tracing::debug!(realm.id = %self.state.realm().id, "realm actor stopped");
    }
}

impl Handler<AddListener> for RealmActor {
    type Result = MessageResult<AddListener>;

    fn handle(&mut self, msg: AddListener, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.add_listener(msg.user_id, msg.recipient, None, false))
    }
}

impl Handler<RemoveListener> for RealmActor {
    type Result = ();

    fn handle(&mut self, msg: RemoveListener, _: &mut Self::Context) {
        for list in self.listeners.values_mut() {
            list.retain(|l| l.id != msg.0);
        }
        self.listeners.retain(|_, list| !list.is_empty());
    }
}

impl Handler<StopRealm> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: StopRealm, ctx: &mut Self::Context) {
        self.flush_pending();
        ctx.stop();
    }
}

impl Handler<QueueGone> for RealmActor {
    type Result = ();

    fn handle(&mut self, msg: QueueGone, _: &mut Self::Context) {
        if let GoneReason::Overflow { events, bytes } = msg.reason {
            tracing::warn!(
                realm.id = %self.state.realm().id,
                user.id = %msg.user_id,
                queue.id = %msg.queue_id,
                events,
                bytes,
                "event queue removed: its backlog went past the limit"
            );
        }
        if let Some(list) = self.listeners.get_mut(&msg.user_id) {
            list.retain(|l| l.queue.as_ref().is_none_or(|q| *q.queue.id() != msg.queue_id));
            if list.is_empty() {
                self.listeners.remove(&msg.user_id);
            }
        }
    }
}

impl Handler<SaveQueues> for RealmActor {
    /// Atomic: no other message is handled until the queues are saved, and then the actor
    /// stops, so no change can be committed that a saved queue would miss.
    type Result = AtomicResponse<Self, usize>;

    fn handle(&mut self, _: SaveQueues, _: &mut Self::Context) -> Self::Result {
        // The changes waiting for their group commit reach the queues before they are saved.
        self.flush_pending();
        self.queues.set_closing();
        let queues: Vec<Addr<QueueActor>> =
            self.listeners.values().flatten().filter_map(|l| l.queue.as_ref().map(|q| q.addr.clone())).collect();
        let (store, realm_id) = (self.store.clone(), self.state.realm().id);
        AtomicResponse::new(Box::pin(crate::queue::persist::save(store, realm_id, queues).into_actor(self).map(
            |saved, _, ctx| {
                ctx.stop();
                saved
            },
        )))
    }
}
