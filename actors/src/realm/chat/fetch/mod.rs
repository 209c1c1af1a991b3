//! Fetching messages: `GET /messages` with anchors and narrows, `GET /messages/{id}`,
//! `GET /messages/matches_narrow`.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::format::{message_dict, viewer_flags, Shape};
use super::highlight::{match_content, match_subject};
use super::narrow::{self, NarrowTerm};
use super::viewer;
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::store::messages::{self as db, FetchedRow, ReactionRow};
use crate::store::narrow::{self as rows, Filter};

/// The anchor Zulip reports for `newest` (and for `first_unread` with nothing unread).
pub const LARGER_THAN_MAX_MESSAGE_ID: MessageId = MessageId(10_000_000_000_000_000);
/// Most messages one request may ask for.
pub const MAX_MESSAGES_PER_FETCH: i64 = 5000;

/// `anchor` of `GET /messages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Id(MessageId),
    Newest,
    Oldest,
    FirstUnread,
    /// `date` with `anchor_date` (FL 445), in seconds: the first message sent then or later,
    /// else the newest.
    Date(i64),
}

impl Anchor {
    /// Parses `anchor` as Zulip does ("Invalid anchor" otherwise).
    pub fn parse(raw: &str) -> ApiResult<Anchor> {
        match raw {
            "newest" => Ok(Anchor::Newest),
            "oldest" => Ok(Anchor::Oldest),
            "first_unread" => Ok(Anchor::FirstUnread),
            _ => raw
                .parse::<i64>()
                .map(|id| Anchor::Id(MessageId(id.max(0))))
                .map_err(|_| ApiError::bad_request("Invalid anchor")),
        }
    }
}

/// Parses `anchor_date` (FL 445): an ISO 8601 date (midnight UTC) or date and time (UTC
/// unless it names its offset); seconds since the epoch.
pub fn parse_anchor_date(raw: &str) -> ApiResult<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    let raw = raw.trim();
    let invalid = || ApiError::bad_request("Invalid anchor_date");
    if let Ok(date) = NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        return Ok(date.and_hms_opt(0, 0, 0).ok_or_else(invalid)?.and_utc().timestamp());
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(raw) {
        return Ok(at.timestamp());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(at) = DateTime::parse_from_str(raw, format) {
            return Ok(at.timestamp());
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(at) = NaiveDateTime::parse_from_str(raw, format) {
            return Ok(at.and_utc().timestamp());
        }
    }
    Err(invalid())
}

/// How messages are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendering {
    pub apply_markdown: bool,
    pub client_gravatar: bool,
    pub allow_empty_topic_name: bool,
}

/// `GET /messages` (a history read).
#[derive(Debug, Clone)]
pub struct GetMessages {
    pub user_id: UserId,
    pub anchor: Anchor,
    pub num_before: i64,
    pub num_after: i64,
    pub include_anchor: bool,
    pub narrow: Vec<NarrowTerm>,
    pub rendering: Rendering,
    /// `message_ids` instead of an anchor range.
    pub message_ids: Option<Vec<MessageId>>,
}

/// `GET /messages/{id}` (a history read).
#[derive(Debug, Clone)]
pub struct GetMessage {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub rendering: Rendering,
}

/// `GET /messages/matches_narrow` (a history read).
#[derive(Debug, Clone)]
pub struct MatchesNarrow {
    pub user_id: UserId,
    pub message_ids: Vec<MessageId>,
    pub narrow: Vec<NarrowTerm>,
}

/// The message objects of `rows`, with their reactions.
fn render_rows(
    state: &RealmState,
    conn: &Connection,
    rows: &[FetchedRow],
    rendering: Rendering,
    search: Option<&[String]>,
) -> ApiResult<Vec<Value>> {
    let ids: Vec<MessageId> = rows.iter().map(|(row, _)| row.id).collect();
    let reactions = db::reactions_of(conn, &ids)?;
    let mut by_message: BTreeMap<MessageId, Vec<&ReactionRow>> = BTreeMap::new();
    for reaction in &reactions {
        by_message.entry(reaction.message_id).or_default().push(reaction);
    }
    let mut submessages: BTreeMap<MessageId, Vec<Value>> = BTreeMap::new();
    for row in crate::store::submessages::of_messages(conn, &ids)? {
        submessages.entry(row.message_id).or_default().push(crate::realm::chat::widgets::submessage_dict(&row));
    }
    Ok(rows
        .iter()
        .map(|(row, flags)| {
            let shape = Shape::Fetch {
                apply_markdown: rendering.apply_markdown,
                client_gravatar: rendering.client_gravatar,
                flags: viewer_flags(*flags),
            };
            let mut dict = message_dict(state, row, by_message.get(&row.id).map_or(&[][..], Vec::as_slice), shape);
            if let Some(list) = submessages.remove(&row.id) {
                dict.insert("submessages".into(), Value::Array(list));
            }
            if !rendering.allow_empty_topic_name && row.channel_id.is_some() && row.topic.is_empty() {
                dict.insert("subject".into(), json!(EMPTY_TOPIC_DISPLAY_NAME));
            }
            if let Some(words) = search {
                dict.insert("match_content".into(), json!(match_content(&row.rendered_content, words)));
                dict.insert("match_subject".into(), json!(match_subject(&row.topic, words)));
            }
            Value::Object(dict)
        })
        .collect())
}

/// An anchored range of a narrow: the anchor and how many messages on each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub anchor: Anchor,
    pub num_before: i64,
    pub num_after: i64,
    pub include_anchor: bool,
}

