//! Unread state as Zulip aggregates it (`get_raw_unread_data`,
//! `extract_unread_data_from_um_rows`, `aggregate_unread_data`,
//! `format_unread_message_details`), the starred messages and the recent direct-message
//! conversations: the register data sets of this area.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::chat::flag;
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{FOLLOWED, MUTED, UNMUTED};
use crate::store::user_messages::{self, FlaggedMessage};
use crate::store::StoreResult;
use rusqlite::Connection;

/// At most this many unread messages (the newest) are reported (Zulip's
/// `MAX_UNREAD_MESSAGES`); with that many, `old_unreads_missing` is set.
pub const MAX_UNREAD_MESSAGES: usize = 50_000;

/// At most this many newest direct messages make up the recent conversations.
pub const RECENT_CONVERSATIONS_LIMIT: usize = 1000;

/// Where an unread message belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// A one-on-one conversation (or with oneself): the other user.
    Direct(UserId),
    /// A group conversation: every participant, e.g. "3,7,9".
    Group(String),
    /// A channel topic, and whether it counts (not muted).
    Channel { channel: ChannelId, topic: String, unmuted: bool },
}

/// The unread messages of a user, each with its place, ascending; and the mentions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawUnread {
    messages: Vec<(MessageId, Place)>,
    mentions: BTreeSet<MessageId>,
    old_unreads_missing: bool,
}

/// Whether a channel topic's messages are muted for `user`: a muted channel unless the
/// topic is unmuted or followed, or a muted topic.
fn is_muted(state: &RealmState, user: UserId, channel: ChannelId, topic: &str) -> bool {
    let policy = state.user_topic(user, channel, topic).map_or(0, |t| t.visibility_policy);
    let channel_muted = state.subscription(user, channel).is_some_and(|s| s.is_muted);
    if channel_muted {
        return !(policy == UNMUTED || policy == FOLLOWED);
    }
    policy == MUTED
}

impl RawUnread {
    /// Sorts `rows` (unread messages of `user`) into places and mentions. A direct mention
    /// always counts; a wildcard mention only outside muted topics.
    pub fn collect(state: &RealmState, user: UserId, rows: Vec<FlaggedMessage>, old_unreads_missing: bool) -> Self {
        let mut raw = RawUnread { old_unreads_missing, ..RawUnread::default() };
        for row in rows {
            let m = row.message;
            let place = match (m.channel_id, m.dm_key) {
                (Some(channel), _) => {
                    let unmuted = !is_muted(state, user, channel, &m.topic);
                    Place::Channel { channel, topic: m.topic, unmuted }
                }
                (None, Some(key)) if key.split(',').count() > 2 => Place::Group(key),
                (None, Some(key)) => {
                    let other = key.split(',').filter_map(|s| s.parse().ok()).map(UserId).find(|id| *id != user);
                    Place::Direct(other.unwrap_or(user))
                }
                (None, None) => continue,
            };
            let direct = row.flags & (flag::MENTIONED | flag::GROUP_MENTIONED) != 0;
            let wildcard = row.flags & (flag::STREAM_WILDCARD_MENTIONED | flag::TOPIC_WILDCARD_MENTIONED) != 0;
            let counts = !matches!(place, Place::Channel { unmuted: false, .. });
            if direct || (wildcard && counts) {
                raw.mentions.insert(m.id);
            }
            raw.messages.push((m.id, place));
        }
        raw
    }

