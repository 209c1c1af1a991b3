//! `POST /user_groups/{id}/deactivate`, refused while anything uses the group.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::access::{access_for_update, CAN_MANAGE};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog::{self, Kind};
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::groups::format::{event, update_event};
use crate::realm::model::UserGroup;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Objections of unarchived channels whose permission settings use the group
/// (`{"type": "channel", "channel_id": N, "settings": [..]}`).
pub fn channel_setting_objections(state: &RealmState, group: GroupId) -> Vec<Value> {
    crate::realm::channels::format::channels_using_group(state, group)
}

/// Why a group cannot be deactivated (`access_user_group_for_deactivation`), in Zulip's
/// order: active supergroups, channel settings, other active groups' settings, realm
/// settings. A setting uses the group when it is its value or a direct subgroup of its
/// anonymous value.
pub fn deactivation_objections(state: &RealmState, id: GroupId) -> Vec<Value> {
    let mut objections = Vec::new();
    let supergroups: Vec<GroupId> =
        state.groups().filter(|g| !g.deactivated && g.subgroups.contains(&id)).map(|g| g.id).collect();
    if !supergroups.is_empty() {
        objections.push(json!({"type": "subgroup", "supergroup_ids": supergroups}));
    }
    objections.extend(channel_setting_objections(state, id));
    for group in state.groups().filter(|g| !g.deactivated) {
        let settings: Vec<&str> = catalog::USER_GROUP_PERMISSION_SETTINGS
            .iter()
            .map(|p| p.name)
            .filter(|name| state.group_setting_of(group, name).uses_group(id))
            .collect();
        if !settings.is_empty() {
            objections.push(json!({"type": "user_group", "group_id": group.id, "settings": settings}));
        }
    }
    let realm_settings: Vec<&str> = catalog::REALM_SETTINGS
        .iter()
        .filter(|s| matches!(s.kind, Kind::Group(_)))
        .filter(|s| {
            GroupSettingValue::from_json(&s.value(&state.realm().settings, Some(state)))
                .is_some_and(|v| v.uses_group(id))
        })
        .map(|s| s.name)
        .collect();
    if !realm_settings.is_empty() {
        objections.push(json!({"type": "realm", "settings": realm_settings}));
    }
    objections
}

/// A group to deactivate (its deactivated version).
#[derive(Debug, Clone)]
pub struct GroupDeactivation {
    group: UserGroup,
}

/// Plans `POST /user_groups/{id}/deactivate` by `acting`: access (`can_manage_group`, the
/// group active), then no objection (`CANNOT_DEACTIVATE_GROUP_IN_USE` with them all).
pub fn plan_deactivate(state: &RealmState, acting: UserId, id: GroupId) -> ApiResult<GroupDeactivation> {
    let mut group = access_for_update(state, id, acting, CAN_MANAGE, false)?.clone();
    let objections = deactivation_objections(state, id);
    if !objections.is_empty() {
        return Err(ApiError::new(ErrorCode::CannotDeactivateGroupInUse, 400, "Cannot deactivate user group in use.")
            .with("objections", objections));
    }
    group.deactivated = true;
    Ok(GroupDeactivation { group })
}

impl Change for GroupDeactivation {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::groups::update(tx, &self.group)?)
    }

    /// `update` `deactivated`, then `remove` (for clients that hide deactivated groups).
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let id = self.group.id;
        state.put_group(self.group);
        Applied::events(vec![
            update_event(state, id, "deactivated", Value::Bool(true)),
            state.to_everyone(event("remove", json!({ "group_id": id }))),
        ])
    }
}
