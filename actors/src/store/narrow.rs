//! The narrows of `GET /messages`, `GET /messages/matches_narrow` and
//! `POST /messages/flags/narrow` as SQL.
//!
//! The narrow parser (`realm::chat::narrow`) turns a request's operators into a
//! [`Filter`]: plain data resolved against the organization's state (channel and user ids,
//! conversation keys, search words, which history the viewer may read). This module turns
//! a filter into one query whose text depends only on the filter's shape: every value (ids,
//! topics, keys, search words, limits, lists of ids) is a bound parameter, so no value is
//! ever read as SQL and statements of the same shape are prepared once per connection.

use rusqlite::types::Value as Sql;
use rusqlite::{params_from_iter, Connection};

use super::messages::{read_row, FetchedRow, MESSAGE_COLUMNS};
use super::StoreResult;
use crate::ids::{ChannelId, MessageId, UserId};

/// Which messages a narrow reads before its terms filter them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Whole channel histories, with the viewer's row where they have one: `None` where a
    /// channel term of the narrow names the one channel, else these channels.
    History(Option<Vec<ChannelId>>),
    /// The messages the viewer received, looked up from the messages (a conversation or a
    /// sender picks few of them, through their own indexes).
    Conversation,
    /// The messages the viewer received, walked in the order of their rows.
    Received,
}

/// What one narrow term asks of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// In this channel.
    Channel(ChannelId),
    /// In one of these channels (`channels:archived`, FL 489: the archived ones).
    ChannelIn(Vec<ChannelId>),
    /// A channel message in this topic (compared case-insensitively).
    Topic(String),
    /// A channel message whose topic starts with this text (resolved topics).
    TopicStartsWith(String),
    /// Sent by this user.
    Sender(UserId),
    /// The direct-message conversation with this key (its participants' sorted ids).
    Conversation(String),
    /// A direct message this user takes part in.
    Including(UserId),
    /// This message.
    Id(MessageId),
    /// A direct message.
    Direct,
    /// Starred by the viewer.
    Starred,
    /// Mentioning the viewer (directly, through a group or a wildcard).
    Mentioned,
    /// Mentioning this user by name, not silently (`mentions:`, FL 446).
    MentionsUser(UserId),
    /// With one of the viewer's alert words.
    Alerted,
    /// Unread by the viewer.
    Unread,
    /// In a topic the viewer gave this visibility policy.
    TopicPolicy(i64),
    /// In one of these channels (the viewer muted them) or in a topic the viewer gave the
    /// policy `topic_policy` (muted).
    Muted { channels: Vec<ChannelId>, topic_policy: i64 },
    /// With a link.
    HasLink,
    /// With an image.
    HasImage,
    /// With an uploaded file.
    HasAttachment,
    /// With a reaction.
    HasReaction,
    /// Containing every one of these words (full-text search); none matches nothing.
    Search(Vec<String>),
}

/// One term: its condition, or (negated) its opposite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub condition: Condition,
    pub negated: bool,
}

/// A narrow, resolved for one viewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub viewer: UserId,
    pub scope: Scope,
    pub terms: Vec<Term>,
    /// The newest message the viewer's access was decided for (the state snapshot's):
    /// messages committed later are left out, since their channel's rules may have changed.
    pub upto: MessageId,
}

/// The viewer's flags on a row of a whole-history scope: `read` + `historical` where they
/// have none (Zulip's default for messages one can see without having received them).
const FLAGS_OR_HISTORICAL: &str = "COALESCE(um.flags, 1025)";

/// The flag bits of the `is:` conditions (Zulip's `UserMessage` flags).
const READ: &str = "1";
const STARRED: &str = "2";
/// `mentioned`, `stream_wildcard_mentioned`, `topic_wildcard_mentioned`, `group_mentioned`.
const ANY_MENTION: &str = "24600";
const HAS_ALERT_WORD: &str = "512";

/// A JSON list of ids: one bound parameter however long the list is, read back with
/// `json_each` (a list of `?` would meet SQLite's limit on parameters).
pub(crate) fn json_ids(ids: impl Iterator<Item = i64>) -> String {
    let mut out = String::from("[");
    for (i, id) in ids.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&id.to_string());
    }
    out.push(']');
    out
}

/// The FTS5 query finding messages with every word: each word an FTS5 string (`"`
/// doubled inside), so that no FTS5 operator or syntax applies; `None` without words.
pub fn fts_query(words: &[String]) -> Option<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect();
    (!quoted.is_empty()).then(|| quoted.join(" "))
}

