//! The `custom_profile_fields` table and users' values of them.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Connection;

use super::{flag, StoreResult};
use crate::ids::{FieldId, RealmId, UserId};
use crate::realm::model::{CustomProfileField, ProfileValue};

/// Every custom profile field of a realm, in `order`.
pub fn in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<CustomProfileField>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, hint, field_type, field_data, sort_order, display_in_profile_summary, required,
                editable_by_user, use_for_user_matching
         FROM custom_profile_fields WHERE realm_id = ?1 ORDER BY sort_order, id",
    )?;
    let rows = stmt.query_map([realm_id], |row| {
        Ok(CustomProfileField {
            id: row.get(0)?,
            name: row.get(1)?,
            hint: row.get(2)?,
            field_type: row.get(3)?,
            field_data: row.get(4)?,
            order: row.get(5)?,
            display_in_profile_summary: flag(row.get(6)?),
            required: flag(row.get(7)?),
            editable_by_user: flag(row.get(8)?),
            use_for_user_matching: flag(row.get(9)?),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every value of the realm's fields, grouped by user.
pub fn values_in_realm(
    conn: &Connection,
    realm_id: RealmId,
) -> StoreResult<HashMap<UserId, BTreeMap<FieldId, ProfileValue>>> {
    let mut stmt = conn.prepare(
        "SELECT v.user_id, v.field_id, v.value, v.rendered_value
         FROM custom_profile_field_values v
         JOIN custom_profile_fields f ON f.id = v.field_id WHERE f.realm_id = ?1",
    )?;
    let mut out: HashMap<UserId, BTreeMap<FieldId, ProfileValue>> = HashMap::new();
    let rows = stmt.query_map([realm_id], |row| {
        Ok((
            row.get::<_, UserId>(0)?,
            row.get::<_, FieldId>(1)?,
            ProfileValue { value: row.get(2)?, rendered_value: row.get(3)? },
        ))
    })?;
    for row in rows {
        let (user, field, value) = row?;
        out.entry(user).or_default().insert(field, value);
    }
    Ok(out)
}

/// Inserts a field (its `id` and `order` are ignored) and gives it `order` = its new id, as
/// Zulip does; returns the id.
pub fn insert(tx: &Connection, realm_id: RealmId, field: &CustomProfileField) -> StoreResult<FieldId> {
    tx.execute(
        "INSERT INTO custom_profile_fields (realm_id, name, hint, field_type, field_data, sort_order,
                display_in_profile_summary, required, editable_by_user, use_for_user_matching)
         VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8, ?9)",
        rusqlite::params![
            realm_id,
            field.name,
            field.hint,
            field.field_type,
            field.field_data,
            field.display_in_profile_summary,
            field.required,
            field.editable_by_user,
            field.use_for_user_matching
        ],
    )?;
    let id = FieldId(tx.last_insert_rowid());
    set_order(tx, id, id.0)?;
    Ok(id)
}

/// Saves every attribute of an existing field.
pub fn update(tx: &Connection, field: &CustomProfileField) -> StoreResult<()> {
    tx.execute(
        "UPDATE custom_profile_fields SET name = ?2, hint = ?3, field_data = ?4, sort_order = ?5,
                display_in_profile_summary = ?6, required = ?7, editable_by_user = ?8, use_for_user_matching = ?9
         WHERE id = ?1",
        rusqlite::params![
            field.id,
            field.name,
            field.hint,
            field.field_data,
            field.order,
            field.display_in_profile_summary,
            field.required,
            field.editable_by_user,
            field.use_for_user_matching
        ],
    )?;
    Ok(())
}

/// Moves a field to `order`.
pub fn set_order(tx: &Connection, id: FieldId, order: i64) -> StoreResult<()> {
    tx.execute("UPDATE custom_profile_fields SET sort_order = ?2 WHERE id = ?1", rusqlite::params![id, order])?;
    Ok(())
}

/// Deletes a field and every value of it.
pub fn delete(tx: &Connection, id: FieldId) -> StoreResult<()> {
    tx.execute("DELETE FROM custom_profile_field_values WHERE field_id = ?1", [id])?;
    tx.execute("DELETE FROM custom_profile_fields WHERE id = ?1", [id])?;
    Ok(())
}

/// Sets a user's value of a field.
pub fn put_value(tx: &Connection, user: UserId, field: FieldId, value: &ProfileValue) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO custom_profile_field_values (user_id, field_id, value, rendered_value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (user_id, field_id) DO UPDATE SET value = excluded.value, rendered_value = excluded.rendered_value",
        rusqlite::params![user, field, value.value, value.rendered_value],
    )?;
    Ok(())
}

/// Removes a user's value of a field.
pub fn delete_value(tx: &Connection, user: UserId, field: FieldId) -> StoreResult<()> {
    tx.execute(
        "DELETE FROM custom_profile_field_values WHERE user_id = ?1 AND field_id = ?2",
        rusqlite::params![user, field],
    )?;
    Ok(())
}

/// Removes every value of a field that is one of `values` (choices that no longer exist).
pub fn delete_values_in(tx: &Connection, field: FieldId, values: &[String]) -> StoreResult<()> {
    let mut stmt = tx.prepare("DELETE FROM custom_profile_field_values WHERE field_id = ?1 AND value = ?2")?;
    for value in values {
        stmt.execute(rusqlite::params![field, value])?;
    }
    Ok(())
}
