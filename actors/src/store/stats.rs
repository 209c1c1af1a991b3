//! Figures about the database for administrators: its size, its tables' rows, the
//! organizations it holds and the event queues saved in it.

use rusqlite::Connection;

use super::StoreResult;
use crate::ids::RealmId;

/// The database's size and schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseFigures {
    pub page_size: i64,
    pub pages: i64,
    /// Pages free for reuse (`VACUUM` would return them to the file system).
    pub free_pages: i64,
    pub schema_version: i64,
}

/// Size and schema (cheap: a few pragmas).
pub fn database(conn: &Connection) -> StoreResult<DatabaseFigures> {
    let pragma = |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
    Ok(DatabaseFigures {
        page_size: pragma("page_size")?,
        pages: pragma("page_count")?,
        free_pages: pragma("freelist_count")?,
        schema_version: pragma("user_version")?,
    })
}

/// The rows of every table, by name (the full-text index and its tables aside). Counts
/// every row: takes a while on a large database.
pub fn table_rows(conn: &Connection) -> StoreResult<Vec<(String, i64)>> {
    let names: Vec<String> = {
        // Plain tables only: not the full-text index (virtual) nor its shadow tables.
        let mut stmt = conn.prepare(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
               AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        // The name comes from sqlite_master; quoted as an identifier all the same.
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        let rows: i64 = conn.query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))?;
        out.push((name, rows));
    }
    Ok(out)
}

/// One organization as listed for administrators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealmRow {
    pub id: RealmId,
    pub subdomain: String,
    pub name: String,
    pub deactivated: bool,
    pub date_created: i64,
    /// Active human accounts.
    pub active_humans: i64,
    /// Active bots.
    pub active_bots: i64,
    /// Deactivated accounts (humans and bots).
    pub deactivated_users: i64,
}

/// Every organization, by id (those still being imported aside).
pub fn realms(conn: &Connection) -> StoreResult<Vec<RealmRow>> {
    let mut stmt = conn.prepare(
        "SELECT r.id, r.subdomain, r.name, r.deactivated, r.date_created,
                (SELECT count(*) FROM users u WHERE u.realm_id = r.id AND u.is_active AND NOT u.is_bot),
                (SELECT count(*) FROM users u WHERE u.realm_id = r.id AND u.is_active AND u.is_bot),
                (SELECT count(*) FROM users u WHERE u.realm_id = r.id AND NOT u.is_active)
           FROM realms r WHERE r.subdomain NOT LIKE ?1 || '%' ORDER BY r.id",
    )?;
    let rows = stmt.query_map([super::transfer::IMPORTING], |r| {
        Ok(RealmRow {
            id: r.get(0)?,
            subdomain: r.get(1)?,
            name: r.get(2)?,
            deactivated: r.get::<_, i64>(3)? != 0,
            date_created: r.get(4)?,
            active_humans: r.get(5)?,
            active_bots: r.get(6)?,
            deactivated_users: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Event queues saved at the last shutdown, per organization (restored when each
/// organization's actor starts).
pub fn saved_queues(conn: &Connection) -> StoreResult<Vec<(RealmId, i64)>> {
    let mut stmt = conn.prepare("SELECT realm_id, count(*) FROM event_queues GROUP BY realm_id ORDER BY realm_id")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
