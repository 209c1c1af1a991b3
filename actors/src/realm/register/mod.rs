//! `POST /register` and the queue-creating `GET /events`: a queue for the client and, for
//! register, the initial state as of the same moment (`reads`).

mod pending;
mod personal;
pub mod reads;

use std::collections::BTreeSet;

use actix::prelude::*;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;
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
/// of the response.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
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

impl Handler<Register> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: Register, ctx: &mut Self::Context) -> Self::Result {
        let user = self.check_queue_spec(msg.user_id, &msg.spec)?;
        let queue_id = new_queue_id();
        // The state and the queue are made in the same handler, so no event can fall
        // between them: `last_event_id` is always -1.
        let wants_messages = msg.fetch.fetch_event_types.as_ref().is_none_or(|t| t.contains("message"));
        let max_message_id =
            if wants_messages { crate::store::messages::max_message_id(&*self.store.conn()?, user.id)? } else { -1 };
        let presence = self.presence.load_full();
        let context = reads::Context {
            state: &self.state,
            config: &self.config,
            user,
            spec: &msg.spec,
            fetch: &msg.fetch,
            store: &self.store,
            max_message_id,
            presence: &presence,
        };
        let snapshot = reads::initial_state(&context, &queue_id)?;
        self.start_queue(&queue_id, msg.user_id, msg.spec, ctx);
        Ok(snapshot)
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
