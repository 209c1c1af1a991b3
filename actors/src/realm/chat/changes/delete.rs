//! Deleting a message: `DELETE /messages/{message_id}` and the `delete_message` event
//! (Zulip's `delete_message_backend`, `validate_can_delete_message`, `do_delete_messages`).

use actix::prelude::*;
use serde_json::{json, Value};

use super::{access_message_to_change, event_recipients};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::realm::actor::RealmActor;
use crate::realm::catalog;
use crate::realm::model::User;
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::store::reactions::{self as store, MessageRow};
use crate::store::Store;

/// `DELETE /messages/{message_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteMessage {
    pub user_id: UserId,
    pub message_id: i64,
}

fn no_permission() -> ApiError {
    ApiError::bad_request("You don't have permission to delete this message")
}

/// The organization's `message_content_delete_limit_seconds` (`None`: no limit).
fn delete_limit(state: &RealmState) -> Option<i64> {
    catalog::realm_setting("message_content_delete_limit_seconds")
        .and_then(|s| s.value(&state.realm().settings, Some(state)).as_i64())
}

/// Whether `user` may delete `message` at `now` (Zulip's `validate_can_delete_message`):
/// members of the organization's or the channel's `can_delete_any_message_group` always;
/// the sender (or their bot's owner) as a member of the channel's
/// `can_delete_own_message_group`, or of the organization's within
/// `message_content_delete_limit_seconds`.
pub fn check_can_delete(state: &RealmState, user: &User, message: &MessageRow, now: i64) -> ApiResult<()> {
    if has_realm_permission(state, "can_delete_any_message_group", user.id) {
        return Ok(());
    }
    let channel = message.channel_id.and_then(|id| state.channel(id));
    if channel.is_some_and(|c| state.in_channel_group(c, "can_delete_any_message_group", user)) {
        return Ok(());
    }
    let sender_bot_owner = state.user(message.sender_id).and_then(|s| s.bot_owner_id);
    if message.sender_id != user.id && sender_bot_owner != Some(user.id) {
        return Err(no_permission());
    }
    if channel.is_some_and(|c| state.in_channel_group(c, "can_delete_own_message_group", user)) {
        return Ok(());
    }
    if !has_realm_permission(state, "can_delete_own_message_group", user.id) {
        return Err(no_permission());
    }
    match delete_limit(state) {
        Some(limit) if now - message.date_sent > limit => {
            Err(ApiError::bad_request("The time limit for deleting this message has passed"))
        }
        _ => Ok(()),
    }
}

/// Deletes a message with its rows, reactions and search entry, and returns the
/// `delete_message` event for everyone who could see it.
pub fn delete_message(
    state: &RealmState,
    store: &Store,
    user: &User,
    message_id: i64,
    now: i64,
) -> ApiResult<Vec<Outgoing>> {
    let conn = store.conn()?;
    let message = access_message_to_change(state, &conn, user, message_id)?.message;
    check_can_delete(state, user, &message, now)?;
    let recipients = event_recipients(state, &conn, &message)?;
    drop(conn);
    store.write(|tx| store::delete_message(tx, &message))?;
    let mut fields = json!({"message_ids": [message.id]});
    if let (Value::Object(map), Some(channel)) = (&mut fields, message.channel_id) {
        map.insert("message_type".into(), json!("stream"));
        map.insert("stream_id".into(), json!(channel));
        map.insert("topic".into(), json!(message.topic));
    } else if let Value::Object(map) = &mut fields {
        map.insert("message_type".into(), json!("private"));
    }
    Ok(vec![Outgoing::to(recipients, Event::new("delete_message", fields))])
}

impl Handler<DeleteMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteMessage, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        let events = delete_message(&self.state, &self.store, user, msg.message_id, crate::clock::now())?;
        // The channel's first message may have been the one deleted.
        if let Some(channel) = events.first().and_then(|o| o.event.get("stream_id")).and_then(Value::as_i64) {
            let channel = crate::ids::ChannelId(channel);
            if self.state.first_message_id(channel) == Some(msg.message_id) {
                let first = crate::store::channels::first_message_id(&*self.store.conn()?, channel)?;
                self.state.set_first_channel_message(channel, first);
            }
        }
        self.committed(events);
        Ok(())
    }
}
