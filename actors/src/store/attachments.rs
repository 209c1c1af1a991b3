//! Uploads of `sql/0010_uploads.sql`: attachments, the messages that claim them, and
//! custom emoji.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{MessageId, RealmId, UserId};
use crate::realm::uploads_data::{Attachment, ImageMeta, RealmEmoji};

const ATTACHMENT_COLUMNS: &str = "id, owner_id, path_id, name, size, content_type, create_time, is_realm_public, \
     is_web_public, image_width, image_height, image_frames, thumbnails";

fn read_attachment(r: &rusqlite::Row<'_>) -> rusqlite::Result<Attachment> {
    let width: Option<u32> = r.get(9)?;
    let image = match width {
        Some(width) => {
            let thumbnails: Option<String> = r.get(12)?;
            Some(ImageMeta {
                width,
                height: r.get(10)?,
                frames: r.get(11)?,
                thumbnails: thumbnails.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default(),
            })
        }
        None => None,
    };
    Ok(Attachment {
        id: r.get(0)?,
        owner_id: r.get(1)?,
        path_id: r.get(2)?,
        name: r.get(3)?,
        size: r.get(4)?,
        content_type: r.get(5)?,
        create_time: r.get(6)?,
        is_realm_public: r.get(7)?,
        is_web_public: r.get(8)?,
        image,
    })
}

/// Every attachment of `realm`, by id.
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<Attachment>> {
    let sql = format!("SELECT {ATTACHMENT_COLUMNS} FROM attachments WHERE realm_id = ?1 ORDER BY id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([realm], read_attachment)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Stores a new attachment (its `id` is ignored) and returns its id.
pub fn insert(conn: &Connection, realm: RealmId, a: &Attachment) -> StoreResult<i64> {
    let thumbnails = a.image.as_ref().map(|i| serde_json::to_string(&i.thumbnails).unwrap_or_else(|_| "[]".into()));
    conn.prepare_cached(
        "INSERT INTO attachments (realm_id, owner_id, path_id, name, size, content_type, create_time,
             is_realm_public, is_web_public, image_width, image_height, image_frames, thumbnails)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        realm,
        a.owner_id,
        a.path_id,
        a.name,
        a.size,
        a.content_type,
        a.create_time,
        a.is_realm_public,
        a.is_web_public,
        a.image.as_ref().map(|i| i.width),
        a.image.as_ref().map(|i| i.height),
        a.image.as_ref().map(|i| i.frames),
        thumbnails,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Deletes an attachment (its claims go with it).
pub fn delete(conn: &Connection, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM attachments WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Records that `message` claims `attachment`, and whether the attachment is now public to
/// the organization.
pub fn claim(conn: &Connection, attachment: i64, message: MessageId, realm_public: bool) -> StoreResult<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO attachment_messages (attachment_id, message_id) VALUES (?1, ?2)")?
        .execute(params![attachment, message])?;
    if realm_public {
        conn.prepare_cached("UPDATE attachments SET is_realm_public = 1 WHERE id = ?1")?.execute([attachment])?;
    }
    Ok(())
}

/// The messages claiming each of `attachments`, with when they were sent, oldest first.
pub fn claims_of(conn: &Connection, attachments: &[i64]) -> StoreResult<Vec<(i64, MessageId, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT am.attachment_id, m.id, m.date_sent FROM attachment_messages am
         JOIN messages m ON m.id = am.message_id
         WHERE am.attachment_id IN (SELECT value FROM json_each(?1)) ORDER BY am.attachment_id, m.id",
    )?;
    let ids = serde_json::to_string(attachments).unwrap_or_else(|_| "[]".into());
    let rows = stmt.query_map([ids], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Records the thumbnails made of an attachment.
pub fn set_thumbnails(conn: &Connection, id: i64, thumbnails: &[String]) -> StoreResult<()> {
    let json = serde_json::to_string(thumbnails).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached("UPDATE attachments SET thumbnails = ?2 WHERE id = ?1")?.execute(params![id, json])?;
    Ok(())
}

/// Images still waiting for their thumbnails, every organization's: (realm, id, path id).
/// The thumbnail worker's queue, so nothing is lost across restarts.
pub fn pending_thumbnails(conn: &Connection) -> StoreResult<Vec<(RealmId, i64, String)>> {
    let mut stmt = conn.prepare("SELECT realm_id, id, path_id FROM attachments WHERE thumbnails = '[]' ORDER BY id")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The content and rendered content of messages claiming `attachment`, for re-rendering
/// previews.
pub fn claiming_rendered(conn: &Connection, attachment: i64) -> StoreResult<Vec<(MessageId, String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id, m.content, m.rendered_content FROM attachment_messages am JOIN messages m ON m.id = am.message_id
         WHERE am.attachment_id = ?1 ORDER BY m.id",
    )?;
    let rows = stmt.query_map([attachment], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Replaces a message's rendered content (a preview whose thumbnail is now made).
pub fn set_rendered(conn: &Connection, message: MessageId, rendered: &str) -> StoreResult<()> {
    conn.prepare_cached("UPDATE messages SET rendered_content = ?2 WHERE id = ?1")?
        .execute(params![message, rendered])?;
    Ok(())
}

/// Every custom emoji of `realm`, by id.
pub fn emoji_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<RealmEmoji>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, file_name, author_id, deactivated, is_animated FROM realm_emoji WHERE realm_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([realm], |r| {
        Ok(RealmEmoji {
            id: r.get(0)?,
            name: r.get(1)?,
            file_name: r.get(2)?,
            author_id: r.get(3)?,
            deactivated: r.get(4)?,
            is_animated: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Stores a new custom emoji and returns its id.
pub fn insert_emoji(
    conn: &Connection,
    realm: RealmId,
    name: &str,
    file_name: &str,
    author: Option<UserId>,
) -> StoreResult<i64> {
    conn.prepare_cached("INSERT INTO realm_emoji (realm_id, name, file_name, author_id) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![realm, name, file_name, author])?;
    Ok(conn.last_insert_rowid())
}

/// Deactivates a custom emoji.
pub fn deactivate_emoji(conn: &Connection, id: i64) -> StoreResult<()> {
    conn.prepare_cached("UPDATE realm_emoji SET deactivated = 1 WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Sets a user's avatar source and version.
pub fn set_avatar(conn: &Connection, user: UserId, source: &str, version: i64) -> StoreResult<()> {
    conn.prepare_cached("UPDATE users SET avatar_source = ?2, avatar_version = ?3 WHERE id = ?1")?
        .execute(params![user, source, version])?;
    Ok(())
}

/// The realm of an attachment path, for the worker (an attachment deleted since is `None`).
pub fn exists(conn: &Connection, id: i64) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM attachments WHERE id = ?1")?
        .query_row([id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Removes `message`'s claim of `attachment`.
pub fn unclaim(conn: &Connection, attachment: i64, message: MessageId) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM attachment_messages WHERE attachment_id = ?1 AND message_id = ?2")?
        .execute(params![attachment, message])?;
    Ok(())
}
