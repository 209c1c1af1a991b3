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
                editable_by_user
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
