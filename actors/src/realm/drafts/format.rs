//! A draft as the API shows it (Zulip's `Draft.to_dict`).

use serde_json::{json, Value};

use crate::store::drafts::DraftRow;

/// `{id, type, to, topic, content, timestamp}`, the timestamp in whole seconds.
pub fn draft_dict(draft: &DraftRow) -> Value {
    json!({
        "id": draft.id,
        "type": draft.kind,
        "to": draft.to,
        "topic": draft.topic,
        "content": draft.content,
        "timestamp": draft.last_edit_micros.div_euclid(1_000_000),
    })
}
