//! [`SharedQueue`]: one event queue's contents and its waiting poll, behind a lock that the
//! realm actor (adding each committed event) and the HTTP workers (answering polls) take
//! directly, so that neither an event nor a poll makes an actor hop: an event reaches a
//! waiting poll through its oneshot channel alone, as in a bare server. The queue's actor
//! ([`super::QueueActor`]) keeps what needs a timer or a mailbox: expiry, closing, saving.
//! The heartbeat that answers an idle poll runs in the poll's own future ([`Waiting`]).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::Rng;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::actor::{GoneReason, Poll, PollOutcome, PollReply};
use super::buffer::{event_cost, EventBuffer, Queued};
use super::saved::SavedQueue;
use super::spec::QueueSpec;
use crate::config::QueueConfig;
use crate::error::ApiResult;
use crate::events::Event;
use crate::ids::UserId;

/// One registered event queue's state.
pub struct SharedQueue {
    id: Arc<str>,
    user_id: UserId,
    config: QueueConfig,
    inner: Mutex<Inner>,
}

struct Inner {
    spec: QueueSpec,
    buffer: EventBuffer,
    waiter: Option<Waiter>,
    /// Polls that waited so far: a heartbeat answers only the poll that set it.
    polls: u64,
    last_connection: Instant,
    /// Set once the queue is closed, expired, overflowing or saved: it takes nothing more.
    gone: Option<GoneReason>,
    /// It took events since its last [`SharedQueue::wake`]: it is on the realm actor's list
    /// of queues to wake (once, however many events it took).
    wake_pending: bool,
}

struct Waiter {
    reply: oneshot::Sender<PollReply>,
    poll: u64,
}

impl std::fmt::Debug for SharedQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedQueue").field("id", &self.id).field("user_id", &self.user_id).finish_non_exhaustive()
    }
}

/// A poll waiting for an event or its heartbeat.
#[derive(Debug)]
pub struct Waiting {
    reply: oneshot::Receiver<PollReply>,
    heartbeat_at: Instant,
    poll: u64,
    queue: Arc<SharedQueue>,
}

impl Waiting {
    /// The reply: the queue's events once one arrives, a heartbeat when none has by its
    /// time. An error when the queue went without answering (saved for a restart, or
    /// overflowing).
    pub async fn reply(mut self) -> Result<PollReply, oneshot::error::RecvError> {
        tokio::select! {
            biased;
            reply = &mut self.reply => return reply,
            () = tokio::time::sleep_until(self.heartbeat_at) => {}
        }
        self.queue.heartbeat(self.poll);
        self.reply.await
    }

    /// The reply if it is already there (the heartbeat only comes through [`Waiting::reply`]).
    pub fn try_recv(&mut self) -> Result<PollReply, oneshot::error::TryRecvError> {
        self.reply.try_recv()
    }
}

