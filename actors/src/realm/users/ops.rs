//! User administration (spec 4.13-4.16): listing, updating, deactivating and reactivating
//! accounts.
//!
//! Every operation checks its target as Zulip's `access_user_by_id` does, validates the
//! whole request before writing anything (Zulip applies a `PATCH /users/{id}` field by
//! field and can stop half way; Agora either applies all of it or none), commits in one
//! transaction and only then changes memory and returns the events.

use serde_json::{json, Value};

use super::UserRef;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::realm::events::realm_user_update;
use crate::realm::format::{can_access_delivery_email, UserDictOptions};
use crate::realm::model::{Role, User};
use crate::realm::profile_fields::{self, ProfileDataWrites};
use crate::realm::settings;
use crate::realm::state::RealmState;
use crate::store::{self, Store};
use crate::validate;

/// How `access_user` may accept its target (Zulip's `access_user_by_id` flags).
#[derive(Debug, Clone, Copy)]
pub(super) struct Access {
    pub(super) allow_deactivated: bool,
    pub(super) allow_bots: bool,
    /// The acting user must be able to administer the target.
    pub(super) for_admin: bool,
}

/// Finds the target of a request and checks the acting user may act on it, with Zulip's
/// messages and in Zulip's order: lookup, bot, deactivated, administration rights.
pub(super) fn access_user<'a>(
    state: &'a RealmState,
    acting: &User,
    target: &UserRef,
    access: Access,
) -> ApiResult<&'a User> {
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
fn is_last_owner(state: &RealmState, user: &User) -> bool {
    user.role == Role::Owner
        && !user.is_bot
        && state.users().filter(|u| u.is_active && !u.is_bot && u.role == Role::Owner).count() == 1
}

// --- Listing ------------------------------------------------------------------------

