//! The wire shapes of attachments: the object of `GET /attachments` and of `attachment`
//! events (`create_time` in seconds and the claiming `message_ids`, as Zulip gives them since
//! feature level 472).

use serde_json::json;

use crate::events::Event;
use crate::ids::MessageId;
pub use crate::realm::uploads_data::claims::attachment_json as attachment;
use crate::realm::uploads_data::Attachment;

/// `attachment` `add` or `update`, with the organization's `upload_space_used`.
pub fn changed(op: &str, a: &Attachment, messages: &[(MessageId, i64)], space_used: i64) -> Event {
    Event::new("attachment", json!({"op": op, "attachment": attachment(a, messages), "upload_space_used": space_used}))
}

/// `attachment` `remove`.
pub fn removed(id: i64, space_used: i64) -> Event {
    Event::new("attachment", json!({"op": "remove", "attachment": {"id": id}, "upload_space_used": space_used}))
}
