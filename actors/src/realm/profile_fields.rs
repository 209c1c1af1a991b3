//! Custom profile fields (spec 2.12, 4.11) and users' values of them: operations, their
//! messages and the realm actor's handlers for them.
//!
//! Field changes send `custom_profile_fields` (the whole list) to every active user; value
//! changes send `realm_user`/`update` with `custom_profile_field` to every active user.

mod validate;

use std::collections::{BTreeMap, BTreeSet};

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Map, Value};

pub use self::validate::field_type;
use self::validate::field_type::USER;
use super::actor::RealmActor;
use super::model::{CustomProfileField, ProfileValue, User};
use super::state::RealmState;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{FieldId, UserId};
use crate::store::{self, Store, StoreError};

/// Most fields an organization may show in profile summaries.
pub const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS: usize = 2;

/// A field as `GET /realm/profile_fields`, register and events show it (Zulip's `as_dict`):
/// `display_in_profile_summary` only when true.
pub fn field_dict(field: &CustomProfileField) -> Value {
    let mut dict = json!({
        "id": field.id,
        "name": field.name,
        "type": field.field_type,
        "hint": field.hint,
        "field_data": field.field_data,
        "order": field.order,
        "required": field.required,
        "editable_by_user": field.editable_by_user,
    });
    if field.display_in_profile_summary {
        dict["display_in_profile_summary"] = Value::Bool(true);
    }
    dict
}

/// Every field of the realm, in `order`, as the API shows them.
pub fn field_dicts(state: &RealmState) -> Vec<Value> {
    state.profile_fields().iter().map(field_dict).collect()
}

/// `POST /realm/profile_fields` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct NewField {
    /// Stripped of surrounding whitespace by the operation.
    pub name: String,
    pub hint: String,
    pub field_type: i64,
    /// `{}` when not given.
    pub field_data: Map<String, Value>,
    pub display_in_profile_summary: bool,
    pub required: bool,
    pub editable_by_user: bool,
}

/// `PATCH /realm/profile_fields/{id}` arguments; `None` keeps the current value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldChanges {
    /// Stripped of surrounding whitespace by the operation.
    pub name: Option<String>,
    pub hint: Option<String>,
    pub field_data: Option<Map<String, Value>>,
    pub display_in_profile_summary: Option<bool>,
    pub required: Option<bool>,
    pub editable_by_user: Option<bool>,
}

fn invalid(msg: String) -> ApiError {
    ApiError::bad_request(msg)
}

fn field_not_found(id: i64) -> ApiError {
    ApiError::bad_request(format!("Field id {id} not found."))
}

fn field_by_id(state: &RealmState, id: i64) -> ApiResult<&CustomProfileField> {
    state.profile_fields().iter().find(|f| f.id.0 == id).ok_or_else(|| field_not_found(id))
}

/// The `custom_profile_fields` event with the current list, to every active user.
fn fields_event(state: &RealmState) -> Outgoing {
    state.to_everyone(Event::new("custom_profile_fields", json!({ "fields": field_dicts(state) })))
}

/// Refuses a third field shown in profile summaries (`except` is the field being edited).
fn check_summary_limit(state: &RealmState, except: Option<FieldId>) -> ApiResult<()> {
    let shown = state.profile_fields().iter().filter(|f| f.display_in_profile_summary && Some(f.id) != except).count();
    if shown >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS {
        return Err(ApiError::bad_request("Only 2 custom profile fields can be displayed in the profile summary."));
    }
    Ok(())
}

/// Zulip's `validate_custom_profile_field`: field data, then label and hint (not for default
/// external accounts, which take theirs from Zulip's table), type, summary support.
fn check_definition(
    name: &str,
    hint: &str,
    field_type: i64,
    field_data: &Map<String, Value>,
    display_in_profile_summary: bool,
) -> ApiResult<()> {
    validate::field_data(field_type, field_data).map_err(invalid)?;
    if validate::default_external_label(field_type, field_data).is_none() {
        validate::name_and_hint(name, hint).map_err(invalid)?;
    }
    if !validate::is_known_type(field_type) {
        return Err(ApiError::bad_request("Invalid field type."));
    }
    if display_in_profile_summary && matches!(field_type, field_type::LONG_TEXT | field_type::USER) {
        return Err(ApiError::bad_request("Field type not supported for display in profile summary."));
    }
    Ok(())
}

