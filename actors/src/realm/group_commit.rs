//! Group commit: the changes that wait in an organization's mailbox are written in one
//! transaction.
//!
//! A handler that defers its change ([`RealmActor::defer`]) queues the request with the
//! function that plans it. The first deferred request of a run of the mailbox schedules a
//! flush, which actix runs once the mailbox is empty (or at once, when the group is full):
//! it opens one `BEGIN IMMEDIATE` transaction and, for each change in arrival order, plans
//! it against the state as the changes before it left it, writes it inside a savepoint of
//! its own and applies it. So each change keeps its own validation and its own error (its
//! savepoint is rolled back, nothing else), and ids follow arrival order. After the commit
//! the state is published once, the events go out in order, then every request gets its
//! answer. Should the commit itself fail, the state is put back and every change is
//! committed again on its own: a failure in one change never fails or loses another.
//!
//! Requests that are not deferred are handled as they come; one that arrives while a group
//! waits is ordered before the group (no request of the group has been answered yet, so
//! this is an order the clients could have seen either way).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use actix::dev::{MessageResponse, OneshotSender};
use actix::prelude::*;
use rusqlite::Transaction;

use super::actor::{NotStaged, PendingChange, RealmActor, Staged};
use super::Change;
use crate::error::{ApiError, ApiResult};
use crate::store;

/// Most changes one transaction carries: a mailbox that never empties under load still
/// commits (and answers) at least this often.
pub const MAX_GROUP: usize = 128;

/// Writes the waiting group (a message the actor sends itself).
#[derive(Message, Debug)]
#[rtype(result = "()")]
struct FlushPending;

/// The answer of a deferred request, given once its group is committed.
pub struct Deferred<T>(Arc<Slot<T>>);

/// Where a deferred answer meets the request's reply channel, whichever comes first.
struct Slot<T>(Mutex<SlotState<T>>);

enum SlotState<T> {
    Empty,
    Waiting(OneshotSender<T>),
    Done(T),
    /// Answered, or nobody waits for the answer.
    Gone,
}

impl<T> Slot<T> {
    fn new() -> Self {
        Slot(Mutex::new(SlotState::Empty))
    }

    /// The request's reply channel (none for `do_send`).
    fn attach(&self, tx: Option<OneshotSender<T>>) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *state, SlotState::Gone) {
            SlotState::Done(answer) => {
                if let Some(tx) = tx {
                    let _ = tx.send(answer);
                }
            }
            SlotState::Empty => {
                if let Some(tx) = tx {
                    *state = SlotState::Waiting(tx);
                }
            }
            SlotState::Waiting(_) | SlotState::Gone => {}
        }
    }

    /// The answer.
    fn fill(&self, answer: T) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *state, SlotState::Gone) {
            SlotState::Waiting(tx) => {
                let _ = tx.send(answer);
            }
            SlotState::Empty => *state = SlotState::Done(answer),
            SlotState::Done(_) | SlotState::Gone => {}
        }
    }
}

impl<M> MessageResponse<RealmActor, M> for Deferred<M::Result>
where
    M: Message,
{
    fn handle(self, _: &mut Context<RealmActor>, tx: Option<OneshotSender<M::Result>>) {
        self.0.attach(tx);
    }
}

/// How a deferred request becomes a change, once its group is written.
pub type Plan<M, C> = fn(&RealmActor, M) -> ApiResult<C>;

/// What a deferred request does once its group is committed and its events are out, before
/// it is answered (account creations post the system bots' welcome messages).
pub type Then<C> = fn(&mut RealmActor, &<C as Change>::Output);

/// A deferred request: the message, its plan, and its answer once staged.
struct Item<M, C: Change> {
    msg: M,
    plan: Plan<M, C>,
    then: Option<Then<C>>,
    output: Option<C::Output>,
    slot: Arc<Slot<ApiResult<C::Output>>>,
}

impl<M: Clone, C: Change> PendingChange for Item<M, C> {
    fn stage(&mut self, actor: &mut RealmActor, tx: &Transaction<'_>, savepoint: bool) -> Result<Staged, NotStaged> {
        // The message stays for another attempt, should this one not commit.
        let mut change = (self.plan)(actor, self.msg.clone()).map_err(NotStaged::Refused)?;
        if change.writes() {
            if savepoint {
                store::within_savepoint(tx, || change.write(tx)).map_err(NotStaged::Refused)?;
            } else {
                change.write(tx).map_err(NotStaged::WriteFailed)?;
            }
        }
        let applied = change.apply(&mut actor.state);
        self.output = Some(applied.output);
        Ok(Staged { events: applied.events, auth: applied.auth, closed: applied.closed })
    }

    fn after_commit(&mut self, actor: &mut RealmActor) {
        if let (Some(then), Some(output)) = (self.then, &self.output) {
            then(actor, output);
        }
    }

    fn finish(self: Box<Self>, error: Option<ApiError>) {
        let answer = match (error, self.output) {
            (Some(e), _) => Err(e),
            (None, Some(output)) => Ok(output),
            (None, None) => Err(ApiError::internal()),
        };
        self.slot.fill(answer);
    }
}

impl RealmActor {
    /// Queues a request for the group commit at the end of this run of the mailbox; `plan`
    /// makes its change then, against the state as the earlier changes of the group left it.
    pub(super) fn defer<M, C>(
        &mut self,
        ctx: &mut Context<Self>,
        msg: M,
        plan: Plan<M, C>,
    ) -> Deferred<ApiResult<C::Output>>
    where
        M: Clone + Send + 'static,
        C: Change + 'static,
        C::Output: Send + 'static,
    {
        self.defer_then(ctx, msg, plan, None)
    }

