//! `POST /user_groups/create`: a new group, planned from the state and applied once written.

use std::collections::BTreeSet;

use rusqlite::Transaction;
use serde_json::{Map, Value};

use super::access::{check_group_name, check_name_free, insufficient_permission, parse_settings, potential_subgroups};
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{GroupId, RealmId, UserId};
use crate::realm::catalog::{self, GroupPermission};
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::groups::format::{add_event, membership_event};
use crate::realm::model::UserGroup;
use crate::realm::permissions::{has_realm_permission, require_member};
use crate::realm::state::RealmState;
use crate::realm::{commit, Applied, Change};
use crate::store::{self, Store};

/// `POST /user_groups/create`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct NewGroup {
    pub name: String,
    pub description: String,
    pub members: Vec<i64>,
    pub subgroups: Option<Vec<i64>>,
    /// Raw API values of the `can_*_group` parameters given, by setting name.
    pub settings: Vec<(String, Value)>,
}

/// A group to create: its row (its id comes with the write), members and subgroups.
#[derive(Debug, Clone)]
pub struct GroupCreation {
    realm_id: RealmId,
    group: UserGroup,
    subgroups: Vec<GroupId>,
}

/// The default of a setting on a group `creator` creates (`set_defaults_for_group_settings`).
fn default_setting(state: &RealmState, permission: &GroupPermission, creator: UserId) -> GroupSettingValue {
    match state.system_group_id(permission.default_group_name) {
        Some(id) => GroupSettingValue::Group(id),
        // "group_creator": an anonymous group of the creator.
        None => GroupSettingValue::Anonymous {
            direct_members: [creator].into_iter().collect(),
            direct_subgroups: BTreeSet::new(),
        },
    }
}

/// Plans `POST /user_groups/create` by `acting`, with Zulip's checks in its order: guests,
/// `can_create_groups`, the settings' shapes, the members, the name, the settings' values,
/// the name's uniqueness, the subgroups.
pub fn plan_create(state: &RealmState, acting: UserId, new: NewGroup, now: i64) -> ApiResult<GroupCreation> {
    require_member(state, acting)?;
    if !has_realm_permission(state, "can_create_groups", acting) {
        return Err(insufficient_permission());
    }
    let given = parse_settings(&new.settings, GroupSettingValue::from_api)?;
    let members = state.active_users_by_ids(&new.members)?;
    check_group_name(&new.name)?;
    let mut settings = Map::new();
    for p in catalog::USER_GROUP_PERMISSION_SETTINGS {
        let value = match given.iter().find(|(q, _)| q.name == p.name) {
            Some((_, v)) => state.check_group_setting(p.name, &p.rule, v.clone())?,
            None => default_setting(state, p, acting),
        };
        settings.insert(p.name.into(), value.to_json());
    }
    check_name_free(state, &new.name, None)?;
    let subgroups = potential_subgroups(state, new.subgroups.as_deref().unwrap_or_default())?;
    let group = UserGroup {
        id: GroupId(0),
        name: new.name,
        description: new.description,
        is_system_group: false,
        creator_id: Some(acting),
        date_created: Some(now),
        deactivated: false,
        settings,
        members,
        subgroups: subgroups.iter().copied().collect(),
    };
    Ok(GroupCreation { realm_id: state.realm().id, group, subgroups })
}

impl GroupCreation {
    /// The group as planned.
    pub fn group(&self) -> &UserGroup {
        &self.group
    }

    /// The id the write would assign (tests that apply a plan without a database).
    #[cfg(test)]
    pub(crate) fn written_as(mut self, id: GroupId) -> Self {
        self.group.id = id;
        self
    }
}

impl Change for GroupCreation {
    type Output = GroupId;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.group.id = store::groups::insert(tx, self.realm_id, &self.group)?;
        let members: Vec<UserId> = self.group.members.iter().copied().collect();
        store::groups::add_members(tx, self.group.id, &members)?;
        store::groups::add_subgroups(tx, self.group.id, &self.subgroups)?;
        Ok(())
    }

    /// Zulip announces the group without subgroups, then adds them.
    fn apply(self, state: &mut RealmState) -> Applied<GroupId> {
        let GroupCreation { group, subgroups, .. } = self;
        let mut events: Vec<Outgoing> = vec![add_event(state, &group, &group.members, &[])];
        if !subgroups.is_empty() {
            let ids = subgroups.iter().map(|g| g.0).collect();
            events.push(membership_event(state, "add_subgroups", group.id, "direct_subgroup_ids", ids));
        }
        let id = group.id;
        state.put_group(group);
        Applied::new(id, events)
    }
}

/// Creates a group outside any actor (tests): the new id and the events.
pub fn create_group(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewGroup,
    now: i64,
) -> ApiResult<(GroupId, Vec<Outgoing>)> {
    let change = plan_create(state, acting, new, now)?;
    let applied = commit(state, store, change)?;
    Ok((applied.output, applied.events))
}
