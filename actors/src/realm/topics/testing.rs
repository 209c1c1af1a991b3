//! **Test support only** (feature `test-support`, enabled for the integration tests alone):
//! a realm actor message that stores a channel message directly, for the tests of channel
//! topics until the messages issue adds sending. It skips every check and sends no events.

use actix::prelude::*;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::ops;
use crate::store;

/// Test support: stores a channel message, received by the channel's current subscribers,
/// and returns its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct InsertMessage {
    pub sender: UserId,
    pub channel: ChannelId,
    pub topic: String,
    pub content: String,
}

impl Handler<InsertMessage> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: InsertMessage, _: &mut Self::Context) -> Self::Result {
        let realm_id = self.state.realm().id;
        let recipients: Vec<UserId> = self.state.subscribers(msg.channel).collect();
        self.store.write(|tx| {
            let id = store::channels::insert_message(
                tx,
                realm_id,
                msg.sender,
                msg.channel,
                &msg.topic,
                &msg.content,
                ops::now(),
            )?;
            store::channels::insert_user_messages(tx, id, &recipients)?;
            Ok::<_, ApiError>(id)
        })
    }
}
