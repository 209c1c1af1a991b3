//! Scheduled messages and reminders as the API shows them (Zulip's `ScheduledMessage.to_dict`
//! and `to_reminder_dict`), and their events.

use serde_json::{json, Value};

use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::realm::scheduled_data::{ScheduledItem, ScheduledTarget};

/// `to` of a direct message (Zulip's `get_recipient_ids`): the other participants, or the
/// sender alone for a message to themselves.
fn direct_to(item: &ScheduledItem, participants: &[UserId]) -> Vec<i64> {
    let others: Vec<i64> = participants.iter().filter(|u| **u != item.sender).map(|u| u.0).collect();
    if others.is_empty() {
        vec![item.sender.0]
    } else {
        others
    }
}

/// A scheduled message: `{scheduled_message_id, to, type, content, rendered_content,
/// topic (channel messages only), scheduled_delivery_timestamp, failed}`.
pub fn scheduled_message_dict(item: &ScheduledItem) -> Value {
    match &item.target {
        ScheduledTarget::Channel(channel, topic) => json!({
            "scheduled_message_id": item.id,
            "to": channel.0,
            "type": "stream",
            "content": item.content,
            "rendered_content": item.rendered_content,
            "topic": topic,
            "scheduled_delivery_timestamp": item.deliver_at,
            "failed": item.failed,
        }),
        ScheduledTarget::Direct(participants) => json!({
            "scheduled_message_id": item.id,
            "to": direct_to(item, participants),
            "type": "private",
            "content": item.content,
            "rendered_content": item.rendered_content,
            "scheduled_delivery_timestamp": item.deliver_at,
            "failed": item.failed,
        }),
    }
}

/// A reminder: `{reminder_id, to, type, content, rendered_content,
/// scheduled_delivery_timestamp, failed, reminder_target_message_id}`.
pub fn reminder_dict(item: &ScheduledItem) -> Value {
    let participants = match &item.target {
        ScheduledTarget::Direct(participants) => participants.clone(),
        ScheduledTarget::Channel(..) => Vec::new(),
    };
    json!({
        "reminder_id": item.id,
        "to": direct_to(item, &participants),
        "type": "private",
        "content": item.content,
        "rendered_content": item.rendered_content,
        "scheduled_delivery_timestamp": item.deliver_at,
        "failed": item.failed,
        "reminder_target_message_id": item.reminder.as_ref().map(|r| r.message_id.0),
    })
}

/// `scheduled_messages` `add` or `reminders` `add` of a new item, to its sender.
pub fn added(item: &ScheduledItem) -> Outgoing {
    let event = if item.is_reminder() {
        Event::new("reminders", json!({"op": "add", "reminders": [reminder_dict(item)]}))
    } else {
        Event::new("scheduled_messages", json!({"op": "add", "scheduled_messages": [scheduled_message_dict(item)]}))
    };
    Outgoing::to(vec![item.sender], event)
}

/// `scheduled_messages` `update` with the whole scheduled message, to its sender.
pub fn updated(item: &ScheduledItem) -> Outgoing {
    let event =
        Event::new("scheduled_messages", json!({"op": "update", "scheduled_message": scheduled_message_dict(item)}));
    Outgoing::to(vec![item.sender], event)
}

/// `scheduled_messages` `remove` or `reminders` `remove`, to the sender.
pub fn removed(sender: UserId, id: i64, reminder: bool) -> Outgoing {
    let event = if reminder {
        Event::new("reminders", json!({"op": "remove", "reminder_id": id}))
    } else {
        Event::new("scheduled_messages", json!({"op": "remove", "scheduled_message_id": id}))
    };
    Outgoing::to(vec![sender], event)
}
