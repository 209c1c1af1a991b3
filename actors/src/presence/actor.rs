//! [`PresenceActor`]: one organization's presence, in memory, written in batches.
//!
//! A ping costs one message to this actor and no database work: it updates the row in
//! memory, marks it changed, publishes the new snapshot (for `POST /register`) and renders
//! the reply. Every `write_interval` the rows changed since the last write go to SQLite in
//! one transaction on the blocking pool, never on this thread; a user's row changes at most
//! once a minute, so it is written at most that often. Presence events (a user's first
//! presence, or coming back online) go to the realm actor, which owns the event queues.

use std::collections::HashSet;
use std::sync::Arc;

use actix::prelude::*;
use arc_swap::ArcSwap;
use serde_json::{Map, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::audience::{self, UserSet};
use super::blocks::ModernBlocks;
use super::format;
use super::reads::{self, Audience, Fields, PresenceQuery};
use super::state::{Changed, PresenceState, Row, Status};
use crate::config::PresenceConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::{RealmId, UserId};
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::store::presence::{self as stored, StoredPresence};
use crate::store::{Store, StoreError, StoreResult};

/// Update ids reserved in the database ahead of those handed out (see
/// `presence_sequences`); the reservation grows at a write once less than half is left.
const RESERVE_AHEAD: i64 = 100_000;

/// `POST /users/me/presence` from a human user (bots are refused before it is sent).
/// Replies with the data members of the response (none for `ping_only`).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Fields>")]
pub struct UpdatePresence {
    pub user_id: UserId,
    pub status: Status,
    /// What to answer with; `None` for `ping_only`.
    pub query: Option<PresenceQuery>,
    /// When the request came, in microseconds since the epoch.
    pub now: i64,
}

/// `GET /realm/presence`: the data members of the response.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct GetRealmPresence {
    pub viewer: UserId,
    pub now: i64,
}

/// `GET /users/{user_id_or_email}/presence`: `{"presence": ...}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct GetUserPresence {
    pub viewer: UserId,
    /// The path segment as given (an id or an API email).
    pub target: String,
    pub now: i64,
}

/// Presence events for the realm actor to fan out to the users' event queues.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct PresenceEvents(pub Vec<Outgoing>);

/// Points the actor at a new realm actor (after the registry restarted a dead one): its
/// published state and its mailbox for events.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Rebind {
    pub realm_state: Arc<ArcSwap<RealmState>>,
    pub realm: Recipient<PresenceEvents>,
}

/// Writes every changed row now, after any write under way; replies with the rows written.
/// With `stop`, the actor stops afterwards (at shutdown) and nothing is handled in between.
#[derive(Message, Debug)]
#[rtype(result = "usize")]
pub struct FlushPresence {
    pub stop: bool,
}

/// What the actor has done, for tests and measurements.
#[derive(Message, Debug)]
#[rtype(result = "PresenceStats")]
pub struct GetPresenceStats;

/// Counters of a presence actor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresenceStats {
    /// Rows in memory.
    pub rows: usize,
    /// Rows changed since they were last written.
    pub dirty: usize,
    /// Transactions committed.
    pub writes: u64,
    /// Rows written, over all transactions.
    pub rows_written: u64,
}

/// The rows of one write.
struct Batch {
    rows: Vec<StoredPresence>,
    /// The update id to reserve up to, when the reservation changes.
    reserve: Option<i64>,
}

/// One organization's presence.
pub struct PresenceActor {
    realm_id: RealmId,
    pub(super) state: PresenceState,
    /// The state after each change, for `POST /register` (read by the realm actor).
    published: Arc<ArcSwap<PresenceState>>,
    /// The realm actor's published state: who the users are.
    pub(super) realm_state: Arc<ArcSwap<RealmState>>,
    /// Where events go.
    realm: Option<Recipient<PresenceEvents>>,
    store: Store,
    config: PresenceConfig,
    /// Users whose rows changed since they were last written.
    dirty: HashSet<UserId>,
    /// One write at a time, in the order they were taken.
    writer: Arc<Semaphore>,
    /// The update id reserved in the database.
    reserved: i64,
    /// The users reported at all, as of a realm snapshot (rebuilt when its users change).
    reported: Option<(Arc<RealmState>, Arc<UserSet>)>,
    /// The modern rows' JSON in blocks, for incremental replies (of the reported users).
    blocks: ModernBlocks,
    stats: PresenceStats,
}

