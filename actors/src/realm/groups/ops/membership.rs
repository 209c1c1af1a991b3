//! `POST /user_groups/{id}/members` and `POST /user_groups/{id}/subgroups`: members and
//! subgroups added and removed, all or nothing.

use rusqlite::Transaction;

use super::access::{
    access_for_membership, access_for_update, find_group, potential_subgroups, CAN_ADD_MEMBERS, CAN_JOIN, CAN_LEAVE,
    CAN_MANAGE, CAN_REMOVE_MEMBERS,
};
use crate::error::{ApiError, ApiResult};
use crate::ids::{GroupId, UserId};
use crate::realm::groups::format::membership_event;
use crate::realm::model::UserGroup;
use crate::realm::permissions::require_member;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// `POST /user_groups/{id}/members` and `/subgroups`: the lists given (absent = empty).
#[derive(Debug, Clone, Default)]
pub struct MembershipChange {
    pub add: Vec<i64>,
    pub delete: Vec<i64>,
    pub add_subgroups: Vec<i64>,
    pub delete_subgroups: Vec<i64>,
}

/// Which endpoint a membership change came through (they differ in one message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipEndpoint {
    Members,
    Subgroups,
}

impl MembershipEndpoint {
    fn nothing_to_do(self) -> ApiError {
        ApiError::bad_request(match self {
            Self::Members => {
                "Nothing to do. Specify at least one of \"add\", \"delete\", \"add_subgroups\" or \"delete_subgroups\"."
            }
            Self::Subgroups => "Nothing to do. Specify at least one of \"add\" or \"delete\".",
        })
    }
}

/// A planned membership change: the group's new version, what the write adds and removes,
/// and the steps' events (`op`, the key of the ids, the ids), in order.
#[derive(Debug, Clone)]
pub struct MembershipEdit {
    id: GroupId,
    group: Option<UserGroup>,
    added: Vec<UserId>,
    removed: Vec<UserId>,
    subgroups_added: Vec<GroupId>,
    subgroups_removed: Vec<GroupId>,
    steps: Vec<(&'static str, &'static str, Vec<i64>)>,
}

/// Plans a membership change by `acting`: `add`, `delete`, `add_subgroups`,
/// `delete_subgroups` in that order, each checking its permission against the state and its
/// preconditions against the group as the steps before it leave it.
pub fn plan_membership(
    state: &RealmState,
    acting: UserId,
    id: GroupId,
    change: MembershipChange,
    endpoint: MembershipEndpoint,
) -> ApiResult<MembershipEdit> {
    require_member(state, acting)?;
    let MembershipChange { add, delete, add_subgroups, delete_subgroups } = change;
    if add.is_empty() && delete.is_empty() && add_subgroups.is_empty() && delete_subgroups.is_empty() {
        return Err(endpoint.nothing_to_do());
    }
    let edit = MembershipEdit {
        id,
        group: None,
        added: Vec::new(),
        removed: Vec::new(),
        subgroups_added: Vec::new(),
        subgroups_removed: Vec::new(),
        steps: Vec::new(),
    };
    let mut work = Work { state, acting, edit };
    if !add.is_empty() {
        work.add_members(&add)?;
    }
    if !delete.is_empty() {
        work.remove_members(&delete)?;
    }
    if !add_subgroups.is_empty() {
        work.add_subgroups(&add_subgroups)?;
    }
    if !delete_subgroups.is_empty() {
        work.remove_subgroups(&delete_subgroups)?;
    }
    Ok(work.edit)
}

/// A membership change in progress.
struct Work<'s> {
    state: &'s RealmState,
    acting: UserId,
    edit: MembershipEdit,
}

