//! User administration (spec 4.13-4.16): listing, updating, deactivating and reactivating
//! accounts; operations, messages and handlers.
//!
//! Every operation checks its target as Zulip's `access_user_by_id` does, validates the
//! whole request before writing anything (Zulip applies a `PATCH /users/{id}` field by
//! field and can stop half way; Agora either applies all of it or none), commits in one
//! transaction and only then changes memory and returns the events.

use actix::prelude::*;
use serde_json::{json, Map, Value};

use super::actor::RealmActor;
use super::format::{can_access_delivery_email, UserDictOptions};
use super::messages::UserRef;
use super::model::{Role, User};
use super::ops;
use super::profile_fields;
use super::settings;
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::store::{self, Store};
use crate::validate;

/// How `access_user` may accept its target (Zulip's `access_user_by_id` flags).
#[derive(Debug, Clone, Copy)]
struct Access {
    allow_deactivated: bool,
    allow_bots: bool,
    /// The acting user must be able to administer the target.
    for_admin: bool,
}

/// Finds the target of a request and checks the acting user may act on it, with Zulip's
/// messages and in Zulip's order: lookup, bot, deactivated, administration rights.
fn access_user<'a>(state: &'a RealmState, acting: &User, target: &UserRef, access: Access) -> ApiResult<&'a User> {
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

/// `PATCH /users/{user_id}` by `acting`: checks everything in Zulip's order (target,
/// role, name, profile data, email), then applies it: role, name and email in one
/// transaction, the profile data in the next.
pub fn update_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
    update: UserUpdate,
    config: &ServerConfig,
    now: i64,
) -> ApiResult<Vec<Outgoing>> {
    let acting = state.user_or_err(acting)?.clone();
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let target = access_user(state, &acting, target, access)?.clone();
    let mut checked = CheckedUpdate::default();

    if let Some(raw) = update.role {
        let role = Role::from_i64(raw).ok_or_else(|| ApiError::bad_request("Invalid role"))?;
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

    let with_new_email = checked.new_email.map(|email| {
        let mut user = target.clone();
        user.delivery_email = email;
        user.email = ops::api_email(config, state.realm(), &user);
        user
    });
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
        if let Some(user) = &with_new_email {
            store::users::set_emails(tx, user.id, &user.delivery_email, &user.email)?;
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
        events.push(to_everyone(state, json!({"user_id": target.id, "full_name": name})));
    }
    if let Some(user) = with_new_email {
        events.extend(apply_email_change(state, user));
    }
    // Validated above with the rest; written in its own transaction.
    if let Some(change) = profile_data {
        events.extend(profile_fields::apply_profile_data(state, store, change)?);
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
    if state.user_by_delivery_email(email).is_some_and(|u| u.id != target.id) {
        return Err(ApiError::bad_request("New email value error: Already has an account."));
    }
    Ok(Some(email.to_owned()))
}

/// The system groups `user` leaves and joins as its role becomes `role`.
fn role_group_changes(state: &RealmState, user: &User, role: Role, now: i64) -> (Vec<GroupId>, Vec<GroupId>) {
    let old = state.role_groups(user.role, user.date_joined, now);
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
    let mut events = vec![to_everyone(state, json!({"user_id": user.id, "role": role.as_i64()}))];
    for (op, groups) in [("remove_members", removed), ("add_members", added)] {
        for group in groups {
            match op {
                "remove_members" => state.remove_group_members(group, &[user.id]),
                _ => state.add_group_members(group, &[user.id]),
            }
            let event = Event::new("user_group", json!({"op": op, "group_id": group, "user_ids": [user.id]}));
            events.push(Outgoing::to(state.active_user_ids(), event));
        }
    }
    events
}

/// Applies a committed change of real address: the user's new emails, and Zulip's events
/// for it (shared with `PATCH /settings`).
fn apply_email_change(state: &mut RealmState, updated: User) -> Vec<Outgoing> {
    state.put_user(updated.clone());
    settings::delivery_email_events(state, &updated)
}

/// A `realm_user` `update` event with `person`.
pub(super) fn realm_user_update(person: Value) -> Event {
    Event::new("realm_user", json!({"op": "update", "person": person}))
}

/// A `realm_user` `update` for every active user.
fn to_everyone(state: &RealmState, person: Value) -> Outgoing {
    Outgoing::to(state.active_user_ids(), realm_user_update(person))
}

// --- Deactivation -------------------------------------------------------------------

/// `DELETE /users/me`: refused for the only active user and the only owner.
pub fn deactivate_own_user(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<Vec<Outgoing>> {
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
/// deactivate owners, and never the last one. Returns the accounts deactivated.
pub fn deactivate_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
) -> ApiResult<(Vec<UserId>, Vec<Outgoing>)> {
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: false, allow_bots: false, for_admin: true };
    let target = access_user(state, acting, target, access)?;
    if target.role == Role::Owner && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    if is_last_owner(state, target) {
        return Err(ApiError::bad_request("Cannot deactivate the only organization owner"));
    }
    let gone = deactivated_with(state, target.id);
    Ok((gone, set_active(state, store, target.id, false)?))
}

/// `POST /users/{user_id}/reactivate`.
pub fn reactivate_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
) -> ApiResult<Vec<Outgoing>> {
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let id = access_user(state, acting, target, access)?.id;
    set_active(state, store, id, true)
}

/// Deactivates or reactivates an account: `realm_user` `update` `is_active` to every
/// active user (the reactivated one included). Deactivating a human also deactivates the
/// bots they own, as Zulip does (reactivation brings back only the account itself). The
/// caller closes the deactivated accounts' queues ([`deactivated_with`] names them);
/// their API keys stop working once the actor publishes the new snapshot.
pub fn set_active(state: &mut RealmState, store: &Store, user_id: UserId, active: bool) -> ApiResult<Vec<Outgoing>> {
    let user = state.user_or_err(user_id)?;
    if user.is_active == active {
        return Err(ApiError::bad_request(if active {
            "User is already active"
        } else {
            "User is already deactivated"
        }));
    }
    let changed = if active { vec![user_id] } else { deactivated_with(state, user_id) };
    store.write(|tx| -> ApiResult<()> {
        for id in &changed {
            store::users::set_active(tx, *id, active)?;
        }
        Ok(())
    })?;
    let mut events = Vec::with_capacity(changed.len());
    for id in changed {
        if let Some(user) = state.user_mut(id) {
            user.is_active = active;
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %id, active, "changed account status");
        events.push(to_everyone(state, json!({"user_id": id, "is_active": active})));
    }
    Ok(events)
}

/// The accounts deactivating `user_id` deactivates: itself, then its active bots.
pub fn deactivated_with(state: &RealmState, user_id: UserId) -> Vec<UserId> {
    let bots = state.users().filter(|u| u.is_bot && u.is_active && u.bot_owner_id == Some(user_id)).map(|u| u.id);
    std::iter::once(user_id).chain(bots).collect()
}

// --- Messages and handlers ----------------------------------------------------------

/// `GET /users/me`: the requester's own user object with `max_message_id`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct GetOwnProfile {
    pub user_id: UserId,
}

