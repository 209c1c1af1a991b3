//! Flag changes, planned from the state and written against the user's rows (Zulip's
//! `do_update_message_flags`, `do_mark_all_as_read`, `do_mark_stream_messages_as_read`).

use std::collections::{BTreeSet, HashMap};

use rusqlite::Transaction;
use serde_json::json;

use super::unread::RawUnread;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::chat::{flag, viewer};
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::topics::accessible_channel;
use crate::realm::{Applied, Change};
use crate::store::user_messages::{self, FlaggedMessage, MessageRef};

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
    pub(super) fn changes(&self, flags: i64) -> bool {
        let target = if self.op == FlagOp::Add { self.bit } else { 0 };
        flags & self.bit != target
    }

    pub(super) fn is_mark_unread(&self) -> bool {
        self.bit == flag::READ && self.op == FlagOp::Remove
    }
}

/// What a flag change did: the messages whose flag changed (in request order) and the
/// channels whose messages were skipped because the user is not subscribed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagOutcome {
    pub changed: Vec<MessageId>,
    pub ignored_channels: Vec<ChannelId>,
}

/// Whether `user` may see a channel message they have no row for (Zulip's
/// `has_message_access` without a `UserMessage`): history shared with subscribers and
/// content access. Direct messages never qualify.
fn can_see_unreceived(state: &RealmState, user: &User, message: &MessageRef) -> bool {
    let Some(channel) = message.channel_id.and_then(|id| state.channel(id)) else { return false };
    (!channel.invite_only || channel.history_public_to_subscribers) && state.has_content_access(user, channel)
}

/// A flag change on messages, planned: the user's rows are read when written, against
/// the state it was planned with.
#[derive(Debug, Clone)]
pub struct FlagUpdate {
    state: RealmState,
    user: UserId,
    change: FlagChange,
    messages: Vec<MessageId>,
    /// Set by the write.
    outcome: FlagOutcome,
    /// Marking unread: the messages marked, for the event's details.
    unread: Vec<FlaggedMessage>,
}

/// Zulip's `do_update_message_flags`: sets or clears `change` on `messages` for `user`.
///
/// Marking unread skips messages of channels the user is not subscribed to. Messages the
/// user has no row for count as read and historical; when that differs from the target a
/// historical row is created, after checking the user may see the message ("Invalid
/// message(s)" otherwise). `messages` may come from a request or from a narrow.
pub fn plan_flags(
    state: &RealmState,
    user: UserId,
    change: FlagChange,
    messages: Vec<MessageId>,
) -> ApiResult<FlagUpdate> {
    let user = viewer(state, user)?.id;
    let (outcome, unread) = (FlagOutcome::default(), Vec::new());
    Ok(FlagUpdate { state: state.clone(), user, change, messages, outcome, unread })
}

impl Change for FlagUpdate {
    type Output = FlagOutcome;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let (state, change) = (&self.state, self.change);
        let user = viewer(state, self.user)?;
        let found: HashMap<MessageId, MessageRef> =
            user_messages::messages_by_ids(tx, state.realm().id, &self.messages)?
                .into_iter()
                .map(|m| (m.id, m))
                .collect();
        let mut ignored = BTreeSet::new();
        let mut wanted: Vec<MessageId> = self.messages.clone();
        if change.is_mark_unread() {
            wanted.retain(|id| match found.get(id).and_then(|m| m.channel_id) {
                Some(channel) if !state.is_subscribed(user.id, channel) => {
                    ignored.insert(channel);
                    false
                }
                _ => true,
            });
        }
        let rows: HashMap<MessageId, i64> = user_messages::flags_of(tx, user.id, &wanted)?.into_iter().collect();
        let mut seen = BTreeSet::new();
        let changed: Vec<MessageId> = wanted
            .into_iter()
            .filter(|id| change.changes(rows.get(id).copied().unwrap_or(DEFAULT_HISTORICAL_FLAGS)))
            .filter(|id| seen.insert(*id))
            .collect();
        let historical: Vec<MessageId> = changed.iter().copied().filter(|id| !rows.contains_key(id)).collect();
        if !historical.is_empty()
            && !historical.iter().all(|id| found.get(id).is_some_and(|m| can_see_unreceived(state, user, m)))
        {
            return Err(ApiError::bad_request("Invalid message(s)"));
        }
        let existing: Vec<MessageId> = changed.iter().copied().filter(|id| rows.contains_key(id)).collect();
        let on = change.op == FlagOp::Add;
        let historical_flags = (DEFAULT_HISTORICAL_FLAGS & !change.bit) | if on { change.bit } else { 0 };
        user_messages::insert_rows(tx, user.id, &historical, historical_flags)?;
        user_messages::set_flag(tx, user.id, &existing, change.bit, on)?;
        if change.bit == flag::READ && on {
            crate::store::push::enqueue_removals(tx, user.id, crate::clock::now_micros() / 1000)?;
        }
        if change.is_mark_unread() {
            self.unread = user_messages::unread_among(tx, user.id, &changed, &[])?;
        }
        self.outcome = FlagOutcome { changed, ignored_channels: ignored.into_iter().collect() };
        Ok(())
    }

    /// The `update_message_flags` event, to the user alone, listing only the messages
    /// whose flag changed (with their details when marked unread).
    fn apply(self, state: &mut RealmState) -> Applied<FlagOutcome> {
        let FlagUpdate { state: planned, user, change, outcome, unread, .. } = self;
        drop(planned);
        let mut fields = json!({
            "op": change.op.as_str(),
            "operation": change.op.as_str(),
            "flag": change.name,
            "messages": outcome.changed,
            "all": false,
        });
        if change.is_mark_unread() {
            let raw = RawUnread::collect(state, user, unread, false);
            fields["message_details"] = serde_json::Value::Object(raw.message_details(user));
        }
        let event = Outgoing::to(vec![user], Event::new("update_message_flags", fields));
        Applied::new(outcome, vec![event])
    }
}

