//! **Test support only** (feature `test-support`, enabled for the integration tests alone):
//! a realm actor message that stores a channel or direct message directly, with its
//! `user_messages` rows and search entry, until sending lands. It skips every check and
//! sends no events.

use actix::prelude::*;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::chat::flag;
use crate::realm::ops;
use crate::store;

/// Where a test message goes.
#[derive(Debug, Clone)]
pub enum TestRecipient {
    /// A channel and topic; the channel's current subscribers receive it.
    Channel(ChannelId, String),
    /// The other participants of a direct message (the sender is added).
    Direct(Vec<UserId>),
}

/// Test support: stores a message and returns its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct InsertTestMessage {
    pub sender: UserId,
    pub to: TestRecipient,
    pub content: String,
    /// Unix seconds; `None` is now.
    pub date_sent: Option<i64>,
    /// The raw `edit_history` column.
    pub edit_history: Option<String>,
}

impl Handler<InsertTestMessage> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: InsertTestMessage, _: &mut Self::Context) -> Self::Result {
        let realm_id = self.state.realm().id;
        let (channel, topic, dm_key, recipients, base_flags) = match msg.to {
            TestRecipient::Channel(channel, topic) => {
                (Some(channel), topic, None, self.state.subscribers(channel).collect(), 0)
            }
            TestRecipient::Direct(mut users) => {
                users.push(msg.sender);
                users.sort();
                users.dedup();
                let key = users.iter().map(|u| u.0.to_string()).collect::<Vec<_>>().join(",");
                (None, String::new(), Some(key), users, flag::IS_PRIVATE)
            }
        };
        let row = store::reactions::TestMessage {
            realm_id,
            sender: msg.sender,
            channel,
            topic: &topic,
            content: &msg.content,
            rendered_content: &crate::markdown::render(&msg.content),
            date_sent: msg.date_sent.unwrap_or_else(ops::now),
            dm_key: dm_key.as_deref(),
            edit_history: msg.edit_history.as_deref(),
        };
        self.store.write(|tx| {
            let id = store::reactions::insert_test_message(tx, &row)?;
            for user in &recipients {
                let flags = if *user == msg.sender { base_flags | flag::READ } else { base_flags };
                store::reactions::ensure_user_message(tx, *user, id, flags)?;
            }
            Ok::<_, ApiError>(id)
        })
    }
}