/// `GET /users/{id}` and `GET /users/{email}`: one user as `viewer` may see it.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct GetUser {
    pub viewer: UserId,
    pub target: UserRef,
    pub options: UserDictOptions,
}

/// `GET /users`: the JSON array of `members`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct ListUsers {
    pub viewer: UserId,
    pub options: UserDictOptions,
    pub user_ids: Option<Vec<i64>>,
}

/// `PATCH /users/{user_id}` (or `/users/{email}`).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUser {
    pub acting: UserId,
    pub target: UserRef,
    pub update: UserUpdate,
}

/// `DELETE /users/me`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateOwnUser {
    pub user_id: UserId,
}

/// `DELETE /users/{user_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateUser {
    pub acting: UserId,
    pub target: UserRef,
}

/// `POST /users/{user_id}/reactivate`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReactivateUser {
    pub acting: UserId,
    pub target: UserRef,
}

impl Handler<GetOwnProfile> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetOwnProfile, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        // No messages exist yet; Zulip reports -1 for a user who has none.
        Ok(self.state.own_profile(user, -1))
    }
}

impl Handler<GetUser> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetUser, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        let access = Access { allow_deactivated: true, allow_bots: true, for_admin: false };
        let target = access_user(&self.state, viewer, &msg.target, access)?;
        Ok(self.state.user_dict(viewer, target, msg.options))
    }
}

impl Handler<ListUsers> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: ListUsers, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        list_users(&self.state, viewer, msg.options, msg.user_ids.as_deref())
    }
}

impl Handler<UpdateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUser, _: &mut Self::Context) -> Self::Result {
        let (state, config) = (&mut self.state, &self.config);
        let events = update_user(state, &self.store, msg.acting, &msg.target, msg.update, config, ops::now())?;
        self.committed(events);
        Ok(())
    }
}

impl Handler<DeactivateOwnUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateOwnUser, _: &mut Self::Context) -> Self::Result {
        let gone = deactivated_with(&self.state, msg.user_id);
        let events = deactivate_own_user(&mut self.state, &self.store, msg.user_id)?;
        self.committed(events);
        for user in gone {
            self.close_queues_of(user);
        }
        Ok(())
    }
}

impl Handler<DeactivateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateUser, _: &mut Self::Context) -> Self::Result {
        let (gone, events) = deactivate_user(&mut self.state, &self.store, msg.acting, &msg.target)?;
        self.committed(events);
        for user in gone {
            self.close_queues_of(user);
        }
        Ok(())
    }
}

impl Handler<ReactivateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReactivateUser, _: &mut Self::Context) -> Self::Result {
        let events = reactivate_user(&mut self.state, &self.store, msg.acting, &msg.target)?;
        self.committed(events);
        Ok(())
    }
}
