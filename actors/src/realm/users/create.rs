//! Creating accounts, and replacing API keys: planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::realm::format::{api_email_in, can_access_delivery_email, UserDictOptions};
use crate::realm::model::{EmailVisibility, Realm, Role, User};
use crate::realm::permissions::authorize_user_creation;
use crate::realm::state::RealmState;
use crate::realm::{commit, Applied, Change};
use crate::secrets::new_api_key;
use crate::store::{self, Store};
use crate::validate;

/// An account to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUser {
    /// The real (delivery) email address.
    pub email: String,
    pub full_name: String,
    pub role: Role,
    /// argon2 PHC string, hashed by the caller off the actor thread; `None` for no password.
    pub password_hash: Option<String>,
    /// `Some(bot_type)` for bots.
    pub bot_type: Option<i64>,
    pub bot_owner_id: Option<UserId>,
    pub can_create_users: bool,
    pub can_change_user_emails: bool,
}

impl NewUser {
    /// A human account with a password and no special permissions.
    pub fn human(email: &str, full_name: &str, role: Role, password_hash: Option<String>) -> Self {
        NewUser {
            email: email.to_owned(),
            full_name: full_name.to_owned(),
            role,
            password_hash,
            bot_type: None,
            bot_owner_id: None,
            can_create_users: false,
            can_change_user_emails: false,
        }
    }
}

/// What creating an account returns to its caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedUser {
    pub user_id: UserId,
    pub api_key: String,
}

/// Rules every new account follows, whoever creates it.
pub fn validate_new_user(new: &NewUser) -> ApiResult<()> {
    validate::full_name(&new.full_name)?;
    if !validate::is_valid_email(new.email.trim()) {
        return Err(ApiError::bad_request("Bad name or username"));
    }
    Ok(())
}

/// The checks of an account to create in an existing organization, in Zulip's order:
/// name, address, address in use.
pub fn check_new_user(state: &RealmState, new: &NewUser) -> ApiResult<()> {
    if state.realm().deactivated {
        return Err(ApiError::bad_request("This organization has been deactivated"));
    }
    validate_new_user(new)?;
    if state.email_taken(new.email.trim(), None) {
        return Err(ApiError::bad_request("Email is already in use."));
    }
    Ok(())
}

