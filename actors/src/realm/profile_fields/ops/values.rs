//! Users' values of the custom profile fields: validated whole against the fields, reduced
//! to what changes, written, then applied with one `realm_user` `update` per changed value
//! to every active user.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Transaction;
use serde_json::Value;

use super::fields::{field_by_id, invalid};
use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::{FieldId, UserId};
use crate::realm::model::{CustomProfileField, ProfileValue, User};
use crate::realm::permissions::require_human;
use crate::realm::profile_fields::format::value_event;
use crate::realm::profile_fields::validate::{self, field_type::USER};
use crate::realm::state::RealmState;
use crate::realm::{commit, Applied, Change};
use crate::store::{self, Store, StoreError};

/// A validated change of one user's values: per field, the new value or `None` to remove
/// it, in request order. Made by [`validate_profile_data`] or [`validate_profile_removal`],
/// applied as a [`ProfileDataWrites`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileDataChange {
    target: UserId,
    entries: Vec<(FieldId, Option<ProfileValue>)>,
}

/// The field `id` if `acting` may change values of it: administrators always, others
/// only for fields with `editable_by_user`.
fn editable_field<'a>(state: &'a RealmState, acting: &User, id: i64) -> ApiResult<&'a CustomProfileField> {
    let field = field_by_id(state, id)?;
    if !acting.role.is_admin() && !field.editable_by_user {
        return Err(ApiError::bad_request(
            "You are not allowed to change this field. Contact an administrator to update it.",
        ));
    }
    Ok(field)
}

/// Whether a requested value means "remove the value" (`null`, `""` or `[]`).
fn is_removal(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// One element of a `profile_data` list: `{"id": int, "value": str | [int] | null}` and
/// nothing else. `param` names the list in messages (`data`, `profile_data`).
fn parse_entry<'a>(param: &str, index: usize, item: &'a Value) -> ApiResult<(i64, &'a Value)> {
    let name = format!("{param}[{index}]");
    let Value::Object(map) = item else {
        return Err(invalid(format!("{name} is not a dict")));
    };
    for key in ["id", "value"] {
        if !map.contains_key(key) {
            return Err(invalid(format!("{key} key is missing from {name}")));
        }
    }
    if let Some(extra) = map.keys().find(|k| *k != "id" && *k != "value") {
        return Err(invalid(format!("Unexpected arguments: {extra}")));
    }
    let id = map["id"].as_i64().filter(|_| !map["id"].is_f64());
    let id = id.ok_or_else(|| invalid(format!("{name}[\"id\"] is not an integer")))?;
    let value = &map["value"];
    let typed_ok = match value {
        Value::Null | Value::String(_) => true,
        Value::Array(items) => items.iter().all(|v| v.is_i64()),
        _ => false,
    };
    if !typed_ok {
        return Err(invalid(format!("{name}[\"value\"] is not an allowed_type")));
    }
    Ok((id, value))
}

/// Checks a person picker's users: all of the realm, active, human
/// (`check_valid_user_ids`).
fn check_picked_users(state: &RealmState, ids: &[i64]) -> ApiResult<()> {
    let unknown: Vec<String> = ids.iter().filter(|id| state.user(UserId(**id)).is_none()).map(i64::to_string).collect();
    if !unknown.is_empty() {
        return Err(invalid(format!("Invalid user IDs: {}", unknown.join(", "))));
    }
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    for user in distinct.into_iter().filter_map(|id| state.user(UserId(id))) {
        if !user.is_active {
            return Err(invalid(format!("User with ID {} is deactivated", user.id)));
        }
        if user.is_bot {
            return Err(invalid(format!("User with ID {} is a bot", user.id)));
        }
    }
    Ok(())
}

/// A value checked against its field, as stored (with `rendered_value` for Markdown types).
fn checked_value(state: &RealmState, field: &CustomProfileField, value: &Value) -> ApiResult<ProfileValue> {
    let stored = validate::value(field.field_type, &field.name, &field.field_data, value).map_err(invalid)?;
    if field.field_type == USER {
        check_picked_users(state, &validate::user_ids(value).map_err(invalid)?)?;
    }
    let rendered_value = validate::is_renderable(field.field_type).then(|| crate::markdown::render(&stored));
    Ok(ProfileValue { value: stored, rendered_value })
}

/// Validates a `profile_data` list (`[{"id": N, "value": ...}]`, as the API gives it) that
/// `acting` sends for `target`'s values, without changing anything, so that a request can
/// be validated whole before anything is written.
///
/// - `param` names the list in shape errors (`data` for `PATCH /users/me/profile_data`,
///   `profile_data` for `PATCH /users/{id}`).
/// - Unknown fields: "Field id N not found.". Non-administrators may only change fields
///   with `editable_by_user` ("You are not allowed to change this field. ..."); an
///   administrator editing anyone (`PATCH /users/{id}`) bypasses that.
/// - A `null`, `""` or `[]` value removes the value; others are validated per field type
///   with Zulip's messages (the field's label is the variable name).
/// - The target must be a user of the realm ("No such user"); the caller checks that the
///   acting user may edit the target at all.
pub fn validate_profile_data(
    state: &RealmState,
    acting: &User,
    target: UserId,
    param: &str,
    data: &[Value],
) -> ApiResult<ProfileDataChange> {
    state.user_or_err(target)?;
    let mut entries = Vec::with_capacity(data.len());
    for (index, item) in data.iter().enumerate() {
        let (id, value) = parse_entry(param, index, item)?;
        let field = editable_field(state, acting, id)?;
        let new = if is_removal(value) { None } else { Some(checked_value(state, field, value)?) };
        entries.push((field.id, new));
    }
    Ok(ProfileDataChange { target, entries })
}

