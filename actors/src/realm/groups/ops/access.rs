//! Who may change a group, and the checks every group change shares: names, subgroups.

use std::collections::BTreeSet;

use crate::error::{ApiError, ApiResult};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog::{self, GroupPermission};
use crate::realm::model::UserGroup;
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;

/// Longest group name (`NamedUserGroup.MAX_NAME_LENGTH`).
pub const MAX_GROUP_NAME_LENGTH: usize = 100;

/// Prefixes a group name may not start with (`NamedUserGroup.INVALID_NAME_PREFIXES`).
const INVALID_NAME_PREFIXES: [&str; 5] = ["@", "role:", "user:", "stream:", "channel:"];

/// Setting names of the permission checks on a group.
pub(super) const CAN_MANAGE: &str = "can_manage_group";
pub const CAN_ADD_MEMBERS: &str = "can_add_members_group";
pub(super) const CAN_JOIN: &str = "can_join_group";
pub(super) const CAN_LEAVE: &str = "can_leave_group";
pub(super) const CAN_REMOVE_MEMBERS: &str = "can_remove_members_group";

pub(super) fn insufficient_permission() -> ApiError {
    ApiError::bad_request("Insufficient permission")
}

/// The rule of a user-group permission setting.
fn group_permission(name: &str) -> Option<&'static GroupPermission> {
    catalog::USER_GROUP_PERMISSION_SETTINGS.iter().find(|p| p.name == name)
}

/// Whether `user` holds the group's own permission `name`.
fn has_group_permission(state: &RealmState, group: &UserGroup, name: &str, user: UserId) -> bool {
    group_permission(name)
        .is_some_and(|p| state.has_group_permission(&state.group_setting_of(group, name), &p.rule, user))
}

/// A group by id: "Invalid user group" when unknown, "User group is deactivated." when
/// deactivated unless allowed (`get_user_group_by_id_in_realm`).
pub fn find_group(state: &RealmState, id: GroupId, allow_deactivated: bool) -> ApiResult<&UserGroup> {
    let group = state.group(id).ok_or_else(|| ApiError::bad_request("Invalid user group"))?;
    if group.deactivated && !allow_deactivated {
        return Err(ApiError::bad_request("User group is deactivated."));
    }
    Ok(group)
}

/// Zulip's `access_user_group_for_update`: system groups are never changed; managers of
/// all groups and of this group may do anything; others need `permission`.
pub fn access_for_update<'s>(
    state: &'s RealmState,
    id: GroupId,
    user: UserId,
    permission: &str,
    allow_deactivated: bool,
) -> ApiResult<&'s UserGroup> {
    let group = find_group(state, id, allow_deactivated)?;
    if group.is_system_group {
        return Err(insufficient_permission());
    }
    let allowed = has_realm_permission(state, "can_manage_all_groups", user)
        || has_group_permission(state, group, CAN_MANAGE, user)
        || (permission != CAN_MANAGE && has_group_permission(state, group, permission, user));
    if allowed {
        Ok(group)
    } else {
        Err(insufficient_permission())
    }
}

/// Access for a change of one's own membership: `own` (join or leave) or, failing that,
/// `general` (add or remove anyone); `general` alone for changes of others.
pub(super) fn access_for_membership(
    state: &RealmState,
    id: GroupId,
    user: UserId,
    users: &[i64],
    own: &str,
    general: &str,
) -> ApiResult<()> {
    if users == [user.0] && access_for_update(state, id, user, own, true).is_ok() {
        return Ok(());
    }
    access_for_update(state, id, user, general, true).map(|_| ())
}

/// Zulip's `check_user_group_name`.
pub fn check_group_name(name: &str) -> ApiResult<()> {
    if name.trim().is_empty() {
        return Err(ApiError::bad_request("User group name can't be empty!"));
    }
    if name.chars().count() > MAX_GROUP_NAME_LENGTH {
        return Err(ApiError::bad_request(format!(
            "User group name cannot exceed {MAX_GROUP_NAME_LENGTH} characters."
        )));
    }
    if let Some(prefix) = INVALID_NAME_PREFIXES.iter().find(|p| name.starts_with(**p)) {
        return Err(ApiError::bad_request(format!("User group name cannot start with '{prefix}'.")));
    }
    Ok(())
}

/// Refuses a name another group of the realm has.
pub(super) fn check_name_free(state: &RealmState, name: &str, except: Option<GroupId>) -> ApiResult<()> {
    if state.groups().any(|g| g.name == name && Some(g.id) != except) {
        return Err(ApiError::bad_request(format!("User group '{name}' already exists.")));
    }
    Ok(())
}

/// Groups that may become subgroups: every id names a group of the realm ("Invalid user
/// group ID: N" for the first that does not), and none is deactivated.
pub(super) fn potential_subgroups(state: &RealmState, ids: &[i64]) -> ApiResult<Vec<GroupId>> {
    if let Some(missing) = ids.iter().find(|&&id| state.group(GroupId(id)).is_none()) {
        return Err(ApiError::bad_request(format!("Invalid user group ID: {missing}")));
    }
    let unique: BTreeSet<GroupId> = ids.iter().map(|&id| GroupId(id)).collect();
    for &id in &unique {
        find_group(state, id, false)?;
    }
    Ok(unique.into_iter().collect())
}

/// Parses the `can_*_group` parameters given, in Zulip's setting order.
pub(super) fn parse_settings<T>(
    given: &[(String, serde_json::Value)],
    parse: fn(&str, &serde_json::Value) -> ApiResult<T>,
) -> ApiResult<Vec<(&'static GroupPermission, T)>> {
    catalog::USER_GROUP_PERMISSION_SETTINGS
        .iter()
        .filter_map(|p| given.iter().find(|(n, _)| n == p.name).map(|(_, v)| (p, v)))
        .map(|(p, v)| Ok((p, parse(p.name, v)?)))
        .collect()
}
