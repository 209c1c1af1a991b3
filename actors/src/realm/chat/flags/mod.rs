//! Per-user message flags and unread state: `POST /messages/flags`, the `mark_*_as_read`
//! endpoints, register data sets `update_message_flags` (unread_msgs), `starred_messages`,
//! `recent_private_conversations` (Zulip's `do_update_message_flags`,
//! `do_mark_all_as_read`, `do_mark_stream_messages_as_read`).
//!
//! Flags live in SQLite only; every change concerns the acting user alone, so its
//! `update_message_flags` event goes to that user's queues only and lists only the
//! messages whose flag changed.

pub mod narrow;
pub mod register;
pub mod unread;

use std::collections::{BTreeSet, HashMap};

use actix::prelude::*;
use serde_json::{json, Map, Value};

use super::flag;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::topics::accessible_channel;
use crate::store::user_messages::{self, MessageRef};
use crate::store::Store;

/// Every flag name of the API with its bit (Zulip's `UserMessage.flags` without the
/// internal `is_private` and `active_mobile_push_notification`).
const API_FLAGS: &[(&str, i64)] = &[
    ("read", flag::READ),
    ("starred", flag::STARRED),
    ("collapsed", flag::COLLAPSED),
    ("mentioned", flag::MENTIONED),
    ("stream_wildcard_mentioned", flag::STREAM_WILDCARD_MENTIONED),
    ("topic_wildcard_mentioned", flag::TOPIC_WILDCARD_MENTIONED),
    ("group_mentioned", flag::GROUP_MENTIONED),
    ("summarize_in_home", 32),
    ("summarize_in_stream", 64),
    ("force_expand", 128),
    ("force_collapse", 256),
    ("has_alert_word", flag::HAS_ALERT_WORD),
    ("historical", flag::HISTORICAL),
];

/// The flags clients may change.
const EDITABLE_FLAGS: &[&str] = &["read", "starred", "collapsed"];

/// The flags Zulip assumes for a message the user can see but has no row for (read and
/// historical).
pub const DEFAULT_HISTORICAL_FLAGS: i64 = flag::HISTORICAL | flag::READ;

/// Adding or removing a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagOp {
    Add,
    Remove,
}

impl FlagOp {
    fn as_str(self) -> &'static str {
        match self {
            FlagOp::Add => "add",
            FlagOp::Remove => "remove",
        }
    }
}

/// A validated flag change: which flag (name and bit) and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagChange {
    pub name: &'static str,
    pub bit: i64,
    pub op: FlagOp,
}

impl FlagChange {
    /// Checks a request's `flag` and `op` in Zulip's order: unknown flag, not editable,
    /// bad operation.
    pub fn parse(flag_name: &str, op: &str) -> ApiResult<FlagChange> {
        let (name, bit) = API_FLAGS
            .iter()
            .find(|(name, _)| *name == flag_name)
            .copied()
            .ok_or_else(|| ApiError::bad_request(format!("Invalid flag: '{flag_name}'")))?;
        if !EDITABLE_FLAGS.contains(&name) {
            return Err(ApiError::bad_request(format!("Flag not editable: '{flag_name}'")));
        }
        let op = match op {
            "add" => FlagOp::Add,
            "remove" => FlagOp::Remove,
            _ => return Err(ApiError::bad_request(format!("Invalid message flag operation: '{op}'"))),
        };
        Ok(FlagChange { name, bit, op })
    }

    /// Whether a row with `flags` needs changing.
    fn changes(&self, flags: i64) -> bool {
        let target = if self.op == FlagOp::Add { self.bit } else { 0 };
        flags & self.bit != target
    }

    fn is_mark_unread(&self) -> bool {
        self.bit == flag::READ && self.op == FlagOp::Remove
    }
}

/// What a flag change did: the messages whose flag changed (in request order) and the
/// channels whose messages were skipped because the user is not subscribed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagOutcome {
    pub changed: Vec<i64>,
    pub ignored_channels: Vec<ChannelId>,
}

/// Whether `user` may see a channel message they have no row for (Zulip's
/// `has_message_access` without a `UserMessage`): history shared with subscribers and
/// content access. Direct messages never qualify.
fn can_see_unreceived(state: &RealmState, user: &User, message: &MessageRef) -> bool {
    let Some(channel) = message.channel_id.and_then(|id| state.channel(id)) else { return false };
    (!channel.invite_only || channel.history_public_to_subscribers) && state.has_content_access(user, channel)
}

