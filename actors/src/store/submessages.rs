//! Submessages (the data of widgets: polls and to-do lists), who read a message (read
//! receipts) and the numbering of group direct-message conversations.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{MessageId, RealmId, UserId};

/// A submessage as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmessageRow {
    pub id: i64,
    pub message_id: MessageId,
    pub sender_id: UserId,
    pub msg_type: String,
    pub content: String,
}

/// Adds a submessage; its id.
pub fn insert(
    conn: &Connection,
    message: MessageId,
    sender: UserId,
    msg_type: &str,
    content: &str,
) -> StoreResult<i64> {
    conn.prepare_cached("INSERT INTO submessages (message_id, sender_id, msg_type, content) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![message, sender, msg_type, content])?;
    Ok(conn.last_insert_rowid())
}

/// The submessages of `messages`, by message then id (Zulip's `SubMessage.get_raw_db_rows`).
pub fn of_messages(conn: &Connection, messages: &[MessageId]) -> StoreResult<Vec<SubmessageRow>> {
    if messages.is_empty() {
        return Ok(Vec::new());
    }
    let ids = super::narrow::json_ids(messages.iter().map(|m| m.0));
    let mut stmt = conn.prepare_cached(
        "SELECT id, message_id, sender_id, msg_type, content FROM submessages
         WHERE message_id IN (SELECT value FROM json_each(?1)) ORDER BY message_id, id",
    )?;
    let rows = stmt.query_map([ids], |r| {
        Ok(SubmessageRow {
            id: r.get(0)?,
            message_id: r.get(1)?,
            sender_id: r.get(2)?,
            msg_type: r.get(3)?,
            content: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Whether a message has any submessage (Zulip's `is_widget_message`).
pub fn exists_for(conn: &Connection, message: MessageId) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM submessages WHERE message_id = ?1 LIMIT 1")?
        .query_row([message], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether `sender` has a submessage on `message`.
pub fn exists_from(conn: &Connection, message: MessageId, sender: UserId) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM submessages WHERE message_id = ?1 AND sender_id = ?2 LIMIT 1")?
        .query_row(params![message, sender], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The content of a message's first `widget` submessage.
pub fn widget_content(conn: &Connection, message: MessageId) -> StoreResult<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT content FROM submessages WHERE message_id = ?1 AND msg_type = 'widget' ORDER BY id LIMIT 1",
        )?
        .query_row([message], |r| r.get(0))
        .optional()?)
}

/// The number of the group conversation `dm_key`, numbered now if new.
pub fn ensure_dm_group(conn: &Connection, realm: RealmId, dm_key: &str) -> StoreResult<i64> {
    conn.prepare_cached("INSERT OR IGNORE INTO dm_groups (realm_id, dm_key) VALUES (?1, ?2)")?
        .execute(params![realm, dm_key])?;
    Ok(conn.prepare_cached("SELECT id FROM dm_groups WHERE dm_key = ?1")?.query_row([dm_key], |r| r.get(0))?)
}

/// Every numbered group conversation of an organization: `(dm_key, id)`.
pub fn dm_groups_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached("SELECT dm_key, id FROM dm_groups WHERE realm_id = ?1")?;
    let rows = stmt.query_map([realm], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Who has read `message` (their row's `read` flag), ascending.
pub fn readers(conn: &Connection, message: MessageId) -> StoreResult<Vec<UserId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT user_id FROM user_messages WHERE message_id = ?1 AND (flags & 1) != 0 ORDER BY user_id",
    )?;
    let rows = stmt.query_map([message], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