/// `GET /users`: every user of the realm as `viewer` may see them (bots and deactivated
/// users included), or only `user_ids` (in id order), by ascending id; written straight
/// to the JSON array the reply carries.
pub fn list_users(
    state: &RealmState,
    viewer: &User,
    options: UserDictOptions,
    user_ids: Option<&[i64]>,
) -> ApiResult<String> {
    let users: Vec<&User> = match user_ids {
        None => state.users().collect(),
        Some(ids) => {
            let mut wanted = Vec::with_capacity(ids.len());
            for &id in ids {
                let user =
                    state.user(UserId(id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID: {id}")))?;
                wanted.push(user);
            }
            wanted.sort_by_key(|u| u.id);
            wanted.dedup_by_key(|u| u.id);
            wanted
        }
    };
    let views: Vec<_> = users.into_iter().map(|u| state.user_view(viewer, u, options)).collect();
    serde_json::to_string(&views).map_err(|e| {
        tracing::error!(error = %e, "could not serialize users");
        ApiError::internal()
    })
}

// --- Updating -----------------------------------------------------------------------

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

/// A validated `PATCH /users/{user_id}`: only what actually changes.
#[derive(Debug, Default)]
struct CheckedUpdate {
    role: Option<Role>,
    full_name: Option<String>,
    new_email: Option<String>,
}

/// `PATCH /users/{user_id}` by `acting`: checks everything in Zulip's order (role value,
/// target, role rules, name, profile data, email), then writes all of it in one
/// transaction, applies it to memory and returns the events in that order.
pub fn update_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
    update: UserUpdate,
    config: &ServerConfig,
    now: i64,
) -> ApiResult<Vec<Outgoing>> {
    // The role's value is checked as the parameter is parsed, before anything else.
    let role =
        match update.role {
            Some(raw) => Some(Role::from_i64(raw).ok_or_else(|| {
                ApiError::bad_request("Invalid role: Value error, Not in the list of possible values")
            })?),
            None => None,
        };
    let acting = state.user_or_err(acting)?.clone();
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let target = access_user(state, &acting, target, access)?.clone();
    let mut checked = CheckedUpdate::default();

    if let Some(role) = role {
        if role != target.role {
            check_role_change(state, &acting, &target, role)?;
            checked.role = Some(role);
        }
    }
    if let Some(name) = update.full_name.filter(|n| !n.trim().is_empty() && *n != target.full_name) {
        // Administrators are not held to `name_changes_disabled`, as in Zulip.
        let name = checked_full_name(state, target.id, &name)?;
        checked.full_name = Some(name).filter(|n| *n != target.full_name);
    }
    let profile_data = match &update.profile_data {
        Some(data) => Some(profile_fields::validate_profile_data(state, &acting, target.id, "profile_data", data)?),
        None => None,
    };
    if let Some(email) = update.new_email {
        checked.new_email = check_new_email(state, &acting, &target, &email)?;
    }

    // The new (real, API) addresses; the visibility they depend on does not change here.
    let new_emails = checked.new_email.map(|email| {
        let mut user = target.clone();
        user.delivery_email = email;
        let api = crate::realm::format::api_email(config, state.realm(), &user);
        (user.delivery_email, api)
    });
    let profile_writes = profile_data.map(|change| ProfileDataWrites::prepare(state, change)).transpose()?;
    store.write(|tx| -> ApiResult<()> {
        if let Some(role) = checked.role {
            store::users::set_role(tx, target.id, role)?;
            let (removed, added) = role_group_changes(state, &target, role, now);
            for group in removed {
                store::groups::remove_members(tx, group, &[target.id])?;
            }
            for group in added {
                store::groups::add_members(tx, group, &[target.id])?;
            }
        }
        if let Some(name) = &checked.full_name {
            store::users::set_full_name(tx, target.id, name)?;
        }
        if let Some((delivery, api)) = &new_emails {
            store::users::set_emails(tx, target.id, delivery, api)?;
        }
        if let Some(writes) = &profile_writes {
            writes.write_values(tx)?;
        }
        Ok(())
    })?;

    let mut events = Vec::new();
    if let Some(role) = checked.role {
        events.extend(apply_role_change(state, &target, role, now));
    }
    if let Some(name) = checked.full_name {
        if let Some(user) = state.user_mut(target.id) {
            user.full_name = name.clone();
        }
        events.push(state.to_everyone(realm_user_update(json!({"user_id": target.id, "full_name": name}))));
    }
    if let Some((delivery, api)) = new_emails {
        events.extend(apply_email_change(state, target.id, delivery, api));
    }
    if let Some(writes) = profile_writes {
        events.extend(crate::realm::Change::apply(writes, state).events);
    }
    tracing::info!(realm.id = %state.realm().id, user.id = %target.id, by = %acting.id, "updated user");
    Ok(events)
}

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

/// Applies a committed role change to memory: Zulip's `realm_user` update, then the
/// system groups' `remove_members` and `add_members`.
fn apply_role_change(state: &mut RealmState, user: &User, role: Role, now: i64) -> Vec<Outgoing> {
    let (removed, added) = role_group_changes(state, user, role, now);
    if let Some(u) = state.user_mut(user.id) {
        u.role = role;
    }
    let mut events = vec![state.to_everyone(realm_user_update(json!({"user_id": user.id, "role": role.as_i64()})))];
    for (op, groups) in [("remove_members", removed), ("add_members", added)] {
        for group in groups {
            match op {
                "remove_members" => state.remove_group_members(group, &[user.id]),
                _ => state.add_group_members(group, &[user.id]),
            }
            let event = Event::new("user_group", json!({"op": op, "group_id": group, "user_ids": [user.id]}));
            events.push(state.to_everyone(event));
        }
    }
    events
}

/// Applies a committed change of real address to the user as it is now (its role or name
/// may just have changed too), and returns Zulip's events for it (shared with
/// `PATCH /settings`).
fn apply_email_change(state: &mut RealmState, user_id: UserId, delivery: String, api: String) -> Vec<Outgoing> {
    let Some(mut user) = state.user(user_id).cloned() else { return Vec::new() };
    user.delivery_email = delivery;
    user.email = api;
    state.put_user(user.clone());
    settings::delivery_email_events(state, &user)
}

// --- Deactivation -------------------------------------------------------------------

/// `DELETE /users/me`: refused for the only active user and the only owner.
pub fn deactivate_own_user(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<StatusChange> {
    let user = state.user_or_err(user_id)?;
    if state.users().filter(|u| u.is_active).count() == 1 {
        return Err(last_user_error(false));
    }
    if is_last_owner(state, user) {
        return Err(last_user_error(true));
    }
    set_active(state, store, user_id, false)
}

/// Zulip's `CannotDeactivateLastUserError`.
fn last_user_error(is_last_owner: bool) -> ApiError {
    let entity = if is_last_owner { "organization owner" } else { "user" };
    ApiError::new(ErrorCode::CannotDeactivateLastUser, 400, format!("Cannot deactivate the only {entity}."))
        .with("is_last_owner", is_last_owner)
        .with("entity", entity)
}

/// `DELETE /users/{user_id}`: administrators deactivate active humans; only owners
/// deactivate owners, and never the last one.
pub fn deactivate_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
) -> ApiResult<StatusChange> {
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: false, allow_bots: false, for_admin: true };
    let target = access_user(state, acting, target, access)?;
    if target.role == Role::Owner && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    if is_last_owner(state, target) {
        return Err(ApiError::bad_request("Cannot deactivate the only organization owner"));
    }
    let id = target.id;
    set_active(state, store, id, false)
}

