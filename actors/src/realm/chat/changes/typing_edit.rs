//! Typing while editing a message: `POST /messages/{message_id}/typing` and the
//! `typing_edit_message` event (Zulip's `send_message_edit_notification_backend`,
//! `do_send_stream_message_edit_typing_notification` and
//! `do_send_direct_message_edit_typing_notification`). Nothing is stored: the message is
//! read and checked on a reader thread, then the realm actor sends the event.

use actix::prelude::*;
use rusqlite::Connection;
use serde_json::json;

use super::access_message_to_change;
use super::typing::{channel_audience, user_flag, TypingNotice};
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::actor::RealmActor;
use crate::realm::chat::edit::checks::check_content_edit_within;
use crate::realm::chat::format::dm_participants;
use crate::realm::chat::viewer;
use crate::realm::state::RealmState;

/// `POST /messages/{message_id}/typing`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct SetEditTyping {
    pub user_id: UserId,
    pub message_id: MessageId,
    /// `start` or `stop` (checked by the route).
    pub op: String,
}

/// The check and the notice, on a reader thread (the message is in the database).
struct EditTyping {
    msg: SetEditTyping,
    now: i64,
}

impl HistoryRead for EditTyping {
    type Output = TypingNotice;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<TypingNotice> {
        plan_edit_typing(state, conn, self.msg, self.now)
    }
}

/// Checks an edit's typing notification in Zulip's order: the message as one changes it
/// ("Invalid message(s)"), the right to edit its content (with no grace period), then the
/// sender's setting for its kind of conversation. A channel message's event goes to its
/// subscribers (none past Zulip's size limit), a direct message's to its participants; in
/// both cases only to those who receive typing notifications.
pub fn plan_edit_typing(
    state: &RealmState,
    conn: &Connection,
    msg: SetEditTyping,
    now: i64,
) -> ApiResult<TypingNotice> {
    let user = viewer(state, msg.user_id)?;
    let message = access_message_to_change(state, conn, user, msg.message_id)?.message;
    check_content_edit_within(state, user, &message, now, 0)?;
    let receives =
        |id: &UserId| state.user(*id).is_some_and(|u| u.is_active && user_flag(u, "receives_typing_notifications"));
    let (recipient, recipients) = match message.channel_id {
        Some(channel) => {
            if !user_flag(user, "send_stream_typing_notifications") {
                return Err(ApiError::bad_request("User has disabled typing notifications for channel messages"));
            }
            let notified: Vec<UserId> = channel_audience(state, channel).into_iter().filter(receives).collect();
            (json!({"type": "channel", "channel_id": channel, "topic": message.topic}), notified)
        }
        None => {
            if !user_flag(user, "send_private_typing_notifications") {
                return Err(ApiError::bad_request("User has disabled typing notifications for direct messages"));
            }
            let participants = dm_participants(message.dm_key.as_deref().unwrap_or_default());
            // Zulip's one-to-one conversations list the sender, then the other person (the
            // sender again when writing to oneself); groups list everyone by id.
            let listed = if participants.len() <= 2 {
                let other = participants.iter().copied().find(|id| *id != user.id).unwrap_or(user.id);
                vec![user.id, other]
            } else {
                participants
            };
            let notified: Vec<UserId> = listed.into_iter().filter(receives).collect();
            (json!({"type": "direct", "user_ids": notified}), notified)
        }
    };
    let body = json!({"op": msg.op, "sender_id": user.id, "message_id": message.id, "recipient": recipient});
    let mut recipients = recipients;
    recipients.dedup();
    Ok(TypingNotice { kind: "typing_edit_message", body, recipients })
}

impl Handler<SetEditTyping> for RealmActor {
    /// Not atomic: the message is read on the reader threads meanwhile.
    type Result = ResponseActFuture<Self, ApiResult<()>>;

    fn handle(&mut self, msg: SetEditTyping, _: &mut Self::Context) -> Self::Result {
        let read = self.read(EditTyping { msg, now: crate::clock::now() });
        Box::pin(read.into_actor(self).map(|notice, actor, _| actor.commit(notice?)))
    }
}