impl SharedQueue {
    pub(super) fn new(id: &str, user_id: UserId, spec: QueueSpec, config: QueueConfig, buffer: EventBuffer) -> Self {
        let inner = Inner {
            spec,
            buffer,
            waiter: None,
            polls: 0,
            last_connection: Instant::now(),
            gone: None,
            wake_pending: false,
        };
        SharedQueue { id: Arc::from(id), user_id, config, inner: Mutex::new(inner) }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The queue's id.
    pub fn id(&self) -> &Arc<str> {
        &self.id
    }

    /// The queue's owner.
    pub fn user_id(&self) -> UserId {
        self.user_id
    }

    /// Why the queue went, once it has.
    pub fn gone(&self) -> Option<GoneReason> {
        self.lock().gone
    }

    /// Adds an event, in the forms this client takes, if the client takes events of its
    /// type, and answers the waiting poll. When the event would take the queue past its
    /// backlog limits the queue goes instead (its waiting poll dropped unanswered: the
    /// client registers again, as after any lost queue) and the reason is returned: the
    /// caller removes it. The count is checked before any form is built, so one request
    /// that would make many events here (a deletion of many messages, split per message)
    /// builds none.
    pub fn push(&self, event: &Arc<Event>) -> Option<GoneReason> {
        match self.add(event) {
            Ok(taken) => {
                if taken {
                    self.wake();
                }
                None
            }
            Err(reason) => Some(reason),
        }
    }

    /// [`SharedQueue::push`] without answering the waiting poll (see [`SharedQueue::wake`]):
    /// whether the queue is now to be woken (it took the event, and had taken none since
    /// its last wake), or why it went.
    pub fn add(&self, event: &Arc<Event>) -> Result<bool, GoneReason> {
        let mut inner = self.lock();
        if inner.gone.is_some() || !inner.spec.accepts(event) {
            return Ok(false);
        }
        let events = inner.buffer.len().saturating_add(inner.spec.shaped_len(event));
        let bytes = inner.buffer.bytes();
        if events > self.config.max_backlog_events {
            return Err(inner.overflow(events, bytes));
        }
        let forms = inner.spec.shape(event, &self.id);
        let bytes = forms.iter().fold(bytes, |sum, e| sum.saturating_add(event_cost(e)));
        if bytes > self.config.max_backlog_bytes {
            return Err(inner.overflow(events, bytes));
        }
        for form in forms.iter() {
            inner.buffer.push(Arc::clone(form));
        }
        Ok(!std::mem::replace(&mut inner.wake_pending, true))
    }

    /// Answers the waiting poll with what the queue holds, if it holds anything.
    pub fn wake(&self) {
        let mut inner = self.lock();
        inner.wake_pending = false;
        if inner.buffer.is_empty() || inner.gone.is_some() {
            return;
        }
        if inner.has_waiter() {
            self.finish_waiter(&mut inner);
        } else {
            // Its client went away; the events wait for the next poll.
            inner.waiter = None;
        }
    }

    /// Adds an event the server generated itself (a `restart` notice, ...), if the
    /// client takes events of its type.
    pub fn push_local(&self, event: Arc<Event>) {
        let mut inner = self.lock();
        if inner.spec.accepts(&event) {
            inner.buffer.push(event);
        }
    }

    /// `GET /events` on this queue (its owner already checked); `None` once the queue has
    /// gone.
    pub fn poll(self: &Arc<Self>, msg: Poll) -> Option<ApiResult<PollOutcome>> {
        let mut inner = self.lock();
        if inner.gone.is_some() {
            return None;
        }
        if let Err(e) = inner.buffer.prune(msg.last_event_id) {
            return Some(Err(e));
        }
        // A newer poll replaces the waiting one, which gets what the queue holds now.
        self.finish_waiter(&mut inner);
        // Any poll shows the client is alive (Zulip counts only the ones that wait).
        let now = Instant::now();
        inner.last_connection = now;
        if !inner.buffer.is_empty() || msg.dont_block {
            let queue_id = msg.new_queue.then(|| Arc::clone(&self.id));
            let events = inner.buffer.first(self.config.max_reply_events, self.config.max_reply_bytes);
            return Some(Ok(PollOutcome::Ready(PollReply { events, queue_id })));
        }
        let (reply, waiting) = oneshot::channel();
        inner.polls += 1;
        let poll = inner.polls;
        inner.waiter = Some(Waiter { reply, poll });
        let heartbeat_at = now + self.heartbeat_delay();
        Some(Ok(PollOutcome::Waiting(Waiting { reply: waiting, heartbeat_at, poll, queue: Arc::clone(self) })))
    }

    /// The heartbeat of poll `poll`: answers it with a `heartbeat` event if it still waits.
    fn heartbeat(&self, poll: u64) {
        let mut inner = self.lock();
        if inner.gone.is_some() || inner.waiter.as_ref().is_none_or(|w| w.poll != poll) {
            return;
        }
        inner.buffer.push(Arc::new(Event::new("heartbeat", json!({}))));
        self.finish_waiter(&mut inner);
    }

    fn heartbeat_delay(&self) -> Duration {
        let jitter_ms = self.config.heartbeat_jitter.as_millis() as u64;
        let extra = if jitter_ms == 0 { 0 } else { rand::thread_rng().gen_range(0..=jitter_ms) };
        self.config.heartbeat_min + Duration::from_millis(extra)
    }

    /// Answers the waiting poll, if any, with the queue's oldest events (as many as one
    /// reply may hold) and its id.
    fn finish_waiter(&self, inner: &mut Inner) {
        if let Some(waiter) = inner.waiter.take() {
            let events = inner.buffer.first(self.config.max_reply_events, self.config.max_reply_bytes);
            let _ = waiter.reply.send(PollReply { events, queue_id: Some(Arc::clone(&self.id)) });
        }
    }

    /// Whether nobody has polled for the queue's timeout (a waiting poll keeps it alive).
    pub(super) fn expired(&self) -> bool {
        let inner = self.lock();
        !inner.has_waiter() && inner.last_connection.elapsed() >= Duration::from_millis(inner.spec.timeout_ms)
    }

    /// Marks the queue gone for `reason` (unless it already is: then for the first reason,
    /// which is returned). A waiting poll gets what the queue holds, except when the queue
    /// overflowed (then it was dropped unanswered).
    pub(super) fn close(&self, reason: GoneReason) -> GoneReason {
        let mut inner = self.lock();
        if let Some(first) = inner.gone {
            return first;
        }
        self.finish_waiter(&mut inner);
        inner.gone = Some(reason);
        reason
    }

    /// Everything needed to restore the queue after a restart (its events shared, not
    /// copied); the queue takes nothing more and its waiting poll is dropped unanswered (its
    /// client retries after the restart). `None` when it has expired: nobody could poll it
    /// any more, so it is not worth saving.
    pub(super) fn save(&self) -> Option<SavedQueue> {
        let mut inner = self.lock();
        // A queue already closed or overflowing is going: its client registers again.
        if inner.gone.is_some() {
            return None;
        }
        // A client waiting on its poll is there right now: it has been idle for no time.
        let idle = if inner.has_waiter() { Duration::ZERO } else { inner.last_connection.elapsed() };
        inner.waiter = None;
        inner.gone = Some(GoneReason::Closed);
        if idle >= Duration::from_millis(inner.spec.timeout_ms) {
            return None;
        }
        Some(SavedQueue {
            queue_id: self.id.to_string(),
            user_id: self.user_id,
            spec: inner.spec.clone(),
            next_event_id: inner.buffer.next_event_id(),
            newest_pruned_id: inner.buffer.newest_pruned_id(),
            events: inner.buffer.contents(),
            idle_ms: idle.as_millis() as u64,
        })
    }

    /// The events waiting, in id order (shared with the other queues that hold them).
    pub fn events(&self) -> Vec<Queued> {
        self.lock().buffer.contents()
    }

    /// Sets when the client was last seen (a restored queue keeps counting its idle time).
    pub(super) fn set_last_connection(&self, at: Instant) {
        self.lock().last_connection = at;
    }
}

impl Inner {
    /// Whether a poll is really waiting (its client may have gone away meanwhile).
    fn has_waiter(&self) -> bool {
        self.waiter.as_ref().is_some_and(|w| !w.reply.is_closed())
    }

    /// The queue goes for holding too much; its waiting poll is dropped unanswered.
    fn overflow(&mut self, events: usize, bytes: usize) -> GoneReason {
        let reason = GoneReason::Overflow { events, bytes };
        self.waiter = None;
        *self.gone.get_or_insert(reason)
    }
}