/// Zulip's `do_update_message_flags`: sets or clears `change` on `messages` for `user`.
///
/// Marking unread skips messages of channels the user is not subscribed to. Messages the
/// user has no row for count as read and historical; when that differs from the target a
/// historical row is created, after checking the user may see the message ("Invalid
/// message(s)" otherwise). `messages` may come from a request or from a narrow.
pub fn update_flags(
    state: &RealmState,
    store: &Store,
    user: &User,
    change: FlagChange,
    messages: &[i64],
) -> ApiResult<(FlagOutcome, Vec<Outgoing>)> {
    let realm = state.realm().id;
    let conn = store.conn()?;
    let found: HashMap<i64, MessageRef> =
        user_messages::messages_by_ids(&conn, realm, messages)?.into_iter().map(|m| (m.id, m)).collect();
    let mut ignored = BTreeSet::new();
    let mut wanted: Vec<i64> = messages.to_vec();
    if change.is_mark_unread() {
        wanted.retain(|id| match found.get(id).and_then(|m| m.channel_id) {
            Some(channel) if !state.is_subscribed(user.id, channel) => {
                ignored.insert(channel);
                false
            }
            _ => true,
        });
    }
    let rows: HashMap<i64, i64> = user_messages::flags_of(&conn, user.id, &wanted)?.into_iter().collect();
    drop(conn);
    let mut seen = BTreeSet::new();
    let changed: Vec<i64> = wanted
        .into_iter()
        .filter(|id| change.changes(rows.get(id).copied().unwrap_or(DEFAULT_HISTORICAL_FLAGS)))
        .filter(|id| seen.insert(*id))
        .collect();
    let historical: Vec<i64> = changed.iter().copied().filter(|id| !rows.contains_key(id)).collect();
    if !historical.is_empty()
        && !historical.iter().all(|id| found.get(id).is_some_and(|m| can_see_unreceived(state, user, m)))
    {
        return Err(ApiError::bad_request("Invalid message(s)"));
    }
    let existing: Vec<i64> = changed.iter().copied().filter(|id| rows.contains_key(id)).collect();
    let on = change.op == FlagOp::Add;
    let historical_flags = (DEFAULT_HISTORICAL_FLAGS & !change.bit) | if on { change.bit } else { 0 };
    store.write(|tx| {
        user_messages::insert_rows(tx, user.id, &historical, historical_flags)?;
        user_messages::set_flag(tx, user.id, &existing, change.bit, on)
    })?;
    let mut fields = json!({
        "op": change.op.as_str(),
        "operation": change.op.as_str(),
        "flag": change.name,
        "messages": changed,
        "all": false,
    });
    if change.is_mark_unread() {
        let conn = store.conn()?;
        let rows = user_messages::unread(&conn, user.id, Some(&changed), &[], changed.len())?;
        let raw = unread::RawUnread::collect(state, user.id, rows, false);
        fields["message_details"] = Value::Object(raw.message_details(user.id));
    }
    let event = Outgoing::to(vec![user.id], Event::new("update_message_flags", fields));
    Ok((FlagOutcome { changed, ignored_channels: ignored.into_iter().collect() }, vec![event]))
}

/// The `update_message_flags` event for messages marked read (`all` for everything).
fn read_event(user: UserId, messages: Vec<i64>, all: bool) -> Outgoing {
    let fields = json!({"op": "add", "operation": "add", "flag": "read", "messages": messages, "all": all});
    Outgoing::to(vec![user], Event::new("update_message_flags", fields))
}

/// Zulip's `do_mark_all_as_read`: every unread message of `user` becomes read; one event
/// with `all` and no message ids. Returns how many changed.
pub fn mark_all_as_read(store: &Store, user: UserId) -> ApiResult<(usize, Vec<Outgoing>)> {
    let count = store.write(|tx| user_messages::mark_all_read(tx, user))?;
    Ok((count, vec![read_event(user, Vec::new(), true)]))
}

/// Zulip's `do_mark_stream_messages_as_read`: `user`'s unread messages in `channel` (in
/// `topic` only when given and not empty) become read. Nothing changed, no event.
pub fn mark_channel_as_read(
    state: &RealmState,
    store: &Store,
    user: &User,
    channel: ChannelId,
    topic: Option<&str>,
) -> ApiResult<Vec<Outgoing>> {
    let channel = accessible_channel(state, user, channel)?.id;
    let topic = topic.filter(|t| !t.is_empty());
    if let Some(topic) = topic {
        if !user_messages::has_topic(&*store.conn()?, user.id, channel, topic)? {
            return Err(ApiError::bad_request(format!("No such topic '{topic}'")));
        }
    }
    let ids = store.write(|tx| {
        let ids = user_messages::unread_in_channel(tx, user.id, channel, topic)?;
        user_messages::set_flag(tx, user.id, &ids, flag::READ, true)?;
        Ok::<_, ApiError>(ids)
    })?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![read_event(user.id, ids, false)])
}

/// `POST /messages/flags`: the response's data (`messages` as sent, and the channels
/// skipped when marking unread).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct UpdateMessageFlags {
    pub user_id: UserId,
    pub messages: Vec<i64>,
    pub op: String,
    pub flag: String,
}

impl Handler<UpdateMessageFlags> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: UpdateMessageFlags, _: &mut Self::Context) -> Self::Result {
        let change = FlagChange::parse(&msg.flag, &msg.op)?;
        let user = self.viewer(msg.user_id)?;
        let (outcome, events) = update_flags(&self.state, &self.store, user, change, &msg.messages)?;
        self.committed(events);
        let mut data = Map::new();
        data.insert("messages".into(), json!(msg.messages));
        data.insert("ignored_because_not_subscribed_channels".into(), json!(outcome.ignored_channels));
        Ok(data)
    }
}

/// `POST /mark_all_as_read`: `{"complete": true}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct MarkAllAsRead {
    pub user_id: UserId,
}

impl Handler<MarkAllAsRead> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: MarkAllAsRead, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?.id;
        let (_, events) = mark_all_as_read(&self.store, user)?;
        self.committed(events);
        let mut data = Map::new();
        // Agora marks everything in one transaction: it always completes.
        data.insert("complete".into(), Value::Bool(true));
        Ok(data)
    }
}

/// `POST /mark_stream_as_read` (no topic) and `POST /mark_topic_as_read`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct MarkChannelAsRead {
    pub user_id: UserId,
    pub channel_id: ChannelId,
    pub topic: Option<String>,
}

impl Handler<MarkChannelAsRead> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: MarkChannelAsRead, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        let events = mark_channel_as_read(&self.state, &self.store, user, msg.channel_id, msg.topic.as_deref())?;
        self.committed(events);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
