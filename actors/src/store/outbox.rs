//! Outgoing mail of `sql/0010_invites_mail_system_bots.sql`: the `outbox` table, written in
//! the transaction of what the mail tells about and drained by the mail worker.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::RealmId;

/// A mail to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMail {
    pub realm_id: Option<RealmId>,
    /// What kind of mail (`invitation`), for logs.
    pub kind: String,
    pub to: String,
    /// The sender's display name.
    pub from_name: String,
    pub subject: String,
    /// Plain text.
    pub body: String,
    /// The Message-ID header's value, without angle brackets.
    pub message_id: String,
}

/// A queued mail, as the worker sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedMail {
    pub id: i64,
    pub mail: NewMail,
    pub created_at: i64,
    /// Attempts made so far.
    pub attempts: i64,
}

/// Queues a mail, due at once.
pub fn enqueue(conn: &Connection, mail: &NewMail, now: i64) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO outbox (realm_id, kind, to_address, from_name, subject, body, message_id, created_at,
            next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
    )?
    .execute(params![
        mail.realm_id,
        mail.kind,
        mail.to,
        mail.from_name,
        mail.subject,
        mail.body,
        mail.message_id,
        now
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Pending mails due at `now`, oldest first, at most `limit`.
pub fn due(conn: &Connection, now: i64, limit: usize) -> StoreResult<Vec<QueuedMail>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, realm_id, kind, to_address, from_name, subject, body, message_id, created_at, attempts
         FROM outbox WHERE status = 0 AND next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![now, limit as i64], |r| {
        Ok(QueuedMail {
            id: r.get(0)?,
            mail: NewMail {
                realm_id: r.get(1)?,
                kind: r.get(2)?,
                to: r.get(3)?,
                from_name: r.get(4)?,
                subject: r.get(5)?,
                body: r.get(6)?,
                message_id: r.get(7)?,
            },
            created_at: r.get(8)?,
            attempts: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// When the next pending mail is due, if any is pending.
pub fn next_due(conn: &Connection) -> StoreResult<Option<i64>> {
    Ok(conn
        .query_row("SELECT MIN(next_attempt_at) FROM outbox WHERE status = 0", [], |r| r.get(0))
        .optional()?
        .flatten())
}

/// Marks a mail sent (only a pending one: a mail is marked sent once).
pub fn mark_sent(conn: &Connection, id: i64, now: i64) -> StoreResult<bool> {
    let n = conn
        .prepare_cached("UPDATE outbox SET status = 1, sent_at = ?2, attempts = attempts + 1, last_error = NULL WHERE id = ?1 AND status = 0")?
        .execute(params![id, now])?;
    Ok(n == 1)
}

/// Records a failed attempt: the mail is tried again at `retry_at`, or given up (`None`).
pub fn mark_failed(conn: &Connection, id: i64, error: &str, retry_at: Option<i64>) -> StoreResult<()> {
    match retry_at {
        Some(at) => conn
            .prepare_cached(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?3, last_error = ?2 WHERE id = ?1 AND status = 0",
            )?
            .execute(params![id, error, at])?,
        None => conn
            .prepare_cached("UPDATE outbox SET attempts = attempts + 1, status = 2, last_error = ?2 WHERE id = ?1 AND status = 0")?
            .execute(params![id, error])?,
    };
    Ok(())
}

/// Counts of the outbox by status: (pending, sent, given up).
pub fn counts(conn: &Connection) -> StoreResult<(i64, i64, i64)> {
    Ok(conn.query_row(
        "SELECT COALESCE(SUM(status = 0), 0), COALESCE(SUM(status = 1), 0), COALESCE(SUM(status = 2), 0) FROM outbox",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?)
}
