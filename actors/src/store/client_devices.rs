//! Zulip 12's logged-in devices (`sql/0023_client_devices.sql`, Zulip's `Device`): the
//! record `POST /register_client_device` makes, the push key and FCM/APNs token id
//! `POST /mobile_push/register` sets, and what the bouncer answered.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{RealmId, UserId};

/// A device of a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientDevice {
    pub id: i64,
    pub user_id: UserId,
    /// The cryptosystem byte (0x31) and the key.
    pub push_key: Option<Vec<u8>>,
    pub push_key_id: Option<i64>,
    /// `fcm` or `apns`.
    pub push_token_kind: Option<String>,
    pub push_token_id: Option<i64>,
    pub pending_push_token_id: Option<i64>,
    pub push_token_last_updated_timestamp: Option<i64>,
    pub push_registration_error_code: Option<String>,
}

const COLUMNS: &str = "id, user_id, push_key, push_key_id, push_token_kind, push_token_id, pending_push_token_id,
     push_token_last_updated_timestamp, push_registration_error_code";

fn device(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClientDevice> {
    Ok(ClientDevice {
        id: r.get(0)?,
        user_id: r.get(1)?,
        push_key: r.get(2)?,
        push_key_id: r.get(3)?,
        push_token_kind: r.get(4)?,
        push_token_id: r.get(5)?,
        pending_push_token_id: r.get(6)?,
        push_token_last_updated_timestamp: r.get(7)?,
        push_registration_error_code: r.get(8)?,
    })
}

/// A new device of `user`; its id.
pub fn insert(conn: &Connection, realm: RealmId, user: UserId, now: i64) -> StoreResult<i64> {
    conn.prepare_cached("INSERT INTO client_devices (realm_id, user_id, date_created) VALUES (?1, ?2, ?3)")?
        .execute(params![realm, user, now])?;
    Ok(conn.last_insert_rowid())
}

/// The device `id` of `user`.
pub fn get(conn: &Connection, user: UserId, id: i64) -> StoreResult<Option<ClientDevice>> {
    let sql = format!("SELECT {COLUMNS} FROM client_devices WHERE id = ?1 AND user_id = ?2");
    Ok(conn.prepare_cached(&sql)?.query_row(params![id, user], device).optional()?)
}

/// Every device of `user`, oldest first.
pub fn of_user(conn: &Connection, user: UserId) -> StoreResult<Vec<ClientDevice>> {
    let sql = format!("SELECT {COLUMNS} FROM client_devices WHERE user_id = ?1 ORDER BY id");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([user], device)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Removes the device `id` of `user`; false if there was none.
pub fn delete(conn: &Connection, user: UserId, id: i64) -> StoreResult<bool> {
    Ok(conn.prepare_cached("DELETE FROM client_devices WHERE id = ?1 AND user_id = ?2")?.execute(params![id, user])?
        > 0)
}

/// Removes every device of `user`; how many there were.
pub fn delete_all(conn: &Connection, user: UserId) -> StoreResult<usize> {
    Ok(conn.prepare_cached("DELETE FROM client_devices WHERE user_id = ?1")?.execute([user])?)
}

/// Writes every push field of `d` (found by its id and user).
pub fn save(conn: &Connection, d: &ClientDevice) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE client_devices SET push_key = ?3, push_key_id = ?4, push_token_kind = ?5, push_token_id = ?6,
             pending_push_token_id = ?7, push_token_last_updated_timestamp = ?8, push_registration_error_code = ?9
         WHERE id = ?1 AND user_id = ?2",
    )?
    .execute(params![
        d.id,
        d.user_id,
        d.push_key,
        d.push_key_id,
        d.push_token_kind,
        d.push_token_id,
        d.pending_push_token_id,
        d.push_token_last_updated_timestamp,
        d.push_registration_error_code,
    ])?;
    Ok(())
}

/// Whether `user` has a device registered at the bouncer (a token id and a key).
pub fn has_push_device(conn: &Connection, user: UserId) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM client_devices WHERE user_id = ?1 AND push_token_id IS NOT NULL
             AND push_key IS NOT NULL LIMIT 1",
        )?
        .exists([user])?)
}
