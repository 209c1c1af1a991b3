//! Read receipts: `GET /messages/{message_id}/read_receipts` (Zulip's `read_receipts`
//! view), a history read.

use rusqlite::Connection;
use serde_json::Value;

use super::changes::access_message;
use super::viewer;
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::catalog;
use crate::realm::state::RealmState;
use crate::store::submessages::readers;

/// `GET /messages/{message_id}/read_receipts`: the ids of who read the message.
#[derive(Debug)]
pub struct GetReadReceipts {
    pub user_id: UserId,
    pub message_id: MessageId,
}

impl HistoryRead for GetReadReceipts {
    type Output = Vec<UserId>;

    /// Anyone who may read the message may ask, once the organization allows read
    /// receipts. As in Zulip, the list leaves out the sender, deactivated users, those
    /// with `send_read_receipts` off, those who muted the requester and those the
    /// requester muted; bots are in it (a bot may mark messages read to say it handled
    /// them).
    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Vec<UserId>> {
        let user = viewer(state, self.user_id)?;
        let message = access_message(state, conn, user, self.message_id)?.message;
        let enabled = catalog::realm_setting("enable_read_receipts")
            .map(|s| s.value(&state.realm().settings, Some(state)))
            .is_none_or(|v| v.as_bool() != Some(false));
        if !enabled {
            return Err(ApiError::bad_request("Read receipts are disabled in this organization."));
        }
        let muting = state.user_data();
        Ok(readers(conn, message.id)?
            .into_iter()
            .filter(|id| *id != message.sender_id)
            .filter(|id| {
                state.user(*id).is_some_and(|u| {
                    u.is_active && u.settings.get("send_read_receipts").and_then(Value::as_bool).unwrap_or(true)
                })
            })
            .filter(|id| !muting.has_muted(*id, user.id) && !muting.has_muted(user.id, *id))
            .collect())
    }
}
