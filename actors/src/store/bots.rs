//! Bots (`sql/0014_bots.sql`): their profiles (`bot_profiles`), bot storage
//! (`bot_storage`) and the outgoing-webhook worker's outbox (`outgoing_webhook_jobs`).

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::realms::json_object;
use super::{flag, StoreResult};
use crate::ids::{RealmId, UserId};
use crate::realm::bot_data::{BotProfile, Service};

/// Every bot profile of a realm.
pub fn profiles_in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<BotProfile>> {
    let mut stmt = conn.prepare(
        "SELECT b.user_id, b.default_sending_stream_id, b.default_events_register_stream_id,
                b.default_all_public_streams, b.service_name, b.service_base_url, b.service_interface,
                b.service_token, b.config_data
         FROM bot_profiles b JOIN users u ON u.id = b.user_id WHERE u.realm_id = ?1 ORDER BY b.user_id",
    )?;
    let rows = stmt
        .query_map([realm_id], |r| {
            let service = match r.get::<_, Option<String>>(4)? {
                Some(name) => Some(Service {
                    name,
                    base_url: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
                    interface: r.get::<_, Option<i64>>(6)?.unwrap_or(1),
                    token: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
                }),
                None => None,
            };
            Ok((
                BotProfile {
                    user_id: r.get(0)?,
                    default_sending_stream: r.get(1)?,
                    default_events_register_stream: r.get(2)?,
                    default_all_public_streams: flag(r.get(3)?),
                    service,
                    config_data: Default::default(),
                },
                r.get::<_, String>(8)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(mut p, config)| {
            p.config_data = json_object(&config)?;
            Ok(p)
        })
        .collect()
}

/// Writes a bot's profile (inserted or replaced).
pub fn put_profile(conn: &Connection, p: &BotProfile) -> StoreResult<()> {
    let s = p.service.as_ref();
    conn.execute(
        "INSERT OR REPLACE INTO bot_profiles (user_id, default_sending_stream_id, default_events_register_stream_id,
            default_all_public_streams, service_name, service_base_url, service_interface, service_token, config_data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            p.user_id,
            p.default_sending_stream,
            p.default_events_register_stream,
            p.default_all_public_streams as i64,
            s.map(|s| &s.name),
            s.map(|s| &s.base_url),
            s.map(|s| s.interface),
            s.map(|s| &s.token),
            Value::Object(p.config_data.clone()).to_string(),
        ],
    )?;
    Ok(())
}

/// Every key of a user's storage, in the order they were first stored.
pub fn storage_keys(conn: &Connection, user: UserId) -> StoreResult<Vec<String>> {
    let mut stmt = conn.prepare("SELECT key FROM bot_storage WHERE user_id = ?1 ORDER BY rowid")?;
    let keys = stmt.query_map([user], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(keys)
}

/// The value stored under `key`, if any.
pub fn storage_get(conn: &Connection, user: UserId, key: &str) -> StoreResult<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM bot_storage WHERE user_id = ?1 AND key = ?2", params![user, key], |r| r.get(0))
        .optional()?)
}

/// The size of a user's storage in characters (keys and values), or of one entry.
pub fn storage_size(conn: &Connection, user: UserId, key: Option<&str>) -> StoreResult<i64> {
    let size: Option<i64> = match key {
        None => conn.query_row(
            "SELECT SUM(length(key) + length(value)) FROM bot_storage WHERE user_id = ?1",
            [user],
            |r| r.get(0),
        )?,
        Some(key) => conn
            .query_row(
                "SELECT length(key) + length(value) FROM bot_storage WHERE user_id = ?1 AND key = ?2",
                params![user, key],
                |r| r.get(0),
            )
            .optional()?,
    };
    Ok(size.unwrap_or(0))
}

/// Stores `value` under `key` (replacing what was there).
pub fn storage_put(conn: &Connection, user: UserId, key: &str, value: &str) -> StoreResult<()> {
    conn.execute(
        "INSERT INTO bot_storage (user_id, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value",
        params![user, key, value],
    )?;
    Ok(())
}

/// Removes the entry under `key`; whether there was one.
pub fn storage_remove(conn: &Connection, user: UserId, key: &str) -> StoreResult<bool> {
    Ok(conn.execute("DELETE FROM bot_storage WHERE user_id = ?1 AND key = ?2", params![user, key])? > 0)
}

/// A job of the outgoing-webhook worker.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookJob {
    pub id: i64,
    pub realm_id: RealmId,
    pub bot_id: UserId,
    pub message_id: i64,
    pub url: String,
    pub interface: i64,
    pub payload: Value,
    pub attempts: i64,
}

/// Queues a job, due at once (`now_ms`).
pub fn insert_job(conn: &Connection, job: &WebhookJob, now_ms: i64) -> StoreResult<()> {
    conn.execute(
        "INSERT INTO outgoing_webhook_jobs (realm_id, bot_id, message_id, url, interface, payload, created_at,
            next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![job.realm_id, job.bot_id, job.message_id, job.url, job.interface, job.payload.to_string(), now_ms],
    )?;
    Ok(())
}

/// The oldest job due at `now_ms`.
pub fn next_due_job(conn: &Connection, now_ms: i64) -> StoreResult<Option<WebhookJob>> {
    let row = conn
        .query_row(
            "SELECT id, realm_id, bot_id, message_id, url, interface, payload, attempts FROM outgoing_webhook_jobs
             WHERE next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT 1",
            [now_ms],
            |r| {
                Ok((
                    WebhookJob {
                        id: r.get(0)?,
                        realm_id: r.get(1)?,
                        bot_id: r.get(2)?,
                        message_id: r.get(3)?,
                        url: r.get(4)?,
                        interface: r.get(5)?,
                        payload: Value::Null,
                        attempts: r.get(7)?,
                    },
                    r.get::<_, String>(6)?,
                ))
            },
        )
        .optional()?;
    Ok(row.map(|(mut job, payload)| {
        job.payload = serde_json::from_str(&payload).unwrap_or(Value::Null);
        job
    }))
}

/// When the next job is due (milliseconds), if any.
pub fn earliest_due_job(conn: &Connection) -> StoreResult<Option<i64>> {
    Ok(conn.query_row("SELECT MIN(next_attempt_at) FROM outgoing_webhook_jobs", [], |r| r.get(0))?)
}

/// Removes a finished (or given up) job.
pub fn finish_job(conn: &Connection, id: i64) -> StoreResult<()> {
    conn.execute("DELETE FROM outgoing_webhook_jobs WHERE id = ?1", [id])?;
    Ok(())
}

/// Records a failed attempt and when to try again.
pub fn retry_job_later(conn: &Connection, id: i64, attempts: i64, due_ms: i64, error: &str) -> StoreResult<()> {
    conn.execute(
        "UPDATE outgoing_webhook_jobs SET attempts = ?2, next_attempt_at = ?3, last_error = ?4 WHERE id = ?1",
        params![id, attempts, due_ms, error],
    )?;
    Ok(())
}
