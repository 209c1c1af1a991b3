//! Custom profile fields and their values as the API and the events show them.

use serde_json::{json, Value};

use crate::events::{Event, Outgoing};
use crate::ids::{FieldId, UserId};
use crate::realm::events::realm_user_update;
use crate::realm::model::{CustomProfileField, ProfileValue};
use crate::realm::state::RealmState;

/// A field as `GET /realm/profile_fields`, register and events show it (Zulip's `as_dict`):
/// `display_in_profile_summary` and `use_for_user_matching` (FL 455) only when true.
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
    if field.use_for_user_matching {
        dict["use_for_user_matching"] = Value::Bool(true);
    }
    dict
}

/// Every field of the realm, in `order`, as the API shows them.
pub fn field_dicts(state: &RealmState) -> Vec<Value> {
    state.profile_fields().iter().map(field_dict).collect()
}

/// The `custom_profile_fields` event with the current list, to every active user.
pub fn fields_event(state: &RealmState) -> Outgoing {
    state.to_everyone(Event::new("custom_profile_fields", json!({ "fields": field_dicts(state) })))
}

/// `realm_user`/`update` for one changed value; `rendered_value` only when non-empty.
pub fn value_event(receivers: Vec<UserId>, user: UserId, field: FieldId, new: Option<ProfileValue>) -> Outgoing {
    let mut data = json!({ "id": field, "value": new.as_ref().map(|v| v.value.as_str()) });
    if let Some(rendered) = new.and_then(|v| v.rendered_value).filter(|r| !r.is_empty()) {
        data["rendered_value"] = Value::from(rendered);
    }
    let person = json!({ "user_id": user, "custom_profile_field": data });
    Outgoing::to(receivers, realm_user_update(person))
}
