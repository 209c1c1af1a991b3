//! The `realm_playgrounds` table of `sql/0021_realm_playgrounds.sql`, loaded with the
//! organization and written by `realm::playgrounds`.

use rusqlite::{params, Connection};

use super::StoreResult;
use crate::ids::RealmId;
use crate::realm::model::Playground;

/// The code playgrounds of `realm`, by id.
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<Playground>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, pygments_language, url_template FROM realm_playgrounds WHERE realm_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([realm], |r| {
        Ok(Playground { id: r.get(0)?, name: r.get(1)?, pygments_language: r.get(2)?, url_template: r.get(3)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Adds a playground; returns its id.
pub fn add(conn: &Connection, realm: RealmId, playground: &Playground) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO realm_playgrounds (realm_id, name, pygments_language, url_template) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![realm, playground.name, playground.pygments_language, playground.url_template])?;
    Ok(conn.last_insert_rowid())
}

/// Removes a playground.
pub fn remove(conn: &Connection, realm: RealmId, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM realm_playgrounds WHERE realm_id = ?1 AND id = ?2")?
        .execute(params![realm, id])?;
    Ok(())
}
