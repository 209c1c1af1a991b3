//! Storage of what happens to messages after they are sent: looking a message up for an
//! access check, reactions, historical `user_messages` rows and deletion.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{ChannelId, MessageId, RealmId, UserId};

/// What access checks and change events need of a stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub id: MessageId,
    pub realm_id: RealmId,
    pub sender_id: UserId,
    /// `None` for direct messages.
    pub channel_id: Option<ChannelId>,
    /// For direct messages, the sorted participant ids joined by commas.
    pub dm_key: Option<String>,
    pub topic: String,
    pub content: String,
    pub rendered_content: String,
    /// Unix seconds.
    pub date_sent: i64,
    /// The raw `edit_history` column (JSON list, newest first), `None` if never edited.
    pub edit_history: Option<String>,
}

/// The message with this id, if any.
pub fn message(conn: &Connection, id: MessageId) -> StoreResult<Option<MessageRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, realm_id, sender_id, channel_id, dm_key, topic, content, rendered_content, date_sent, edit_history
         FROM messages WHERE id = ?1",
    )?;
    let row = stmt
        .query_row([id], |r| {
            Ok(MessageRow {
                id: r.get(0)?,
                realm_id: r.get(1)?,
                sender_id: r.get(2)?,
                channel_id: r.get(3)?,
                dm_key: r.get(4)?,
                topic: r.get(5)?,
                content: r.get(6)?,
                rendered_content: r.get(7)?,
                date_sent: r.get(8)?,
                edit_history: r.get(9)?,
            })
        })
        .optional()?;
    Ok(row)
}

/// Whether `user` has a `user_messages` row for `message`.
pub fn has_user_message(conn: &Connection, user: UserId, message: MessageId) -> StoreResult<bool> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM user_messages WHERE user_id = ?1 AND message_id = ?2")?;
    Ok(stmt.exists(params![user, message])?)
}

/// The users with a `user_messages` row for `message`, ascending.
pub fn message_recipients(conn: &Connection, message: MessageId) -> StoreResult<Vec<UserId>> {
    let mut stmt = conn.prepare_cached("SELECT user_id FROM user_messages WHERE message_id = ?1 ORDER BY user_id")?;
    let rows = stmt.query_map([message], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<UserId>>>()?)
}

/// Gives `user` a row for `message` with `flags` unless they have one (Zulip's historical
/// rows for channel messages one reacts to without having received them).
pub fn ensure_user_message(conn: &Connection, user: UserId, message: MessageId, flags: i64) -> StoreResult<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?
        .execute(params![user, message, flags])?;
    Ok(())
}

/// One reaction of one user to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    pub emoji_name: String,
    pub emoji_code: String,
    pub reaction_type: String,
}

/// `user`'s reaction to `message` with this code and type, if any.
pub fn user_reaction(
    conn: &Connection,
    message: MessageId,
    user: UserId,
    emoji_code: &str,
    reaction_type: &str,
) -> StoreResult<Option<Reaction>> {
    let mut stmt = conn.prepare_cached(
        "SELECT emoji_name FROM reactions
         WHERE message_id = ?1 AND user_id = ?2 AND emoji_code = ?3 AND reaction_type = ?4",
    )?;
    let name: Option<String> =
        stmt.query_row(params![message, user, emoji_code, reaction_type], |r| r.get(0)).optional()?;
    Ok(name.map(|emoji_name| Reaction {
        emoji_name,
        emoji_code: emoji_code.to_owned(),
        reaction_type: reaction_type.to_owned(),
    }))
}

/// The name an earlier reaction of anyone to `message` with this code and type uses.
pub fn reaction_name(
    conn: &Connection,
    message: MessageId,
    emoji_code: &str,
    reaction_type: &str,
) -> StoreResult<Option<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT emoji_name FROM reactions WHERE message_id = ?1 AND emoji_code = ?2 AND reaction_type = ?3 LIMIT 1",
    )?;
    Ok(stmt.query_row(params![message, emoji_code, reaction_type], |r| r.get(0)).optional()?)
}

/// Stores `user`'s reaction to `message`.
pub fn insert_reaction(conn: &Connection, message: MessageId, user: UserId, reaction: &Reaction) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![message, user, reaction.emoji_name, reaction.emoji_code, reaction.reaction_type])?;
    Ok(())
}

/// Removes `user`'s reaction to `message`.
pub fn delete_reaction(conn: &Connection, message: MessageId, user: UserId, reaction: &Reaction) -> StoreResult<()> {
    conn.prepare_cached(
        "DELETE FROM reactions WHERE message_id = ?1 AND user_id = ?2 AND emoji_code = ?3 AND reaction_type = ?4",
    )?
    .execute(params![message, user, reaction.emoji_code, reaction.reaction_type])?;
    Ok(())
}

/// Deletes a message with its full-text entry, reactions and `user_messages` rows.
pub fn delete_message(conn: &Connection, message: &MessageRow) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO messages_fts (messages_fts, rowid, content, topic) VALUES ('delete', ?1, ?2, ?3)",
    )?
    .execute(params![message.id, message.content, message.topic])?;
    conn.prepare_cached("DELETE FROM reactions WHERE message_id = ?1")?.execute([message.id])?;
    conn.prepare_cached("DELETE FROM submessages WHERE message_id = ?1")?.execute([message.id])?;
    conn.prepare_cached("DELETE FROM user_messages WHERE message_id = ?1")?.execute([message.id])?;
    conn.prepare_cached("DELETE FROM messages WHERE id = ?1")?.execute([message.id])?;
    Ok(())
}

/// Indexes a message for full-text search (what sending does; used by unit tests).
pub fn index_message(conn: &Connection, id: MessageId, content: &str, topic: &str) -> StoreResult<()> {
    conn.prepare_cached("INSERT INTO messages_fts (rowid, content, topic) VALUES (?1, ?2, ?3)")?
        .execute(params![id, content, topic])?;
    Ok(())
}

/// Test support: dates a message `date_sent` and, with `edit_history`, stores that history
/// as if the last edit happened when the message was sent.
#[cfg(feature = "test-support")]
pub fn set_test_message_past(
    conn: &Connection,
    message: MessageId,
    date_sent: i64,
    edit_history: Option<&str>,
) -> StoreResult<()> {
    conn.execute(
        "UPDATE messages SET date_sent = ?2, edit_history = ?3, last_edit_time = CASE WHEN ?3 IS NULL THEN NULL ELSE ?2 END
         WHERE id = ?1",
        params![message, date_sent, edit_history],
    )?;
    Ok(())
}