impl PresenceActor {
    /// Loads an organization's presence (with `realm_state`, the realm actor's published
    /// state) and reserves the update ids it may hand out. Runs on the caller's thread.
    pub fn load(
        realm_id: RealmId,
        store: Store,
        config: PresenceConfig,
        realm_state: Arc<ArcSwap<RealmState>>,
        realm: Option<Recipient<PresenceEvents>>,
    ) -> StoreResult<PresenceActor> {
        let (stored_rows, reserved, start) = store.write(|tx| {
            let (rows, reserved) = stored::load(tx, realm_id)?;
            // Ids up to the reservation may have been handed out before a crash.
            let start = rows.iter().map(|r| r.update_id).fold(reserved, i64::max);
            stored::reserve(tx, realm_id, start + RESERVE_AHEAD)?;
            Ok::<_, StoreError>((rows, start + RESERVE_AHEAD, start))
        })?;
        let realm_now = realm_state.load();
        let joined = |user: UserId| realm_now.user(user).map_or(0, |u| u.date_joined);
        let rows = stored_rows
            .into_iter()
            .map(|r| Row::new(r.user_id, r.last_active, r.last_connected, r.update_id, joined(r.user_id)));
        let state = PresenceState::new(rows, start);
        Ok(PresenceActor {
            realm_id,
            published: Arc::new(ArcSwap::from_pointee(state.clone())),
            state,
            realm_state,
            realm,
            store,
            config,
            dirty: HashSet::new(),
            writer: Arc::new(Semaphore::new(1)),
            reserved,
            reported: None,
            blocks: ModernBlocks::default(),
            stats: PresenceStats::default(),
        })
    }

    /// The published presence state (the realm actor reads it for `POST /register`).
    pub fn published(&self) -> Arc<ArcSwap<PresenceState>> {
        Arc::clone(&self.published)
    }

    /// The users reported at all, rebuilt only when the realm's users changed.
    fn reported(&mut self, realm: &Arc<RealmState>) -> Arc<UserSet> {
        match &self.reported {
            Some((seen, set)) if seen.same_users(realm) => Arc::clone(set),
            _ => {
                let set = Arc::new(audience::reported_users(realm));
                if self.reported.as_ref().is_none_or(|(_, old)| **old != *set) {
                    self.blocks.clear();
                }
                self.reported = Some((Arc::clone(realm), Arc::clone(&set)));
                set
            }
        }
    }

    /// Records a ping; tells the other users when the user came online.
    fn ping(&mut self, realm: &RealmState, user: &User, status: Status, now: i64) {
        // Users who do not share their presence (and bots, deactivated users) are not
        // recorded, as in Zulip.
        if !audience::is_reported(user) || !audience::presence_enabled(user) {
            return;
        }
        let before = self.state.row(user.id).map(|row| row.update_id);
        let Some(changed) = self.state.ping(user.id, status, now, user.date_joined) else { return };
        self.changed(realm, user, before, changed, false, now);
    }

    /// Publishes a changed row (`before` is its previous update id) and tells the others
    /// when it says so, or always when `force`d.
    pub(super) fn changed(
        &mut self,
        realm: &RealmState,
        user: &User,
        before: Option<i64>,
        changed: Changed,
        force: bool,
        now: i64,
    ) {
        if let Some(update_id) = before {
            self.blocks.changed(update_id);
        }
        self.blocks.changed(changed.row.update_id);
        self.dirty.insert(user.id);
        self.published.store(Arc::new(self.state.clone()));
        if changed.notify || force {
            let users = audience::event_recipients(&self.config, realm, user.id, force);
            if let (false, Some(realm_actor)) = (users.is_empty(), &self.realm) {
                let event = format::event(user, &changed.row, now);
                realm_actor.do_send(PresenceEvents(vec![Outgoing::to(users, event)]));
            }
        }
    }

    /// The changed rows, taken for a write; the final one (at shutdown) resets the
    /// reservation to the last id handed out, so the next start continues right after it.
    fn take_batch(&mut self, last: bool) -> Batch {
        let rows = self
            .dirty
            .drain()
            .filter_map(|user| self.state.row(user))
            .map(|r| StoredPresence {
                user_id: r.user_id,
                last_active: r.last_active,
                last_connected: r.last_connected,
                update_id: r.update_id,
            })
            .collect();
        let handed_out = self.state.last_update_id();
        let reserve = if last {
            (handed_out != self.reserved).then_some(handed_out)
        } else {
            (handed_out > self.reserved - RESERVE_AHEAD / 2).then_some(handed_out + RESERVE_AHEAD)
        };
        Batch { rows, reserve }
    }

    /// Writes a batch on the blocking pool, holding `permit` until it is written.
    fn write(&self, batch: Batch, permit: OwnedSemaphorePermit) -> impl std::future::Future<Output = (Batch, bool)> {
        let (store, realm_id) = (self.store.clone(), self.realm_id);
        async move {
            let rows = batch.rows.clone();
            let reserve = batch.reserve;
            let written = tokio::task::spawn_blocking(move || write_batch(&store, realm_id, &rows, reserve)).await;
            drop(permit);
            let ok = match written {
                Ok(Ok(())) => true,
                Ok(Err(e)) => {
                    tracing::error!(realm.id = %realm_id, error = %e, "could not write presence");
                    false
                }
                Err(e) => {
                    tracing::error!(realm.id = %realm_id, error = %e, "presence write task failed");
                    false
                }
            };
            (batch, ok)
        }
    }

