//! **Test support only** (feature `test-support`, enabled for the integration tests alone):
//! what the API cannot do to a message sent with `POST /messages`: date it in the past
//! (for the edit and deletion time limits) and give it a prepared edit history. It skips
//! every check and sends no events.

use actix::prelude::*;
use rusqlite::Transaction;

use crate::error::ApiResult;
use crate::ids::MessageId;
use crate::realm::actor::RealmActor;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Test support: moves a message's `date_sent` into the past and, when given, replaces its
/// raw `edit_history` column (its last edit then dates from `date_sent`).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct BackdateMessage {
    pub message_id: i64,
    /// Unix seconds.
    pub date_sent: i64,
    /// The raw `edit_history` column.
    pub edit_history: Option<String>,
}

impl Change for BackdateMessage {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let id = MessageId(self.message_id);
        Ok(store::reactions::set_test_message_past(tx, id, self.date_sent, self.edit_history.as_deref())?)
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}

impl Handler<BackdateMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: BackdateMessage, _: &mut Self::Context) -> Self::Result {
        self.commit(msg)
    }
}
