//! Reading a user's drafts: `GET /drafts` (a read on the reader threads) and the `drafts`
//! data set of `POST /register`.

use rusqlite::Connection;
use serde_json::Value;

use super::format::draft_dict;
use super::ops::syncing_user;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::reader::HistoryRead;
use crate::realm::state::RealmState;
use crate::store;

/// At most this many drafts go into a register response, the most recently edited (Zulip's
/// `MAX_DRAFTS_IN_REGISTER_RESPONSE`); `GET /drafts` has them all.
pub const MAX_DRAFTS_IN_REGISTER_RESPONSE: i64 = 1000;

/// `GET /drafts`: the user's drafts, least recently edited first.
#[derive(Debug, Clone)]
pub struct ListDrafts {
    pub user_id: UserId,
}

impl HistoryRead for ListDrafts {
    type Output = Vec<Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Vec<Value>> {
        if state.user(self.user_id).is_none() {
            tracing::warn!(realm.id = %state.realm().id, user.id = %self.user_id, "read for a user this realm does not have");
            return Err(ApiError::internal());
        }
        let user = syncing_user(state, self.user_id)?;
        Ok(store::drafts::of_user(conn, user.id, false, i64::MAX)?.iter().map(draft_dict).collect())
    }
}

/// The `drafts` data set: the user's drafts, most recently edited first, at most
/// [`MAX_DRAFTS_IN_REGISTER_RESPONSE`] (none when synchronization is off: turning it off
/// deleted them).
pub fn register_drafts(conn: &Connection, user: UserId) -> ApiResult<Value> {
    let drafts = store::drafts::of_user(conn, user, true, MAX_DRAFTS_IN_REGISTER_RESPONSE)?;
    Ok(Value::Array(drafts.iter().map(draft_dict).collect()))
}