/// The `update_message_flags` event for messages marked read (`all` for everything).
fn read_event(user: UserId, messages: Vec<MessageId>, all: bool) -> Outgoing {
    let fields = json!({"op": "add", "operation": "add", "flag": "read", "messages": messages, "all": all});
    Outgoing::to(vec![user], Event::new("update_message_flags", fields))
}

/// Zulip's `do_mark_all_as_read`: every unread message of the user becomes read; one
/// event with `all` and no message ids. Its output is how many changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkAllRead {
    user: UserId,
    count: usize,
}

/// Plans marking everything `user` has read.
pub fn plan_mark_all_read(state: &RealmState, user: UserId) -> ApiResult<MarkAllRead> {
    Ok(MarkAllRead { user: viewer(state, user)?.id, count: 0 })
}

impl Change for MarkAllRead {
    type Output = usize;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.count = user_messages::mark_all_read(tx, self.user)?;
        crate::store::push::enqueue_removals(tx, self.user, crate::clock::now_micros() / 1000)?;
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<usize> {
        Applied::new(self.count, vec![read_event(self.user, Vec::new(), true)])
    }
}

/// Zulip's `do_mark_stream_messages_as_read`: the user's unread messages in a channel (in
/// one topic only when given and not empty) become read. Nothing changed, no event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkChannelRead {
    user: UserId,
    channel: ChannelId,
    topic: Option<String>,
    /// Set by the write.
    marked: Vec<MessageId>,
}

/// Plans marking a channel (or one of its topics) read: the channel must be one the user
/// has content access to.
pub fn plan_mark_channel_read(
    state: &RealmState,
    user: UserId,
    channel: ChannelId,
    topic: Option<String>,
) -> ApiResult<MarkChannelRead> {
    let user = viewer(state, user)?;
    let channel = accessible_channel(state, user, channel)?.id;
    let topic = topic.filter(|t| !t.is_empty());
    Ok(MarkChannelRead { user: user.id, channel, topic, marked: Vec::new() })
}

impl Change for MarkChannelRead {
    type Output = ();

    /// A topic must be one the user received a message in ("No such topic" otherwise).
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(topic) = &self.topic {
            if !user_messages::has_topic(tx, self.user, self.channel, topic)? {
                return Err(ApiError::bad_request(format!("No such topic '{topic}'")));
            }
        }
        self.marked = user_messages::unread_in_channel(tx, self.user, self.channel, self.topic.as_deref())?;
        user_messages::set_flag(tx, self.user, &self.marked, flag::READ, true)?;
        crate::store::push::enqueue_removals(tx, self.user, crate::clock::now_micros() / 1000)?;
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        if self.marked.is_empty() {
            return Applied::events(Vec::new());
        }
        Applied::events(vec![read_event(self.user, self.marked, false)])
    }
}
