//! Alert words (Zulip's `GET`, `POST` and `DELETE /users/me/alert_words`, the
//! `alert_words` data set and event): words or phrases that flag the messages containing
//! them `has_alert_word` for the user (found when a message is rendered, see
//! [`crate::realm::user_data::AlertWordMatcher`]).
//!
//! - [`ops`]: adding and removing words, planned from the state.

pub mod ops;

use actix::prelude::*;

pub use ops::MAX_ALERT_WORD_LENGTH;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /users/me/alert_words`: the user's words, in the order they were added.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<String>>")]
pub struct ListAlertWords {
    pub user_id: UserId,
}

/// `POST /users/me/alert_words`: adds words; replies with all of the user's words.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<String>>")]
pub struct AddAlertWords {
    pub user_id: UserId,
    pub alert_words: Vec<String>,
}

/// `DELETE /users/me/alert_words`: removes words (compared case-insensitively); replies
/// with the user's remaining words.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<String>>")]
pub struct RemoveAlertWords {
    pub user_id: UserId,
    pub alert_words: Vec<String>,
}

impl Handler<ListAlertWords> for RealmActor {
    type Result = ApiResult<Vec<String>>;

    fn handle(&mut self, msg: ListAlertWords, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        Ok(self.state.user_data().alert_words(user.id).to_vec())
    }
}

impl Handler<AddAlertWords> for RealmActor {
    type Result = ApiResult<Vec<String>>;

    fn handle(&mut self, msg: AddAlertWords, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add_alert_words(&self.state, msg.user_id, msg.alert_words)?;
        self.commit(change)
    }
}

impl Handler<RemoveAlertWords> for RealmActor {
    type Result = ApiResult<Vec<String>>;

    fn handle(&mut self, msg: RemoveAlertWords, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove_alert_words(&self.state, msg.user_id, &msg.alert_words)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
