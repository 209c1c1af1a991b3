//! `user_group` events as Zulip sends them, to every active user (`active_user_ids`).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog;
use crate::realm::model::UserGroup;
use crate::realm::state::RealmState;

/// A `user_group` event with these fields after `op`.
pub fn event(op: &str, fields: Value) -> Event {
    let mut body = Map::new();
    body.insert("op".into(), Value::from(op));
    if let Value::Object(rest) = fields {
        body.extend(rest);
    }
    Event::new("user_group", Value::Object(body))
}

/// `update` with one changed field.
pub fn update_event(state: &RealmState, group: GroupId, key: &str, value: Value) -> Outgoing {
    let mut data = Map::new();
    data.insert(key.into(), value);
    state.to_everyone(event("update", json!({"group_id": group, "data": data})))
}

/// `add`: the group as `do_send_create_user_group_event` describes it.
pub fn add_event(state: &RealmState, group: &UserGroup, members: &BTreeSet<UserId>, subgroups: &[GroupId]) -> Outgoing {
    let mut dict = json!({
        "name": group.name,
        "creator_id": group.creator_id,
        "date_created": group.date_created,
        "members": members,
        "description": group.description,
        "id": group.id,
        "is_system_group": group.is_system_group,
        "direct_subgroup_ids": subgroups,
    });
    if let Value::Object(map) = &mut dict {
        for p in catalog::USER_GROUP_PERMISSION_SETTINGS {
            map.insert(p.name.into(), state.group_setting_api_value(&state.group_setting_of(group, p.name)).to_json());
        }
        map.insert("deactivated".into(), Value::Bool(group.deactivated));
    }
    state.to_everyone(event("add", json!({ "group": dict })))
}

/// A membership event: `add_members`/`remove_members` (`user_ids`) or
/// `add_subgroups`/`remove_subgroups` (`direct_subgroup_ids`).
pub fn membership_event(state: &RealmState, op: &str, group: GroupId, key: &str, ids: Vec<i64>) -> Outgoing {
    let mut body = Map::new();
    body.insert("group_id".into(), json!(group));
    body.insert(key.into(), json!(ids));
    state.to_everyone(event(op, Value::Object(body)))
}
