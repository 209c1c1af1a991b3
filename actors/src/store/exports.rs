//! The `realm_exports` table of `sql/0020_realm_exports.sql`: data exports, their state and
//! where their archives are.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::StoreResult;
use crate::ids::{RealmId, UserId};

/// A data export as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportRow {
    pub id: i64,
    pub realm_id: RealmId,
    pub acting_user_id: UserId,
    pub export_type: i64,
    pub requested_at: f64,
    pub path_id: Option<String>,
    pub failed_at: Option<f64>,
    pub deleted_at: Option<f64>,
    pub attempts: i64,
}

const COLUMNS: &str =
    "id, realm_id, acting_user_id, export_type, requested_at, path_id, failed_at, deleted_at, attempts";

fn read(r: &Row<'_>) -> rusqlite::Result<ExportRow> {
    Ok(ExportRow {
        id: r.get(0)?,
        realm_id: r.get(1)?,
        acting_user_id: r.get(2)?,
        export_type: r.get(3)?,
        requested_at: r.get(4)?,
        path_id: r.get(5)?,
        failed_at: r.get(6)?,
        deleted_at: r.get(7)?,
        attempts: r.get(8)?,
    })
}

/// Records a requested export; returns its id.
pub fn insert(conn: &Connection, realm: RealmId, acting: UserId, export_type: i64, at: f64) -> StoreResult<i64> {
    conn.execute(
        "INSERT INTO realm_exports (realm_id, acting_user_id, export_type, requested_at) VALUES (?1, ?2, ?3, ?4)",
        params![realm, acting, export_type, at],
    )?;
    Ok(conn.last_insert_rowid())
}

/// An organization's exports, oldest first.
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<ExportRow>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM realm_exports WHERE realm_id = ?1 ORDER BY id"))?;
    let rows = stmt.query_map([realm], read)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One export of an organization.
pub fn get(conn: &Connection, realm: RealmId, id: i64) -> StoreResult<Option<ExportRow>> {
    let sql = format!("SELECT {COLUMNS} FROM realm_exports WHERE realm_id = ?1 AND id = ?2");
    Ok(conn.query_row(&sql, params![realm, id], read).optional()?)
}

/// Exports still to be written, oldest first.
pub fn pending(conn: &Connection) -> StoreResult<Vec<ExportRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM realm_exports WHERE path_id IS NULL AND failed_at IS NULL AND deleted_at IS NULL ORDER BY id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], read)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many exports an organization asked for since `since` (for the rate limit).
pub fn requested_since(conn: &Connection, realm: RealmId, since: f64) -> StoreResult<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM realm_exports WHERE realm_id = ?1 AND requested_at >= ?2",
        params![realm, since],
        |r| r.get(0),
    )?)
}

/// The worker begins an export.
pub fn begin(conn: &Connection, id: i64) -> StoreResult<()> {
    conn.execute("UPDATE realm_exports SET attempts = attempts + 1 WHERE id = ?1", [id])?;
    Ok(())
}

/// An export was written at `path_id` (unless it was deleted meanwhile: then false).
pub fn finish(conn: &Connection, id: i64, path_id: &str) -> StoreResult<bool> {
    let n = conn
        .execute("UPDATE realm_exports SET path_id = ?2 WHERE id = ?1 AND deleted_at IS NULL", params![id, path_id])?;
    Ok(n == 1)
}

/// An export failed.
pub fn fail(conn: &Connection, id: i64, at: f64) -> StoreResult<()> {
    conn.execute("UPDATE realm_exports SET failed_at = ?2 WHERE id = ?1", params![id, at])?;
    Ok(())
}

/// An export was deleted.
pub fn delete(conn: &Connection, id: i64, at: f64) -> StoreResult<()> {
    conn.execute("UPDATE realm_exports SET deleted_at = ?2 WHERE id = ?1", params![id, at])?;
    Ok(())
}