impl Work<'_> {
    /// The working copy of the group, made on first use.
    fn group(&mut self) -> ApiResult<&mut UserGroup> {
        if self.edit.group.is_none() {
            self.edit.group = Some(find_group(self.state, self.edit.id, true)?.clone());
        }
        self.edit.group.as_mut().ok_or_else(ApiError::internal)
    }

    /// `add`: oneself with `can_join_group`, anyone with `can_add_members_group`.
    fn add_members(&mut self, add: &[i64]) -> ApiResult<()> {
        access_for_membership(self.state, self.edit.id, self.acting, add, CAN_JOIN, CAN_ADD_MEMBERS)?;
        let users = self.state.active_users_by_ids(add)?;
        let group = self.group()?;
        if let Some(u) = users.iter().find(|u| group.members.contains(u)) {
            return Err(ApiError::bad_request(format!("User {} is already a member of this group", u.0)));
        }
        group.members.extend(users.iter().copied());
        self.edit.added = users.into_iter().collect();
        self.edit.steps.push(("add_members", "user_ids", self.edit.added.iter().map(|u| u.0).collect()));
        Ok(())
    }

    /// `delete`: oneself with `can_leave_group`, anyone with `can_remove_members_group`.
    fn remove_members(&mut self, delete: &[i64]) -> ApiResult<()> {
        let users = self.state.active_users_by_ids(delete)?;
        access_for_membership(self.state, self.edit.id, self.acting, delete, CAN_LEAVE, CAN_REMOVE_MEMBERS)?;
        let group = self.group()?;
        if let Some(missing) = delete.iter().find(|&&u| !group.members.contains(&UserId(u))) {
            return Err(ApiError::bad_request(format!("There is no member '{missing}' in this user group")));
        }
        for u in &users {
            group.members.remove(u);
        }
        self.edit.removed = users.into_iter().collect();
        self.edit.steps.push(("remove_members", "user_ids", self.edit.removed.iter().map(|u| u.0).collect()));
        Ok(())
    }

    /// `add_subgroups` (`can_add_members_group`), refusing cycles.
    fn add_subgroups(&mut self, ids: &[i64]) -> ApiResult<()> {
        let (state, id) = (self.state, self.edit.id);
        access_for_update(state, id, self.acting, CAN_ADD_MEMBERS, true)?;
        let subs = potential_subgroups(state, ids)?;
        let group = self.group()?;
        if let Some(sub) = subs.iter().find(|s| group.subgroups.contains(s)) {
            return Err(ApiError::bad_request(format!("User group {} is already a subgroup of this group.", sub.0)));
        }
        if state.recursive_subgroups(subs.iter().copied()).contains(&id) {
            return Err(ApiError::bad_request(format!(
                "User group {} is already a subgroup of one of the passed subgroups.",
                id.0
            )));
        }
        group.subgroups.extend(subs.iter().copied());
        self.edit.steps.push(("add_subgroups", "direct_subgroup_ids", subs.iter().map(|g| g.0).collect()));
        self.edit.subgroups_added = subs;
        Ok(())
    }

    /// `delete_subgroups` (`can_manage_group`).
    fn remove_subgroups(&mut self, ids: &[i64]) -> ApiResult<()> {
        access_for_update(self.state, self.edit.id, self.acting, CAN_MANAGE, true)?;
        let subs = potential_subgroups(self.state, ids)?;
        let group = self.group()?;
        if let Some(sub) = subs.iter().find(|s| !group.subgroups.contains(s)) {
            return Err(ApiError::bad_request(format!("User group {} is not a subgroup of this group.", sub.0)));
        }
        for sub in &subs {
            group.subgroups.remove(sub);
        }
        self.edit.steps.push(("remove_subgroups", "direct_subgroup_ids", subs.iter().map(|g| g.0).collect()));
        self.edit.subgroups_removed = subs;
        Ok(())
    }
}

impl Change for MembershipEdit {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.group.is_some() {
            store::groups::add_members(tx, self.id, &self.added)?;
            store::groups::remove_members(tx, self.id, &self.removed)?;
            store::groups::add_subgroups(tx, self.id, &self.subgroups_added)?;
            store::groups::remove_subgroups(tx, self.id, &self.subgroups_removed)?;
        }
        Ok(())
    }

    /// One event per step, to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let events =
            self.steps.into_iter().map(|(op, key, ids)| membership_event(state, op, self.id, key, ids)).collect();
        if let Some(group) = self.group {
            state.put_group(group);
        }
        Applied::events(events)
    }
}
