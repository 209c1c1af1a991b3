//! Who may do what: Zulip's role requirements and the organization's group permissions,
//! shared by every feature (a leaf: it imports no feature).

use super::catalog::{self, Kind};
use super::group_setting::GroupSettingValue;
use super::model::{Role, User};
use super::state::RealmState;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;

/// Zulip's `require_realm_admin`: owners and administrators only.
pub fn require_admin(role: Role) -> ApiResult<()> {
    if role.is_admin() {
        Ok(())
    } else {
        Err(ApiError::must_be_admin())
    }
}

/// Zulip's `require_member_or_admin`: the acting user, unless a guest.
pub fn require_member(state: &RealmState, user: UserId) -> ApiResult<&User> {
    let user = state.user(user).ok_or_else(ApiError::internal)?;
    if user.role == Role::Guest {
        return Err(ApiError::bad_request("Not allowed for guest users"));
    }
    Ok(user)
}

/// Zulip's `human_users_only`: bots are refused.
pub fn require_human(is_bot: bool) -> ApiResult<()> {
    if is_bot {
        Err(ApiError::humans_only())
    } else {
        Ok(())
    }
}

/// Whether a user may create accounts through the API: administrators holding
/// `can_create_users` (Zulip's `require_realm_admin` plus its own check).
pub fn authorize_user_creation(role: Role, can_create_users: bool) -> ApiResult<()> {
    require_admin(role)?;
    if !can_create_users {
        return Err(ApiError::bad_request("User not authorized to create users"));
    }
    Ok(())
}

/// Whether `user` holds the organization's group permission `name` (`has_permission`).
pub fn has_realm_permission(state: &RealmState, name: &str, user: UserId) -> bool {
    let Some(setting) = catalog::realm_setting(name) else { return false };
    let Kind::Group(rule) = setting.kind else { return false };
    GroupSettingValue::from_json(&setting.value(&state.realm().settings, Some(state)))
        .is_some_and(|value| state.has_group_permission(&value, &rule, user))
}
