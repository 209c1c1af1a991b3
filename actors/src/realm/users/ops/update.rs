//! `PATCH /users/{user_id}`: an administrator changes a user's role, name, real email
//! address and profile data.
//!
//! The whole request is validated before anything is written (Zulip applies it field by
//! field and can stop half way; Agora applies all of it or none).

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::access::{access_user, is_last_owner, Access, UserRef};
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::realm::events::realm_user_update;
use crate::realm::format::api_email;
use crate::realm::model::{Role, User};
use crate::realm::profile_fields::{validate_profile_data, ProfileDataWrites};
use crate::realm::settings::format::delivery_email_events;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate;

/// The fields of `PATCH /users/{user_id}`; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserUpdate {
    pub full_name: Option<String>,
    /// The wire value (100..600), checked here.
    pub role: Option<i64>,
    /// `profile_data` as given: a list of `{"id", "value"}` objects.
    pub profile_data: Option<Vec<Value>>,
    pub new_email: Option<String>,
}

/// A new role and the system groups it moves the user out of and into.
#[derive(Debug, Clone)]
struct RoleMove {
    role: Role,
    removed: Vec<GroupId>,
    added: Vec<GroupId>,
}

/// A planned `PATCH /users/{user_id}`: only what actually changes.
#[derive(Debug, Clone)]
pub struct UserEdit {
    /// `None` for an administrator's command outside the API.
    acting: Option<UserId>,
    target: UserId,
    role: Option<RoleMove>,
    full_name: Option<String>,
    /// The new (real, API) addresses.
    emails: Option<(String, String)>,
    profile: Option<ProfileDataWrites>,
}

/// Plans `PATCH /users/{user_id}` by `acting`, checking everything in Zulip's order: the
/// role's value, the target, the role rules, the name, the profile data, the email.
pub fn plan_update(
    state: &RealmState,
    config: &ServerConfig,
    acting: UserId,
    target: &UserRef,
    update: UserUpdate,
    now: i64,
) -> ApiResult<UserEdit> {
    // The role's value is checked as the parameter is parsed, before anything else.
    let role = match update.role {
        Some(raw) => Some(Role::from_i64(raw).ok_or_else(|| ApiError::not_in_list("role"))?),
        None => None,
    };
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let target = access_user(state, acting, target, access)?;
    let mut edit = UserEdit {
        acting: Some(acting.id),
        target: target.id,
        role: None,
        full_name: None,
        emails: None,
        profile: None,
    };

    if let Some(role) = role.filter(|r| *r != target.role) {
        check_role_change(state, acting, target, role)?;
        let (removed, added) = role_group_changes(state, target, role, now);
        edit.role = Some(RoleMove { role, removed, added });
    }
    if let Some(name) = update.full_name.filter(|n| !n.trim().is_empty() && *n != target.full_name) {
        // Administrators are not held to `name_changes_disabled`, as in Zulip.
        let name = checked_full_name(state, target.id, &name)?;
        edit.full_name = Some(name).filter(|n| *n != target.full_name);
    }
    let profile_data = match &update.profile_data {
        Some(data) => Some(validate_profile_data(state, acting, target.id, "profile_data", data)?),
        None => None,
    };
    if let Some(email) = update.new_email {
        // The API address follows; the visibility it depends on does not change here.
        edit.emails = check_new_email(state, acting, target, &email)?.map(|email| {
            let user = User { delivery_email: email, ..target.clone() };
            let api = api_email(config, state.realm(), &user);
            (user.delivery_email, api)
        });
    }
    edit.profile = profile_data.map(|change| ProfileDataWrites::prepare(state, change)).transpose()?;
    Ok(edit)
}

/// Plans a role change made by the server's administrator (`agora change-role`, as
/// Zulip's `manage.py change_user_role`): no permission applies but the rule that an
/// organization keeps an owner; the system groups follow the role as through the API.
pub fn plan_role(state: &RealmState, target: UserId, role: Role, now: i64) -> ApiResult<UserEdit> {
    let user = state.user_or_err(target)?;
    if user.role == role {
        return Err(ApiError::bad_request("User already has this role."));
    }
    if is_last_owner(state, user) {
        return Err(ApiError::bad_request("The owner permission cannot be removed from the only organization owner."));
    }
    let (removed, added) = role_group_changes(state, user, role, now);
    Ok(UserEdit {
        acting: None,
        target,
        role: Some(RoleMove { role, removed, added }),
        full_name: None,
        emails: None,
        profile: None,
    })
}

/// A deleted profile (`DELETE /users/{user_id}` with `delete_profile`): the name becomes
/// "Deleted user", unchecked (several may bear it), and nothing else changes.
pub fn plan_deleted_profile(state: &RealmState, acting: UserId, target: UserId) -> ApiResult<UserEdit> {
    let user = state.user_or_err(target)?;
    Ok(UserEdit {
        acting: Some(acting),
        target,
        role: None,
        full_name: Some(DELETED_USER_NAME.to_owned()).filter(|n| *n != user.full_name),
        emails: None,
        profile: None,
    })
}

/// The name a deleted profile takes.
pub const DELETED_USER_NAME: &str = "Deleted user";

/// Zulip's rules for changing a role: only owners touch the owner role, the last owner
/// keeps it, and (as the specification's example error says) a guest does not become an
/// administrator or owner in one step.
fn check_role_change(state: &RealmState, acting: &User, target: &User, role: Role) -> ApiResult<()> {
    if (role == Role::Owner || target.role == Role::Owner) && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    if !acting.role.is_admin() {
        return Err(ApiError::must_be_admin());
    }
    if target.role == Role::Owner && is_last_owner(state, target) {
        return Err(ApiError::bad_request("The owner permission cannot be removed from the only organization owner."));
    }
    if target.role == Role::Guest && role.is_admin() {
        return Err(ApiError::bad_request("Guests cannot be organization administrators"));
    }
    Ok(())
}

