//! Drafts of `sql/0010_drafts_navigation_views_saved_snippets.sql`: a user's drafts are
//! read from here (they are not kept in memory: there may be many, each as long as a
//! message), written by `realm::drafts` and deleted when the user turns
//! `enable_drafts_synchronization` off.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{StoreError, StoreResult};
use crate::ids::{RealmId, UserId};

/// A draft as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftRow {
    pub id: i64,
    /// `""`, `"stream"` or `"private"`.
    pub kind: String,
    /// What the API shows as `to`.
    pub to: Vec<i64>,
    pub topic: String,
    pub content: String,
    /// Microseconds since the epoch.
    pub last_edit_micros: i64,
}

/// A draft's fields without its id (what a create or an edit writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFields {
    pub kind: String,
    pub to: Vec<i64>,
    pub topic: String,
    pub content: String,
    pub last_edit_micros: i64,
}

const COLUMNS: &str = "id, kind, recipients, topic, content, last_edit_micros";

fn row(r: &Row<'_>) -> rusqlite::Result<(DraftRow, String)> {
    let draft = DraftRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        to: Vec::new(),
        topic: r.get(3)?,
        content: r.get(4)?,
        last_edit_micros: r.get(5)?,
    };
    Ok((draft, r.get(2)?))
}

/// Decodes the stored `recipients` list into the row.
fn with_recipients((mut draft, recipients): (DraftRow, String)) -> StoreResult<DraftRow> {
    draft.to = serde_json::from_str(&recipients)
        .map_err(|e| StoreError::Corrupt(format!("draft {} recipients: {e}", draft.id)))?;
    Ok(draft)
}

fn recipients_json(to: &[i64]) -> String {
    serde_json::Value::from(to.to_vec()).to_string()
}

/// `user`'s drafts, least recently edited first (ties by id), at most `limit` of them; or
/// most recently edited first with `newest_first`.
pub fn of_user(conn: &Connection, user: UserId, newest_first: bool, limit: i64) -> StoreResult<Vec<DraftRow>> {
    let order = if newest_first { "last_edit_micros DESC, id DESC" } else { "last_edit_micros, id" };
    let sql = format!("SELECT {COLUMNS} FROM drafts WHERE user_id = ?1 ORDER BY {order} LIMIT ?2");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![user, limit], row)?;
    rows.map(|r| with_recipients(r?)).collect()
}

/// `user`'s draft `id`, if it is theirs.
pub fn get(conn: &Connection, user: UserId, id: i64) -> StoreResult<Option<DraftRow>> {
    let sql = format!("SELECT {COLUMNS} FROM drafts WHERE id = ?1 AND user_id = ?2");
    let found = conn.prepare_cached(&sql)?.query_row(params![id, user], row).optional()?;
    found.map(with_recipients).transpose()
}

/// Stores new drafts of `user`, in order; their ids.
pub fn insert(conn: &Connection, realm: RealmId, user: UserId, drafts: &[DraftFields]) -> StoreResult<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO drafts (realm_id, user_id, kind, recipients, topic, content, last_edit_micros)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut ids = Vec::with_capacity(drafts.len());
    for d in drafts {
        stmt.execute(params![realm, user, d.kind, recipients_json(&d.to), d.topic, d.content, d.last_edit_micros])?;
        ids.push(conn.last_insert_rowid());
    }
    Ok(ids)
}

/// Replaces the fields of `user`'s draft `id`; whether it was theirs.
pub fn update(conn: &Connection, user: UserId, id: i64, d: &DraftFields) -> StoreResult<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE drafts SET kind = ?3, recipients = ?4, topic = ?5, content = ?6, last_edit_micros = ?7
             WHERE id = ?1 AND user_id = ?2",
        )?
        .execute(params![id, user, d.kind, recipients_json(&d.to), d.topic, d.content, d.last_edit_micros])?;
    Ok(changed > 0)
}

/// Deletes `user`'s draft `id`; whether it was theirs.
pub fn delete(conn: &Connection, user: UserId, id: i64) -> StoreResult<bool> {
    Ok(conn.prepare_cached("DELETE FROM drafts WHERE id = ?1 AND user_id = ?2")?.execute(params![id, user])? > 0)
}

/// Deletes every draft of `user`; how many there were.
pub fn delete_all_of(conn: &Connection, user: UserId) -> StoreResult<usize> {
    Ok(conn.prepare_cached("DELETE FROM drafts WHERE user_id = ?1")?.execute([user])?)
}
