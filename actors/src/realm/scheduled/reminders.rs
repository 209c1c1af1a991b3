//! Reminders (`POST /reminders`, `DELETE /reminders/{id}`): a direct message from
//! Notification Bot to the user, at the time they chose, about a message they can read
//! (Zulip's `schedule_reminder_for_message` and `get_reminder_formatted_content`).
//!
//! The reminder's text is made when it is scheduled (and saved), and made again when it is
//! sent from the message as it is then; if the user can no longer read the message, the
//! saved text goes out.

use rusqlite::{Connection, Transaction};

use super::format;
use super::ops::not_in_future;
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, RealmId, UserId};
use crate::realm::catalog::{MAX_MESSAGE_LENGTH, MAX_REMINDER_NOTE_LENGTH};
use crate::realm::chat::changes::access_message;
use crate::realm::chat::format::dm_participants;
use crate::realm::chat::send::{plan_send, truncate, DirectRef, SendMessage, SendTo};
use crate::realm::model::User;
use crate::realm::notices::texts::{
    encode_channel, encode_hash_component, message_link_syntax, silent_mention, unused_fence,
};
use crate::realm::scheduled_data::{ReminderOf, ScheduledItem, ScheduledTarget};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::store::reactions::MessageRow;

/// Zulip's `normalize_note_text`: trailing whitespace and leading newlines removed, within
/// the maximum length.
fn normalize_note(note: &str) -> ApiResult<String> {
    let note = note.trim_end().trim_start_matches('\n');
    if note.chars().count() > MAX_REMINDER_NOTE_LENGTH {
        return Err(ApiError::bad_request(format!(
            "Maximum reminder note length: {MAX_REMINDER_NOTE_LENGTH} characters"
        )));
    }
    Ok(note.to_owned())
}

