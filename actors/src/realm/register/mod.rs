//! `POST /register` and the queue-creating `GET /events`: a queue for the client and, for
//! register, the initial state as of the same moment (`reads`).

mod pending;
mod personal;
pub mod reads;

use std::collections::BTreeSet;

use actix::prelude::*;

use std::sync::Arc;

use super::actor::RealmActor;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::queue::actor::CloseQueue;
use crate::queue::{new_queue_id, QueueSpec};
use crate::realm::channels::IncludeSubscribers;

/// What a register request asks for beyond its queue's spec.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchOptions {
    /// Data sets to fetch; `None` means all.
    pub fetch_event_types: Option<BTreeSet<String>>,
    pub include_subscribers: IncludeSubscribers,
    /// Days of presence history (the presence data set's default is 14).
    pub presence_history_limit_days: Option<i64>,
}

/// `POST /register`: creates an event queue for the user and returns the initial state
/// (with `queue_id` and `last_event_id`), both as of the same moment, as the JSON members
/// of the response, in pieces to be sent one after the other.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<bytes::Bytes>>")]
pub struct Register {
    pub user_id: UserId,
    pub spec: QueueSpec,
    pub fetch: FetchOptions,
}

/// `GET /events` without a `queue_id` (and with `dont_block`): creates a queue without an
/// initial state and returns its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct AllocateQueue {
    pub user_id: UserId,
    pub spec: QueueSpec,
}

/// What a register's initial state is made of, taken by the realm actor when it made the
/// queue, for a reader thread to write.
pub struct Snapshot {
    pub state: crate::realm::state::RealmState,
    pub config: Arc<crate::config::ServerConfig>,
    pub user: crate::realm::model::User,
    pub spec: QueueSpec,
    pub fetch: FetchOptions,
    pub max_message_id: i64,
    pub presence: Arc<crate::presence::PresenceState>,
    pub queue_id: String,
}

impl crate::reader::HistoryRead for Snapshot {
    type Output = Vec<bytes::Bytes>;

    /// Writes the initial state from the snapshot (not from the state published since).
    fn run(self, _: &crate::realm::state::RealmState, conn: &rusqlite::Connection) -> ApiResult<Vec<bytes::Bytes>> {
        let context = reads::Context {
            state: &self.state,
            config: &self.config,
            user: &self.user,
            spec: &self.spec,
            fetch: &self.fetch,
            conn,
            max_message_id: self.max_message_id,
            presence: &self.presence,
            raw: Default::default(),
        };
        reads::initial_state(&context, &self.queue_id)
    }
}

impl Handler<Register> for RealmActor {
    /// The queue is made here, with a copy of the state as of this moment (a few reference
    /// counts); the initial state is written from that copy on a reader thread, so that a
    /// large organization's registers neither wait for each other nor hold up its changes.
    type Result = ResponseFuture<ApiResult<Vec<bytes::Bytes>>>;

    fn handle(&mut self, msg: Register, ctx: &mut Self::Context) -> Self::Result {
        let user = match self.check_queue_spec(msg.user_id, &msg.spec) {
            Ok(user) => user.clone(),
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let queue_id = new_queue_id();
        // The state, the newest message and the queue are taken in the same handler, so no
        // event can fall between them: `last_event_id` is always -1. The reader thread
        // reads no message newer than this one (those are events in the queue).
        const MESSAGE_SETS: [&str; 3] = ["message", "starred_messages", "recent_private_conversations"];
        let wants_messages =
            msg.fetch.fetch_event_types.as_ref().is_none_or(|t| MESSAGE_SETS.iter().any(|s| t.contains(*s)));
        let max_message_id = if wants_messages {
            match self
                .store
                .conn()
                .map_err(ApiError::from)
                .and_then(|conn| Ok(crate::store::messages::max_message_id(&conn, user.id)?))
            {
                Ok(id) => id,
                Err(e) => return Box::pin(std::future::ready(Err(e))),
            }
        } else {
            -1
        };
        let snapshot = Snapshot {
            state: self.state.clone(),
            config: Arc::clone(&self.config),
            user,
            spec: msg.spec.clone(),
            fetch: msg.fetch,
            max_message_id,
            presence: self.presence.load_full(),
            queue_id: queue_id.clone(),
        };
        self.start_queue(&queue_id, msg.user_id, msg.spec, ctx);
        let queue = self.queues.get(&queue_id).map(|entry| entry.addr);
        let written = self.read(snapshot);
        Box::pin(async move {
            let written = written.await;
            if written.is_err() {
                // No client will ever know of the queue.
                if let Some(queue) = queue {
                    queue.do_send(CloseQueue);
                }
            }
            written
        })
    }
}

impl Handler<AllocateQueue> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: AllocateQueue, ctx: &mut Self::Context) -> Self::Result {
        self.check_queue_spec(msg.user_id, &msg.spec)?;
        let queue_id = new_queue_id();
        self.start_queue(&queue_id, msg.user_id, msg.spec, ctx);
        Ok(queue_id)
    }
}
