//! [`QueueActor`]: one client's event queue: its pending events, the one poll that may be
//! waiting on it, the heartbeat that answers that poll when nothing happens, and expiry.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::buffer::{event_cost, EventBuffer, Queued};
use super::index::QueueIndex;
use super::spec::QueueSpec;
use crate::config::QueueConfig;
use crate::error::ApiResult;
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
    /// or the queue is deleted. Closed without an answer when the server stops.
    Waiting(oneshot::Receiver<PollReply>),
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

/// Stops the queue for a restart and hands back everything needed to restore it.
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

/// A queue as saved across a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedQueue {
    pub queue_id: String,
    pub user_id: UserId,
    pub spec: QueueSpec,
    pub next_event_id: i64,
    pub newest_pruned_id: i64,
    /// Unacknowledged events as `(id, event)`.
    #[serde(default)]
    pub events: Vec<(i64, Map<String, Value>)>,
    /// Milliseconds since the last poll started, when saved.
    #[serde(default)]
    pub idle_ms: u64,
}

struct Waiter {
    reply: oneshot::Sender<PollReply>,
    heartbeat: SpawnHandle,
}

/// One registered event queue.
pub struct QueueActor {
    id: Arc<str>,
    user_id: UserId,
    spec: QueueSpec,
    buffer: EventBuffer,
    waiter: Option<Waiter>,
    last_connection: Instant,
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
        QueueActor {
            id: Arc::from(id),
            user_id,
            spec,
            buffer: EventBuffer::default(),
            waiter: None,
            last_connection: Instant::now(),
            config,
            index,
            realm,
        }
    }

    /// A queue as it was saved; its idle time keeps counting from the saved value.
    pub fn restore(
        saved: SavedQueue,
        config: QueueConfig,
        index: Arc<QueueIndex>,
        realm: Option<Recipient<QueueGone>>,
    ) -> Self {
        let events = saved
            .events
            .into_iter()
            .filter_map(|(id, body)| Event::from_body(body).map(|e| Queued { id, event: Arc::new(e) }))
            .collect();
        let mut queue = QueueActor::new(&saved.queue_id, saved.user_id, saved.spec, config, index, realm);
        queue.buffer = EventBuffer::restore(events, saved.next_event_id, saved.newest_pruned_id);
        let now = Instant::now();
        queue.last_connection = now.checked_sub(Duration::from_millis(saved.idle_ms)).unwrap_or(now);
        queue
    }

    /// The queue's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Adds an event the server generated itself (a `restart` notice, ...), if the
    /// client takes events of its type.
    pub fn push_local(&mut self, event: Event) {
        let event = Arc::new(event);
        if self.spec.accepts(&event) {
            self.buffer.push(event);
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.spec.timeout_ms)
    }

    /// Whether a poll is really waiting (its client may have gone away meanwhile).
    fn has_waiter(&self) -> bool {
        self.waiter.as_ref().is_some_and(|w| !w.reply.is_closed())
    }

    fn expired(&self) -> bool {
        !self.has_waiter() && self.last_connection.elapsed() >= self.timeout()
    }

    /// What a reply carries: the oldest events, as many as one reply may hold.
    fn reply_events(&mut self) -> Vec<Queued> {
        self.buffer.first(self.config.max_reply_events, self.config.max_reply_bytes)
    }

    /// Answers the waiting poll, if any, with the queue's contents and its id.
    fn finish_waiter(&mut self, ctx: &mut Context<Self>) {
        if let Some(waiter) = self.waiter.take() {
            ctx.cancel_future(waiter.heartbeat);
            let reply = PollReply { events: self.reply_events(), queue_id: Some(Arc::clone(&self.id)) };
            let _ = waiter.reply.send(reply);
        }
    }

    fn heartbeat_delay(&self) -> Duration {
        let jitter_ms = self.config.heartbeat_jitter.as_millis() as u64;
        let extra = if jitter_ms == 0 { 0 } else { rand::thread_rng().gen_range(0..=jitter_ms) };
        self.config.heartbeat_min + Duration::from_millis(extra)
    }

    fn heartbeat(&mut self, ctx: &mut Context<Self>) {
        if !self.has_waiter() {
            // The client went away; its events wait for the next poll.
            self.waiter = None;
            return;
        }
        self.buffer.push(Arc::new(Event::new("heartbeat", json!({}))));
        self.finish_waiter(ctx);
    }

    /// Removes the queue: from the index first (so the next poll is told it is gone), then
    /// the actor. A waiting poll gets what the queue holds, except when the queue overflows:
    /// then it is dropped unanswered, and its request answers `BAD_EVENT_QUEUE_ID` as the
    /// next poll would.
    fn close(&mut self, ctx: &mut Context<Self>, reason: GoneReason) {
        match reason {
            GoneReason::Overflow { .. } => {
                if let Some(waiter) = self.waiter.take() {
                    ctx.cancel_future(waiter.heartbeat);
                }
            }
            GoneReason::Expired | GoneReason::Closed => self.finish_waiter(ctx),
        }
        self.index.remove(&self.id);
        if let Some(realm) = &self.realm {
            realm.do_send(QueueGone { queue_id: Arc::clone(&self.id), user_id: self.user_id, reason });
        }
        ctx.stop();
    }

    /// Adds an accepted event in the forms this client takes, unless that would take the
    /// queue past its backlog limits: then the queue is removed instead (the client
    /// registers again and gets a fresh state, as after any lost queue). The count is
    /// checked before any form is built, so one request that would make many events here
    /// (a deletion of many messages, split per message) builds none.
    fn add(&mut self, event: &Arc<Event>, ctx: &mut Context<Self>) -> bool {
        let events = self.buffer.len().saturating_add(self.spec.shaped_len(event));
        if events > self.config.max_backlog_events {
            self.close(ctx, GoneReason::Overflow { events, bytes: self.buffer.bytes() });
            return false;
        }
        let forms = self.spec.shape(event, &self.id);
        let bytes = forms.iter().fold(self.buffer.bytes(), |sum, e| sum.saturating_add(event_cost(e)));
        if bytes > self.config.max_backlog_bytes {
            self.close(ctx, GoneReason::Overflow { events, bytes });
            return false;
        }
        for form in forms.iter() {
            self.buffer.push(Arc::clone(form));
        }
        true
    }
}

