//! Per-user message flags and unread state: `POST /messages/flags`, the `mark_*_as_read`
//! endpoints, register data sets `update_message_flags` (unread_msgs), `starred_messages`,
//! `recent_private_conversations` (Zulip's `do_update_message_flags`,
//! `do_mark_all_as_read`, `do_mark_stream_messages_as_read`).
//!
//! Flags live in SQLite only; every change concerns the acting user alone, so its
//! `update_message_flags` event goes to that user's queues only and lists only the
//! messages whose flag changed. The changes are in `ops`.

pub mod narrow;
pub mod ops;
pub mod register;
pub mod unread;

use actix::prelude::*;
use serde_json::{json, Map, Value};

pub use ops::{
    plan_flags, plan_mark_all_read, plan_mark_channel_read, FlagChange, FlagOp, FlagOutcome, FlagUpdate,
    DEFAULT_HISTORICAL_FLAGS,
};

use crate::error::ApiResult;
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::actor::RealmActor;

/// `POST /messages/flags`: the response's data (`messages` as sent, and the channels
/// skipped when marking unread).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct UpdateMessageFlags {
    pub user_id: UserId,
    pub messages: Vec<MessageId>,
    pub op: String,
    pub flag: String,
}

impl Handler<UpdateMessageFlags> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: UpdateMessageFlags, _: &mut Self::Context) -> Self::Result {
        let change = FlagChange::parse(&msg.flag, &msg.op)?;
        let outcome = self.commit(plan_flags(&self.state, msg.user_id, change, msg.messages.clone())?)?;
        let mut data = Map::new();
        data.insert("messages".into(), json!(msg.messages));
        data.insert("ignored_because_not_subscribed_channels".into(), json!(outcome.ignored_channels));
        Ok(data)
    }
}

/// `POST /mark_all_as_read`: `{"complete": true}`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct MarkAllAsRead {
    pub user_id: UserId,
}

impl Handler<MarkAllAsRead> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: MarkAllAsRead, _: &mut Self::Context) -> Self::Result {
        self.commit(plan_mark_all_read(&self.state, msg.user_id)?)?;
        let mut data = Map::new();
        // Agora marks everything in one transaction: it always completes.
        data.insert("complete".into(), Value::Bool(true));
        Ok(data)
    }
}

/// `POST /mark_stream_as_read` (no topic) and `POST /mark_topic_as_read`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct MarkChannelAsRead {
    pub user_id: UserId,
    pub channel_id: ChannelId,
    pub topic: Option<String>,
}

impl Handler<MarkChannelAsRead> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: MarkChannelAsRead, _: &mut Self::Context) -> Self::Result {
        let change = plan_mark_channel_read(&self.state, msg.user_id, msg.channel_id, msg.topic)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