    /// [`RealmActor::defer`], with `then` run once the group is committed (when this
    /// change was), before the request is answered.
    pub(super) fn defer_then<M, C>(
        &mut self,
        ctx: &mut Context<Self>,
        msg: M,
        plan: Plan<M, C>,
        then: Option<Then<C>>,
    ) -> Deferred<ApiResult<C::Output>>
    where
        M: Clone + Send + 'static,
        C: Change + 'static,
        C::Output: Send + 'static,
    {
        let slot = Arc::new(Slot::new());
        if self.pending.is_empty() {
            ctx.notify(FlushPending);
        }
        self.pending.push(Box::new(Item { msg, plan, then, output: None, slot: Arc::clone(&slot) }));
        if self.pending.len() >= MAX_GROUP {
            self.flush_pending();
        }
        Deferred(slot)
    }

    /// Commits the waiting group, if any (see the module's documentation).
    ///
    /// The first attempt writes the changes one after the other, without savepoints (a
    /// savepoint journals every page a change touches: most of a send's cost). A change
    /// whose write fails after writing something makes the group start again, each change
    /// in a savepoint of its own; a group that cannot commit is written again one change
    /// at a time.
    pub(super) fn flush_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut items = std::mem::take(&mut self.pending);
        let started = Instant::now();
        let attempt = match self.write_group(&mut items, false) {
            Attempt::WriteFailed(_) if items.len() > 1 => self.write_group(&mut items, true),
            attempt => attempt,
        };
        match attempt {
            Attempt::Committed(outcomes) => self.committed_group(items, outcomes, started),
            Attempt::WriteFailed(e) | Attempt::CommitFailed(e) if items.len() == 1 => {
                items.into_iter().for_each(|item| item.finish(Some(e.clone())));
            }
            Attempt::WriteFailed(_) | Attempt::CommitFailed(_) => {
                let realm_id = self.state.realm().id;
                tracing::warn!(realm.id = %realm_id, changes = items.len(), "group commit failed: one change at a time");
                for item in items {
                    self.pending.push(item);
                    self.flush_pending();
                }
            }
        }
    }

    /// One attempt at writing a group in one transaction; on failure the state is as before.
    fn write_group(&mut self, items: &mut [Box<dyn PendingChange + Send>], savepoints: bool) -> Attempt {
        let before = self.state.clone();
        let store = self.store.clone();
        let mut outcomes = Vec::with_capacity(items.len());
        let mut write_failed = false;
        let written = store.write::<_, ApiError>(|tx| {
            for item in items.iter_mut() {
                match item.stage(self, tx, savepoints) {
                    Ok(staged) => outcomes.push(Ok(staged)),
                    Err(NotStaged::Refused(e)) => outcomes.push(Err(e)),
                    Err(NotStaged::WriteFailed(e)) => {
                        write_failed = true;
                        return Err(e);
                    }
                }
            }
            Ok(())
        });
        match written {
            Ok(()) => Attempt::Committed(outcomes),
            Err(e) => {
                self.state = before;
                if write_failed {
                    Attempt::WriteFailed(e)
                } else {
                    Attempt::CommitFailed(e)
                }
            }
        }
    }

    /// After a group's commit: publishes the state once, sends the events in order, closes
    /// the queues of deactivated accounts, then answers every request.
    fn committed_group(
        &mut self,
        items: Vec<Box<dyn PendingChange + Send>>,
        mut outcomes: Vec<ApiResult<Staged>>,
        started: Instant,
    ) {
        let (mut events, mut closed, mut auth, mut refused) = (Vec::new(), Vec::new(), false, 0);
        for outcome in &mut outcomes {
            match outcome {
                Ok(staged) => {
                    events.append(&mut staged.events);
                    closed.append(&mut staged.closed);
                    auth |= staged.auth;
                }
                Err(_) => refused += 1,
            }
        }
        let changes = items.len();
        if refused < changes {
            if auth {
                self.publish_auth();
            } else {
                self.publish_state();
            }
            // Into the queues now; their polls are answered after the requests (`fan_out.rs`).
            self.fan_out(events);
        }
        for user in closed {
            self.close_queues_of(user);
        }
        let mut items = items;
        for (item, outcome) in items.iter_mut().zip(&outcomes) {
            if outcome.is_ok() {
                item.after_commit(self);
            }
        }
        for (item, outcome) in items.into_iter().zip(outcomes) {
            item.finish(outcome.err());
        }
        self.wake_queues();
        self.groups.commits += 1;
        self.groups.changes += changes as u64;
        metrics::histogram!("agora_group_commit_changes").record(changes as f64);
        let (realm_id, micros) = (self.state.realm().id, started.elapsed().as_micros() as u64);
        let (commits_so_far, changes_so_far) = (self.groups.commits, self.groups.changes);
        tracing::debug!(
            target: "agora::group_commit",
            realm = %realm_id,
            changes,
            refused,
            micros,
            commits_so_far,
            changes_so_far,
            "group commit"
        );
    }
}

/// How one attempt at writing a group ended.
enum Attempt {
    /// Committed: each change's outcome, in order.
    Committed(Vec<ApiResult<Staged>>),
    /// A change's write failed without a savepoint: rolled back.
    WriteFailed(ApiError),
    /// The transaction could not begin or commit: rolled back.
    CommitFailed(ApiError),
}

impl Handler<FlushPending> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: FlushPending, _: &mut Self::Context) {
        self.flush_pending();
    }
}
