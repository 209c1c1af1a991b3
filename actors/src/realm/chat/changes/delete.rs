//! Deleting a message: `DELETE /messages/{message_id}` and the `delete_message` event
//! (Zulip's `delete_message_backend`, `validate_can_delete_message`, `do_delete_messages`).

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Value};

use super::{access_message_to_change, event_recipients, new_first_message};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::catalog;
use crate::realm::chat::viewer;
use crate::realm::model::User;
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::reactions::{self as store, MessageRow};

/// `DELETE /messages/{message_id}`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteMessage {
    pub user_id: UserId,
    pub message_id: MessageId,
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

/// A deletion, planned: the access and permission checks need the stored message and run
/// when it is written, against the state it was planned with.
#[derive(Debug, Clone)]
pub struct MessageDeletion {
    state: RealmState,
    user: UserId,
    message_id: MessageId,
    now: i64,
    /// Set by the write.
    done: Option<Deleted>,
}

/// A deleted message: its row, who could see it, and its channel's new first message when
/// it was the first.
#[derive(Debug, Clone)]
struct Deleted {
    message: MessageRow,
    recipients: Vec<UserId>,
    first: Option<(ChannelId, Option<MessageId>)>,
}

/// Plans the deletion of `message_id` by `user`.
pub fn plan_delete(state: &RealmState, user: UserId, message_id: MessageId, now: i64) -> ApiResult<MessageDeletion> {
    let user = viewer(state, user)?.id;
    Ok(MessageDeletion { state: state.clone(), user, message_id, now, done: None })
}

impl Change for MessageDeletion {
    type Output = ();

    /// Deletes the message with its rows, reactions and search entry.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let state = &self.state;
        let user = viewer(state, self.user)?;
        let message = access_message_to_change(state, tx, user, self.message_id)?.message;
        check_can_delete(state, user, &message, self.now)?;
        let mut recipients = event_recipients(state, tx, &message)?;
        // The deleter is told too, if they have content access to the channel (FL 457).
        let told_deleter = match message.channel_id.and_then(|id| state.channel(id)) {
            Some(channel) => state.has_content_access(user, channel),
            None => false,
        };
        if told_deleter && !recipients.contains(&user.id) {
            recipients.push(user.id);
        }
        store::delete_message(tx, &message)?;
        // The channel's first message may have been the one deleted.
        let first = match message.channel_id {
            Some(channel) => {
                new_first_message(state, tx, channel, |id| id == message.id)?.map(|first| (channel, first))
            }
            None => None,
        };
        self.done = Some(Deleted { message, recipients, first });
        Ok(())
    }

    /// The `delete_message` event, for everyone who could see the message and for the
    /// deleter with content access to its channel.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let MessageDeletion { state: planned, done, .. } = self;
        drop(planned);
        let Some(Deleted { message, recipients, first }) = done else { return Applied::events(Vec::new()) };
        if let Some((channel, first)) = first {
            state.set_first_channel_message(channel, first);
        }
        let mut fields = json!({"message_ids": [message.id]});
        if let (Value::Object(map), Some(channel)) = (&mut fields, message.channel_id) {
            map.insert("message_type".into(), json!("stream"));
            map.insert("stream_id".into(), json!(channel));
            map.insert("topic".into(), json!(message.topic));
        } else if let Value::Object(map) = &mut fields {
            map.insert("message_type".into(), json!("private"));
        }
        Applied::events(vec![Outgoing::to(recipients, Event::new("delete_message", fields))])
    }
}

impl Handler<DeleteMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteMessage, _: &mut Self::Context) -> Self::Result {
        let change = plan_delete(&self.state, msg.user_id, msg.message_id, crate::clock::now())?;
        self.commit(change)
    }
}
