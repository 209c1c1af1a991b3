//! Event queues saved across a restart: each distinct event once (`event_queue_events`),
//! each queue as a row of its registration, position and slots (`event_queues`); see
//! `crate::queue::saved` for the format.

use rusqlite::{params, Transaction};

use super::{Store, StoreError, StoreResult};
use crate::ids::{RealmId, UserId};
use crate::queue::saved::{self, QueueRow, Restorer, SavedQueue, SavedRows, StoredQueue};

/// What a save wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SaveReport {
    pub queues: usize,
    /// Distinct events.
    pub events: usize,
    /// Bytes of the events' JSON.
    pub event_bytes: usize,
    /// Bytes of the queues' registrations and slots.
    pub queue_bytes: usize,
}

/// Encodes a realm's saved queues (each distinct event once) and writes them in one
/// transaction, replacing whatever was saved for the realm before.
pub fn save_all(store: &Store, realm_id: RealmId, queues: &[SavedQueue], now: i64) -> StoreResult<SaveReport> {
    let rows = saved::encode(queues).map_err(|e| StoreError::Corrupt(format!("a queue does not encode: {e}")))?;
    store.write(|tx| save(tx, realm_id, &rows, now))?;
    Ok(SaveReport {
        queues: rows.queues.len(),
        events: rows.events.len(),
        event_bytes: rows.events.iter().map(|e| e.json().len()).sum(),
        queue_bytes: rows.queues.iter().map(|q| q.header.len() + q.slots.as_ref().map_or(0, Vec::len)).sum(),
    })
}

/// Saves a realm's queues, replacing whatever was saved for it before (a save that was
/// never taken back belongs to a run of the realm that has ended since).
pub fn save(tx: &Transaction<'_>, realm_id: RealmId, rows: &SavedRows, now: i64) -> StoreResult<()> {
    forget(tx, realm_id)?;
    let mut stmt =
        tx.prepare_cached("INSERT INTO event_queue_events (realm_id, event_key, json) VALUES (?1, ?2, ?3)")?;
    for (key, event) in rows.events.iter().enumerate() {
        stmt.execute(params![realm_id, key as i64, event.json()])?;
    }
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO event_queues (queue_id, realm_id, user_id, data, slots, saved_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for queue in &rows.queues {
        stmt.execute(params![queue.queue_id, realm_id, queue.user_id, queue.header, queue.slots, now])?;
    }
    Ok(())
}

/// Takes a realm's saved queues out of the database into `restorer`: the events first, then
/// the queues one row at a time (a row saved before slots may be megabytes of JSON).
pub fn take(tx: &Transaction<'_>, realm_id: RealmId, now: i64, restorer: &mut Restorer) -> StoreResult<()> {
    {
        let mut stmt = tx.prepare("SELECT event_key, json FROM event_queue_events WHERE realm_id = ?1")?;
        let mut rows = stmt.query([realm_id])?;
        while let Some(row) = rows.next()? {
            restorer.event(row.get(0)?, row.get(1)?);
        }
    }
    {
        let mut stmt =
            tx.prepare("SELECT queue_id, user_id, data, slots, saved_at FROM event_queues WHERE realm_id = ?1")?;
        let mut rows = stmt.query([realm_id])?;
        while let Some(row) = rows.next()? {
            let saved_at: i64 = row.get(4)?;
            let queue = QueueRow {
                queue_id: row.get(0)?,
                user_id: UserId(row.get(1)?),
                header: row.get(2)?,
                slots: row.get(3)?,
            };
            restorer.queue(StoredQueue { row: queue, saved_secs_ago: (now - saved_at).max(0) as u64 });
        }
    }
    forget(tx, realm_id)
}

/// Deletes what is saved of a realm's queues.
fn forget(tx: &Transaction<'_>, realm_id: RealmId) -> StoreResult<()> {
    tx.execute("DELETE FROM event_queue_events WHERE realm_id = ?1", [realm_id])?;
    tx.execute("DELETE FROM event_queues WHERE realm_id = ?1", [realm_id])?;
    Ok(())
}
