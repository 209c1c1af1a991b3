//! The message object of `GET /messages`, `GET /messages/{id}` and the `message` event,
//! with Zulip's keys in Zulip's order.
//!
//! `recipient_id`: Agora has no recipient table; it derives one small, stable id per
//! conversation in one space, as Zulip's are: a channel message has 3 × its channel's id;
//! a one-to-one direct message 3 × the recipient's user id + 1 (the sender's own id for a
//! message to oneself); a group direct message 3 × its conversation's number (table
//! `dm_groups`, given when its first message is sent) + 2.

use serde_json::{json, Map, Value};

use super::flag;
use crate::ids::UserId;
use crate::realm::format::avatar_url;
use crate::realm::model::{EmailVisibility, User};
use crate::realm::state::RealmState;
use crate::store::messages::{MessageRow, ReactionRow};

/// The participants of a direct message, from its `dm_key`.
pub fn dm_participants(dm_key: &str) -> Vec<UserId> {
    dm_key.split(',').filter_map(|id| id.parse().ok()).map(UserId).collect()
}

/// The `dm_key` of a direct message among `users` (sorted, deduplicated ids).
pub fn dm_key(users: &[UserId]) -> String {
    let mut ids: Vec<i64> = users.iter().map(|u| u.0).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// The `recipient_id` of a message (see the module documentation).
pub fn recipient_id(state: &RealmState, row: &MessageRow) -> i64 {
    if let Some(channel) = row.channel_id {
        return 3 * channel.0;
    }
    let key = row.dm_key.as_deref().unwrap_or("");
    match dm_participants(key).as_slice() {
        [only] => 3 * only.0 + 1,
        [a, b] => 3 * (if *a == row.sender_id { b.0 } else { a.0 }) + 1,
        // Every group conversation is numbered when its first message is written.
        _ => 3 * state.dm_group(key).unwrap_or(0) + 2,
    }
}

/// The names of a user's flag bits, in Zulip's order, plus the derived
/// `wildcard_mentioned`; `is_private` is internal (Zulip's `NON_API_FLAGS`).
pub fn flag_names(bits: i64) -> Vec<&'static str> {
    const NAMES: &[(i64, &str)] = &[
        (flag::READ, "read"),
        (flag::STARRED, "starred"),
        (flag::COLLAPSED, "collapsed"),
        (flag::MENTIONED, "mentioned"),
        (flag::STREAM_WILDCARD_MENTIONED, "stream_wildcard_mentioned"),
        (flag::HAS_ALERT_WORD, "has_alert_word"),
        (flag::HISTORICAL, "historical"),
        (flag::TOPIC_WILDCARD_MENTIONED, "topic_wildcard_mentioned"),
        (flag::GROUP_MENTIONED, "group_mentioned"),
    ];
    let mut names: Vec<&str> = NAMES.iter().filter(|(bit, _)| bits & bit != 0).map(|(_, name)| *name).collect();
    if bits & (flag::STREAM_WILDCARD_MENTIONED | flag::TOPIC_WILDCARD_MENTIONED) != 0 {
        names.push("wildcard_mentioned");
    }
    names
}

/// The flags a user sees on a message: their row's, or `read` + `historical` without one.
pub fn viewer_flags(bits: Option<i64>) -> i64 {
    bits.unwrap_or(flag::READ | flag::HISTORICAL)
}

/// How the message object is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// For `GET /messages`: rendered or raw content, the viewer's flags.
    Fetch { apply_markdown: bool, client_gravatar: bool, flags: i64 },
    /// For the shared `message` event: raw content plus `rendered_content` and
    /// `avatar_computable` for the queue layer to shape.
    Event,
}

