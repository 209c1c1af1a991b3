//! **Test support only** (feature `test-support`, enabled for the integration tests alone):
//! a realm actor message that stores a channel or direct message with its per-user rows
//! and flags, until sending lands. It skips every check and sends no events.

use actix::prelude::*;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::chat::flag;
use crate::realm::ops;
use crate::store::user_messages;

/// Where a test message goes.
#[derive(Debug, Clone)]
pub enum TestRecipient {
    /// A channel topic: received by the channel's current subscribers.
    Channel { channel: ChannelId, topic: String },
    /// A direct message to these users (the sender is added).
    Direct(Vec<UserId>),
}

/// Test support: stores a message from `sender` and returns its id. The sender's row is
/// read; `mentioned` users get the `mentioned` flag, `wildcard` users the channel
/// wildcard flag.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct InsertTestMessage {
    pub sender: UserId,
    pub to: TestRecipient,
    pub mentioned: Vec<UserId>,
    pub wildcard: Vec<UserId>,
}

impl Handler<InsertTestMessage> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: InsertTestMessage, _: &mut Self::Context) -> Self::Result {
        let realm = self.state.realm().id;
        let (channel, topic, dm_key, mut recipients, base) = match &msg.to {
            TestRecipient::Channel { channel, topic } => {
                (Some(*channel), topic.clone(), None, self.state.subscribers(*channel).collect::<Vec<_>>(), 0)
            }
            TestRecipient::Direct(users) => {
                let mut ids: Vec<UserId> = users.iter().copied().chain([msg.sender]).collect();
                ids.sort();
                ids.dedup();
                let key = ids.iter().map(|u| u.0.to_string()).collect::<Vec<_>>().join(",");
                (None, String::new(), Some(key), ids, flag::IS_PRIVATE)
            }
        };
        if !recipients.contains(&msg.sender) {
            recipients.push(msg.sender);
        }
        self.store.write(|tx| {
            let id = user_messages::insert_message(
                tx,
                realm,
                msg.sender,
                channel,
                &topic,
                "hello",
                dm_key.as_deref(),
                ops::now(),
            )?;
            for user in &recipients {
                let mut flags = base;
                if *user == msg.sender {
                    flags |= flag::READ;
                }
                if msg.mentioned.contains(user) {
                    flags |= flag::MENTIONED;
                }
                if msg.wildcard.contains(user) {
                    flags |= flag::STREAM_WILDCARD_MENTIONED;
                }
                user_messages::insert_rows(tx, *user, &[id], flags)?;
            }
            Ok::<_, ApiError>(id)
        })
    }
}