/// A LIKE pattern matching text that starts with `prefix` (with `\` as escape).
fn starts_with_pattern(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// A query under construction: its text and its arguments, in order.
#[derive(Default)]
struct Query {
    sql: String,
    args: Vec<Sql>,
}

impl Query {
    fn push(&mut self, sql: &str) {
        self.sql.push_str(sql);
    }

    fn bind(&mut self, sql: &str, arg: Sql) {
        self.sql.push_str(sql);
        self.args.push(arg);
    }
}

impl Filter {
    /// The message id column to range over and order by: the viewer's rows' own over
    /// [`Scope::Received`] (so that their primary key gives the order), else the message's.
    fn id_col(&self) -> &'static str {
        match self.scope {
            Scope::Received => "um.message_id",
            _ => "m.id",
        }
    }

    /// The viewer's flags: their rows' (so that the partial flag indexes apply) unless the
    /// scope reads messages they have no row for.
    fn flags(&self) -> &'static str {
        match self.scope {
            Scope::History(_) => FLAGS_OR_HISTORICAL,
            _ => "um.flags",
        }
    }

    /// `SELECT <select> FROM ... WHERE ...` (no ordering or limit).
    fn query(&self, select: &str) -> Query {
        self.query_upto(select, true)
    }

    /// [`Filter::query`], with the bound `<= upto` left out unless `upto` (for a caller that
    /// bounds the ids itself: two upper bounds on one column make SQLite range over one and
    /// test the other on every row, walking from the newest message down to the anchor).
    fn query_upto(&self, select: &str, upto: bool) -> Query {
        let mut q = Query::default();
        q.push("SELECT ");
        q.push(select);
        let viewer = Sql::Integer(self.viewer.0);
        match &self.scope {
            Scope::History(channels) => {
                q.bind(
                    " FROM messages m LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?",
                    viewer,
                );
                q.push(" WHERE 1");
                if let Some(channels) = channels {
                    let ids = json_ids(channels.iter().map(|c| c.0));
                    q.bind(" AND m.channel_id IN (SELECT value FROM json_each(?))", Sql::Text(ids));
                }
            }
            Scope::Conversation => {
                q.bind(" FROM messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?", viewer);
                q.push(" WHERE 1");
            }
            Scope::Received => {
                q.bind(" FROM user_messages um JOIN messages m ON m.id = um.message_id WHERE um.user_id = ?", viewer);
            }
        }
        if upto {
            for part in [" AND ", self.id_col(), " <= ?"] {
                q.push(part);
            }
            q.args.push(Sql::Integer(self.upto.0));
        }
        for term in &self.terms {
            q.push(if term.negated { " AND NOT (" } else { " AND (" });
            self.condition(&mut q, &term.condition);
            q.push(")");
        }
        q
    }

    fn condition(&self, q: &mut Query, condition: &Condition) {
        let flags = self.flags();
        let any = |q: &mut Query, mask: &str| {
            for part in ["(", flags, " & ", mask, ") != 0"] {
                q.push(part);
            }
        };
        match condition {
            Condition::Channel(id) => q.bind("m.channel_id IS ?", Sql::Integer(id.0)),
            // A direct message is in no channel: NULL, so neither the term nor its negation
            // (only channels that are not archived) takes it.
            Condition::ChannelIn(ids) => {
                q.bind("m.channel_id IN (SELECT value FROM json_each(?))", Sql::Text(json_ids(ids.iter().map(|c| c.0))))
            }
            Condition::Topic(topic) => {
                q.bind("m.channel_id IS NOT NULL AND m.topic = ? COLLATE NOCASE", Sql::Text(topic.clone()))
            }
            Condition::TopicStartsWith(prefix) => q.bind(
                "m.channel_id IS NOT NULL AND m.topic LIKE ? ESCAPE '\\'",
                Sql::Text(starts_with_pattern(prefix)),
            ),
            Condition::Sender(id) => q.bind("m.sender_id = ?", Sql::Integer(id.0)),
            Condition::Conversation(key) => q.bind("m.dm_key IS NOT NULL AND m.dm_key = ?", Sql::Text(key.clone())),
            Condition::Including(user) => {
                q.bind("m.dm_key IS NOT NULL AND (',' || m.dm_key || ',') LIKE ?", Sql::Text(format!("%,{user},%")))
            }
            Condition::Id(id) => q.bind("m.id = ?", Sql::Integer(id.0)),
            Condition::Direct => q.push("m.dm_key IS NOT NULL"),
            Condition::Starred => any(q, STARRED),
            Condition::Mentioned => any(q, ANY_MENTION),
            // The rendering's mention of the user: silent mentions have the class
            // `user-mention silent`, group and wildcard mentions no `data-user-id`.
            Condition::MentionsUser(id) => q.bind(
                "instr(m.rendered_content, ?) > 0",
                Sql::Text(format!("<span class=\"user-mention\" data-user-id=\"{}\">", id.0)),
            ),
            Condition::Alerted => any(q, HAS_ALERT_WORD),
            Condition::Unread => {
                for part in ["(", flags, " & ", READ, ") = 0"] {
                    q.push(part);
                }
            }
            Condition::TopicPolicy(policy) => self.topic_policy(q, *policy),
            Condition::Muted { channels, topic_policy } => {
                let ids = json_ids(channels.iter().map(|c| c.0));
                q.bind("m.channel_id IN (SELECT value FROM json_each(?)) OR ", Sql::Text(ids));
                self.topic_policy(q, *topic_policy);
            }
            Condition::HasLink => q.push("m.has_link = 1"),
            Condition::HasImage => q.push("m.has_image = 1"),
            Condition::HasAttachment => q.push("m.has_attachment = 1"),
            Condition::HasReaction => q.push("EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)"),
            Condition::Search(words) => match fts_query(words) {
                Some(query) => {
                    q.bind("m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)", Sql::Text(query))
                }
                // Nothing searchable (control characters only): like an empty text-search
                // query in Zulip, it matches nothing.
                None => q.push("0"),
            },
        }
    }

    /// Messages in the viewer's topics with `policy`: a lookup in `user_topics` (one
    /// condition, however many topics the viewer has).
    fn topic_policy(&self, q: &mut Query, policy: i64) {
        q.bind(
            "EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ? AND ut.channel_id = m.channel_id \
             AND ut.topic = m.topic COLLATE NOCASE AND ut.visibility_policy = ?)",
            Sql::Integer(self.viewer.0),
        );
        q.args.push(Sql::Integer(policy));
    }

    /// The filter's rows with the viewer's flags, with one more condition on the id
    /// (`<id_col> <op> ?`), in `order`, at most `limit`.
    fn rows(
        &self,
        conn: &Connection,
        id_cond: &str,
        id_arg: Sql,
        order: &str,
        limit: i64,
    ) -> StoreResult<Vec<FetchedRow>> {
        // Below an anchor, one upper bound: under the anchor and at most `upto`.
        let (below, id_arg) = match (id_cond, id_arg) {
            ("< ?", Sql::Integer(anchor)) => (true, Sql::Integer(anchor.min(self.upto.0.saturating_add(1)))),
            (_, arg) => (false, arg),
        };
        let mut q = self.query_upto(&format!("um.flags, {MESSAGE_COLUMNS}"), !below);
        let id_col = self.id_col();
        for part in [" AND ", id_col, " ", id_cond, " ORDER BY ", id_col, " ", order] {
            q.push(part);
        }
        q.args.push(id_arg);
        q.bind(" LIMIT ?", Sql::Integer(limit));
        let mut stmt = conn.prepare_cached(&q.sql)?;
        let rows = stmt.query_map(params_from_iter(q.args.iter()), |row| Ok((read_row(row, 1)?, row.get(0)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The messages of a narrow around an anchor, each side in ascending order.
#[derive(Debug, Clone, Default)]
pub struct Around {
    /// Up to the number asked for, before the anchor (the closest ones).
    pub before: Vec<FetchedRow>,
    /// The anchor itself, when asked for and matching.
    pub at: Option<FetchedRow>,
    /// Up to the number asked for, after the anchor (the closest ones).
    pub after: Vec<FetchedRow>,
}

/// Zulip's anchored fetch: up to `num_before` messages of the narrow before `anchor`, the
/// anchor itself when `include_anchor`, and up to `num_after` after it.
pub fn around(
    conn: &Connection,
    filter: &Filter,
    anchor: MessageId,
    num_before: i64,
    include_anchor: bool,
    num_after: i64,
) -> StoreResult<Around> {
    let at = Sql::Integer(anchor.0);
    let mut before =
        if num_before > 0 { filter.rows(conn, "< ?", at.clone(), "DESC", num_before)? } else { Vec::new() };
    before.reverse();
    let at_anchor = if include_anchor { filter.rows(conn, "= ?", at.clone(), "ASC", 1)?.pop() } else { None };
    let after = if num_after > 0 { filter.rows(conn, "> ?", at, "ASC", num_after)? } else { Vec::new() };
    Ok(Around { before, at: at_anchor, after })
}

/// The narrow's messages among `ids`, ascending (unknown ids and repeats left out).
pub fn among(conn: &Connection, filter: &Filter, ids: &[MessageId]) -> StoreResult<Vec<FetchedRow>> {
    let list = Sql::Text(json_ids(ids.iter().map(|id| id.0)));
    let limit = i64::try_from(ids.len()).unwrap_or(i64::MAX);
    filter.rows(conn, "IN (SELECT value FROM json_each(?))", list, "ASC", limit)
}

/// The narrow's first message the viewer has not read, if any.
/// The oldest message of `filter` sent at or after `since` (seconds), for `anchor=date`.
pub fn first_since(conn: &Connection, filter: &Filter, since: i64) -> StoreResult<Option<MessageId>> {
    let mut q = filter.query(&format!("MIN({})", filter.id_col()));
    q.bind(" AND m.date_sent >= ?", Sql::Integer(since));
    let mut stmt = conn.prepare_cached(&q.sql)?;
    Ok(stmt.query_row(params_from_iter(q.args.iter()), |r| r.get(0))?)
}

pub fn first_unread(conn: &Connection, filter: &Filter) -> StoreResult<Option<MessageId>> {
    let mut q = filter.query(&format!("MIN({})", filter.id_col()));
    for part in [" AND (", filter.flags(), " & ", READ, ") = 0"] {
        q.push(part);
    }
    let mut stmt = conn.prepare_cached(&q.sql)?;
    Ok(stmt.query_row(params_from_iter(q.args.iter()), |r| r.get(0))?)
}

#[cfg(test)]
mod tests;
