//! Invitations of `sql/0010_invites_mail_system_bots.sql`: `invites` and `invite_sends`.

use rusqlite::{params, Connection, Row};

use super::{StoreError, StoreResult};
use crate::ids::{RealmId, UserId};
use crate::realm::invite_data::{Invite, InviteStatus};
use crate::realm::model::Role;

const COLUMNS: &str = "id, multiuse, email, referred_by, invited_as, stream_ids, group_ids, \
    include_realm_default_subscriptions, notify_referrer_on_join, welcome_message_custom_text, invited_at, \
    expiry_date, confirmation_key, status, created_user";

fn ids<T: serde::de::DeserializeOwned>(text: &str) -> StoreResult<Vec<T>> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("invite ids {text:?}: {e}")))
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<(Invite, i64, String, String)> {
    Ok((
        Invite {
            id: row.get(0)?,
            multiuse: row.get(1)?,
            email: row.get(2)?,
            referred_by: row.get(3)?,
            invited_as: Role::Member,
            streams: Vec::new(),
            groups: Vec::new(),
            include_realm_default_subscriptions: row.get(7)?,
            notify_referrer_on_join: row.get(8)?,
            welcome_message_custom_text: row.get(9)?,
            invited_at: row.get(10)?,
            expiry_date: row.get(11)?,
            key: row.get(12)?,
            status: InviteStatus::from_i64(row.get(13)?),
            created_user: row.get(14)?,
        },
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
    ))
}

/// Every invitation of a realm, by id.
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<Invite>> {
    let sql = format!("SELECT {COLUMNS} FROM invites WHERE realm_id = ?1 ORDER BY id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([realm], from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(mut invite, role, streams, groups)| {
            invite.invited_as =
                Role::from_i64(role).ok_or_else(|| StoreError::Corrupt(format!("invited_as {role}")))?;
            invite.streams = ids(&streams)?;
            invite.groups = ids(&groups)?;
            Ok(invite)
        })
        .collect()
}

/// Inserts an invitation and returns its id.
pub fn insert(conn: &Connection, realm: RealmId, invite: &Invite) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO invites (realm_id, multiuse, email, referred_by, invited_as, stream_ids, group_ids,
            include_realm_default_subscriptions, notify_referrer_on_join, welcome_message_custom_text, invited_at,
            expiry_date, confirmation_key, status, created_user)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        realm,
        invite.multiuse,
        invite.email,
        invite.referred_by,
        invite.invited_as.as_i64(),
        json_ids(&invite.streams),
        json_ids(&invite.groups),
        invite.include_realm_default_subscriptions,
        invite.notify_referrer_on_join,
        invite.welcome_message_custom_text,
        invite.invited_at,
        invite.expiry_date,
        invite.key,
        invite.status.as_i64(),
        invite.created_user,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Sets an invitation's status (and the account it created, if any).
pub fn set_status(conn: &Connection, id: i64, status: InviteStatus, created_user: Option<UserId>) -> StoreResult<()> {
    conn.prepare_cached("UPDATE invites SET status = ?2, created_user = COALESCE(?3, created_user) WHERE id = ?1")?
        .execute(params![id, status.as_i64(), created_user])?;
    Ok(())
}

/// Records `count` invitation mails sent at `now`.
pub fn record_sends(conn: &Connection, realm: RealmId, now: i64, count: usize) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached("INSERT INTO invite_sends (realm_id, sent_at) VALUES (?1, ?2)")?;
    for _ in 0..count {
        stmt.execute(params![realm, now])?;
    }
    Ok(())
}

/// When each invitation mail of a realm since `since` went out, ascending.
pub fn sends_since(conn: &Connection, realm: RealmId, since: i64) -> StoreResult<Vec<i64>> {
    let mut stmt =
        conn.prepare("SELECT sent_at FROM invite_sends WHERE realm_id = ?1 AND sent_at > ?2 ORDER BY sent_at")?;
    let rows = stmt.query_map(params![realm, since], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// A list of ids as stored: JSON text.
fn json_ids<T: serde::Serialize>(ids: &[T]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned())
}
