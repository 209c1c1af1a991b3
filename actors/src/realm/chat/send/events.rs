//! The events of a sent message: `message` (one per distinct flag set, and one for other
//! members' `all_public_streams` queues), and the topic events of an automatic follow.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::realm::chat::format::flag_names;
use crate::realm::model::{Channel, Role};
use crate::realm::state::RealmState;

/// The `message` events: the shared message object, one event per distinct flag set, each
/// to the recipients with those flags. The sender's event carries `sender_queue_id` and
/// `local_id` (`echo`) for the queue layer; without an echo the sender shares the others'
/// event (one event, held once by every queue, saved once across a restart).
pub fn message_events(
    message: &Value,
    sender: UserId,
    flags: &[(UserId, i64)],
    echo: Option<(&str, &str)>,
) -> Vec<Outgoing> {
    let mut groups: Vec<(i64, bool, Vec<UserId>)> = Vec::new();
    for &(user, bits) in flags {
        let is_sender = user == sender && echo.is_some();
        match groups.iter_mut().find(|(b, s, _)| *b == bits && *s == is_sender) {
            Some((_, _, users)) => users.push(user),
            None => groups.push((bits, is_sender, vec![user])),
        }
    }
    groups
        .into_iter()
        .map(|(bits, is_sender, users)| {
            let mut body = json!({"message": message, "flags": flag_names(bits)});
            if let (true, Some((queue, local))) = (is_sender, echo) {
                body["sender_queue_id"] = json!(queue);
                body["local_id"] = json!(local);
            }
            Outgoing::to(users, Event::new("message", body))
        })
        .collect()
}

/// The members with an `all_public_streams` queue (`listeners`) who get a public channel's
/// message without being its recipients: active non-guests with content access.
pub fn all_public_streams_audience(
    state: &RealmState,
    channel: &Channel,
    recipients: &[UserId],
    listeners: &BTreeSet<UserId>,
) -> Vec<UserId> {
    if channel.invite_only {
        return Vec::new();
    }
    listeners
        .iter()
        .filter(|u| recipients.binary_search(u).is_err())
        .filter_map(|u| state.user(*u))
        .filter(|u| u.is_active && u.role != Role::Guest && state.has_content_access(u, channel))
        .map(|u| u.id)
        .collect()
}

/// The `message` event for the other members' `all_public_streams` queues (the queue
/// layer drops it for the rest), with no flags.
pub fn all_public_streams_event(message: &Value, audience: Vec<UserId>) -> Option<Outgoing> {
    if audience.is_empty() {
        return None;
    }
    let body = json!({"message": message, "flags": [], "for_all_public_streams": true});
    Some(Outgoing::to(audience, Event::new("message", body)))
}
