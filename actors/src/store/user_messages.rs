//! Per-user message rows (Zulip's `UserMessage`): flags, unread state, starred messages
//! and direct-message conversations. The queries that look for a flag use the partial
//! indexes of `sql/0005_messages.sql`.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection};

use super::StoreResult;
use crate::ids::{ChannelId, MessageId, RealmId, UserId};

/// Where a message was sent, as the flag operations need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef {
    pub id: MessageId,
    pub sender_id: UserId,
    /// Set for channel messages.
    pub channel_id: Option<ChannelId>,
    pub topic: String,
    /// Set for direct messages: the sorted participant ids, e.g. "3,7".
    pub dm_key: Option<String>,
}

/// One of a user's messages with their flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlaggedMessage {
    pub message: MessageRef,
    pub flags: i64,
}

/// SQLite's default limit of host parameters is far above this; chunks keep statements
/// small however many ids a request names.
const CHUNK: usize = 500;

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

fn message_ref(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<MessageRef> {
    Ok(MessageRef {
        id: r.get(at)?,
        sender_id: UserId(r.get(at + 1)?),
        channel_id: r.get::<_, Option<i64>>(at + 2)?.map(ChannelId),
        topic: r.get(at + 3)?,
        dm_key: r.get(at + 4)?,
    })
}

/// The messages of `realm` among `ids` (unknown ids are left out), ascending.
pub fn messages_by_ids(conn: &Connection, realm: RealmId, ids: &[MessageId]) -> StoreResult<Vec<MessageRef>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(CHUNK) {
        let sql = format!(
            "SELECT id, sender_id, channel_id, topic, dm_key FROM messages WHERE realm_id = ? AND id IN ({})",
            placeholders(chunk.len())
        );
        let mut stmt = conn.prepare(&sql)?;
        let values = std::iter::once(realm.0).chain(chunk.iter().map(|id| id.0));
        let rows = stmt.query_map(params_from_iter(values), |r| message_ref(r, 0))?;
        for row in rows {
            out.push(row?);
        }
    }
    out.sort_by_key(|m| m.id);
    out.dedup_by_key(|m| m.id);
    Ok(out)
}

/// `user`'s flags of those of `ids` they have a row for.
pub fn flags_of(conn: &Connection, user: UserId, ids: &[MessageId]) -> StoreResult<Vec<(MessageId, i64)>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(CHUNK) {
        let sql = format!(
            "SELECT message_id, flags FROM user_messages WHERE user_id = ? AND message_id IN ({})",
            placeholders(chunk.len())
        );
        let mut stmt = conn.prepare(&sql)?;
        let values = std::iter::once(user.0).chain(chunk.iter().map(|id| id.0));
        let rows = stmt.query_map(params_from_iter(values), |r| Ok((r.get(0)?, r.get(1)?)))?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

/// Sets (`on`) or clears the flag `bit` on `user`'s rows of `ids`.
pub fn set_flag(conn: &Connection, user: UserId, ids: &[MessageId], bit: i64, on: bool) -> StoreResult<()> {
    let sql = if on {
        "UPDATE user_messages SET flags = flags | ?3 WHERE user_id = ?1 AND message_id = ?2"
    } else {
        "UPDATE user_messages SET flags = flags & ~?3 WHERE user_id = ?1 AND message_id = ?2"
    };
    let mut stmt = conn.prepare_cached(sql)?;
    for id in ids {
        stmt.execute(params![user, id, bit])?;
    }
    Ok(())
}

/// Gives `user` rows with `flags` for `ids` (Zulip's historical rows: messages the user
/// can see without having received them).
pub fn insert_rows(conn: &Connection, user: UserId, ids: &[MessageId], flags: i64) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR IGNORE INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?;
    for id in ids {
        stmt.execute(params![user, id, flags])?;
    }
    Ok(())
}

/// Marks every unread message of `user` read; returns how many changed.
pub fn mark_all_read(conn: &Connection, user: UserId) -> StoreResult<usize> {
    Ok(conn.execute(
        "UPDATE user_messages INDEXED BY user_messages_unread SET flags = flags | 1
         WHERE user_id = ?1 AND (flags & 1) = 0",
        [user],
    )?)
}

/// `user`'s unread messages in `channel` (in `topic` only, compared case-insensitively,
/// when given), ascending.
pub fn unread_in_channel(
    conn: &Connection,
    user: UserId,
    channel: ChannelId,
    topic: Option<&str>,
) -> StoreResult<Vec<MessageId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT um.message_id FROM user_messages um INDEXED BY user_messages_unread
         JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ?1 AND (um.flags & 1) = 0 AND m.channel_id = ?2
           AND (?3 IS NULL OR m.topic = ?3 COLLATE NOCASE)
         ORDER BY um.message_id",
    )?;
    let rows = stmt.query_map(params![user, channel, topic], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<MessageId>>>()?)
}