    /// After a write: count it, or mark its rows changed again so the next write retries.
    fn written(&mut self, batch: Batch, ok: bool) -> usize {
        if !ok {
            self.dirty.extend(batch.rows.iter().map(|r| r.user_id));
            return 0;
        }
        if let Some(update_id) = batch.reserve {
            self.reserved = update_id;
        }
        if !batch.rows.is_empty() || batch.reserve.is_some() {
            self.stats.writes += 1;
        }
        self.stats.rows_written += batch.rows.len() as u64;
        batch.rows.len()
    }

    /// The timer's write: skipped while one is under way (its rows stay marked).
    fn write_changes(&mut self, ctx: &mut Context<Self>) {
        if self.dirty.is_empty() {
            return;
        }
        let Ok(permit) = Arc::clone(&self.writer).try_acquire_owned() else { return };
        let batch = self.take_batch(false);
        let write = self.write(batch, permit);
        ctx.spawn(write.into_actor(self).map(|(batch, ok), actor, _| {
            actor.written(batch, ok);
        }));
    }
}

impl Actor for PresenceActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.config.write_interval, |actor, ctx| actor.write_changes(ctx));
        tracing::debug!(realm.id = %self.realm_id, rows = self.state.len(), "presence actor started");
    }
}

/// The requester's record, which the realm must have (authentication found it there).
fn viewer(realm: &RealmState, id: UserId) -> ApiResult<&User> {
    realm.user(id).ok_or_else(|| {
        tracing::warn!(user.id = %id, "presence request for a user the realm does not have");
        ApiError::internal()
    })
}

impl Handler<UpdatePresence> for PresenceActor {
    type Result = ApiResult<Fields>;

    fn handle(&mut self, msg: UpdatePresence, _: &mut Self::Context) -> Self::Result {
        let realm = self.realm_state.load_full();
        let user = viewer(&realm, msg.user_id)?;
        self.ping(&realm, user, msg.status, msg.now);
        let Some(query) = msg.query else { return Ok(Fields::default()) };
        let reported = self.reported(&realm);
        let access = audience::viewer_access(&self.config, &realm, msg.user_id);
        let audience = Audience { realm: &realm, reported: &reported, access: access.as_ref() };
        Ok(reads::update_reply_from(&self.state, &audience, Some(&query), msg.now, Some(&mut self.blocks)))
    }
}

impl Handler<GetRealmPresence> for PresenceActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: GetRealmPresence, _: &mut Self::Context) -> Self::Result {
        let realm = self.realm_state.load_full();
        viewer(&realm, msg.viewer)?;
        let reported = self.reported(&realm);
        let access = audience::viewer_access(&self.config, &realm, msg.viewer);
        let audience = Audience { realm: &realm, reported: &reported, access: access.as_ref() };
        Ok(reads::realm_reply(&self.state, &audience, msg.now))
    }
}

impl Handler<GetUserPresence> for PresenceActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetUserPresence, _: &mut Self::Context) -> Self::Result {
        let realm = self.realm_state.load_full();
        viewer(&realm, msg.viewer)?;
        reads::user_reply(&self.state, &realm, &self.config, msg.viewer, &msg.target, msg.now)
    }
}

impl Handler<Rebind> for PresenceActor {
    type Result = ();

    fn handle(&mut self, msg: Rebind, _: &mut Self::Context) {
        self.realm_state = msg.realm_state;
        self.realm = Some(msg.realm);
        self.reported = None;
        self.blocks.clear();
    }
}

impl Handler<FlushPresence> for PresenceActor {
    type Result = ResponseActFuture<Self, usize>;

    fn handle(&mut self, msg: FlushPresence, _: &mut Self::Context) -> Self::Result {
        // First the write under way, if any, ends (its rows are then written)...
        let writer = Arc::clone(&self.writer);
        Box::pin(async move { writer.acquire_owned().await.ok() }.into_actor(self).map(move |permit, actor, ctx| {
            // ...then the rest is written on this thread, between two messages: no ping can
            // fall between taking the rows and stopping. (Only shutdown and tests flush.)
            let batch = actor.take_batch(msg.stop);
            let written = write_batch(&actor.store, actor.realm_id, &batch.rows, batch.reserve);
            drop(permit);
            if let Err(e) = &written {
                tracing::error!(realm.id = %actor.realm_id, error = %e, "could not write presence");
            }
            let rows = actor.written(batch, written.is_ok());
            if msg.stop {
                ctx.stop();
            }
            rows
        }))
    }
}

/// One write: the rows, and the reservation when it changes, in one transaction.
fn write_batch(store: &Store, realm_id: RealmId, rows: &[StoredPresence], reserve: Option<i64>) -> StoreResult<()> {
    store.write(|tx| {
        stored::save(tx, realm_id, rows)?;
        if let Some(update_id) = reserve {
            stored::reserve(tx, realm_id, update_id)?;
        }
        Ok(())
    })
}

impl Handler<GetPresenceStats> for PresenceActor {
    type Result = MessageResult<GetPresenceStats>;

    fn handle(&mut self, _: GetPresenceStats, _: &mut Self::Context) -> Self::Result {
        MessageResult(PresenceStats { rows: self.state.len(), dirty: self.dirty.len(), ..self.stats })
    }
}
