//! Messages, their per-user rows and their full-text index.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::StoreResult;
use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::realm::model::UserTopic;

/// A message as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub id: MessageId,
    pub sender_id: UserId,
    pub channel_id: Option<ChannelId>,
    pub topic: String,
    pub content: String,
    pub rendered_content: String,
    pub date_sent: i64,
    /// Sorted participant ids of a direct message, e.g. `3,7`.
    pub dm_key: Option<String>,
    pub sending_client: String,
    pub last_edit_time: Option<i64>,
    pub last_moved_time: Option<i64>,
    pub edit_history: Option<String>,
}

/// A new message: everything but its id.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub realm_id: RealmId,
    pub sender_id: UserId,
    pub channel_id: Option<ChannelId>,
    pub topic: &'a str,
    pub content: &'a str,
    pub rendered_content: &'a str,
    pub date_sent: i64,
    pub dm_key: Option<&'a str>,
    pub sending_client: &'a str,
    pub has_link: bool,
    pub has_image: bool,
    pub has_attachment: bool,
}

/// The columns [`read_row`] reads, prefixed by table alias `m`.
pub const MESSAGE_COLUMNS: &str = "m.id, m.sender_id, m.channel_id, m.topic, m.content, m.rendered_content, \
     m.date_sent, m.dm_key, m.sending_client, m.last_edit_time, m.last_moved_time, m.edit_history";

/// Reads the [`MESSAGE_COLUMNS`] starting at column `at`.
pub fn read_row(row: &Row<'_>, at: usize) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        id: row.get(at)?,
        sender_id: row.get(at + 1)?,
        channel_id: row.get(at + 2)?,
        topic: row.get(at + 3)?,
        content: row.get(at + 4)?,
        rendered_content: row.get(at + 5)?,
        date_sent: row.get(at + 6)?,
        dm_key: row.get(at + 7)?,
        sending_client: row.get(at + 8)?,
        last_edit_time: row.get(at + 9)?,
        last_moved_time: row.get(at + 10)?,
        edit_history: row.get(at + 11)?,
    })
}

/// Stores a message, its full-text row and its recipients' rows (`(user, flags)`);
/// returns its id.
pub fn insert(conn: &Connection, msg: &NewMessage<'_>, recipients: &[(UserId, i64)]) -> StoreResult<MessageId> {
    conn.prepare_cached(
        "INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent,
                               dm_key, sending_client, has_link, has_image, has_attachment)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        msg.realm_id,
        msg.sender_id,
        msg.channel_id,
        msg.topic,
        msg.content,
        msg.rendered_content,
        msg.date_sent,
        msg.dm_key,
        msg.sending_client,
        msg.has_link,
        msg.has_image,
        msg.has_attachment
    ])?;
    let id = MessageId(conn.last_insert_rowid());
    conn.prepare_cached("INSERT INTO messages_fts (rowid, content, topic) VALUES (?1, ?2, ?3)")?.execute(params![
        id,
        msg.content,
        msg.topic
    ])?;
    let mut stmt = conn.prepare_cached("INSERT INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?;
    for (user, flags) in recipients {
        stmt.execute(params![user, id, flags])?;
    }
    Ok(id)
}

/// The largest message id `user` received, or -1.
pub fn max_message_id(conn: &Connection, user: UserId) -> StoreResult<i64> {
    let id: Option<i64> = conn
        .prepare_cached("SELECT MAX(message_id) FROM user_messages WHERE user_id = ?1")?
        .query_row([user], |r| r.get(0))?;
    Ok(id.unwrap_or(-1))
}

/// A message with the viewer's flags (`None`: the viewer has no row, i.e. historical).
pub type FetchedRow = (MessageRow, Option<i64>);

/// Message `id` of `realm` with `viewer`'s flags (`None` where they have no row), if it
/// exists.
pub fn viewed_message(
    conn: &Connection,
    realm: RealmId,
    viewer: UserId,
    id: MessageId,
) -> StoreResult<Option<FetchedRow>> {
    let sql = format!(
        "SELECT um.flags, {MESSAGE_COLUMNS} FROM messages m
         LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?1 WHERE m.id = ?2 AND m.realm_id = ?3"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    Ok(stmt.query_row(params![viewer, id, realm], |row| Ok((read_row(row, 1)?, row.get(0)?))).optional()?)
}

/// The newest message id of the whole database (0 without messages): an upper bound of
/// every organization's committed messages, since ids only grow.
pub fn newest_message_id(conn: &Connection) -> StoreResult<MessageId> {
    Ok(conn.query_row("SELECT COALESCE(MAX(id), 0) FROM messages", [], |r| r.get(0))?)
}

/// One reaction on a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactionRow {
    pub message_id: MessageId,
    pub user_id: UserId,
    pub emoji_name: String,
    pub emoji_code: String,
    pub reaction_type: String,
}