/// Refuses a label another field of the organization has.
fn check_unique_label(state: &RealmState, name: &str, except: Option<FieldId>) -> ApiResult<()> {
    if state.profile_fields().iter().any(|f| f.name == name && Some(f.id) != except) {
        return Err(ApiError::bad_request("A field with that label already exists."));
    }
    Ok(())
}

/// `field_data` as stored: compact JSON for the types that have it, `""` otherwise.
fn stored_field_data(field_type: i64, data: &Map<String, Value>) -> String {
    if validate::has_field_data(field_type) {
        Value::Object(data.clone()).to_string()
    } else {
        String::new()
    }
}

/// Creates a field (administrators only); its `order` is its id, so it comes last.
pub fn create_field(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    mut new: NewField,
) -> ApiResult<(FieldId, Vec<Outgoing>)> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    new.name = new.name.trim().to_owned();
    if new.display_in_profile_summary {
        check_summary_limit(state, None)?;
    }
    check_definition(&new.name, &new.hint, new.field_type, &new.field_data, new.display_in_profile_summary)?;
    let (name, hint, field_data) = match validate::default_external_label(new.field_type, &new.field_data) {
        Some(label) => {
            let subtype = new.field_data.get("subtype").cloned().unwrap_or_default();
            (label.to_owned(), String::new(), json!({ "subtype": subtype }).to_string())
        }
        None => (new.name, new.hint, stored_field_data(new.field_type, &new.field_data)),
    };
    check_unique_label(state, &name, None)?;
    let mut field = CustomProfileField {
        id: FieldId(0),
        name,
        hint,
        field_type: new.field_type,
        field_data,
        order: 0,
        display_in_profile_summary: new.display_in_profile_summary,
        required: new.required,
        editable_by_user: new.editable_by_user,
    };
    let realm_id = state.realm().id;
    let id = store.write(|tx| store::profile_fields::insert(tx, realm_id, &field))?;
    field.id = id;
    field.order = id.0;
    let mut fields = state.profile_fields().to_vec();
    fields.push(field);
    state.set_profile_fields(fields);
    Ok((id, vec![fields_event(state)]))
}

/// Whether a change of a default external account field touches only what Zulip lets
/// change there (`update_only_display_in_profile_summary`).
fn only_summary_or_flags(field: &CustomProfileField, changes: &FieldChanges) -> bool {
    let stored = field.field_data_map();
    changes.name.as_ref().is_none_or(|n| *n == field.name)
        && changes.hint.as_ref().is_none_or(|h| *h == field.hint)
        && changes.field_data.as_ref().is_none_or(|d| *d == stored)
}

/// Changes a field (administrators only). Choices removed from a list-of-options field
/// take the values that chose them along.
pub fn update_field(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: i64,
    mut changes: FieldChanges,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    changes.name = changes.name.map(|n| n.trim().to_owned());
    let current = field_by_id(state, id)?.clone();
    if changes.display_in_profile_summary == Some(true) {
        check_summary_limit(state, Some(current.id))?;
    }
    let stored_data = current.field_data_map();
    if validate::default_external_label(current.field_type, &stored_data).is_some()
        && !only_summary_or_flags(&current, &changes)
    {
        return Err(ApiError::bad_request("Default custom field cannot be updated."));
    }
    let mut field = current.clone();
    field.name = changes.name.unwrap_or(field.name);
    field.hint = changes.hint.unwrap_or(field.hint);
    field.display_in_profile_summary = changes.display_in_profile_summary.unwrap_or(field.display_in_profile_summary);
    field.required = changes.required.unwrap_or(field.required);
    field.editable_by_user = changes.editable_by_user.unwrap_or(field.editable_by_user);
    let new_data = changes.field_data.unwrap_or_else(|| stored_data.clone());
    check_definition(&field.name, &field.hint, field.field_type, &new_data, field.display_in_profile_summary)?;
    check_unique_label(state, &field.name, Some(field.id))?;
    if validate::has_field_data(field.field_type) {
        field.field_data = Value::Object(new_data.clone()).to_string();
    }
    let removed: Vec<String> = if field.field_type == field_type::SELECT {
        stored_data.keys().filter(|k| !new_data.contains_key(*k)).cloned().collect()
    } else {
        Vec::new()
    };
    store.write(|tx| {
        store::profile_fields::update(tx, &field)?;
        store::profile_fields::delete_values_in(tx, field.id, &removed)
    })?;
    drop_values(state, field.id, |v| removed.contains(&v.value));
    replace_field(state, field);
    Ok(vec![fields_event(state)])
}