/// Whether `user` received a message in `topic` (case-insensitive) of `channel`.
pub fn has_topic(conn: &Connection, user: UserId, channel: ChannelId, topic: &str) -> StoreResult<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?1
         WHERE m.channel_id = ?2 AND m.topic = ?3 COLLATE NOCASE)",
    )?;
    Ok(stmt.query_row(params![user, channel, topic], |r| r.get(0))?)
}

/// The `where` clause of unread messages: user, then the channels left out (JSON).
fn unread_select(index: &str) -> String {
    // Without statistics SQLite would walk the primary key over every row of the user;
    // the partial index holds the unread ones only. A list of ids goes by the primary key.
    format!(
        "SELECT um.flags, m.id, m.sender_id, m.channel_id, m.topic, m.dm_key
         FROM user_messages um {index} JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ? AND (um.flags & 1) = 0
           AND (m.channel_id IS NULL OR m.channel_id NOT IN (SELECT value FROM json_each(?)))"
    )
}

fn flagged_message(r: &rusqlite::Row<'_>) -> rusqlite::Result<FlaggedMessage> {
    Ok(FlaggedMessage { flags: r.get(0)?, message: message_ref(r, 1)? })
}

/// `user`'s newest `limit` unread messages up to `upto` outside the channels `excluded`,
/// ascending.
pub fn unread_upto(
    conn: &Connection,
    user: UserId,
    upto: MessageId,
    excluded: &[ChannelId],
    limit: usize,
) -> StoreResult<Vec<FlaggedMessage>> {
    let excluded = super::narrow::json_ids(excluded.iter().map(|c| c.0));
    let sql = format!(
        "{} AND um.message_id <= ? ORDER BY um.message_id DESC LIMIT ?",
        unread_select("INDEXED BY user_messages_unread")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut out =
        stmt.query_map(params![user, excluded, upto, limit], flagged_message)?.collect::<rusqlite::Result<Vec<_>>>()?;
    out.reverse();
    Ok(out)
}

/// Those of the messages `ids` that `user` has unread, outside the channels `excluded`,
/// ascending.
pub fn unread_among(
    conn: &Connection,
    user: UserId,
    ids: &[MessageId],
    excluded: &[ChannelId],
) -> StoreResult<Vec<FlaggedMessage>> {
    let excluded = super::narrow::json_ids(excluded.iter().map(|c| c.0));
    let mut out = Vec::new();
    for chunk in ids.chunks(CHUNK) {
        let sql = format!("{} AND um.message_id IN ({})", unread_select(""), placeholders(chunk.len()));
        let mut stmt = conn.prepare(&sql)?;
        let values = [Value::Integer(user.0), Value::Text(excluded.clone())]
            .into_iter()
            .chain(chunk.iter().map(|id| Value::Integer(id.0)));
        for r in stmt.query_map(params_from_iter(values), flagged_message)? {
            out.push(r?);
        }
    }
    out.sort_by_key(|m| m.message.id);
    Ok(out)
}

/// The ids of `user`'s starred messages up to `upto`, ascending.
pub fn starred(conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<Vec<MessageId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT message_id FROM user_messages INDEXED BY user_messages_starred
         WHERE user_id = ?1 AND (flags & 2) != 0 AND message_id <= ?2 ORDER BY message_id",
    )?;
    let rows = stmt.query_map(params![user, upto], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<MessageId>>>()?)
}

/// `user`'s direct-message conversations among their newest `limit` direct messages up to
/// `upto`: each conversation's key (`dm_key`) with its newest message id, in no particular
/// order.
pub fn recent_conversations(
    conn: &Connection,
    user: UserId,
    upto: MessageId,
    limit: usize,
) -> StoreResult<Vec<(String, MessageId)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.dm_key, MAX(m.id) FROM
           (SELECT message_id FROM user_messages INDEXED BY user_messages_private
            WHERE user_id = ?1 AND (flags & 2048) != 0 AND message_id <= ?3
            ORDER BY message_id DESC LIMIT ?2) recent
         JOIN messages m ON m.id = recent.message_id
         WHERE m.dm_key IS NOT NULL GROUP BY m.dm_key",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![user, limit, upto], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<(String, MessageId)>>>()?)
}

#[cfg(test)]
mod tests;
