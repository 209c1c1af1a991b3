//! Changing messages after they are sent: reactions (`reactions`), typing notifications
//! (`typing`, and while editing, `typing_edit`), deletion (`delete`, of a whole topic,
//! `delete_topic`, and by a rule, `purge`) and the edit history (`history`), on top of one
//! access check shared by every message endpoint ([`access_message`]).

pub mod delete;
pub mod delete_topic;
pub mod emoji;
pub mod history;
pub mod purge;
pub mod reactions;
pub mod typing;
pub mod typing_edit;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use rusqlite::Connection;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::model::{Role, User};
use crate::realm::state::RealmState;
use crate::store::reactions::{self as store, MessageRow};

/// A message a user may see, and whether they have a `user_messages` row for it.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageAccess {
    pub message: MessageRow,
    pub has_user_message: bool,
}

/// Zulip's error for a message that does not exist or that the user may not see.
pub fn invalid_message() -> ApiError {
    ApiError::bad_request("Invalid message(s)")
}

/// The message `message_id` if `user` may read it (Zulip's `access_message`): a direct
/// message they received; a channel message of a public channel (for non-guests) or of a
/// channel they have content access to, which with protected history they must also have
/// received. Anything else is "Invalid message(s)".
pub fn access_message(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    message_id: MessageId,
) -> ApiResult<MessageAccess> {
    access(state, conn, user, message_id, false)
}

/// [`access_message`] for changing the message (reacting, deleting): messages of archived
/// channels are refused too.
pub fn access_message_to_change(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    message_id: MessageId,
) -> ApiResult<MessageAccess> {
    access(state, conn, user, message_id, true)
}

fn access(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    id: MessageId,
    modifying: bool,
) -> ApiResult<MessageAccess> {
    // A message newer than the state (a snapshot, on the reader threads) was sent under
    // rules the state may not know.
    if id > state.last_message_id() {
        return Err(invalid_message());
    }
    let message = store::message(conn, id)?.filter(|m| m.realm_id == user.realm_id).ok_or_else(invalid_message)?;
    let has_user_message = store::has_user_message(conn, user.id, id)?;
    let archived = message.channel_id.and_then(|c| state.channel(c)).is_some_and(|c| c.is_archived);
    let allowed =
        !(modifying && archived) && super::has_message_access(state, user, message.channel_id, has_user_message);
    if allowed {
        Ok(MessageAccess { message, has_user_message })
    } else {
        Err(invalid_message())
    }
}

/// After deleting messages of `channel` (those `deleted` answers true for): its new first
/// message when its first was among them (`Some(None)` if none is left), else `None`.
pub fn new_first_message(
    state: &RealmState,
    conn: &Connection,
    channel: ChannelId,
    deleted: impl Fn(MessageId) -> bool,
) -> ApiResult<Option<Option<MessageId>>> {
    match state.first_message_id(channel) {
        Some(first) if deleted(first) => {
            Ok(Some(crate::store::channels::first_message_id(conn, channel)?.map(MessageId)))
        }
        _ => Ok(None),
    }
}

/// A channel's new first message, set in the state, and its `stream` update event to
/// `told` (Zulip's `check_update_first_message_id`: who is told of the deletion).
pub fn first_message_changed(
    state: &mut RealmState,
    channel: ChannelId,
    first: Option<MessageId>,
    told: Vec<UserId>,
) -> crate::events::Outgoing {
    state.set_first_channel_message(channel, first);
    let name = state.channel(channel).map(|c| c.name.clone()).unwrap_or_default();
    let body = serde_json::json!({"op": "update", "property": "first_message_id", "value": first,
                                  "stream_id": channel, "name": name});
    crate::events::Outgoing::to(told, crate::events::Event::new("stream", body))
}

/// Who gets the events of a change to `message` (Zulip's
/// `event_recipient_ids_for_action_on_messages`), ascending: for a direct message, its
/// recipients; for a channel message, the channel's subscribers, narrowed to those who
/// received it when history is protected and, for public channels, widened to non-guests
/// who have a row for it (they unsubscribed, or reacted as historical readers). Only
/// active users.
pub fn event_recipients(state: &RealmState, conn: &Connection, message: &MessageRow) -> ApiResult<Vec<UserId>> {
    let received: BTreeSet<UserId> = store::message_recipients(conn, message.id)?.into_iter().collect();
    let audience: BTreeSet<UserId> = match message.channel_id.and_then(|id| state.channel(id)) {
        None if message.channel_id.is_some() => BTreeSet::new(),
        None => received,
        Some(channel) => {
            let subscribers: BTreeSet<UserId> = state.subscribers(channel.id).collect();
            if !channel.history_public_to_subscribers {
                subscribers.intersection(&received).copied().collect()
            } else if channel.invite_only {
                subscribers
            } else {
                let readers = received.into_iter().filter(|id| state.user(*id).is_some_and(|u| u.role != Role::Guest));
                subscribers.into_iter().chain(readers).collect()
            }
        }
    };
    Ok(audience.into_iter().filter(|id| state.is_active_user(*id)).collect())
}
