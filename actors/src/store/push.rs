//! Mobile push notifications (`sql/0010_push.sql`): the devices users registered
//! (`push_devices`), the push worker's outbox (`push_outbox`), and the
//! `active_mobile_push_notification` bit of `user_messages`.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::{StoreError, StoreResult};
use crate::ids::{MessageId, RealmId, UserId};

/// Zulip's `active_mobile_push_notification` flag: a notification shows the message.
pub const ACTIVE_PUSH: i64 = 4096;
const READ: i64 = 1;

/// A registered legacy device (its FCM/APNs token; Zulip 12's end-to-end encrypted devices
/// are in `super::client_devices`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub id: i64,
    pub user_id: UserId,
    /// `fcm` or `apns`.
    pub token_kind: String,
    /// Legacy devices: the token the bouncer knows them by.
    pub token: Option<String>,
    pub ios_app_id: Option<String>,
}

const DEVICE_COLUMNS: &str = "id, user_id, token_kind, token, ios_app_id";

fn device(r: &rusqlite::Row<'_>) -> rusqlite::Result<Device> {
    Ok(Device { id: r.get(0)?, user_id: r.get(1)?, token_kind: r.get(2)?, token: r.get(3)?, ios_app_id: r.get(4)? })
}

/// Every legacy device of `user`, oldest first.
pub fn devices_of(conn: &Connection, user: UserId) -> StoreResult<Vec<Device>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {DEVICE_COLUMNS} FROM push_devices WHERE user_id = ?1 AND token IS NOT NULL ORDER BY id"
    ))?;
    let rows = stmt.query_map([user], device)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The users among `users` with at least one device (a legacy token, or an end-to-end
/// encrypted device registered at the bouncer).
pub fn users_with_devices(conn: &Connection, users: &[UserId]) -> StoreResult<Vec<UserId>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM push_devices WHERE user_id = ?1 LIMIT 1")?;
    let mut found = Vec::new();
    for user in users {
        if stmt.exists([user])? || super::client_devices::has_push_device(conn, *user)? {
            found.push(*user);
        }
    }
    Ok(found)
}

/// Records a legacy device (a token); false if the user had it already.
pub fn add_token(
    conn: &Connection,
    realm: RealmId,
    user: UserId,
    kind: &str,
    token: &str,
    ios_app_id: Option<&str>,
    now: i64,
) -> StoreResult<bool> {
    let n = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO push_devices (realm_id, user_id, token_kind, token, ios_app_id, status, date_created)
             VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)",
        )?
        .execute(params![realm, user, kind, token, ios_app_id, now])?;
    Ok(n > 0)
}

/// Removes a legacy device; false if the user had no such token.
pub fn remove_token(conn: &Connection, user: UserId, kind: &str, token: &str) -> StoreResult<bool> {
    let n = conn
        .prepare_cached("DELETE FROM push_devices WHERE user_id = ?1 AND token_kind = ?2 AND token = ?3")?
        .execute(params![user, kind, token])?;
    Ok(n > 0)
}

/// Removes every device of `user` (legacy and end-to-end encrypted) and, if there were any, asks the bouncer to forget the
/// user's registrations (Zulip's `clear_push_device_tokens`); how many there were.
pub fn clear_devices(conn: &Connection, user: UserId, now_ms: i64) -> StoreResult<usize> {
    let n = conn.prepare_cached("DELETE FROM push_devices WHERE user_id = ?1")?.execute([user])?
        + super::client_devices::delete_all(conn, user)?;
    if n > 0 {
        conn.prepare_cached(
            "INSERT INTO push_outbox (realm_id, user_id, kind, payload, due_at, created_at)
             SELECT realm_id, id, 'unregister_all', '{}', ?2, ?2 FROM users WHERE id = ?1",
        )?
        .execute(params![user, now_ms])?;
    }
    Ok(n)
}

/// A job of the push worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: i64,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub kind: String,
    pub payload: Value,
    pub attempts: u32,
    pub due_at: i64,
}

/// Adds a job, due at `due_at` (milliseconds since the epoch).
pub fn enqueue(
    conn: &Connection,
    realm: RealmId,
    user: UserId,
    kind: &str,
    payload: &Value,
    now_ms: i64,
    due_at: i64,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO push_outbox (realm_id, user_id, kind, payload, due_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![realm, user, kind, payload.to_string(), due_at, now_ms])?;
    Ok(())
}