/// The reactions on `messages`, in the order they were added.
pub fn reactions_of(conn: &Connection, messages: &[MessageId]) -> StoreResult<Vec<ReactionRow>> {
    if messages.is_empty() {
        return Ok(Vec::new());
    }
    // One bound JSON list, however many messages (a `?` each would meet SQLite's limit).
    let ids = super::narrow::json_ids(messages.iter().map(|m| m.0));
    let mut stmt = conn.prepare_cached(
        "SELECT message_id, user_id, emoji_name, emoji_code, reaction_type FROM reactions
         WHERE message_id IN (SELECT value FROM json_each(?1)) ORDER BY message_id",
    )?;
    let rows = stmt.query_map([ids], |r| {
        Ok(ReactionRow {
            message_id: r.get(0)?,
            user_id: r.get(1)?,
            emoji_name: r.get(2)?,
            emoji_code: r.get(3)?,
            reaction_type: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Whether a channel topic has any message yet.
pub fn topic_has_messages(conn: &Connection, channel: ChannelId, topic: &str) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM messages WHERE channel_id = ?1 AND topic = ?2 COLLATE NOCASE LIMIT 1")?
        .query_row(params![channel, topic], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether the direct-message conversation `dm_key` (its participants' sorted ids) has any
/// message yet.
pub fn dm_conversation_exists(conn: &Connection, dm_key: &str) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM messages WHERE dm_key = ?1 LIMIT 1")?
        .query_row(params![dm_key], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The users who sent messages to a channel topic.
pub fn topic_participants(conn: &Connection, channel: ChannelId, topic: &str) -> StoreResult<Vec<UserId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT sender_id FROM messages WHERE channel_id = ?1 AND topic = ?2 COLLATE NOCASE",
    )?;
    let rows = stmt.query_map(params![channel, topic], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The ids and send times of a channel topic's messages (the topic compared
/// case-insensitively, as Zulip does), from `from_id` on if given, ascending.
pub fn topic_message_ids(
    conn: &Connection,
    channel: ChannelId,
    topic: &str,
    from_id: Option<MessageId>,
) -> StoreResult<Vec<(MessageId, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, date_sent FROM messages WHERE channel_id = ?1 AND topic = ?2 COLLATE NOCASE AND id >= ?3
         ORDER BY id",
    )?;
    let rows =
        stmt.query_map(params![channel, topic, from_id.unwrap_or(MessageId(0))], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The ids of a channel topic's newest `limit` messages (the topic compared
/// case-insensitively), newest first; with `received_by`, only those that user has a row
/// for (a channel with protected history).
pub fn newest_in_topic(
    conn: &Connection,
    channel: ChannelId,
    topic: &str,
    received_by: Option<UserId>,
    limit: usize,
) -> StoreResult<Vec<MessageId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id FROM messages m WHERE m.channel_id = ?1 AND m.topic = ?2 COLLATE NOCASE
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM user_messages um WHERE um.message_id = m.id AND um.user_id = ?3))
         ORDER BY m.id DESC LIMIT ?4",
    )?;
    let rows = stmt.query_map(params![channel, topic, received_by, limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The newest `limit` messages below `below` that `sender` sent in `channels`, and their
/// direct messages when `direct`, newest first (through `messages_sender`; the caller pages
/// down with `below`, so the messages it keeps are read once).
pub fn newest_sent_by(
    conn: &Connection,
    sender: UserId,
    channels: &[ChannelId],
    direct: bool,
    below: MessageId,
    limit: usize,
) -> StoreResult<Vec<MessageId>> {
    let channels = serde_json::to_string(&channels.iter().map(|c| c.0).collect::<Vec<_>>()).unwrap_or_default();
    let mut stmt = conn.prepare_cached(
        "SELECT m.id FROM messages m WHERE m.sender_id = ?1 AND m.id < ?5
           AND ((m.channel_id IS NULL AND ?2) OR m.channel_id IN (SELECT value FROM json_each(?3)))
         ORDER BY m.id DESC LIMIT ?4",
    )?;
    let rows = stmt.query_map(params![sender, direct, channels, limit as i64, below], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The oldest `limit` messages sent before `before` (Unix seconds) in `channel`, or among
/// the organization's direct messages when `None`, oldest first.
pub fn oldest_before(
    conn: &Connection,
    realm: RealmId,
    channel: Option<ChannelId>,
    before: i64,
    limit: usize,
) -> StoreResult<Vec<MessageId>> {
    // Through `messages_channel_date` and `messages_direct_date`.
    let sql = if channel.is_some() {
        "SELECT id FROM messages WHERE channel_id = ?2 AND channel_id IS NOT NULL AND date_sent < ?3
         ORDER BY date_sent, id LIMIT ?4"
    } else {
        "SELECT id FROM messages WHERE realm_id = ?1 AND channel_id IS NULL AND date_sent < ?3
         ORDER BY date_sent, id LIMIT ?4"
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params![realm, channel, before, limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A stored message's new state after an edit or a move.
#[derive(Debug, Clone)]
pub struct EditedMessage<'a> {
    pub id: MessageId,
    /// The indexed text before the edit, to remove from the full-text index.
    pub old_content: &'a str,
    pub old_topic: &'a str,
    pub channel_id: Option<ChannelId>,
    pub topic: &'a str,
    pub content: &'a str,
    pub rendered_content: &'a str,
    pub last_edit_time: Option<i64>,
    pub last_moved_time: Option<i64>,
    pub edit_history: &'a str,
}

/// Rewrites an edited message and its full-text row (external content: the old values
/// are deleted, then the new ones inserted). `None` times are left as they were.
pub fn update_edited(conn: &Connection, msg: &EditedMessage<'_>) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO messages_fts (messages_fts, rowid, content, topic) VALUES ('delete', ?1, ?2, ?3)",
    )?
    .execute(params![msg.id, msg.old_content, msg.old_topic])?;
    conn.prepare_cached(
        "UPDATE messages SET channel_id = ?2, topic = ?3, content = ?4, rendered_content = ?5,
                last_edit_time = COALESCE(?6, last_edit_time), last_moved_time = COALESCE(?7, last_moved_time),
                edit_history = ?8
         WHERE id = ?1",
    )?
    .execute(params![
        msg.id,
        msg.channel_id,
        msg.topic,
        msg.content,
        msg.rendered_content,
        msg.last_edit_time,
        msg.last_moved_time,
        msg.edit_history
    ])?;
    conn.prepare_cached("INSERT INTO messages_fts (rowid, content, topic) VALUES (?1, ?2, ?3)")?.execute(params![
        msg.id,
        msg.content,
        msg.topic
    ])?;
    Ok(())
}

/// The `user_messages` rows of a message: `(user, flags)`, ascending by user.
pub fn message_flags(conn: &Connection, message: MessageId) -> StoreResult<Vec<(UserId, i64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT user_id, flags FROM user_messages WHERE message_id = ?1 ORDER BY user_id")?;
    let rows = stmt.query_map([message], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Sets one user's flags on a message.
pub fn set_flags(conn: &Connection, user: UserId, message: MessageId, flags: i64) -> StoreResult<()> {
    conn.prepare_cached("UPDATE user_messages SET flags = ?3 WHERE user_id = ?1 AND message_id = ?2")?
        .execute(params![user, message, flags])?;
    Ok(())
}

/// Removes one user's row for a message (they lost access to it in a move).
pub fn remove_user_message(conn: &Connection, user: UserId, message: MessageId) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM user_messages WHERE user_id = ?1 AND message_id = ?2")?
        .execute(params![user, message])?;
    Ok(())
}

/// Sets the topic policy a message's sender gets automatically (Zulip's
/// `automatically_follow_topics_policy`) inside a savepoint of the sending transaction: if
/// it fails, the policy is left as it was and the error returned, but the message stays.
pub fn put_automatic_user_topic(conn: &Connection, topic: &UserTopic) -> StoreResult<()> {
    conn.execute_batch("SAVEPOINT automatic_user_topic")?;
    match super::channels::put_user_topic(conn, topic) {
        Ok(()) => {
            conn.execute_batch("RELEASE automatic_user_topic")?;
            Ok(())
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO automatic_user_topic; RELEASE automatic_user_topic")?;
            Err(e)
        }
    }
}