/// Puts a changed field in place of its old version.
fn replace_field(state: &mut RealmState, field: CustomProfileField) {
    let fields =
        state.profile_fields().iter().map(|f| if f.id == field.id { field.clone() } else { f.clone() }).collect();
    state.set_profile_fields(fields);
}

/// Removes, in memory, the values of `field` that `matches` selects.
fn drop_values(state: &mut RealmState, field: FieldId, matches: impl Fn(&ProfileValue) -> bool) {
    let holders: Vec<UserId> =
        state.users().filter(|u| u.profile_data.get(&field).is_some_and(&matches)).map(|u| u.id).collect();
    for user in holders {
        if let Some(u) = state.user_mut(user) {
            u.profile_data.remove(&field);
        }
    }
}

/// Deletes a field and every user's value of it (administrators only).
pub fn delete_field(state: &mut RealmState, store: &Store, acting: UserId, id: i64) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    let field_id = field_by_id(state, id)?.id;
    store.write(|tx| store::profile_fields::delete(tx, field_id))?;
    drop_values(state, field_id, |_| true);
    let fields = state.profile_fields().iter().filter(|f| f.id != field_id).cloned().collect();
    state.set_profile_fields(fields);
    Ok(vec![fields_event(state)])
}

/// Reorders the fields (administrators only): `order` lists field ids, and each field's
/// `order` becomes its index there. Every field must be listed; unknown ids are ignored
/// and a repeated id takes its last position, as in Zulip.
pub fn reorder_fields(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    order: &[i64],
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    let position: BTreeMap<i64, i64> = order.iter().enumerate().map(|(i, id)| (*id, i as i64)).collect();
    let mut fields = state.profile_fields().to_vec();
    for field in &mut fields {
        field.order = *position.get(&field.id.0).ok_or_else(|| ApiError::bad_request("Invalid order mapping."))?;
    }
    store.write(|tx| fields.iter().try_for_each(|f| store::profile_fields::set_order(tx, f.id, f.order)))?;
    state.set_profile_fields(fields);
    Ok(vec![fields_event(state)])
}

/// A validated change of one user's values: per field, the new value or `None` to remove
/// it, in request order. Made by [`validate_profile_data`] or [`validate_profile_removal`],
/// applied by [`apply_profile_data`].
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

/// A validated change reduced to what actually changes, ready to be written in a
/// caller's transaction ([`ProfileDataWrites::write`]) and then applied
/// ([`ProfileDataWrites::commit`]).
#[derive(Debug)]
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

    /// Writes the values, as part of the caller's transaction.
    pub fn write(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        self.writes.iter().try_for_each(|(field, new)| match new {
            Some(v) => store::profile_fields::put_value(tx, self.target, *field, v),
            None => store::profile_fields::delete_value(tx, self.target, *field),
        })
    }

    /// Once written: the values in memory, and one `realm_user`/`update`
    /// `{user_id, custom_profile_field: {id, value, rendered_value?}}` (`value` null when
    /// removed) per changed value, to every active user.
    pub fn commit(self, state: &mut RealmState) -> Vec<Outgoing> {
        let target = self.target;
        if let Some(user) = state.user_mut(target) {
            user.profile_data = self.values;
        }
        let receivers = state.active_user_ids();
        self.writes.into_iter().map(|(field, new)| value_event(receivers.clone(), target, field, new)).collect()
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

/// Applies a validated change in one transaction, then in memory, and returns its events.
pub fn apply_profile_data(
    state: &mut RealmState,
    store: &Store,
    change: ProfileDataChange,
) -> ApiResult<Vec<Outgoing>> {
    let writes = ProfileDataWrites::prepare(state, change)?;
    if writes.writes.is_empty() {
        return Ok(Vec::new());
    }
    store.write(|tx| writes.write(tx))?;
    Ok(writes.commit(state))
}

/// `realm_user`/`update` for one changed value; `rendered_value` only when non-empty.
fn value_event(receivers: Vec<UserId>, user: UserId, field: FieldId, new: Option<ProfileValue>) -> Outgoing {
    let mut data = json!({ "id": field, "value": new.as_ref().map(|v| v.value.as_str()) });
    if let Some(rendered) = new.and_then(|v| v.rendered_value).filter(|r| !r.is_empty()) {
        data["rendered_value"] = Value::from(rendered);
    }
    let person = json!({ "user_id": user, "custom_profile_field": data });
    Outgoing::to(receivers, super::events::realm_user_update(person))
}

// --- Messages and handlers. ---

/// `GET /realm/profile_fields`: every field, in `order`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListProfileFields {
    pub viewer: UserId,
}