impl Actor for QueueActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.config.gc_interval, |queue, ctx| {
            if queue.expired() {
                tracing::debug!(queue.id = %queue.id, user.id = %queue.user_id, "event queue expired");
                queue.close(ctx, GoneReason::Expired);
            }
        });
    }
}

impl Handler<PushEvent> for QueueActor {
    type Result = ();

    fn handle(&mut self, msg: PushEvent, ctx: &mut Self::Context) {
        // A queue being removed takes nothing more.
        if ctx.state() != ActorState::Running || !self.spec.accepts(&msg.event) {
            return;
        }
        if !self.add(&msg.event, ctx) {
            return;
        }
        if self.has_waiter() {
            self.finish_waiter(ctx);
        } else if let Some(waiter) = self.waiter.take() {
            ctx.cancel_future(waiter.heartbeat);
        }
    }
}

impl Handler<Poll> for QueueActor {
    type Result = ApiResult<PollOutcome>;

    fn handle(&mut self, msg: Poll, ctx: &mut Self::Context) -> Self::Result {
        self.buffer.prune(msg.last_event_id)?;
        // A newer poll replaces the waiting one, which gets what the queue holds now.
        self.finish_waiter(ctx);
        // Any poll shows the client is alive (Zulip counts only the ones that wait).
        self.last_connection = Instant::now();
        if !self.buffer.is_empty() || msg.dont_block {
            let queue_id = msg.new_queue.then(|| Arc::clone(&self.id));
            return Ok(PollOutcome::Ready(PollReply { events: self.reply_events(), queue_id }));
        }
        let (reply, waiting) = oneshot::channel();
        let heartbeat = ctx.run_later(self.heartbeat_delay(), |queue, ctx| queue.heartbeat(ctx));
        self.waiter = Some(Waiter { reply, heartbeat });
        Ok(PollOutcome::Waiting(waiting))
    }
}

impl Handler<CloseQueue> for QueueActor {
    type Result = ();

    fn handle(&mut self, _: CloseQueue, ctx: &mut Self::Context) {
        self.close(ctx, GoneReason::Closed);
    }
}

impl Handler<SaveQueue> for QueueActor {
    type Result = Option<SavedQueue>;

    fn handle(&mut self, _: SaveQueue, ctx: &mut Self::Context) -> Self::Result {
        // The waiting poll is dropped unanswered: its client retries after the restart.
        if let Some(waiter) = self.waiter.take() {
            ctx.cancel_future(waiter.heartbeat);
        }
        ctx.stop();
        let events = self.buffer.contents().into_iter().map(|q| (q.id, q.event.body().clone())).collect();
        Some(SavedQueue {
            queue_id: self.id.to_string(),
            user_id: self.user_id,
            spec: self.spec.clone(),
            next_event_id: self.buffer.next_event_id(),
            newest_pruned_id: self.buffer.newest_pruned_id(),
            events,
            idle_ms: self.last_connection.elapsed().as_millis() as u64,
        })
    }
}