/// Users as a sentence of silent mentions ("A", "A and B", "A, B, and C").
fn mentions_for_display(users: &[&User]) -> String {
    let mentions: Vec<String> = users.iter().map(|u| silent_mention(u)).collect();
    match mentions.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

/// The text of a reminder about `message` for `user` (Zulip's
/// `get_reminder_formatted_content`).
pub fn reminder_content(state: &RealmState, realm_url: &str, message: &MessageRow, note: &str) -> ApiResult<String> {
    let note = if note.is_empty() { String::new() } else { normalize_note(note)? };
    let sender = state.user(message.sender_id).ok_or_else(ApiError::internal)?;
    let mention = silent_mention(sender);
    let widget = if message.content.starts_with("/poll") {
        Some("poll")
    } else if message.content.starts_with("/todo") {
        Some("todo list")
    } else {
        None
    };
    let (mut content, line) = match message.channel_id {
        Some(channel_id) => {
            let channel = state.channel(channel_id).ok_or_else(ApiError::internal)?;
            let url = format!(
                "{realm_url}/#narrow/channel/{}/topic/{}/near/{}",
                encode_channel(channel.id, &channel.name),
                encode_hash_component(&message.topic),
                message.id.0
            );
            let link = message_link_syntax(channel.id, &channel.name, &message.topic, message.id);
            let intro = if note.is_empty() {
                "You requested a reminder for the following message.".to_owned()
            } else {
                format!("You requested a reminder for the following message. Note:\n > {note}")
            };
            let line = match widget {
                Some(widget) => format!("{mention} [sent]({url}) a {widget} in {link}."),
                None => format!("{mention} [said]({url}) in {link}:"),
            };
            (intro, line)
        }
        None => {
            let participants = dm_participants(message.dm_key.as_deref().unwrap_or(""));
            let ids: Vec<String> = participants.iter().map(|u| u.0.to_string()).collect();
            let url = format!("{realm_url}/#narrow/dm/{}/near/{}", ids.join(","), message.id.0);
            let intro = if note.is_empty() {
                "You requested a reminder for the following direct message.".to_owned()
            } else {
                format!("You requested a reminder for the following direct message. Note:\n > {note}")
            };
            let others: Vec<&User> =
                participants.iter().filter(|u| **u != message.sender_id).filter_map(|u| state.user(*u)).collect();
            let line = match (others.is_empty(), widget) {
                (true, Some(widget)) => format!("You [sent]({url}) yourself a {widget}."),
                (true, None) => format!("You [sent]({url}) a note to yourself:"),
                (false, Some(widget)) => {
                    format!("{mention} [sent]({url}) a {widget} to {}.", mentions_for_display(&others))
                }
                (false, None) => format!("{mention} [said]({url}) to {}:", mentions_for_display(&others)),
            };
            (intro, line)
        }
    };
    content.push_str("\n\n");
    content.push_str(&line);
    if widget.is_none() {
        content.push('\n');
        let fence = unused_fence(&content);
        let frame = format!("{fence}quote\n\n{fence}");
        let max = MAX_MESSAGE_LENGTH.saturating_sub(content.chars().count() + frame.chars().count());
        let quoted = truncate(&message.content, max, "\n[message truncated]");
        content.push_str(&format!("{fence}quote\n{quoted}\n{fence}"));
    }
    Ok(content)
}

/// The reminder's text as of now, if `user` can still read the message.
pub fn current_content(
    state: &RealmState,
    conn: &Connection,
    realm_url: &str,
    user: &User,
    reminder: &ReminderOf,
) -> ApiResult<String> {
    let access = access_message(state, conn, user, reminder.message_id)?;
    reminder_content(state, realm_url, &access.message, &reminder.note)
}

/// `POST /reminders`, its parameters decoded.
#[derive(Debug, Clone)]
pub struct NewReminder {
    pub message_id: i64,
    pub deliver_at: i64,
    pub note: Option<String>,
    pub client: String,
}

/// A planned reminder: the message is looked at when written.
#[derive(Debug, Clone)]
pub struct ReminderCreated {
    state: RealmState,
    realm_id: RealmId,
    realm_url: String,
    user: UserId,
    new: NewReminder,
    now: i64,
    /// Set by the write.
    item: Option<ScheduledItem>,
}

/// Plans `POST /reminders`: a future time; then, when written, a message the user can read
/// (Zulip's "Invalid message(s)"), the note, and a direct message to themselves they may send.
pub fn plan_create(
    state: &RealmState,
    user: UserId,
    new: NewReminder,
    realm_url: String,
    now: i64,
) -> ApiResult<ReminderCreated> {
    if new.deliver_at <= now {
        return Err(not_in_future());
    }
    state.user_or_err(user)?;
    Ok(ReminderCreated { state: state.clone(), realm_id: state.realm().id, realm_url, user, new, now, item: None })
}

impl Change for ReminderCreated {
    /// The reminder's id.
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let state = &self.state;
        let user = state.user_or_err(self.user)?;
        let access = access_message(state, tx, user, MessageId(self.new.message_id))?;
        let note = self.new.note.clone().unwrap_or_default();
        let content = reminder_content(state, &self.realm_url, &access.message, &note)?;
        let msg = SendMessage {
            sender: user.id,
            to: SendTo::Direct(DirectRef::Ids(vec![user.id.0])),
            topic: None,
            content,
            client: self.new.client.clone(),
            queue_id: None,
            local_id: None,
            read_by_sender: Some(false),
        };
        let mut planned = plan_send(state, msg, &Default::default(), self.now)?;
        planned.check_stored(tx)?;
        let mut item = ScheduledItem {
            id: 0,
            sender: user.id,
            target: ScheduledTarget::Direct(vec![user.id]),
            content: planned.content().to_owned(),
            rendered_content: planned.rendered_html().to_owned(),
            client: self.new.client.clone(),
            deliver_at: self.new.deliver_at,
            read_by_sender: false,
            failed: false,
            failure_message: None,
            reminder: Some(ReminderOf { message_id: access.message.id, note }),
        };
        item.id = store::scheduled::insert(tx, self.realm_id, &item)?;
        self.item = Some(item);
        Ok(())
    }

    /// `reminders` `add`, to the user.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let Some(item) = self.item else { return Applied::new(0, Vec::new()) };
        let (id, event) = (item.id, format::added(&item));
        state.scheduled_mut().put(item);
        Applied::new(id, vec![event])
    }
}