/// `POST /realm/profile_fields`; the new field's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<FieldId>")]
pub struct CreateProfileField {
    pub acting: UserId,
    pub field: NewField,
}

/// `PATCH /realm/profile_fields/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateProfileField {
    pub acting: UserId,
    pub field_id: i64,
    pub changes: FieldChanges,
}

/// `DELETE /realm/profile_fields/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteProfileField {
    pub acting: UserId,
    pub field_id: i64,
}

/// `PATCH /realm/profile_fields`: the new order of every field.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReorderProfileFields {
    pub acting: UserId,
    pub order: Vec<i64>,
}

/// `PATCH /users/me/profile_data`: the requester's own values.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOwnProfileData {
    pub user_id: UserId,
    /// The `data` list as given.
    pub data: Vec<Value>,
}

/// `DELETE /users/me/profile_data`: removes the requester's values of these fields.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveOwnProfileData {
    pub user_id: UserId,
    pub field_ids: Vec<i64>,
}

impl RealmActor {
    /// Publishes the events of a committed field or value change.
    fn finish(&mut self, result: ApiResult<Vec<Outgoing>>) -> ApiResult<()> {
        let events = result?;
        self.committed(events);
        Ok(())
    }
}

impl Handler<ListProfileFields> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListProfileFields, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.viewer)?;
        Ok(field_dicts(&self.state))
    }
}

impl Handler<CreateProfileField> for RealmActor {
    type Result = ApiResult<FieldId>;

    fn handle(&mut self, msg: CreateProfileField, _: &mut Self::Context) -> Self::Result {
        let (id, events) = create_field(&mut self.state, &self.store, msg.acting, msg.field)?;
        self.committed(events);
        Ok(id)
    }
}

impl Handler<UpdateProfileField> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateProfileField, _: &mut Self::Context) -> Self::Result {
        let result = update_field(&mut self.state, &self.store, msg.acting, msg.field_id, msg.changes);
        self.finish(result)
    }
}

impl Handler<DeleteProfileField> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteProfileField, _: &mut Self::Context) -> Self::Result {
        let result = delete_field(&mut self.state, &self.store, msg.acting, msg.field_id);
        self.finish(result)
    }
}

impl Handler<ReorderProfileFields> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReorderProfileFields, _: &mut Self::Context) -> Self::Result {
        let result = reorder_fields(&mut self.state, &self.store, msg.acting, &msg.order);
        self.finish(result)
    }
}

impl Handler<UpdateOwnProfileData> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOwnProfileData, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        crate::realm::permissions::require_human(user.is_bot)?;
        let change = validate_profile_data(&self.state, user, msg.user_id, "data", &msg.data)?;
        let result = apply_profile_data(&mut self.state, &self.store, change);
        self.finish(result)
    }
}

