//! The `users` table.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{Map, Value};

use super::realms::json_object;
use super::{flag, StoreError, StoreResult};
use crate::ids::{RealmId, UserId};
use crate::realm::model::{EmailVisibility, Role, User};

const COLUMNS: &str = "id, realm_id, delivery_email, email, full_name, role, is_active, is_bot, bot_type, \
    bot_owner_id, timezone, date_joined, avatar_source, avatar_version, api_key, password_hash, \
    can_create_users, can_change_user_emails, email_address_visibility, settings, is_imported_stub, \
    first_login_pending, self_edited_settings";

fn from_row(row: &Row<'_>) -> rusqlite::Result<(User, i64, i64, String, String)> {
    Ok((
        User {
            id: row.get(0)?,
            realm_id: row.get(1)?,
            delivery_email: row.get(2)?,
            email: row.get(3)?,
            full_name: row.get(4)?,
            role: Role::Member,
            is_active: flag(row.get(6)?),
            is_bot: flag(row.get(7)?),
            bot_type: row.get(8)?,
            bot_owner_id: row.get(9)?,
            timezone: row.get(10)?,
            date_joined: row.get(11)?,
            avatar_source: row.get(12)?,
            avatar_version: row.get(13)?,
            api_key: row.get(14)?,
            password_hash: row.get(15)?,
            can_create_users: flag(row.get(16)?),
            can_change_user_emails: flag(row.get(17)?),
            email_address_visibility: EmailVisibility::Everyone,
            settings: Map::new(),
            profile_data: Default::default(),
            is_imported_stub: flag(row.get(20)?),
            first_login_pending: flag(row.get(21)?),
            self_edited_settings: Default::default(),
        },
        row.get(5)?,
        row.get(18)?,
        row.get(19)?,
        row.get(22)?,
    ))
}

fn finish((mut user, role, visibility, settings, edited): (User, i64, i64, String, String)) -> StoreResult<User> {
    user.self_edited_settings =
        serde_json::from_str(&edited).map_err(|e| StoreError::Corrupt(format!("self_edited_settings: {e}")))?;
    user.role = Role::from_i64(role).ok_or_else(|| StoreError::Corrupt(format!("role {role}")))?;
    user.email_address_visibility = EmailVisibility::from_i64(visibility)
        .ok_or_else(|| StoreError::Corrupt(format!("email_address_visibility {visibility}")))?;
    user.settings = json_object(&settings)?;
    Ok(user)
}

/// `self_edited_settings` as stored: a JSON array of names.
fn edited_json(user: &User) -> String {
    Value::from(user.self_edited_settings.iter().cloned().collect::<Vec<_>>()).to_string()
}

/// Every user of a realm, by id.
pub fn in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<User>> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE realm_id = ?1 ORDER BY id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([realm_id], from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter().map(finish).collect()
}

/// The user holding an API key, in whichever realm.
pub fn by_api_key(conn: &Connection, api_key: &str) -> StoreResult<Option<User>> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE api_key = ?1");
    conn.query_row(&sql, [api_key], from_row).optional()?.map(finish).transpose()
}

/// Inserts a user with a placeholder API email and returns the new id. The API email may
/// depend on the id; set it with [`set_email`] in the same transaction.
pub fn insert(conn: &Connection, user: &User) -> StoreResult<UserId> {
    conn.prepare_cached(
        "INSERT INTO users (realm_id, delivery_email, email, full_name, role, is_active, is_bot, bot_type,
            bot_owner_id, timezone, date_joined, avatar_source, avatar_version, api_key, password_hash,
            can_create_users, can_change_user_emails, email_address_visibility, settings, is_imported_stub,
            first_login_pending, self_edited_settings)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
    )?
    .execute(params![
        user.realm_id,
        user.delivery_email,
        user.email,
        user.full_name,
        user.role.as_i64(),
        user.is_active,
        user.is_bot,
        user.bot_type,
        user.bot_owner_id,
        user.timezone,
        user.date_joined,
        user.avatar_source,
        user.avatar_version,
        user.api_key,
        user.password_hash,
        user.can_create_users,
        user.can_change_user_emails,
        user.email_address_visibility as i64,
        Value::Object(user.settings.clone()).to_string(),
        user.is_imported_stub,
        user.first_login_pending,
        edited_json(user),
    ])?;
    Ok(UserId(conn.last_insert_rowid()))
}