    /// The `unread_msgs` register object. Channel topics differing only in case are one
    /// entry, named as their oldest unread message; with `empty_topic_name` false the empty
    /// topic is shown by its display name.
    pub fn to_json(&self, empty_topic_name: bool) -> Value {
        let mut pms: BTreeMap<UserId, Vec<MessageId>> = BTreeMap::new();
        let mut groups: BTreeMap<&str, Vec<MessageId>> = BTreeMap::new();
        let mut streams: BTreeMap<(ChannelId, String), (&str, Vec<MessageId>)> = BTreeMap::new();
        let mut count = 0;
        for (id, place) in &self.messages {
            match place {
                Place::Direct(other) => {
                    pms.entry(*other).or_default().push(*id);
                    count += 1;
                }
                Place::Group(key) => {
                    groups.entry(key.as_str()).or_default().push(*id);
                    count += 1;
                }
                Place::Channel { channel, topic, unmuted } => {
                    let name = if topic.is_empty() && !empty_topic_name { EMPTY_TOPIC_DISPLAY_NAME } else { topic };
                    streams.entry((*channel, name.to_lowercase())).or_insert_with(|| (name, Vec::new())).1.push(*id);
                    count += usize::from(*unmuted);
                }
            }
        }
        let pms: Vec<Value> = pms
            .into_iter()
            .map(|(other, ids)| json!({"other_user_id": other, "sender_id": other, "unread_message_ids": ids}))
            .collect();
        let streams: Vec<Value> = streams
            .into_iter()
            .map(
                |((channel, _), (topic, ids))| json!({"stream_id": channel, "topic": topic, "unread_message_ids": ids}),
            )
            .collect();
        let huddles: Vec<Value> =
            groups.into_iter().map(|(key, ids)| json!({"user_ids_string": key, "unread_message_ids": ids})).collect();
        json!({
            "pms": pms,
            "streams": streams,
            "huddles": huddles,
            "mentions": self.mentions,
            "count": count,
            "old_unreads_missing": self.old_unreads_missing,
        })
    }

    /// The `message_details` of a mark-unread event, keyed by message id: one-on-one
    /// conversations first, then channel messages, then group conversations, as Zulip
    /// lists them. `user_ids` leave out `user` (empty for a conversation with oneself).
    pub fn message_details(&self, user: UserId) -> Map<String, Value> {
        let mut out = Map::new();
        let rank = |place: &Place| match place {
            Place::Direct(_) => 0,
            Place::Channel { .. } => 1,
            Place::Group(_) => 2,
        };
        let mut ordered: Vec<&(MessageId, Place)> = self.messages.iter().collect();
        ordered.sort_by_key(|(id, place)| (rank(place), *id));
        for (id, place) in ordered {
            let mut details = match place {
                Place::Direct(other) => {
                    let ids: Vec<UserId> = if *other == user { Vec::new() } else { vec![*other] };
                    json!({"type": "private", "user_ids": ids})
                }
                Place::Channel { channel, topic, unmuted } => {
                    json!({"type": "stream", "stream_id": channel, "topic": topic, "unmuted_stream_msg": unmuted})
                }
                Place::Group(key) => {
                    let mut ids: Vec<i64> =
                        key.split(',').filter_map(|s| s.parse().ok()).filter(|id| *id != user.0).collect();
                    ids.sort_unstable();
                    json!({"type": "private", "user_ids": ids})
                }
            };
            if self.mentions.contains(id) {
                details["mentioned"] = Value::Bool(true);
            }
            out.insert(id.to_string(), details);
        }
        out
    }
}

/// `user`'s unread state (Zulip's `get_raw_unread_data`): the newest
/// [`MAX_UNREAD_MESSAGES`] unread messages up to `upto` outside the channels the user
/// unsubscribed from.
pub fn raw_unread(state: &RealmState, conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<RawUnread> {
    let excluded: Vec<ChannelId> = state.subscriptions_of(user).filter(|s| !s.active).map(|s| s.channel_id).collect();
    let rows = user_messages::unread_upto(conn, user, upto, &excluded, MAX_UNREAD_MESSAGES)?;
    let missing = rows.len() == MAX_UNREAD_MESSAGES;
    Ok(RawUnread::collect(state, user, rows, missing))
}

/// The `recent_private_conversations` register list: the conversations among the user's
/// newest direct messages, most recent first, with the other participants' ids.
pub fn recent_private_conversations(conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<Vec<Value>> {
    let mut rows = user_messages::recent_conversations(conn, user, upto, RECENT_CONVERSATIONS_LIMIT)?;
    rows.sort_by_key(|(_, max)| std::cmp::Reverse(*max));
    Ok(rows
        .into_iter()
        .map(|(key, max)| {
            let mut ids: Vec<i64> = key.split(',').filter_map(|s| s.parse().ok()).filter(|id| *id != user.0).collect();
            ids.sort_unstable();
            json!({"max_message_id": max, "user_ids": ids})
        })
        .collect())
}

/// The `starred_messages` register list, ascending.
pub fn starred_messages(conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<Vec<MessageId>> {
    user_messages::starred(conn, user, upto)
}

#[cfg(test)]
mod tests;
