//! The `realms` table.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{Map, Value};

use super::{flag, StoreError, StoreResult};
use crate::ids::RealmId;
use crate::realm::model::Realm;

const COLUMNS: &str = "id, subdomain, name, description, settings, user_defaults, deactivated, date_created";

/// Parses a JSON object column.
pub(crate) fn json_object(text: &str) -> StoreResult<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) | Err(_) => Err(StoreError::Corrupt(format!("expected a JSON object, found {text:.40}"))),
    }
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<(Realm, String, String)> {
    Ok((
        Realm {
            id: row.get(0)?,
            subdomain: row.get(1)?,
            name: row.get(2)?,
            description: row.get(3)?,
            settings: Map::new(),
            user_defaults: Map::new(),
            deactivated: flag(row.get(6)?),
            date_created: row.get(7)?,
        },
        row.get(4)?,
        row.get(5)?,
    ))
}

fn finish((mut realm, settings, defaults): (Realm, String, String)) -> StoreResult<Realm> {
    realm.settings = json_object(&settings)?;
    realm.user_defaults = json_object(&defaults)?;
    Ok(realm)
}

/// The realm with this subdomain, if any.
pub fn by_subdomain(conn: &Connection, subdomain: &str) -> StoreResult<Option<Realm>> {
    let sql = format!("SELECT {COLUMNS} FROM realms WHERE subdomain = ?1");
    conn.query_row(&sql, [subdomain], from_row).optional()?.map(finish).transpose()
}

/// The realm with this id, if any.
pub fn by_id(conn: &Connection, id: RealmId) -> StoreResult<Option<Realm>> {
    let sql = format!("SELECT {COLUMNS} FROM realms WHERE id = ?1");
    conn.query_row(&sql, [id], from_row).optional()?.map(finish).transpose()
}

/// Whether any realm exists.
pub fn any(conn: &Connection) -> StoreResult<bool> {
    Ok(conn.query_row("SELECT EXISTS (SELECT 1 FROM realms)", [], |r| r.get(0))?)
}

/// Deactivates or reactivates a realm.
pub fn set_deactivated(conn: &Connection, id: RealmId, deactivated: bool) -> StoreResult<()> {
    conn.execute("UPDATE realms SET deactivated = ?2 WHERE id = ?1", params![id, deactivated])?;
    Ok(())
}

/// Inserts a realm and returns its id. `realm.id` is ignored.
pub fn insert(conn: &Connection, realm: &Realm) -> StoreResult<RealmId> {
    conn.execute(
        "INSERT INTO realms (subdomain, name, description, settings, user_defaults, deactivated, date_created)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            realm.subdomain,
            realm.name,
            realm.description,
            Value::Object(realm.settings.clone()).to_string(),
            Value::Object(realm.user_defaults.clone()).to_string(),
            realm.deactivated,
            realm.date_created,
        ],
    )?;
    Ok(RealmId(conn.last_insert_rowid()))
}

/// Replaces a realm's defaults of personal settings for new users.
pub fn set_user_defaults(conn: &Connection, id: RealmId, defaults: &Map<String, Value>) -> StoreResult<()> {
    conn.execute(
        "UPDATE realms SET user_defaults = ?2 WHERE id = ?1",
        params![id, Value::Object(defaults.clone()).to_string()],
    )?;
    Ok(())
}

/// Saves a realm's name, description and organization settings.
pub fn save_settings(conn: &Connection, realm: &Realm) -> StoreResult<()> {
    conn.execute(
        "UPDATE realms SET name = ?2, description = ?3, settings = ?4 WHERE id = ?1",
        params![realm.id, realm.name, realm.description, Value::Object(realm.settings.clone()).to_string()],
    )?;
    Ok(())
}