/// Validates `DELETE /users/me/profile_data`: removal of `target`'s values of the fields
/// `ids`, with the same field and permission checks as [`validate_profile_data`].
pub fn validate_profile_removal(
    state: &RealmState,
    acting: &User,
    target: UserId,
    ids: &[i64],
) -> ApiResult<ProfileDataChange> {
    state.user_or_err(target)?;
    let entries = ids.iter().map(|id| Ok((editable_field(state, acting, *id)?.id, None))).collect::<ApiResult<_>>()?;
    Ok(ProfileDataChange { target, entries })
}

/// Plans `PATCH /users/me/profile_data`: `user` (humans only) changes their own values.
pub fn plan_own_values(state: &RealmState, user: &User, data: &[Value]) -> ApiResult<ProfileDataWrites> {
    require_human(user.is_bot)?;
    let change = validate_profile_data(state, user, user.id, "data", data)?;
    ProfileDataWrites::prepare(state, change)
}

/// Plans `DELETE /users/me/profile_data`: `user` (humans only) removes their own values of
/// these fields.
pub fn plan_own_removal(state: &RealmState, user: &User, field_ids: &[i64]) -> ApiResult<ProfileDataWrites> {
    require_human(user.is_bot)?;
    let change = validate_profile_removal(state, user, user.id, field_ids)?;
    ProfileDataWrites::prepare(state, change)
}

/// A validated change reduced to what actually changes: written on its own or as part of
/// another change ([`ProfileDataWrites::write_values`]), then applied.
#[derive(Debug, Clone)]
pub struct ProfileDataWrites {
    target: UserId,
    /// The user's values once the change is applied.
    values: BTreeMap<FieldId, ProfileValue>,
    writes: Vec<(FieldId, Option<ProfileValue>)>,
}

impl ProfileDataWrites {
    /// Entries that change nothing (the same value, or removing an absent one) are dropped.
    /// A field named several times is written once, with the last value given for it (where
    /// applying the entries one after the other ends too), in the place it was first named:
    /// one request tells everyone of each field once, however long its list.
    pub fn prepare(state: &RealmState, change: ProfileDataChange) -> ApiResult<Self> {
        let target = change.target;
        let mut values = state.user_or_err(target)?.profile_data.clone();
        let mut writes = Vec::new();
        for (field, new) in last_value_per_field(change.entries) {
            if field_by_id(state, field.0).is_err() || values.get(&field) == new.as_ref() {
                continue;
            }
            match &new {
                Some(v) => values.insert(field, v.clone()),
                None => values.remove(&field),
            };
            writes.push((field, new));
        }
        Ok(ProfileDataWrites { target, values, writes })
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Writes the values, as part of the caller's transaction.
    pub fn write_values(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        self.writes.iter().try_for_each(|(field, new)| match new {
            Some(v) => store::profile_fields::put_value(tx, self.target, *field, v),
            None => store::profile_fields::delete_value(tx, self.target, *field),
        })
    }
}

impl Change for ProfileDataWrites {
    type Output = ();

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        !self.writes.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(self.write_values(tx)?)
    }

    /// The values in memory, and one `realm_user`/`update`
    /// `{user_id, custom_profile_field: {id, value, rendered_value?}}` (`value` null when
    /// removed) per changed value, to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let target = self.target;
        if self.writes.is_empty() {
            return Applied::events(Vec::new());
        }
        if let Some(user) = state.user_mut(target) {
            user.profile_data = self.values;
        }
        let receivers = state.active_user_ids();
        let events: Vec<Outgoing> =
            self.writes.into_iter().map(|(field, new)| value_event(receivers.clone(), target, field, new)).collect();
        Applied::events(events)
    }
}

/// Each field once, in first-mention order, with the last value given for it.
fn last_value_per_field(entries: Vec<(FieldId, Option<ProfileValue>)>) -> Vec<(FieldId, Option<ProfileValue>)> {
    let mut at: BTreeMap<FieldId, usize> = BTreeMap::new();
    let mut out: Vec<(FieldId, Option<ProfileValue>)> = Vec::new();
    for (field, new) in entries {
        match at.get(&field).and_then(|&i| out.get_mut(i)) {
            Some(slot) => slot.1 = new,
            None => {
                at.insert(field, out.len());
                out.push((field, new));
            }
        }
    }
    out
}

/// Applies a validated change outside any actor (tests): its events.
pub fn apply_profile_data(
    state: &mut RealmState,
    store: &Store,
    change: ProfileDataChange,
) -> ApiResult<Vec<Outgoing>> {
    let writes = ProfileDataWrites::prepare(state, change)?;
    Ok(commit(state, store, writes)?.events)
}
