//! Messages: sending (`send`), editing and moving (`edit`), deletion, reactions, typing and
//! the edit history (`changes`), per-user flags and unread counts (`flags`), fetching with
//! narrows (`fetch`, `narrow`), rendering (`render`, `highlight`) and the message object
//! (`format`).
//!
//! Messages live in SQLite (table `messages`, per-user rows in `user_messages`), not in the
//! realm state. Every change follows the realm's plan, write, apply
//! ([`crate::realm::Change`]): the plan checks what the state can tell; where Zulip checks
//! the stored message first (edits, deletion, reactions, flags), the plan keeps the state it
//! was planned with and [`crate::realm::Change::write`] runs the checks in Zulip's order
//! inside the transaction, then writes; `apply` updates memory (a channel's first message,
//! topic policies) and returns the events. Reads (`fetch`, the edit history, the range of
//! `flags/narrow`) run on the reader threads against the published state: the narrow
//! parser resolves a narrow into a typed filter, and `crate::store::narrow` turns it into
//! SQL with bound parameters only.

pub mod changes;
pub mod edit;
pub mod fetch;
#[cfg(test)]
pub(crate) mod fixture_tests;
pub mod flags;
pub mod format;
pub mod highlight;
pub mod narrow;
#[cfg(test)]
mod narrow_prop_tests;
pub mod preview;
pub mod receipts;
pub mod render;
pub mod send;
#[cfg(feature = "test-support")]
pub mod testing;
#[cfg(test)]
mod tests;
pub mod widgets;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::model::{Role, User};
use crate::realm::state::RealmState;

/// The user a request (or a read) acts for. They are authenticated, so a user the state
/// does not have is the server's fault: logged, and the generic 500.
pub fn viewer(state: &RealmState, id: UserId) -> ApiResult<&User> {
    state.user(id).ok_or_else(|| {
        tracing::warn!(realm.id = %state.realm().id, user.id = %id, "request for a user this realm does not have");
        ApiError::internal()
    })
}

/// Zulip's `has_message_access`: whether `user` may read a message of `channel` (`None`
/// for a direct message), `has_row` telling whether they received it. Direct messages
/// only by their recipients; public channels by every non-guest (and web-public ones by
/// everyone); a private channel with protected history only by subscribers who received
/// the message; otherwise by those with content access to the channel.
pub fn has_message_access(state: &RealmState, user: &User, channel: Option<ChannelId>, has_row: bool) -> bool {
    let Some(channel) = channel else { return has_row };
    let Some(channel) = state.channel(channel) else { return false };
    if channel.is_web_public || (!channel.invite_only && user.role != Role::Guest) {
        return true;
    }
    if !channel.history_public_to_subscribers {
        return has_row && state.has_content_access(user, channel);
    }
    state.has_content_access(user, channel)
}

/// A message's `edit_history` as the organization lets people see it
/// (`message_edit_history_visibility_policy`): nothing under `none`; under `moves_only`
/// only the moves, without the previous contents.
pub fn visible_edit_history(state: &RealmState, history: serde_json::Value) -> Option<serde_json::Value> {
    let policy = crate::realm::catalog::realm_setting("message_edit_history_visibility_policy")
        .map(|s| s.value(&state.realm().settings, Some(state)));
    match policy.as_ref().and_then(|v| v.as_str()) {
        Some("none") => None,
        Some("moves_only") => {
            let moves = history
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e.get("prev_topic").is_some() || e.get("prev_stream").is_some())
                .map(|e| {
                    let mut e = e.clone();
                    if let Some(map) = e.as_object_mut() {
                        map.shift_remove("prev_content");
                        map.shift_remove("prev_rendered_content");
                    }
                    e
                })
                .collect::<Vec<_>>();
            (!moves.is_empty()).then_some(serde_json::Value::Array(moves))
        }
        _ => Some(history),
    }
}

/// Zulip's `UserMessage` flag bits.
pub mod flag {
    pub const READ: i64 = 1;
    pub const STARRED: i64 = 2;
    pub const COLLAPSED: i64 = 4;
    pub const MENTIONED: i64 = 8;
    pub const STREAM_WILDCARD_MENTIONED: i64 = 16;
    pub const HAS_ALERT_WORD: i64 = 512;
    pub const HISTORICAL: i64 = 1024;
    pub const IS_PRIVATE: i64 = 2048;
    pub const TOPIC_WILDCARD_MENTIONED: i64 = 8192;
    pub const GROUP_MENTIONED: i64 = 16384;
}
