//! **Test support only** (feature `test-support`, enabled for the integration tests alone):
//! what the API cannot do to a message sent with `POST /messages`: date it in the past
//! (for the edit and deletion time limits) and give it a prepared edit history. It skips
//! every check and sends no events.

use actix::prelude::*;

use crate::error::{ApiError, ApiResult};
use crate::ids::MessageId;
use crate::realm::actor::RealmActor;
use crate::store;

/// Test support: moves a message's `date_sent` into the past and, when given, replaces its
/// raw `edit_history` column (its last edit then dates from `date_sent`).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct BackdateMessage {
    pub message_id: i64,
    /// Unix seconds.
    pub date_sent: i64,
    /// The raw `edit_history` column.
    pub edit_history: Option<String>,
}

impl Handler<BackdateMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: BackdateMessage, _: &mut Self::Context) -> Self::Result {
        self.store.write(|tx| {
            store::reactions::set_test_message_past(
                tx,
                MessageId(msg.message_id),
                msg.date_sent,
                msg.edit_history.as_deref(),
            )?;
            Ok::<_, ApiError>(())
        })
    }
}
