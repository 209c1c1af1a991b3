//! Personal data of `sql/0009_user_status_alert_words_muted_users.sql`: users' statuses
//! (`user_statuses`), alert words (`alert_words`) and mutes (`muted_users`), and the
//! unread messages a mute marks read.

use rusqlite::{params, Connection};

use super::StoreResult;
use crate::ids::{MessageId, RealmId, UserId};
use crate::realm::user_data::{Mute, UserStatus};

/// Every status set in `realm`, by user id.
pub fn statuses_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(UserId, UserStatus)>> {
    let mut stmt = conn.prepare(
        "SELECT user_id, status_text, emoji_name, emoji_code, reaction_type, timestamp
         FROM user_statuses WHERE realm_id = ?1 ORDER BY user_id",
    )?;
    let rows = stmt.query_map([realm], |r| {
        let status = UserStatus {
            status_text: r.get(1)?,
            emoji_name: r.get(2)?,
            emoji_code: r.get(3)?,
            reaction_type: r.get(4)?,
            timestamp: r.get(5)?,
        };
        Ok((r.get(0)?, status))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Stores `user`'s status, replacing the one they had.
pub fn put_status(conn: &Connection, realm: RealmId, user: UserId, status: &UserStatus) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO user_statuses (user_id, realm_id, status_text, emoji_name, emoji_code, reaction_type, timestamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (user_id) DO UPDATE SET status_text = excluded.status_text, emoji_name = excluded.emoji_name,
             emoji_code = excluded.emoji_code, reaction_type = excluded.reaction_type, timestamp = excluded.timestamp",
    )?
    .execute(params![
        user,
        realm,
        status.status_text,
        status.emoji_name,
        status.emoji_code,
        status.reaction_type,
        status.timestamp
    ])?;
    Ok(())
}

/// Every alert word of `realm` with its user, in the order they were added.
pub fn alert_words_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(UserId, String)>> {
    let mut stmt = conn.prepare("SELECT user_id, word FROM alert_words WHERE realm_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([realm], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Adds alert words of `user`, in order.
pub fn add_alert_words(conn: &Connection, realm: RealmId, user: UserId, words: &[String]) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached("INSERT INTO alert_words (realm_id, user_id, word) VALUES (?1, ?2, ?3)")?;
    for word in words {
        stmt.execute(params![realm, user, word])?;
    }
    Ok(())
}

/// Removes alert words of `user` (each as stored).
pub fn remove_alert_words(conn: &Connection, user: UserId, words: &[String]) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached("DELETE FROM alert_words WHERE user_id = ?1 AND word = ?2")?;
    for word in words {
        stmt.execute(params![user, word])?;
    }
    Ok(())
}

/// Every mute of `realm` with the muting user, in the order they were made.
pub fn mutes_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(UserId, Mute)>> {
    let mut stmt =
        conn.prepare("SELECT user_id, muted_user_id, date_muted FROM muted_users WHERE realm_id = ?1 ORDER BY id")?;
    let rows =
        stmt.query_map([realm], |r| Ok((r.get(0)?, Mute { muted_user_id: r.get(1)?, date_muted: r.get(2)? })))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Records that `user` muted someone.
pub fn add_mute(conn: &Connection, realm: RealmId, user: UserId, mute: &Mute) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO muted_users (realm_id, user_id, muted_user_id, date_muted) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![realm, user, mute.muted_user_id, mute.date_muted])?;
    Ok(())
}

/// Records that `user` unmuted `muted`.
pub fn remove_mute(conn: &Connection, user: UserId, muted: UserId) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM muted_users WHERE user_id = ?1 AND muted_user_id = ?2")?
        .execute(params![user, muted])?;
    Ok(())
}

/// `user`'s unread messages sent by `sender`, ascending.
pub fn unread_from(conn: &Connection, user: UserId, sender: UserId) -> StoreResult<Vec<MessageId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT um.message_id FROM user_messages um INDEXED BY user_messages_unread
         JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ?1 AND (um.flags & 1) = 0 AND m.sender_id = ?2
         ORDER BY um.message_id",
    )?;
    let rows = stmt.query_map(params![user, sender], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<MessageId>>>()?)
}