/// The message object.
pub fn message_dict(
    state: &RealmState,
    row: &MessageRow,
    reactions: &[&ReactionRow],
    shape: Shape,
) -> Map<String, Value> {
    let sender = state.user(row.sender_id);
    let mut m = Map::new();
    m.insert("id".into(), json!(row.id));
    m.insert("sender_id".into(), json!(row.sender_id));
    let content = match shape {
        Shape::Fetch { apply_markdown: true, .. } => &row.rendered_content,
        _ => &row.content,
    };
    m.insert("content".into(), json!(content));
    m.insert("recipient_id".into(), json!(recipient_id(state, row)));
    m.insert("timestamp".into(), json!(row.date_sent));
    m.insert("client".into(), json!(row.sending_client));
    m.insert("subject".into(), json!(row.topic));
    m.insert("topic_links".into(), state.linkifiers().topic_links_json(&row.topic));
    m.insert("is_me_message".into(), json!(is_me_message(&row.content)));
    let reactions: Vec<Value> = reactions
        .iter()
        .map(|r| {
            json!({"emoji_name": r.emoji_name, "emoji_code": r.emoji_code, "reaction_type": r.reaction_type,
                   "user_id": r.user_id})
        })
        .collect();
    m.insert("reactions".into(), Value::Array(reactions));
    m.insert("submessages".into(), json!([]));
    if let Some(time) = row.last_edit_time {
        m.insert("last_edit_timestamp".into(), json!(time));
    }
    if let Some(time) = row.last_moved_time {
        m.insert("last_moved_timestamp".into(), json!(time));
    }
    if let Some(history) = row
        .edit_history
        .as_deref()
        .and_then(|h| serde_json::from_str::<Value>(h).ok())
        .and_then(|h| super::visible_edit_history(state, h))
    {
        m.insert("edit_history".into(), history);
    }
    if let Shape::Fetch { flags, .. } = shape {
        m.insert("flags".into(), json!(flag_names(flags)));
    }
    m.insert("sender_full_name".into(), json!(sender.map(|u| u.full_name.as_str()).unwrap_or("")));
    m.insert("sender_email".into(), json!(sender.map(|u| u.email.as_str()).unwrap_or("")));
    // System bots live in Zulip's internal organization (`SYSTEM_BOT_REALM`).
    let realm_str = if sender.is_some_and(|u| u.is_system_bot()) { "zulipinternal" } else { &state.realm().subdomain };
    m.insert("sender_realm_str".into(), json!(realm_str));
    match row.channel_id {
        Some(channel) => {
            let name = state.channel(channel).map(|c| c.name.as_str()).unwrap_or("");
            m.insert("display_recipient".into(), json!(name));
            m.insert("type".into(), json!("stream"));
            m.insert("stream_id".into(), json!(channel));
        }
        None => {
            m.insert("display_recipient".into(), Value::Array(dm_display_recipient(state, row)));
            m.insert("type".into(), json!("private"));
        }
    }
    let avatar = sender.map(avatar_url);
    // Clients can compute a gravatar only from an email address they are shown.
    let computable =
        sender.is_some_and(|u| u.avatar_source == "G" && u.email_address_visibility == EmailVisibility::Everyone);
    match shape {
        Shape::Fetch { apply_markdown, client_gravatar, .. } => {
            m.insert("avatar_url".into(), if client_gravatar && computable { Value::Null } else { json!(avatar) });
            let content_type = if apply_markdown { "text/html" } else { "text/x-markdown" };
            m.insert("content_type".into(), json!(content_type));
        }
        Shape::Event => {
            m.insert("avatar_url".into(), json!(avatar));
            m.insert("avatar_computable".into(), json!(computable));
            m.insert("rendered_content".into(), json!(row.rendered_content));
            m.insert("content_type".into(), json!("text/x-markdown"));
        }
    }
    m
}

/// The participants of a direct message as Zulip lists them (`hydrate_recipient_info`):
/// a group by id, each `{id, email, full_name, is_mirror_dummy}`; a one-to-one message
/// is the recipient's entry and the sender's, written `{email, full_name, id,
/// is_mirror_dummy}`, ordered by email.
fn dm_display_recipient(state: &RealmState, row: &MessageRow) -> Vec<Value> {
    let users: Vec<&User> =
        dm_participants(row.dm_key.as_deref().unwrap_or("")).into_iter().filter_map(|id| state.user(id)).collect();
    let entry = |u: &User| json!({"id": u.id, "email": u.email, "full_name": u.full_name, "is_mirror_dummy": false});
    match users.as_slice() {
        [a, b] => {
            let (sender, other) = if a.id == row.sender_id { (a, b) } else { (b, a) };
            let own = json!({"email": sender.email, "full_name": sender.full_name, "id": sender.id, "is_mirror_dummy": false});
            if sender.email < other.email {
                vec![own, entry(other)]
            } else {
                vec![entry(other), own]
            }
        }
        _ => users.into_iter().map(entry).collect(),
    }
}

/// Whether a message is a `/me` message.
pub fn is_me_message(content: &str) -> bool {
    content.starts_with("/me ") && !content.contains('\n')
}