/// The next job to run at `now_ms`: the oldest due one whose user has no older job waiting
/// for a retry (a user's jobs reach the bouncer in order).
pub fn next_due(conn: &Connection, now_ms: i64) -> StoreResult<Option<Job>> {
    let row = conn
        .prepare_cached(
            "SELECT o.id, o.realm_id, o.user_id, o.kind, o.payload, o.attempts, o.due_at FROM push_outbox o
             WHERE o.due_at <= ?1 AND NOT EXISTS (
                 SELECT 1 FROM push_outbox p WHERE p.user_id = o.user_id AND p.id < o.id AND p.attempts > 0)
             ORDER BY o.id LIMIT 1",
        )?
        .query_row([now_ms], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?, r.get::<_, String>(4)?, r.get(5)?, r.get(6)?))
        })
        .optional()?;
    let Some((id, realm_id, user_id, kind, payload, attempts, due_at)) = row else { return Ok(None) };
    let payload = serde_json::from_str(&payload).map_err(|e| StoreError::Corrupt(format!("push job {id}: {e}")))?;
    Ok(Some(Job { id, realm_id, user_id, kind, payload, attempts, due_at }))
}

/// When the earliest job is due, if there is one.
pub fn earliest_due(conn: &Connection) -> StoreResult<Option<i64>> {
    Ok(conn.prepare_cached("SELECT MIN(due_at) FROM push_outbox")?.query_row([], |r| r.get(0))?)
}

/// How many jobs wait.
pub fn pending_jobs(conn: &Connection) -> StoreResult<i64> {
    Ok(conn.prepare_cached("SELECT COUNT(*) FROM push_outbox")?.query_row([], |r| r.get(0))?)
}

/// Removes a job (done, or given up).
pub fn finish(conn: &Connection, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM push_outbox WHERE id = ?1")?.execute([id])?;
    Ok(())
}

/// Records a failed attempt: the job runs again at `due_at`.
pub fn retry_later(conn: &Connection, id: i64, attempts: u32, due_at: i64, error: &str) -> StoreResult<()> {
    conn.prepare_cached("UPDATE push_outbox SET attempts = ?2, due_at = ?3, last_error = ?4 WHERE id = ?1")?
        .execute(params![id, attempts, due_at, error])?;
    Ok(())
}

/// Claims the notification of `message` for `user`: true (and the message marked as shown
/// in a notification) unless the user read it, has no row for it, or was notified already.
pub fn claim_notification(conn: &Connection, user: UserId, message: MessageId) -> StoreResult<bool> {
    let flags: Option<i64> = conn
        .prepare_cached("SELECT flags FROM user_messages WHERE user_id = ?1 AND message_id = ?2")?
        .query_row(params![user, message], |r| r.get(0))
        .optional()?;
    match flags {
        Some(flags) if flags & (READ | ACTIVE_PUSH) == 0 => {
            conn.prepare_cached("UPDATE user_messages SET flags = flags | ?3 WHERE user_id = ?1 AND message_id = ?2")?
                .execute(params![user, message, ACTIVE_PUSH])?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Whether `user` has read `message` (or has no row for it).
pub fn is_read(conn: &Connection, user: UserId, message: MessageId) -> StoreResult<bool> {
    let flags: Option<i64> = conn
        .prepare_cached("SELECT flags FROM user_messages WHERE user_id = ?1 AND message_id = ?2")?
        .query_row(params![user, message], |r| r.get(0))
        .optional()?;
    Ok(flags.is_none_or(|f| f & READ != 0))
}

/// After messages were marked read: the read messages of `user` a notification still shows
/// lose the mark, and one `remove` job asks the bouncer to take them off the devices (Zulip's
/// `do_clear_mobile_push_notifications_for_ids`). How many there were.
pub fn enqueue_removals(conn: &Connection, user: UserId, now_ms: i64) -> StoreResult<usize> {
    let ids: Vec<i64> = {
        let mut stmt = conn.prepare_cached(
            "SELECT message_id FROM user_messages WHERE user_id = ?1 AND (flags & 4096) != 0 AND (flags & 1) != 0
             ORDER BY message_id",
        )?;
        let rows = stmt.query_map([user], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()?
    };
    if ids.is_empty() {
        return Ok(0);
    }
    let mut clear =
        conn.prepare_cached("UPDATE user_messages SET flags = flags & ~4096 WHERE user_id = ?1 AND message_id = ?2")?;
    for id in &ids {
        clear.execute(params![user, id])?;
    }
    conn.prepare_cached(
        "INSERT INTO push_outbox (realm_id, user_id, kind, payload, due_at, created_at)
         SELECT realm_id, id, 'remove', ?2, ?3, ?3 FROM users WHERE id = ?1",
    )?
    .execute(params![user, serde_json::json!({"message_ids": ids}).to_string(), now_ms])?;
    Ok(ids.len())
}

/// Replaces a job's data (the worker records its progress in it).
pub fn update_payload(conn: &Connection, id: i64, payload: &Value) -> StoreResult<()> {
    conn.prepare_cached("UPDATE push_outbox SET payload = ?2 WHERE id = ?1")?
        .execute(params![id, payload.to_string()])?;
    Ok(())
}

/// Every organization's id, in order.
pub fn realm_ids(conn: &Connection) -> StoreResult<Vec<RealmId>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM realms ORDER BY id")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