/// Longest `deactivation_notification_comment`.
const MAX_DEACTIVATION_COMMENT: usize = 2000;

/// The notification comment of `DELETE /users/{user_id}`, checked as the parameter is
/// parsed (before anything else).
pub(super) fn check_deactivation_comment(comment: Option<&str>) -> ApiResult<()> {
    if comment.is_some_and(|c| c.chars().count() > MAX_DEACTIVATION_COMMENT) {
        return Err(ApiError::bad_request(format!(
            "deactivation_notification_comment is too long (limit: {MAX_DEACTIVATION_COMMENT} characters)"
        )));
    }
    Ok(())
}

/// `POST /users/{user_id}/reactivate`.
pub fn reactivate_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
) -> ApiResult<StatusChange> {
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let id = access_user(state, acting, target, access)?.id;
    set_active(state, store, id, true)
}

/// What a change of account status did: the accounts it changed and the events.
#[derive(Debug)]
pub struct StatusChange {
    pub active: bool,
    pub users: Vec<UserId>,
    pub events: Vec<Outgoing>,
}

/// Deactivates or reactivates an account: `realm_user` `update` `is_active` to every
/// active user (the reactivated one included). Deactivating a human also deactivates the
/// bots they own, as Zulip does (reactivation brings back only the account itself). The
/// actor then closes the deactivated accounts' queues; their API keys stop working once it
/// publishes the new snapshot.
pub fn set_active(state: &mut RealmState, store: &Store, user_id: UserId, active: bool) -> ApiResult<StatusChange> {
    let user = state.user_or_err(user_id)?;
    if user.is_active == active {
        return Err(ApiError::bad_request(if active {
            "User is already active"
        } else {
            "User is already deactivated"
        }));
    }
    let mut users = vec![user_id];
    if !active {
        users
            .extend(state.users().filter(|u| u.is_bot && u.is_active && u.bot_owner_id == Some(user_id)).map(|u| u.id));
    }
    store.write(|tx| -> ApiResult<()> {
        for id in &users {
            store::users::set_active(tx, *id, active)?;
        }
        Ok(())
    })?;
    let mut events = Vec::with_capacity(users.len());
    for &id in &users {
        if let Some(user) = state.user_mut(id) {
            user.is_active = active;
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %id, active, "changed account status");
        events.push(state.to_everyone(realm_user_update(json!({"user_id": id, "is_active": active}))));
    }
    Ok(StatusChange { active, users, events })
}
