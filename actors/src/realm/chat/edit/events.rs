//! What an edit did, and its events: `update_message` (one per distinct flag set of the
//! edited message) to everyone who had or has the message, and `delete_message` to users
//! who lost it in a move.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::PropagateMode;
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::chat::format::{flag_names, is_me_message};
use crate::realm::chat::render::Rendered;
use crate::realm::state::RealmState;
use crate::store::reactions::MessageRow;

/// An edit checked against the stored message.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The edited message as stored before.
    pub message: MessageRow,
    /// The new content and its rendering.
    pub content: Option<(String, Rendered)>,
    /// The new topic.
    pub topic: Option<String>,
    /// The channel the messages move to.
    pub target: Option<ChannelId>,
    /// The messages the edit applies to (the topic's, per `propagate_mode`).
    pub ids: Vec<MessageId>,
}

impl Validated {
    /// Whether the edit changes anything.
    pub fn changes_anything(&self) -> bool {
        self.content.is_some() || self.topic.is_some() || self.target.is_some()
    }
}

/// One message's change: its stored row before, its recipients' flags after, and the
/// users who lost access to it in a move.
#[derive(Debug, Clone)]
pub struct Changed {
    pub before: MessageRow,
    pub flags: Vec<(UserId, i64)>,
    pub lost: Vec<UserId>,
}

/// A written edit: what was checked, what changed, and who could see the edited message
/// before and after.
#[derive(Debug, Clone)]
pub struct Edited {
    pub edit: Validated,
    pub changed: Vec<Changed>,
    pub old_audience: Vec<UserId>,
    pub new_audience: Vec<UserId>,
}

/// The `update_message` events, one per distinct flag set of the edited message, to
/// everyone who had or has the message, and `delete_message` to users who lost it.
pub fn edit_events(
    state: &RealmState,
    editor: UserId,
    done: &Edited,
    propagate_mode: PropagateMode,
    now: i64,
) -> Vec<Outgoing> {
    let edit = &done.edit;
    let message = &edit.message;
    let mut body = Map::new();
    body.insert("user_id".into(), json!(editor));
    body.insert("edit_timestamp".into(), json!(now));
    body.insert("message_id".into(), json!(message.id));
    body.insert("rendering_only".into(), json!(false));
    if let Some(channel) = message.channel_id.and_then(|id| state.channel(id)) {
        body.insert("stream_name".into(), json!(channel.name));
        body.insert("stream_id".into(), json!(channel.id));
    }
    if let Some((content, rendered)) = &edit.content {
        body.insert("orig_content".into(), json!(message.content));
        body.insert("orig_rendered_content".into(), json!(message.rendered_content));
        body.insert("content".into(), json!(content));
        body.insert("rendered_content".into(), json!(rendered.html));
        body.insert("is_me_message".into(), json!(is_me_message(content)));
    }
    if edit.topic.is_some() || edit.target.is_some() {
        body.insert("propagate_mode".into(), json!(propagate_mode.as_str()));
        if let Some(target) = edit.target {
            body.insert("new_stream_id".into(), json!(target));
        }
        body.insert("orig_subject".into(), json!(message.topic));
        if let Some(topic) = &edit.topic {
            body.insert("subject".into(), json!(topic));
            body.insert("topic_links".into(), state.linkifiers().topic_links_json(topic));
        }
    }
    let ids: Vec<MessageId> = done.changed.iter().map(|c| c.before.id).collect();
    body.insert("message_ids".into(), json!(ids));
    let flags: BTreeMap<UserId, i64> = done
        .changed
        .iter()
        .find(|c| c.before.id == message.id)
        .map(|c| c.flags.iter().copied().collect())
        .unwrap_or_default();
    let lost: BTreeSet<UserId> = done.changed.iter().flat_map(|c| c.lost.iter().copied()).collect();
    let audience: BTreeSet<UserId> =
        done.old_audience.iter().chain(&done.new_audience).copied().filter(|u| !lost.contains(u)).collect();
    let mut groups: BTreeMap<Vec<&'static str>, Vec<UserId>> = BTreeMap::new();
    for user in audience {
        let names = flags.get(&user).map(|bits| flag_names(*bits)).unwrap_or_default();
        groups.entry(names).or_default().push(user);
    }
    let mut out: Vec<Outgoing> = groups
        .into_iter()
        .map(|(names, users)| {
            let mut fields = body.clone();
            fields.insert("flags".into(), json!(names));
            Outgoing::to(users, Event::new("update_message", Value::Object(fields)))
        })
        .collect();
    if !lost.is_empty() {
        let fields = json!({"message_ids": ids, "message_type": "stream", "stream_id": message.channel_id,
                            "topic": message.topic});
        out.push(Outgoing::to(lost.into_iter().collect(), Event::new("delete_message", fields)));
    }
    out
}
