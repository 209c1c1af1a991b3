//! The target of a request about a user, and who may act on it (Zulip's
//! `access_user_by_id`).

use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::format::can_access_delivery_email;
use crate::realm::model::{Role, User};
use crate::realm::state::RealmState;

/// A user as named in a request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserRef {
    Id(UserId),
    /// An API email, or a real email the viewer may see.
    Email(String),
}

/// How `access_user` may accept its target (Zulip's `access_user_by_id` flags).
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub allow_deactivated: bool,
    pub allow_bots: bool,
    /// The acting user must be able to administer the target.
    pub for_admin: bool,
}

/// Finds the target of a request and checks the acting user may act on it, with Zulip's
/// messages and in Zulip's order: lookup, bot, deactivated, administration rights.
pub fn access_user<'a>(state: &'a RealmState, acting: &User, target: &UserRef, access: Access) -> ApiResult<&'a User> {
    let no_such_user = || ApiError::bad_request("No such user");
    let user = match target {
        UserRef::Id(id) => state.user(*id),
        UserRef::Email(email) => state
            .user_by_api_email(email)
            .or_else(|| state.user_by_delivery_email(email).filter(|t| can_access_delivery_email(acting, t))),
    }
    .ok_or_else(no_such_user)?;
    if user.is_bot && !access.allow_bots {
        return Err(no_such_user());
    }
    if !user.is_active && !access.allow_deactivated {
        return Err(ApiError::bad_request("User is deactivated"));
    }
    if access.for_admin && !can_admin_user(acting, user) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    Ok(user)
}

/// Zulip's `can_admin_user`: administrators administer everyone, owners of a bot their bot.
fn can_admin_user(acting: &User, target: &User) -> bool {
    acting.role.is_admin() || (target.is_bot && target.bot_owner_id == Some(acting.id))
}

/// Whether `user` is the organization's only active human owner (Zulip's
/// `check_last_owner`).
pub fn is_last_owner(state: &RealmState, user: &User) -> bool {
    user.role == Role::Owner
        && !user.is_bot
        && state.users().filter(|u| u.is_active && !u.is_bot && u.role == Role::Owner).count() == 1
}