/// The messages of a [`Range`] (oldest first) and what Zulip reports about them.
#[derive(Debug, Clone)]
pub struct Window {
    pub rows: Vec<FetchedRow>,
    /// The anchor as a message id (`newest` is [`LARGER_THAN_MAX_MESSAGE_ID`]).
    pub anchor: MessageId,
    pub found_anchor: bool,
    pub found_oldest: bool,
    pub found_newest: bool,
}

/// Zulip's anchored fetch: up to `num_before` messages before the anchor, the anchor
/// itself when wanted and up to `num_after` after it, all matching `filter`.
pub fn fetch_window(conn: &Connection, filter: &Filter, range: Range) -> ApiResult<Window> {
    let (anchor, to_left, to_right) = match range.anchor {
        Anchor::Id(id) => (id, false, false),
        Anchor::Newest => (LARGER_THAN_MAX_MESSAGE_ID, false, true),
        Anchor::Oldest => (MessageId(0), true, false),
        Anchor::FirstUnread => match rows::first_unread(conn, filter)? {
            Some(id) => (id, false, false),
            None => (LARGER_THAN_MAX_MESSAGE_ID, false, true),
        },
        Anchor::Date(since) => match rows::first_since(conn, filter, since)? {
            Some(id) => (id, false, false),
            None => (LARGER_THAN_MAX_MESSAGE_ID, false, true),
        },
    };
    let rows::Around { before, at: at_anchor, after } =
        rows::around(conn, filter, anchor, range.num_before, range.include_anchor, range.num_after)?;
    let found_anchor = at_anchor.is_some();
    let found_oldest = to_left || (before.len() as i64) < range.num_before;
    let found_newest = to_right || (after.len() as i64) < range.num_after;
    let rows = before.into_iter().chain(at_anchor).chain(after).collect();
    Ok(Window { rows, anchor, found_anchor, found_oldest, found_newest })
}

/// `GET /messages`.
pub fn get_messages(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    msg: &GetMessages,
) -> ApiResult<Map<String, Value>> {
    let narrow = narrow::build(state, user, &msg.narrow)?;
    let mut out = Map::new();
    if let Some(ids) = &msg.message_ids {
        let rows = rows::among(conn, &narrow.filter, ids)?;
        out.insert(
            "messages".into(),
            Value::Array(render_rows(state, conn, &rows, msg.rendering, narrow.search.as_deref())?),
        );
        out.insert("history_limited".into(), json!(false));
        return Ok(out);
    }
    if msg.num_before.saturating_add(msg.num_after) > MAX_MESSAGES_PER_FETCH {
        return Err(ApiError::bad_request("Too many messages requested (maximum 5000)."));
    }
    let range = Range {
        anchor: msg.anchor,
        num_before: msg.num_before,
        num_after: msg.num_after,
        include_anchor: msg.include_anchor,
    };
    let Window { rows, anchor, found_anchor, found_oldest, found_newest } = fetch_window(conn, &narrow.filter, range)?;
    let messages = render_rows(state, conn, &rows, msg.rendering, narrow.search.as_deref())?;
    out.insert("messages".into(), Value::Array(messages));
    out.insert("found_anchor".into(), json!(found_anchor));
    out.insert("found_oldest".into(), json!(found_oldest));
    out.insert("found_newest".into(), json!(found_newest));
    out.insert("history_limited".into(), json!(false));
    out.insert("anchor".into(), json!(anchor));
    Ok(out)
}

/// A message the user may read, with their flags, or "Invalid message(s)".
fn accessible_message(state: &RealmState, conn: &Connection, user: &User, id: MessageId) -> ApiResult<FetchedRow> {
    let invalid = || ApiError::bad_request("Invalid message(s)");
    // A message newer than the snapshot was sent under rules the snapshot may not know.
    if id > state.last_message_id() {
        return Err(invalid());
    }
    let (row, flags) = db::viewed_message(conn, state.realm().id, user.id, id)?.ok_or_else(invalid)?;
    if super::has_message_access(state, user, row.channel_id, flags.is_some()) {
        Ok((row, flags))
    } else {
        Err(invalid())
    }
}

/// `GET /messages/{id}`: `raw_content` (legacy) and the message object.
pub fn get_message(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    msg: &GetMessage,
) -> ApiResult<Map<String, Value>> {
    let fetched = accessible_message(state, conn, user, msg.message_id)?;
    let raw = fetched.0.content.clone();
    let mut messages = render_rows(state, conn, &[fetched], msg.rendering, None)?;
    let mut out = Map::new();
    out.insert("raw_content".into(), json!(raw));
    out.insert("message".into(), messages.pop().unwrap_or(Value::Null));
    Ok(out)
}

/// `GET /messages/matches_narrow`: which of the messages match, with their match fields.
pub fn matches_narrow(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    msg: &MatchesNarrow,
) -> ApiResult<Map<String, Value>> {
    let narrow = narrow::build(state, user, &msg.narrow)?;
    let rows = rows::among(conn, &narrow.filter, &msg.message_ids)?;
    let words = narrow.search.unwrap_or_default();
    let mut matches = Map::new();
    for (row, _) in rows {
        let content = match_content(&row.rendered_content, &words);
        let topic = match_subject(&row.topic, &words);
        matches.insert(row.id.to_string(), json!({"match_content": content, "match_subject": topic}));
    }
    let mut out = Map::new();
    out.insert("messages".into(), Value::Object(matches));
    Ok(out)
}

impl HistoryRead for GetMessages {
    type Output = Map<String, Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        get_messages(state, conn, viewer(state, self.user_id)?, &self)
    }
}

impl HistoryRead for GetMessage {
    type Output = Map<String, Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        get_message(state, conn, viewer(state, self.user_id)?, &self)
    }
}

impl HistoryRead for MatchesNarrow {
    type Output = Map<String, Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        matches_narrow(state, conn, viewer(state, self.user_id)?, &self)
    }
}

#[cfg(test)]
mod tests;
