//! [`QueueActor`]: one client's event queue. Its events and its waiting poll are in a
//! [`SharedQueue`] that the realm actor and the HTTP workers use directly (no hop per event
//! or per poll); the actor checks expiry, closes and saves the queue, and answers the
//! same requests as messages (tests drive a queue that way).

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use rand::Rng;
use tokio::time::Instant;

use super::buffer::{EventBuffer, Queued};
use super::index::QueueIndex;
use super::saved::SavedQueue;
use super::shared::{SharedQueue, Waiting};
use super::spec::QueueSpec;
use crate::config::QueueConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, PushEvent};
use crate::ids::UserId;

/// A fresh queue id: a random (version 4) UUID, as Zulip uses.
pub fn new_queue_id() -> String {
    let mut bytes: [u8; 16] = rand::thread_rng().gen();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// What a poll is answered with: the queue's events (those after the acknowledged id) and,
/// when Zulip includes it, the queue id.
#[derive(Debug)]
pub struct PollReply {
    pub events: Vec<Queued>,
    pub queue_id: Option<Arc<str>>,
}

/// A poll answered at once, or one that waits for an event or the heartbeat.
#[derive(Debug)]
pub enum PollOutcome {
    Ready(PollReply),
    /// Answered when an event arrives, the heartbeat fires, another poll replaces this one
    /// or the queue is deleted. Closed without an answer when the queue is saved for a
    /// restart or overflows.
    Waiting(Waiting),
}

/// `GET /events` on this queue (its owner already checked).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<PollOutcome>")]
pub struct Poll {
    pub last_event_id: i64,
    pub dont_block: bool,
    /// The queue was allocated by this very request, so the reply names it.
    pub new_queue: bool,
}

/// Removes the queue now (`DELETE /events`, or its user was deactivated); a waiting poll
/// gets what the queue holds.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct CloseQueue;

/// Stops the queue for a restart and hands back everything needed to restore it; `None`
/// when it has expired (nobody could poll it any more).
#[derive(Message, Debug)]
#[rtype(result = "Option<SavedQueue>")]
pub struct SaveQueue;

/// Tells the realm that a queue has gone (expired, closed or overflowing).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct QueueGone {
    pub queue_id: Arc<str>,
    pub user_id: UserId,
    pub reason: GoneReason,
}

/// Why a queue went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoneReason {
    /// Not polled for its timeout.
    Expired,
    /// Deleted by its client, or its user was deactivated.
    Closed,
    /// It would have held more than its backlog allows: `events` events (with those being
    /// added), `bytes` bytes (with those being added when the bytes were too many).
    Overflow { events: usize, bytes: usize },
}

/// One registered event queue.
pub struct QueueActor {
    queue: Arc<SharedQueue>,
    config: QueueConfig,
    index: Arc<QueueIndex>,
    realm: Option<Recipient<QueueGone>>,
}

impl QueueActor {
    /// A new, empty queue. `index` is the realm's (the queue removes itself from it when
    /// it goes) and `realm` is told when it has gone.
    pub fn new(
        id: &str,
        user_id: UserId,
        spec: QueueSpec,
        config: QueueConfig,
        index: Arc<QueueIndex>,
        realm: Option<Recipient<QueueGone>>,
    ) -> Self {
        let queue = Arc::new(SharedQueue::new(id, user_id, spec, config, EventBuffer::default()));
        QueueActor { queue, config, index, realm }
    }

    /// A queue as it was saved; its idle time keeps counting from the saved value.
    pub fn restore(
        saved: SavedQueue,
        config: QueueConfig,
        index: Arc<QueueIndex>,
        realm: Option<Recipient<QueueGone>>,
    ) -> Self {
        let buffer = EventBuffer::restore(saved.events, saved.next_event_id, saved.newest_pruned_id);
        let queue = SharedQueue::new(&saved.queue_id, saved.user_id, saved.spec, config, buffer);
        let now = Instant::now();
        queue.set_last_connection(now.checked_sub(Duration::from_millis(saved.idle_ms)).unwrap_or(now));
        QueueActor { queue: Arc::new(queue), config, index, realm }
    }

    /// The queue's id.
    pub fn id(&self) -> &str {
        self.queue.id()
    }

    /// The queue's state, shared with the realm actor and the HTTP workers.
    pub fn shared(&self) -> &Arc<SharedQueue> {
        &self.queue
    }

    /// Adds an event the server generated itself (a `restart` notice, ...), if the
    /// client takes events of its type.
    pub fn push_local(&mut self, event: Arc<Event>) {
        self.queue.push_local(event);
    }

    /// Removes the queue: from the index first (so the next poll is told it is gone), then
    /// the actor. A waiting poll gets what the queue holds, except when the queue overflows:
    /// then it is dropped unanswered, and its request answers `BAD_EVENT_QUEUE_ID` as the
    /// next poll would.
    fn close(&mut self, ctx: &mut Context<Self>, reason: GoneReason) {
        let reason = self.queue.close(reason);
        self.index.remove(self.queue.id());
        if let Some(realm) = &self.realm {
            let (queue_id, user_id) = (Arc::clone(self.queue.id()), self.queue.user_id());
            realm.do_send(QueueGone { queue_id, user_id, reason });
        }
        ctx.stop();
    }
}

impl Actor for QueueActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.config.gc_interval, |actor, ctx| {
            if actor.queue.expired() {
                tracing::debug!(queue.id = %actor.queue.id(), user.id = %actor.queue.user_id(), "event queue expired");
                actor.close(ctx, GoneReason::Expired);
            }
        });
    }
}

impl Handler<PushEvent> for QueueActor {
    type Result = ();

    fn handle(&mut self, msg: PushEvent, ctx: &mut Self::Context) {
        if ctx.state() != ActorState::Running {
            return;
        }
        if let Some(reason) = self.queue.push(&msg.event) {
            self.close(ctx, reason);
        }
    }
}

impl Handler<Poll> for QueueActor {
    type Result = ApiResult<PollOutcome>;

    fn handle(&mut self, msg: Poll, _: &mut Self::Context) -> Self::Result {
        self.queue.poll(msg).unwrap_or_else(|| Err(ApiError::bad_event_queue_id(self.queue.id())))
    }
}

impl Handler<CloseQueue> for QueueActor {
    type Result = ();

    /// Also how the realm actor removes a queue it found overflowing: the reason is then
    /// the overflow.
    fn handle(&mut self, _: CloseQueue, ctx: &mut Self::Context) {
        self.close(ctx, GoneReason::Closed);
    }
}

impl Handler<SaveQueue> for QueueActor {
    type Result = Option<SavedQueue>;

    fn handle(&mut self, _: SaveQueue, ctx: &mut Self::Context) -> Self::Result {
        ctx.stop();
        self.queue.save()
    }
}
