//! Web sessions and password reset tokens (`sql/0019_web_sessions.sql`). Both are stored by
//! the SHA-256 of their secret, never the secret itself.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{RealmId, UserId};

/// A signed-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id_hash: String,
    pub realm_id: RealmId,
    pub user_id: UserId,
    /// Fingerprint of the password hash at sign-in (see `crate::sessions::fingerprint`).
    pub password_fp: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Records a session.
pub fn insert(conn: &Connection, row: &SessionRow) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO web_sessions (id_hash, realm_id, user_id, password_fp, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![row.id_hash, row.realm_id, row.user_id, row.password_fp, row.created_at, row.expires_at])?;
    Ok(())
}

/// The session with this hash, if any (expired or not).
pub fn get(conn: &Connection, id_hash: &str) -> StoreResult<Option<SessionRow>> {
    Ok(conn
        .prepare_cached(
            "SELECT id_hash, realm_id, user_id, password_fp, created_at, expires_at FROM web_sessions WHERE id_hash = ?1",
        )?
        .query_row([id_hash], |r| {
            Ok(SessionRow {
                id_hash: r.get(0)?,
                realm_id: RealmId(r.get(1)?),
                user_id: UserId(r.get(2)?),
                password_fp: r.get(3)?,
                created_at: r.get(4)?,
                expires_at: r.get(5)?,
            })
        })
        .optional()?)
}

/// Ends a session.
pub fn delete(conn: &Connection, id_hash: &str) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM web_sessions WHERE id_hash = ?1")?.execute([id_hash])?;
    Ok(())
}

/// Ends every session of a user but `keep` (the one that asked, if any).
pub fn delete_for_user(conn: &Connection, user_id: UserId, keep: Option<&str>) -> StoreResult<usize> {
    Ok(conn
        .prepare_cached("DELETE FROM web_sessions WHERE user_id = ?1 AND id_hash IS NOT ?2")?
        .execute(params![user_id, keep])?)
}

/// Gives a session the fingerprint of a new password (its user changed it through it).
pub fn set_password_fp(conn: &Connection, id_hash: &str, password_fp: &str) -> StoreResult<()> {
    conn.prepare_cached("UPDATE web_sessions SET password_fp = ?2 WHERE id_hash = ?1")?
        .execute(params![id_hash, password_fp])?;
    Ok(())
}

/// Forgets sessions and reset tokens past their expiry; how many.
pub fn delete_expired(conn: &Connection, now: i64) -> StoreResult<usize> {
    let sessions = conn.prepare_cached("DELETE FROM web_sessions WHERE expires_at <= ?1")?.execute([now])?;
    let resets = conn.prepare_cached("DELETE FROM password_resets WHERE expires_at <= ?1")?.execute([now])?;
    Ok(sessions + resets)
}

/// A password reset token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetRow {
    pub token_hash: String,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub created_at: i64,
    pub expires_at: i64,
    pub used_at: Option<i64>,
}

/// Records a reset token.
pub fn insert_reset(conn: &Connection, row: &ResetRow) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO password_resets (token_hash, realm_id, user_id, created_at, expires_at, used_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![row.token_hash, row.realm_id, row.user_id, row.created_at, row.expires_at, row.used_at])?;
    Ok(())
}

/// The reset token with this hash, if any.
pub fn get_reset(conn: &Connection, token_hash: &str) -> StoreResult<Option<ResetRow>> {
    Ok(conn
        .prepare_cached(
            "SELECT token_hash, realm_id, user_id, created_at, expires_at, used_at FROM password_resets
             WHERE token_hash = ?1",
        )?
        .query_row([token_hash], |r| {
            Ok(ResetRow {
                token_hash: r.get(0)?,
                realm_id: RealmId(r.get(1)?),
                user_id: UserId(r.get(2)?),
                created_at: r.get(3)?,
                expires_at: r.get(4)?,
                used_at: r.get(5)?,
            })
        })
        .optional()?)
}

/// Marks a reset token used, and every other of its user's with it (one reset ends them).
pub fn use_resets_of(conn: &Connection, user_id: UserId, now: i64) -> StoreResult<()> {
    conn.prepare_cached("UPDATE password_resets SET used_at = ?2 WHERE user_id = ?1 AND used_at IS NULL")?
        .execute(params![user_id, now])?;
    Ok(())
}