/// Sets a user's API email.
pub fn set_email(conn: &Connection, id: UserId, email: &str) -> StoreResult<()> {
    conn.prepare_cached("UPDATE users SET email = ?2 WHERE id = ?1")?.execute(params![id, email])?;
    Ok(())
}

/// Replaces a user's API key.
pub fn set_api_key(conn: &Connection, id: UserId, api_key: &str) -> StoreResult<()> {
    conn.execute("UPDATE users SET api_key = ?2 WHERE id = ?1", params![id, api_key])?;
    Ok(())
}

/// Replaces a user's password hash (`None`: no password login).
pub fn set_password_hash(conn: &Connection, id: UserId, hash: Option<&str>) -> StoreResult<()> {
    conn.execute("UPDATE users SET password_hash = ?2 WHERE id = ?1", params![id, hash])?;
    Ok(())
}

/// Activates or deactivates a user.
pub fn set_active(conn: &Connection, id: UserId, active: bool) -> StoreResult<()> {
    conn.execute("UPDATE users SET is_active = ?2 WHERE id = ?1", params![id, active])?;
    Ok(())
}

/// Sets a user's role.
pub fn set_role(conn: &Connection, id: UserId, role: Role) -> StoreResult<()> {
    conn.execute("UPDATE users SET role = ?2 WHERE id = ?1", params![id, role.as_i64()])?;
    Ok(())
}

/// Ends a user's wait for their first login (FL 433, 475): no longer an imported stub, and
/// joined at `date_joined`.
pub fn set_first_login(conn: &Connection, id: UserId, date_joined: i64) -> StoreResult<()> {
    conn.execute(
        "UPDATE users SET is_imported_stub = 0, first_login_pending = 0, date_joined = ?2 WHERE id = ?1",
        params![id, date_joined],
    )?;
    Ok(())
}

/// Sets a user's full name.
pub fn set_full_name(conn: &Connection, id: UserId, full_name: &str) -> StoreResult<()> {
    conn.execute("UPDATE users SET full_name = ?2 WHERE id = ?1", params![id, full_name])?;
    Ok(())
}

/// Sets a user's real and API emails.
pub fn set_emails(conn: &Connection, id: UserId, delivery_email: &str, email: &str) -> StoreResult<()> {
    conn.execute("UPDATE users SET delivery_email = ?2, email = ?3 WHERE id = ?1", params![id, delivery_email, email])?;
    Ok(())
}

/// Saves the columns a user changes about themselves (`PATCH /settings`): name, emails,
/// time zone, email visibility, personal settings and password hash.
pub fn save_own_settings(conn: &Connection, user: &User) -> StoreResult<()> {
    conn.execute(
        "UPDATE users SET full_name = ?2, delivery_email = ?3, email = ?4, timezone = ?5,
            email_address_visibility = ?6, settings = ?7, password_hash = ?8, self_edited_settings = ?9
         WHERE id = ?1",
        params![
            user.id,
            user.full_name,
            user.delivery_email,
            user.email,
            user.timezone,
            user.email_address_visibility as i64,
            Value::Object(user.settings.clone()).to_string(),
            user.password_hash,
            edited_json(user),
        ],
    )?;
    Ok(())
}

/// Sets a bot's owner.
pub fn set_bot_owner(conn: &Connection, id: UserId, owner: UserId) -> StoreResult<()> {
    conn.execute("UPDATE users SET bot_owner_id = ?2 WHERE id = ?1", params![id, owner])?;
    Ok(())
}
