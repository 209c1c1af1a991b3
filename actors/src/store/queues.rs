//! Event queues saved across a restart.

use rusqlite::{params, Transaction};

use super::{StoreError, StoreResult};
use crate::ids::RealmId;
use crate::queue::SavedQueue;

/// Saves a realm's queues (replacing any saved under the same ids).
pub fn save(tx: &Transaction<'_>, realm_id: RealmId, queues: &[SavedQueue], now: i64) -> StoreResult<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO event_queues (queue_id, realm_id, user_id, data, saved_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for queue in queues {
        let data = serde_json::to_string(queue).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        stmt.execute(params![queue.queue_id, realm_id, queue.user_id, data, now])?;
    }
    Ok(())
}

/// Takes a realm's saved queues out of the database, each with the seconds it has been
/// saved. Rows that no longer parse are dropped (their clients re-register).
pub fn take(tx: &Transaction<'_>, realm_id: RealmId, now: i64) -> StoreResult<Vec<(SavedQueue, u64)>> {
    let rows: Vec<(String, String, i64)> = {
        let mut stmt = tx.prepare("SELECT queue_id, data, saved_at FROM event_queues WHERE realm_id = ?1")?;
        let rows = stmt.query_map([realm_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    tx.execute("DELETE FROM event_queues WHERE realm_id = ?1", [realm_id])?;
    let mut queues = Vec::with_capacity(rows.len());
    for (queue_id, data, saved_at) in rows {
        match serde_json::from_str::<SavedQueue>(&data) {
            Ok(queue) => queues.push((queue, (now - saved_at).max(0) as u64)),
            Err(e) => {
                tracing::warn!(queue.id = %queue_id, error = %e, "dropping a saved event queue that does not parse")
            }
        }
    }
    Ok(queues)
}
