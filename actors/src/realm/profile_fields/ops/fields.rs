//! The organization's custom profile fields: created, changed, deleted and reordered by
//! administrators. Every change sends `custom_profile_fields` (the whole list) to every
//! active user.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::{FieldId, RealmId, UserId};
use crate::realm::model::{CustomProfileField, ProfileValue};
use crate::realm::permissions::require_admin;
use crate::realm::profile_fields::format::fields_event;
use crate::realm::profile_fields::validate::{self, field_type};
use crate::realm::state::RealmState;
use crate::realm::{commit, Applied, Change};
use crate::store::{self, Store};

/// Most fields an organization may show in profile summaries.
pub const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS: usize = 2;

/// `POST /realm/profile_fields` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct NewField {
    /// Stripped of surrounding whitespace by the plan.
    pub name: String,
    pub hint: String,
    pub field_type: i64,
    /// `{}` when not given.
    pub field_data: Map<String, Value>,
    pub display_in_profile_summary: bool,
    pub required: bool,
    pub editable_by_user: bool,
    /// FL 455.
    pub use_for_user_matching: bool,
}

/// `PATCH /realm/profile_fields/{id}` arguments; `None` keeps the current value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldChanges {
    /// Stripped of surrounding whitespace by the plan.
    pub name: Option<String>,
    pub hint: Option<String>,
    pub field_data: Option<Map<String, Value>>,
    pub display_in_profile_summary: Option<bool>,
    pub required: Option<bool>,
    pub editable_by_user: Option<bool>,
    /// FL 455.
    pub use_for_user_matching: Option<bool>,
}

pub(super) fn invalid(msg: String) -> ApiError {
    ApiError::bad_request(msg)
}

/// The field `id`, or "Field id N not found.".
pub(super) fn field_by_id(state: &RealmState, id: i64) -> ApiResult<&CustomProfileField> {
    state
        .profile_fields()
        .iter()
        .find(|f| f.id.0 == id)
        .ok_or_else(|| ApiError::bad_request(format!("Field id {id} not found.")))
}