/// A new account's personal settings: a copy of the organization's current defaults
/// (`email_address_visibility` has its own column).
fn new_user_settings(realm: &Realm) -> Map<String, Value> {
    realm
        .user_defaults
        .iter()
        .filter(|(k, _)| *k != "email_address_visibility")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A new account, planned: its row (its id and API email come with the write) and the
/// system groups it joins.
#[derive(Debug, Clone)]
pub struct NewAccount {
    user: User,
    groups: Vec<GroupId>,
    /// The domain of hidden API emails (`user<ID>@<domain>`).
    email_domain: String,
}

/// Plans an account in an organization (checked or not by the caller).
pub fn plan_account(state: &RealmState, config: &ServerConfig, new: &NewUser, now: i64) -> NewAccount {
    let realm = state.realm();
    let visibility = if new.bot_type.is_some() { EmailVisibility::Everyone } else { realm.default_email_visibility() };
    let api_key = new_api_key();
    let user = User {
        id: UserId(0),
        realm_id: realm.id,
        // A placeholder as unique as the key until the id is known.
        email: format!("pending-{api_key}"),
        delivery_email: new.email.trim().to_owned(),
        full_name: new.full_name.trim().to_owned(),
        role: new.role,
        is_active: true,
        is_bot: new.bot_type.is_some(),
        bot_type: new.bot_type,
        bot_owner_id: new.bot_owner_id,
        timezone: String::new(),
        date_joined: now,
        avatar_source: crate::realm::catalog::default_avatar_source(state.realm()),
        avatar_version: 1,
        api_key,
        password_hash: new.password_hash.clone(),
        can_create_users: new.can_create_users,
        can_change_user_emails: new.can_change_user_emails,
        email_address_visibility: visibility,
        settings: new_user_settings(realm),
        profile_data: Default::default(),
        is_imported_stub: false,
        first_login_pending: false,
        self_edited_settings: Default::default(),
    };
    let groups = state.role_groups(user.role, now, now);
    NewAccount { user, groups, email_domain: config.fake_email_domain(&realm.subdomain) }
}

/// Plans an account in an existing organization, with Zulip's checks.
pub fn plan_create_user(state: &RealmState, config: &ServerConfig, new: &NewUser, now: i64) -> ApiResult<NewAccount> {
    check_new_user(state, new)?;
    Ok(plan_account(state, config, new, now))
}

/// Plans `POST /users` by `acting`, in Zulip's order: the right to create accounts
/// (administrators holding `can_create_users`), the new account's checks, then the
/// password's strength (measured, unhashed, by the HTTP layer; a weak password is never
/// hashed).
pub fn plan_create_user_as(
    state: &RealmState,
    config: &ServerConfig,
    acting: &User,
    new: &NewUser,
    password_too_weak: bool,
    now: i64,
) -> ApiResult<NewAccount> {
    authorize_user_creation(acting.role, acting.can_create_users)?;
    check_new_user(state, new)?;
    if password_too_weak {
        return Err(ApiError::bad_request("The password is too weak."));
    }
    let mut account = plan_create_user(state, config, new, now)?;
    // Its `date_joined` becomes the time of its first login (FL 475).
    account.user.first_login_pending = new.bot_type.is_none();
    Ok(account)
}

impl NewAccount {
    /// The account's row once written.
    pub fn user(&self) -> &User {
        &self.user
    }
}

impl Change for NewAccount {
    type Output = CreatedUser;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.user.id = store::users::insert(tx, &self.user).map_err(|e| {
            if e.is_unique_violation() {
                ApiError::bad_request("Email is already in use.")
            } else {
                e.into()
            }
        })?;
        self.user.email = api_email_in(&self.email_domain, &self.user);
        store::users::set_email(tx, self.user.id, &self.user.email)?;
        for group in &self.groups {
            store::groups::add_members(tx, *group, &[self.user.id])?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<CreatedUser> {
        let user = self.user;
        for group in &self.groups {
            state.add_group_members(*group, &[user.id]);
        }
        state.put_user(user.clone());
        tracing::info!(realm.id = %state.realm().id, user.id = %user.id, "created user");
        let events = user_created_events(state, &user, &self.groups);
        Applied::new(CreatedUser { user_id: user.id, api_key: user.api_key }, events).with_auth()
    }
}

/// Zulip's `notify_created_user` and system-group membership events: the new user's
/// object goes to every active user, with the real email only to those allowed to see it.
fn user_created_events(state: &RealmState, user: &User, groups: &[GroupId]) -> Vec<Outgoing> {
    let opts = UserDictOptions { client_gravatar: false, include_custom_profile_fields: true };
    let active = state.active_user_ids();
    let mut events = Vec::new();
    if user.email_address_visibility == EmailVisibility::Everyone {
        // Everyone may see the address (the default): one event, to every active user,
        // without looking at each of them.
        if let Some(viewer) = active.first().and_then(|id| state.user(*id)) {
            let person = state.user_dict(viewer, user, opts);
            events.push(Outgoing::to(active.clone(), Event::new("realm_user", json!({"op": "add", "person": person}))));
        }
    } else {
        let mut with_access: Option<(Map<String, Value>, Vec<UserId>)> = None;
        let mut without_access: Option<(Map<String, Value>, Vec<UserId>)> = None;
        for viewer in active.iter().filter_map(|id| state.user(*id)) {
            let slot = if can_access_delivery_email(viewer, user) { &mut with_access } else { &mut without_access };
            slot.get_or_insert_with(|| (state.user_dict(viewer, user, opts), Vec::new())).1.push(viewer.id);
        }
        events.extend([with_access, without_access].into_iter().flatten().map(|(person, users)| {
            Outgoing::to(users, Event::new("realm_user", json!({"op": "add", "person": person})))
        }));
    }
    for group in groups {
        events.push(Outgoing::to(
            active.clone(),
            Event::new("user_group", json!({"op": "add_members", "group_id": group, "user_ids": [user.id]})),
        ));
    }
    events
}

/// A user's new API key: the old one stops working once applied.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    user_id: UserId,
    api_key: String,
    /// The `device` remove events of the user's client devices, removed with the old key.
    events: Vec<Outgoing>,
}

/// Plans a new API key for a user of the organization.
pub fn plan_new_api_key(state: &RealmState, user_id: UserId) -> ApiResult<NewApiKey> {
    state.user_or_err(user_id)?;
    Ok(NewApiKey { user_id, api_key: new_api_key(), events: Vec::new() })
}

/// A human replacing their own key (`POST /users/me/api_key/regenerate`); bots' keys are
/// managed by their owners.
pub fn plan_own_new_api_key(state: &RealmState, user_id: UserId) -> ApiResult<NewApiKey> {
    if state.user_or_err(user_id)?.is_bot {
        return Err(ApiError::humans_only());
    }
    plan_new_api_key(state, user_id)
}

impl NewApiKey {
    /// Whose key it is.
    pub fn user_id(&self) -> UserId {
        self.user_id
    }
}

impl Change for NewApiKey {
    type Output = String;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::users::set_api_key(tx, self.user_id, &self.api_key)?;
        // As Zulip: a new key logs every device out, so their push registrations go.
        store::push::clear_devices(tx, self.user_id, crate::clock::now_micros() / 1000)?;
        // And since feature level 492 its client devices with their E2EE registrations.
        self.events = crate::realm::push::devices::remove_all(tx, self.user_id)?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<String> {
        if let Some(user) = state.user_mut(self.user_id) {
            user.api_key = self.api_key.clone();
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %self.user_id, "regenerated API key");
        Applied::new(self.api_key, self.events).with_auth()
    }
}

/// Creates an account outside any actor: the command-line tools on a stopped server, and
/// tests. The events are returned (nobody is listening).
pub fn create_user(
    state: &mut RealmState,
    store: &Store,
    config: &ServerConfig,
    new: NewUser,
    now: i64,
) -> ApiResult<(CreatedUser, Vec<Outgoing>)> {
    let change = plan_create_user(state, config, &new, now)?;
    let applied = commit(state, store, change)?;
    Ok((applied.output, applied.events))
}

/// Replaces a user's API key outside any actor (tests).
pub fn regenerate_api_key(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<String> {
    let change = plan_new_api_key(state, user_id)?;
    Ok(commit(state, store, change)?.output)
}

/// A human replacing their own key, outside any actor (tests).
pub fn regenerate_own_api_key(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<String> {
    let change = plan_own_new_api_key(state, user_id)?;
    Ok(commit(state, store, change)?.output)
}