impl Handler<RemoveOwnProfileData> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveOwnProfileData, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        crate::realm::permissions::require_human(user.is_bot)?;
        let change = validate_profile_removal(&self.state, user, msg.user_id, &msg.field_ids)?;
        let result = apply_profile_data(&mut self.state, &self.store, change);
        self.finish(result)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::realm::model::Role;
    use crate::realm::tests::{add, setup};

    struct Org {
        _dir: tempfile::TempDir,
        store: Store,
        state: RealmState,
        owner: UserId,
        member: UserId,
    }

    fn org() -> Org {
        let (dir, store, config, mut state) = setup();
        let owner = state.users().next().unwrap().id;
        let member = add(&mut state, &store, &config, "m@acme.test", Role::Member);
        Org { _dir: dir, store, state, owner, member }
    }

    fn new_field(name: &str, field_type: i64) -> NewField {
        NewField {
            name: name.into(),
            hint: String::new(),
            field_type,
            field_data: Map::new(),
            display_in_profile_summary: false,
            required: false,
            editable_by_user: true,
        }
    }

    fn add_field(org: &mut Org, name: &str, field_type: i64) -> FieldId {
        create_field(&mut org.state, &org.store, org.owner, new_field(name, field_type)).unwrap().0
    }

    fn set(org: &mut Org, target: UserId, data: Value) -> ApiResult<Vec<Outgoing>> {
        let acting = org.state.user(target).unwrap().clone();
        let change = validate_profile_data(&org.state, &acting, target, "data", data.as_array().unwrap())?;
        apply_profile_data(&mut org.state, &org.store, change)
    }

    fn reloaded(org: &Org) -> RealmState {
        RealmState::load(&org.store.conn().unwrap(), org.state.realm().id).unwrap().unwrap()
    }

    #[test]
    fn person_pickers_take_active_humans_of_the_realm() {
        let mut org = org();
        let owner = org.owner;
        let picker = add_field(&mut org, "Mentor", field_type::USER);
        let member = org.member;
        org.state.user_mut(member).unwrap().is_bot = true;
        let err = set(&mut org, owner, json!([{"id": picker, "value": [member]}])).unwrap_err();
        assert_eq!(err.msg, format!("User with ID {member} is a bot"));
        let user = org.state.user_mut(member).unwrap();
        user.is_bot = false;
        user.is_active = false;
        let err = set(&mut org, owner, json!([{"id": picker, "value": [member]}])).unwrap_err();
        assert_eq!(err.msg, format!("User with ID {member} is deactivated"));
        let err = set(&mut org, owner, json!([{"id": picker, "value": [12345]}])).unwrap_err();
        assert_eq!(err.msg, "Invalid user IDs: 12345");
    }

    #[test]
    fn values_are_saved_and_events_name_only_real_changes() {
        let mut org = org();
        let member = org.member;
        let bio = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
        let date = add_field(&mut org, "Birthday", field_type::DATE);
        let events = set(&mut org, member, json!([{"id": bio, "value": "*hi*"}, {"id": date, "value": "2000-01-31"}]));
        assert_eq!(events.unwrap().len(), 2);
        let again = set(&mut org, member, json!([{"id": bio, "value": "*hi*"}, {"id": date, "value": ""}]));
        let events = again.unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].users, org.state.active_user_ids());
        assert_eq!(events[0].event.body()["person"]["custom_profile_field"], json!({"id": date, "value": null}));
        let member = org.state.user(org.member).unwrap();
        assert_eq!(
            Value::Object(crate::realm::format::profile_data_dict(member)),
            json!({bio.to_string(): {"value": "*hi*", "rendered_value": "<p><em>hi</em></p>"}})
        );
        assert_eq!(reloaded(&org).user(org.member).unwrap().profile_data, member.profile_data);
    }

    /// Text fields render Markdown with no link to a refused URL, in any disguise.
    #[test]
    fn hostile_urls_make_no_link_in_profile_values() {
        let mut org = org();
        let member = org.member;
        let short = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
        let long = add_field(&mut org, "About", field_type::LONG_TEXT);
        let cases = crate::markdown::tests::HOSTILE.iter().chain(crate::markdown::tests::SAFE);
        for (source, html) in cases {
            let field = if source.chars().count() <= validate::SHORT_VALUE_MAX_LENGTH { short } else { long };
            set(&mut org, member, json!([{"id": field, "value": source}])).unwrap();
            let data = crate::realm::format::profile_data_dict(org.state.user(member).unwrap());
            assert_eq!(data[&field.to_string()], json!({"value": source, "rendered_value": html}), "{source}");
        }
    }

    #[test]
    fn a_refused_list_writes_nothing_and_deleting_a_field_drops_its_values() {
        let mut org = org();
        let member = org.member;
        let bio = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
        let site = add_field(&mut org, "Site", field_type::URL);
        let err = set(&mut org, member, json!([{"id": bio, "value": "x"}, {"id": site, "value": "nope"}]));
        assert_eq!(err.unwrap_err().msg, "Site is not a URL");
        assert!(org.state.user(org.member).unwrap().profile_data.is_empty());
        set(&mut org, member, json!([{"id": bio, "value": "x"}, {"id": site, "value": "https://a.io"}])).unwrap();
        delete_field(&mut org.state, &org.store, org.owner, bio.0).unwrap();
        let keys: Vec<FieldId> = org.state.user(org.member).unwrap().profile_data.keys().copied().collect();
        assert_eq!(keys, vec![site]);
        let state = reloaded(&org);
        assert_eq!(state.user(org.member).unwrap().profile_data.keys().copied().collect::<Vec<_>>(), vec![site]);
        assert_eq!(state.profile_fields(), org.state.profile_fields());
    }

    #[test]
    fn members_cannot_define_fields() {
        let mut org = org();
        let err = create_field(&mut org.state, &org.store, org.member, new_field("X", 1)).unwrap_err();
        assert_eq!(err, ApiError::must_be_admin());
        assert!(org.state.profile_fields().is_empty());
    }
}
