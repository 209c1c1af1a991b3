//! Group queries answered from the state.

use serde_json::Value;

use super::ops::access::find_group;
use crate::error::{ApiError, ApiResult};
use crate::ids::{GroupId, UserId};
use crate::realm::permissions::require_member;
use crate::realm::state::RealmState;

/// `GET /user_groups`.
pub fn list_groups(state: &RealmState, viewer: UserId, include_deactivated: bool) -> ApiResult<Vec<Value>> {
    require_member(state, viewer)?;
    Ok(state
        .groups()
        .filter(|g| include_deactivated || !g.deactivated)
        .map(|g| Value::Object(state.group_dict(g)))
        .collect())
}

/// `GET /user_groups/{id}/members`: active members, recursive unless `direct_only`.
pub fn group_members(state: &RealmState, viewer: UserId, id: GroupId, direct_only: bool) -> ApiResult<Vec<UserId>> {
    require_member(state, viewer)?;
    let group = find_group(state, id, false)?;
    Ok(if direct_only {
        group.members.iter().copied().filter(|u| state.is_active_user(*u)).collect()
    } else {
        state.recursive_members([id]).into_iter().collect()
    })
}

/// `GET /user_groups/{id}/members/{user_id}` (of a human or a bot).
pub fn is_group_member(
    state: &RealmState,
    viewer: UserId,
    id: GroupId,
    target: UserId,
    direct_only: bool,
) -> ApiResult<bool> {
    require_member(state, viewer)?;
    find_group(state, id, false)?;
    // Bots are users here too since Zulip 12 (feature level 458).
    let user = state.user(target).ok_or_else(|| ApiError::bad_request("No such user"))?;
    if !user.is_active {
        return Err(ApiError::bad_request("User is deactivated"));
    }
    Ok(group_members(state, viewer, id, direct_only)?.contains(&target))
}

/// `GET /user_groups/{id}/subgroups`: recursive (the group itself excluded) unless
/// `direct_only`.
pub fn subgroups_of(state: &RealmState, viewer: UserId, id: GroupId, direct_only: bool) -> ApiResult<Vec<GroupId>> {
    require_member(state, viewer)?;
    let group = find_group(state, id, false)?;
    Ok(if direct_only {
        group.subgroups.iter().copied().collect()
    } else {
        let mut all = state.recursive_subgroups(group.subgroups.iter().copied());
        all.remove(&id);
        all.into_iter().collect()
    })
}