/// Administrators only (Zulip's `require_realm_admin`).
fn require_admin_user(state: &RealmState, acting: UserId) -> ApiResult<()> {
    require_admin(state.user_or_err(acting)?.role)
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
/// external accounts, which take theirs from Zulip's table), type, summary support, then
/// user matching (FL 455: short text and external accounts only).
fn check_definition(
    name: &str,
    hint: &str,
    field_type: i64,
    field_data: &Map<String, Value>,
    (display_in_profile_summary, use_for_user_matching): (bool, bool),
) -> ApiResult<()> {
    validate::field_data(field_type, field_data).map_err(invalid)?;
    if validate::default_external_label(field_type, field_data).is_none() {
        validate::name_and_hint(name, hint).map_err(invalid)?;
    }
    if !validate::is_known_type(field_type) {
        return Err(ApiError::bad_request("Invalid field type."));
    }
    // Paragraphs may be shown in the summary from FL 476.
    if display_in_profile_summary && field_type == field_type::USER {
        return Err(ApiError::bad_request("Field type not supported for display in profile summary."));
    }
    if use_for_user_matching && !matches!(field_type, field_type::SHORT_TEXT | field_type::EXTERNAL_ACCOUNT) {
        return Err(ApiError::bad_request("Field type not supported for user matching."));
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

// --- Creation. ---

/// A field to create; its id (and `order`, the same number, so it comes last) come with
/// the write.
#[derive(Debug, Clone)]
pub struct FieldCreation {
    realm_id: RealmId,
    field: CustomProfileField,
}

/// Plans `POST /realm/profile_fields` by `acting`: administrators only, then the summary
/// limit, the definition and the label's uniqueness.
pub fn plan_create(state: &RealmState, acting: UserId, mut new: NewField) -> ApiResult<FieldCreation> {
    require_admin_user(state, acting)?;
    new.name = new.name.trim().to_owned();
    if new.display_in_profile_summary {
        check_summary_limit(state, None)?;
    }
    let flags = (new.display_in_profile_summary, new.use_for_user_matching);
    check_definition(&new.name, &new.hint, new.field_type, &new.field_data, flags)?;
    let (name, hint, field_data) = match validate::default_external_label(new.field_type, &new.field_data) {
        Some(label) => {
            let subtype = new.field_data.get("subtype").cloned().unwrap_or_default();
            (label.to_owned(), String::new(), json!({ "subtype": subtype }).to_string())
        }
        None => (new.name, new.hint, stored_field_data(new.field_type, &new.field_data)),
    };
    check_unique_label(state, &name, None)?;
    let field = CustomProfileField {
        id: FieldId(0),
        name,
        hint,
        field_type: new.field_type,
        field_data,
        order: 0,
        display_in_profile_summary: new.display_in_profile_summary,
        required: new.required,
        editable_by_user: new.editable_by_user,
        use_for_user_matching: new.use_for_user_matching,
    };
    Ok(FieldCreation { realm_id: state.realm().id, field })
}

impl FieldCreation {
    /// The id the write would assign (tests that apply a plan without a database).
    #[cfg(test)]
    pub(crate) fn written_as(mut self, id: FieldId) -> Self {
        self.field.id = id;
        self.field.order = id.0;
        self
    }
}

impl Change for FieldCreation {
    type Output = FieldId;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let id = store::profile_fields::insert(tx, self.realm_id, &self.field)?;
        self.field.id = id;
        self.field.order = id.0;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<FieldId> {
        let id = self.field.id;
        let mut fields = state.profile_fields().to_vec();
        fields.push(self.field);
        state.set_profile_fields(fields);
        Applied::new(id, vec![fields_event(state)])
    }
}

/// Creates a field outside any actor (tests): its id and the events.
pub fn create_field(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewField,
) -> ApiResult<(FieldId, Vec<Outgoing>)> {
    let change = plan_create(state, acting, new)?;
    let applied = commit(state, store, change)?;
    Ok((applied.output, applied.events))
}

// --- Changes. ---

/// A field's new version; choices removed from a list-of-options field take the values
/// that chose them along.
#[derive(Debug, Clone)]
pub struct FieldEdit {
    field: CustomProfileField,
    removed_choices: Vec<String>,
}

/// Whether a change of a default external account field touches only what Zulip lets
/// change there (`update_only_display_in_profile_summary`).
fn only_summary_or_flags(field: &CustomProfileField, changes: &FieldChanges) -> bool {
    let stored = field.field_data_map();
    changes.name.as_ref().is_none_or(|n| *n == field.name)
        && changes.hint.as_ref().is_none_or(|h| *h == field.hint)
        && changes.field_data.as_ref().is_none_or(|d| *d == stored)
}

/// Plans `PATCH /realm/profile_fields/{id}` by `acting`: administrators only, the field,
/// the summary limit, what a default field allows, the definition, the label.
pub fn plan_update(state: &RealmState, acting: UserId, id: i64, mut changes: FieldChanges) -> ApiResult<FieldEdit> {
    require_admin_user(state, acting)?;
    changes.name = changes.name.map(|n| n.trim().to_owned());
    let current = field_by_id(state, id)?;
    if changes.display_in_profile_summary == Some(true) {
        check_summary_limit(state, Some(current.id))?;
    }
    let stored_data = current.field_data_map();
    if validate::default_external_label(current.field_type, &stored_data).is_some()
        && !only_summary_or_flags(current, &changes)
    {
        return Err(ApiError::bad_request("Default custom field cannot be updated."));
    }
    let mut field = current.clone();
    field.name = changes.name.unwrap_or(field.name);
    field.hint = changes.hint.unwrap_or(field.hint);
    field.display_in_profile_summary = changes.display_in_profile_summary.unwrap_or(field.display_in_profile_summary);
    field.required = changes.required.unwrap_or(field.required);
    field.editable_by_user = changes.editable_by_user.unwrap_or(field.editable_by_user);
    field.use_for_user_matching = changes.use_for_user_matching.unwrap_or(field.use_for_user_matching);
    let new_data = changes.field_data.unwrap_or_else(|| stored_data.clone());
    let flags = (field.display_in_profile_summary, field.use_for_user_matching);
    check_definition(&field.name, &field.hint, field.field_type, &new_data, flags)?;
    check_unique_label(state, &field.name, Some(field.id))?;
    if validate::has_field_data(field.field_type) {
        field.field_data = Value::Object(new_data.clone()).to_string();
    }
    let removed_choices = if field.field_type == field_type::SELECT {
        stored_data.keys().filter(|k| !new_data.contains_key(*k)).cloned().collect()
    } else {
        Vec::new()
    };
    Ok(FieldEdit { field, removed_choices })
}

impl Change for FieldEdit {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::profile_fields::update(tx, &self.field)?;
        Ok(store::profile_fields::delete_values_in(tx, self.field.id, &self.removed_choices)?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let FieldEdit { field, removed_choices } = self;
        drop_values(state, field.id, |v| removed_choices.contains(&v.value));
        let fields =
            state.profile_fields().iter().map(|f| if f.id == field.id { field.clone() } else { f.clone() }).collect();
        state.set_profile_fields(fields);
        Applied::events(vec![fields_event(state)])
    }
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

// --- Deletion. ---

/// A field to delete with every user's value of it.
#[derive(Debug, Clone, Copy)]
pub struct FieldDeletion {
    field: FieldId,
}

/// Plans `DELETE /realm/profile_fields/{id}` by `acting` (administrators only).
pub fn plan_delete(state: &RealmState, acting: UserId, id: i64) -> ApiResult<FieldDeletion> {
    require_admin_user(state, acting)?;
    Ok(FieldDeletion { field: field_by_id(state, id)?.id })
}

impl Change for FieldDeletion {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::profile_fields::delete(tx, self.field)?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        drop_values(state, self.field, |_| true);
        let fields = state.profile_fields().iter().filter(|f| f.id != self.field).cloned().collect();
        state.set_profile_fields(fields);
        Applied::events(vec![fields_event(state)])
    }
}

// --- Order. ---

/// The fields with their new `order`.
#[derive(Debug, Clone)]
pub struct FieldOrder {
    fields: Vec<CustomProfileField>,
}

/// Plans `PATCH /realm/profile_fields` by `acting` (administrators only): `order` lists
/// field ids, and each field's `order` becomes its index there. Every field must be listed;
/// unknown ids are ignored and a repeated id takes its last position, as in Zulip.
pub fn plan_reorder(state: &RealmState, acting: UserId, order: &[i64]) -> ApiResult<FieldOrder> {
    require_admin_user(state, acting)?;
    let position: BTreeMap<i64, i64> = order.iter().enumerate().map(|(i, id)| (*id, i as i64)).collect();
    let mut fields = state.profile_fields().to_vec();
    for field in &mut fields {
        field.order = *position.get(&field.id.0).ok_or_else(|| ApiError::bad_request("Invalid order mapping."))?;
    }
    Ok(FieldOrder { fields })
}

impl Change for FieldOrder {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(self.fields.iter().try_for_each(|f| store::profile_fields::set_order(tx, f.id, f.order))?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        state.set_profile_fields(self.fields);
        Applied::events(vec![fields_event(state)])
    }
}
