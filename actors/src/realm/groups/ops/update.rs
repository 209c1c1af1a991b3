//! `PATCH /user_groups/{id}`: name, description, permission settings, reactivation.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::access::{access_for_update, check_group_name, check_name_free, parse_settings, CAN_MANAGE};
use crate::error::{ApiError, ApiResult};
use crate::ids::{GroupId, UserId};
use crate::realm::group_setting::GroupSettingChange;
use crate::realm::groups::format::{add_event, update_event};
use crate::realm::model::UserGroup;
use crate::realm::permissions::require_member;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// `PATCH /user_groups/{id}`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct GroupUpdate {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Raw `{"new": .., "old": ..}` values of the `can_*_group` parameters given.
    pub settings: Vec<(String, Value)>,
    pub deactivated: Option<bool>,
}

/// A group's new version and what changed in it, in Zulip's order: name, description,
/// reactivation, settings (with the value each setting shows).
#[derive(Debug, Clone)]
pub struct GroupEdit {
    before: UserGroup,
    after: UserGroup,
    renamed: bool,
    described: bool,
    reactivated: bool,
    settings: Vec<(&'static str, Value)>,
}

/// Plans `PATCH /user_groups/{id}` by `acting`: guests, the settings' shapes, something to
/// do, access (`can_manage_group`), then each field in Zulip's order.
pub fn plan_update(state: &RealmState, acting: UserId, id: GroupId, update: GroupUpdate) -> ApiResult<GroupEdit> {
    require_member(state, acting)?;
    let changes = parse_settings(&update.settings, GroupSettingChange::from_api)?;
    if update.name.is_none() && update.description.is_none() && changes.is_empty() && update.deactivated.is_none() {
        return Err(ApiError::bad_request("No new data supplied"));
    }
    let before = access_for_update(state, id, acting, CAN_MANAGE, true)?.clone();
    let mut edit = GroupEdit {
        after: before.clone(),
        before,
        renamed: false,
        described: false,
        reactivated: false,
        settings: Vec::new(),
    };
    let group = &mut edit.after;
    if let Some(name) = update.name.filter(|n| *n != group.name) {
        check_group_name(&name)?;
        check_name_free(state, &name, Some(id))?;
        group.name = name;
        edit.renamed = true;
    }
    if let Some(description) = update.description.filter(|d| *d != group.description) {
        group.description = description;
        edit.described = true;
    }
    if update.deactivated == Some(false) && group.deactivated {
        group.deactivated = false;
        edit.reactivated = true;
    }
    let nobody = state.nobody_group_id();
    for (permission, change) in changes {
        let current = state.group_setting_api_value(&state.group_setting_of(group, permission.name));
        if change.is_change_from(&current, nobody)? {
            let value = state.check_group_setting(permission.name, &permission.rule, change.new)?;
            edit.settings.push((permission.name, state.group_setting_api_value(&value).to_json()));
            group.settings.insert(permission.name.into(), value.to_json());
        }
    }
    Ok(edit)
}

impl GroupEdit {
    fn changes_anything(&self) -> bool {
        self.renamed || self.described || self.reactivated || !self.settings.is_empty()
    }
}

impl Change for GroupEdit {
    type Output = ();

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        self.changes_anything()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.changes_anything() {
            store::groups::update(tx, &self.after)?;
        }
        Ok(())
    }

    /// One `update` per changed field; a reactivation also re-announces the group (`add`)
    /// as it was before its settings changed, for the clients that had been told it was
    /// removed.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let GroupEdit { before, after, renamed, described, reactivated, settings } = self;
        let id = after.id;
        let mut events = Vec::new();
        if renamed {
            let mut out = update_event(state, id, "name", json!(after.name));
            // Read by the queue filter (a rename of a deactivated group reaches only clients
            // that show deactivated groups), and removed before delivery.
            out.event.edit(|body| {
                body.insert("deactivated".into(), Value::Bool(before.deactivated));
            });
            events.push(out);
        }
        if described {
            events.push(update_event(state, id, "description", json!(after.description)));
        }
        if reactivated {
            events.push(update_event(state, id, "deactivated", Value::Bool(false)));
            let shown = UserGroup { settings: before.settings.clone(), ..after.clone() };
            let subgroups: Vec<GroupId> = shown.subgroups.iter().copied().collect();
            let mut add = add_event(state, &shown, &shown.members, &subgroups);
            // Only for clients that had been told the group was removed.
            add.event.edit(|body| {
                body.insert("for_reactivation".into(), Value::Bool(true));
            });
            events.push(add);
        }
        for (name, shown) in settings {
            events.push(update_event(state, id, name, shown));
        }
        if !events.is_empty() {
            state.put_group(after);
        }
        Applied::events(events)
    }
}
