//! The `realm_linkifiers` table of `sql/0014_linkifiers.sql`, loaded with the organization
//! and written by `realm::linkifiers`.

use rusqlite::{params, Connection};

use super::StoreResult;
use crate::ids::RealmId;
use crate::markdown::linkifier::Linkifier;

/// The linkifiers of `realm`, in their order (then by id, as Zulip orders equal ones).
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<Linkifier>> {
    let mut stmt = conn.prepare(
        "SELECT id, pattern, url_template FROM realm_linkifiers WHERE realm_id = ?1 ORDER BY sort_order, id",
    )?;
    let rows =
        stmt.query_map([realm], |r| Ok(Linkifier { id: r.get(0)?, pattern: r.get(1)?, url_template: r.get(2)? }))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Adds a linkifier after the others; returns its id.
pub fn add(conn: &Connection, realm: RealmId, pattern: &str, url_template: &str) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO realm_linkifiers (realm_id, pattern, url_template, sort_order)
         VALUES (?1, ?2, ?3, (SELECT COALESCE(MAX(sort_order), -1) + 1 FROM realm_linkifiers WHERE realm_id = ?1))",
    )?
    .execute(params![realm, pattern, url_template])?;
    Ok(conn.last_insert_rowid())
}

/// Changes a linkifier's pattern and template.
pub fn update(conn: &Connection, realm: RealmId, linkifier: &Linkifier) -> StoreResult<()> {
    conn.prepare_cached("UPDATE realm_linkifiers SET pattern = ?3, url_template = ?4 WHERE realm_id = ?1 AND id = ?2")?
        .execute(params![realm, linkifier.id, linkifier.pattern, linkifier.url_template])?;
    Ok(())
}

/// Removes a linkifier.
pub fn remove(conn: &Connection, realm: RealmId, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM realm_linkifiers WHERE realm_id = ?1 AND id = ?2")?.execute(params![realm, id])?;
    Ok(())
}

/// Orders the linkifiers as `ids` lists them (0, 1, ...).
pub fn reorder(conn: &Connection, realm: RealmId, ids: &[i64]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("UPDATE realm_linkifiers SET sort_order = ?3 WHERE realm_id = ?1 AND id = ?2")?;
    for (order, id) in ids.iter().enumerate() {
        stmt.execute(params![realm, id, order as i64])?;
    }
    Ok(())
}
