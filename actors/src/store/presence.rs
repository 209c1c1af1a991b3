//! Presence rows, written in batches by each organization's presence actor and read when
//! the organization starts.

use rusqlite::{params, Connection, Transaction};

use super::StoreResult;
use crate::ids::{RealmId, UserId};

/// One user's presence as stored (times in microseconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredPresence {
    pub user_id: UserId,
    pub last_active: Option<i64>,
    pub last_connected: Option<i64>,
    pub update_id: i64,
}

/// The organization's rows, and the largest `update_id` reserved (0 if none): no id above
/// it was handed out before the server stopped.
pub fn load(conn: &Connection, realm_id: RealmId) -> StoreResult<(Vec<StoredPresence>, i64)> {
    let mut stmt = conn.prepare(
        "SELECT user_id, last_active_time, last_connected_time, last_update_id FROM user_presence WHERE realm_id = ?1",
    )?;
    let rows = stmt
        .query_map([realm_id], |r| {
            Ok(StoredPresence {
                user_id: r.get(0)?,
                last_active: r.get(1)?,
                last_connected: r.get(2)?,
                update_id: r.get(3)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let reserved: Option<i64> = conn
        .query_row("SELECT reserved_update_id FROM presence_sequences WHERE realm_id = ?1", [realm_id], |r| r.get(0))
        .map(Some)
        .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })?;
    Ok((rows, reserved.unwrap_or(0)))
}

/// Records that update ids up to `update_id` may have been handed out.
pub fn reserve(tx: &Transaction<'_>, realm_id: RealmId, update_id: i64) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO presence_sequences (realm_id, reserved_update_id) VALUES (?1, ?2) \
         ON CONFLICT (realm_id) DO UPDATE SET reserved_update_id = excluded.reserved_update_id",
        params![realm_id, update_id],
    )?;
    Ok(())
}

/// Writes changed rows (inserting or replacing each user's one row).
pub fn save(tx: &Transaction<'_>, realm_id: RealmId, rows: &[StoredPresence]) -> StoreResult<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO user_presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id) \
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (user_id) DO UPDATE SET \
         last_active_time = excluded.last_active_time, last_connected_time = excluded.last_connected_time, \
         last_update_id = excluded.last_update_id",
    )?;
    for row in rows {
        stmt.execute(params![row.user_id, realm_id, row.last_active, row.last_connected, row.update_id])?;
    }
    Ok(())
}