/// Zulip's `check_full_name` for a name `user_id` is to have: the format rules, and no
/// other user with the same name (case-insensitively) when the organization has
/// `require_unique_names`. Returns the trimmed name.
pub fn checked_full_name(state: &RealmState, user_id: UserId, raw: &str) -> ApiResult<String> {
    let name = validate::full_name(raw)?;
    let required = state.realm().settings.get("require_unique_names").and_then(Value::as_bool).unwrap_or(false);
    let lower = name.to_lowercase();
    if required && state.users().any(|u| u.id != user_id && u.full_name.to_lowercase() == lower) {
        return Err(ApiError::bad_request("Unique names required in this organization."));
    }
    Ok(name)
}

/// Checks a `new_email`: administrators holding `can_change_user_emails` (as Zulip's
/// code has it; the specification says owners, but the permission is granted per user), a
/// valid address, not taken. `None` when it is the target's current address.
fn check_new_email(state: &RealmState, acting: &User, target: &User, email: &str) -> ApiResult<Option<String>> {
    if !acting.role.is_admin() || !acting.can_change_user_emails {
        return Err(ApiError::bad_request("User not authorized to change user emails"));
    }
    let email = email.trim();
    if !validate::is_valid_email(email) {
        return Err(ApiError::bad_request("Invalid new email address."));
    }
    if email == target.delivery_email {
        return Ok(None);
    }
    if state.email_taken(email, Some(target.id)) {
        return Err(ApiError::bad_request("New email value error: Already has an account."));
    }
    Ok(Some(email.to_owned()))
}

/// The system groups `user` leaves and joins as its role becomes `role`: from the ones it
/// is a direct member of now to the ones the new role puts it in.
fn role_group_changes(state: &RealmState, user: &User, role: Role, now: i64) -> (Vec<GroupId>, Vec<GroupId>) {
    let mut old: Vec<GroupId> =
        state.groups().filter(|g| g.is_system_group && g.members.contains(&user.id)).map(|g| g.id).collect();
    // Zulip moves the role's own group first, then `role:fullmembers`.
    let own = state.system_group_id(user.role.system_group());
    old.sort_by_key(|g| Some(*g) != own);
    let new = state.role_groups(role, user.date_joined, now);
    let removed = old.iter().filter(|g| !new.contains(g)).copied().collect();
    let added = new.iter().filter(|g| !old.contains(g)).copied().collect();
    (removed, added)
}

impl Change for UserEdit {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let id = self.target;
        if let Some(RoleMove { role, removed, added }) = &self.role {
            store::users::set_role(tx, id, *role)?;
            for group in removed {
                store::groups::remove_members(tx, *group, &[id])?;
            }
            for group in added {
                store::groups::add_members(tx, *group, &[id])?;
            }
        }
        if let Some(name) = &self.full_name {
            store::users::set_full_name(tx, id, name)?;
        }
        if let Some((delivery, api)) = &self.emails {
            store::users::set_emails(tx, id, delivery, api)?;
        }
        if let Some(writes) = &self.profile {
            writes.write_values(tx)?;
        }
        Ok(())
    }

    /// The events in the order of the checks: the role (Zulip's `realm_user` update, then
    /// the system groups' `remove_members` and `add_members`), the name, the address, the
    /// profile data.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let id = self.target;
        let mut events = Vec::new();
        if let Some(moved) = self.role {
            events.extend(apply_role(state, id, moved));
        }
        if let Some(name) = self.full_name {
            if let Some(user) = state.user_mut(id) {
                user.full_name = name.clone();
            }
            events.push(state.to_everyone(realm_user_update(json!({"user_id": id, "full_name": name}))));
        }
        if let Some((delivery, api)) = self.emails {
            events.extend(apply_email_change(state, id, delivery, api));
        }
        if let Some(writes) = self.profile {
            events.extend(writes.apply(state).events);
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %id, by = ?self.acting.map(|a| a.0), "updated user");
        Applied::events(events).with_auth()
    }
}

/// A committed role change in memory: the role, then the system groups, with their events.
fn apply_role(state: &mut RealmState, id: UserId, RoleMove { role, removed, added }: RoleMove) -> Vec<Outgoing> {
    if let Some(u) = state.user_mut(id) {
        u.role = role;
    }
    let mut events = vec![state.to_everyone(realm_user_update(json!({"user_id": id, "role": role.as_i64()})))];
    for group in removed {
        state.remove_group_members(group, &[id]);
        let event = Event::new("user_group", json!({"op": "remove_members", "group_id": group, "user_ids": [id]}));
        events.push(state.to_everyone(event));
    }
    for group in added {
        state.add_group_members(group, &[id]);
        let event = Event::new("user_group", json!({"op": "add_members", "group_id": group, "user_ids": [id]}));
        events.push(state.to_everyone(event));
    }
    events
}

/// A committed change of real address, applied to the user as it is now (its role or name
/// may just have changed too), with Zulip's events for it (as `PATCH /settings` sends them).
fn apply_email_change(state: &mut RealmState, id: UserId, delivery: String, api: String) -> Vec<Outgoing> {
    let Some(mut user) = state.user(id).cloned() else { return Vec::new() };
    user.delivery_email = delivery;
    user.email = api;
    state.put_user(user.clone());
    delivery_email_events(state, &user)
}
