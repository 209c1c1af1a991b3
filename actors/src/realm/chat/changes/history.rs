//! A message's edit history: `GET /messages/{message_id}/history` (Zulip's
//! `get_message_edit_history` and `fill_edit_history_entries`).

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::access_message;
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::catalog;
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::state::RealmState;
use crate::store::reactions::MessageRow;

/// `GET /messages/{message_id}/history`: the `message_history` list, oldest first (a
/// history read).
#[derive(Debug)]
pub struct GetMessageHistory {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub allow_empty_topic_name: bool,
}

/// Whether the organization shows edit history (`message_edit_history_visibility_policy`
/// other than `none`).
fn history_enabled(state: &RealmState) -> bool {
    catalog::realm_setting("message_edit_history_visibility_policy")
        .map(|s| s.value(&state.realm().settings, Some(state)))
        .is_none_or(|v| v.as_str() != Some("none"))
}

/// A topic as shown to clients without `allow_empty_topic_name`.
fn shown_topic(topic: &str, is_channel: bool, allow_empty: bool) -> String {
    if is_channel && topic.is_empty() && !allow_empty {
        EMPTY_TOPIC_DISPLAY_NAME.to_owned()
    } else {
        topic.to_owned()
    }
}

/// The history entries of a message, oldest first: each stored edit (newest first in
/// `edit_history`) filled with the content and topic as of that time, then the original.
pub fn history_entries(message: &MessageRow, allow_empty_topic_name: bool) -> Vec<Value> {
    let raw: Vec<Map<String, Value>> =
        message.edit_history.as_deref().and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
    let is_channel = message.channel_id.is_some();
    let mut content = json!(message.content);
    let mut rendered = json!(message.rendered_content);
    let mut topic = shown_topic(&message.topic, is_channel, allow_empty_topic_name);
    let mut entries = Vec::with_capacity(raw.len() + 1);
    for edit in raw {
        let mut entry = Map::new();
        entry.insert("content".into(), content.clone());
        entry.insert("rendered_content".into(), rendered.clone());
        entry.insert("timestamp".into(), edit.get("timestamp").cloned().unwrap_or(Value::Null));
        entry.insert("topic".into(), json!(topic));
        entry.insert("user_id".into(), edit.get("user_id").cloned().unwrap_or(Value::Null));
        if let Some(prev_topic) = edit.get("prev_topic").and_then(Value::as_str) {
            topic = shown_topic(prev_topic, is_channel, allow_empty_topic_name);
            entry.insert("prev_topic".into(), json!(topic));
        }
        if let Some(prev_content) = edit.get("prev_content") {
            entry.insert("prev_content".into(), prev_content.clone());
            content = prev_content.clone();
            let prev_rendered = edit.get("prev_rendered_content").cloned().unwrap_or(Value::Null);
            entry.insert("prev_rendered_content".into(), prev_rendered.clone());
            rendered = prev_rendered;
        }
        if let (Some(prev_stream), Some(stream)) = (edit.get("prev_stream"), edit.get("stream")) {
            entry.insert("prev_stream".into(), prev_stream.clone());
            entry.insert("stream".into(), stream.clone());
        }
        entries.push(Value::Object(entry));
    }
    entries.push(json!({
        "content": content,
        "rendered_content": rendered,
        "timestamp": message.date_sent,
        "topic": topic,
        "user_id": message.sender_id,
    }));
    entries.reverse();
    entries
}

impl HistoryRead for GetMessageHistory {
    type Output = Vec<Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Vec<Value>> {
        let user = state.user(self.user_id).ok_or_else(ApiError::internal)?;
        if !history_enabled(state) {
            return Err(ApiError::bad_request("Message edit history is disabled in this organization"));
        }
        let message = access_message(state, conn, user, self.message_id)?.message;
        Ok(history_entries(&message, self.allow_empty_topic_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, RealmId};

    fn message(edit_history: Option<&str>) -> MessageRow {
        MessageRow {
            id: MessageId(9),
            realm_id: RealmId(1),
            sender_id: UserId(3),
            channel_id: Some(ChannelId(4)),
            dm_key: None,
            topic: "new".into(),
            content: "b".into(),
            rendered_content: "<p>b</p>".into(),
            date_sent: 100,
            edit_history: edit_history.map(str::to_owned),
        }
    }

    #[test]
    fn an_unedited_message_has_its_one_entry() {
        let entries = history_entries(&message(None), false);
        assert_eq!(
            entries,
            vec![
                json!({"content": "b", "rendered_content": "<p>b</p>", "timestamp": 100, "topic": "new", "user_id": 3})
            ]
        );
    }

    #[test]
    fn edits_are_filled_with_the_state_of_their_time() {
        let history = r#"[{"timestamp": 200, "user_id": 5, "prev_topic": "old", "topic": "new"},
            {"timestamp": 150, "user_id": 3, "prev_content": "a", "prev_rendered_content": "<p>a</p>"}]"#;
        let entries = history_entries(&message(Some(history)), false);
        assert_eq!(
            entries,
            vec![
                json!({"content": "a", "rendered_content": "<p>a</p>", "timestamp": 100, "topic": "old", "user_id": 3}),
                json!({"content": "b", "rendered_content": "<p>b</p>", "timestamp": 150, "topic": "old", "user_id": 3,
                       "prev_content": "a", "prev_rendered_content": "<p>a</p>"}),
                json!({"content": "b", "rendered_content": "<p>b</p>", "timestamp": 200, "topic": "new", "user_id": 5,
                       "prev_topic": "old"}),
            ]
        );
    }
}
