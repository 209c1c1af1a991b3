//! The operations that change an organization: validate against the state, write to
//! SQLite in one `BEGIN IMMEDIATE` transaction, then apply the change to memory and return
//! the events it causes.
//!
//! The realm actor calls these in mailbox order. The command-line tools call the same
//! functions on a freshly loaded state when no server is running, so both paths share
//! every rule.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::format::{can_access_delivery_email, UserDictOptions};
use super::model::{EmailVisibility, Realm, Role, SystemGroup, User, UserGroup};
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, RealmId, UserId};
use crate::secrets::new_api_key;
use crate::store::{self, Store, StoreError};
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

/// An organization to create, with its first owner.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRealm {
    pub subdomain: String,
    pub name: String,
    pub owner: NewUser,
}

/// What creating an organization returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedRealm {
    pub realm_id: RealmId,
    pub owner: CreatedUser,
}

pub use crate::clock::now;

/// Whether a SQLite error is a UNIQUE constraint violation (not CHECK or FOREIGN KEY).
fn is_unique_violation(err: &StoreError) -> bool {
    matches!(err, StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

/// Creates an organization: the realm row, its system groups and its first owner, in one
/// transaction. Returns the loaded state of the new realm.
pub fn create_realm(
    store: &Store,
    config: &ServerConfig,
    new: NewRealm,
    now: i64,
) -> ApiResult<(CreatedRealm, RealmState)> {
    validate::subdomain(&new.subdomain)?;
    let name = validate::realm_name(&new.name)?;
    let owner = NewUser { role: Role::Owner, ..new.owner };
    validate_new_user(&owner)?;

    let realm = Realm {
        id: RealmId(0),
        subdomain: new.subdomain.clone(),
        name,
        description: String::new(),
        settings: Map::new(),
        user_defaults: Map::new(),
        deactivated: false,
        date_created: now,
    };
    let result = store.write(|tx| -> Result<(RealmId, User), StoreError> {
        let realm_id = store::realms::insert(tx, &realm)?;
        let groups = insert_system_groups(tx, realm_id, now)?;
        let realm = Realm { id: realm_id, ..realm.clone() };
        let state = RealmState::new(realm, Vec::new(), groups);
        let (user, _groups) = insert_user(tx, &state, config, &owner, now)?;
        Ok((realm_id, user))
    });
    let (realm_id, owner_user) = match result {
        Ok(v) => v,
        Err(e) if is_unique_violation(&e) => return Err(validate::subdomain_unavailable()),
        Err(e) => return Err(e.into()),
    };
    let conn = store.conn()?;
    let state = RealmState::load(&conn, realm_id)?.ok_or_else(|| {
        tracing::error!(realm.id = %realm_id, "realm vanished right after creation");
        ApiError::internal()
    })?;
    tracing::info!(realm.id = %realm_id, subdomain = %new.subdomain, "created organization");
    Ok((CreatedRealm { realm_id, owner: CreatedUser { user_id: owner_user.id, api_key: owner_user.api_key } }, state))
}

/// Creates the eight system groups with their subgroup chain.
fn insert_system_groups(
    tx: &Transaction<'_>,
    realm_id: RealmId,
    now: i64,
) -> Result<BTreeMap<GroupId, UserGroup>, StoreError> {
    let mut by_name: BTreeMap<&str, GroupId> = BTreeMap::new();
    let mut groups = BTreeMap::new();
    for (name, description, subgroup) in SystemGroup::DEFINITIONS {
        let mut group = UserGroup {
            id: GroupId(0),
            name: name.to_owned(),
            description: description.to_owned(),
            is_system_group: true,
            creator_id: None,
            date_created: Some(now),
            deactivated: false,
            settings: Map::new(),
            members: Default::default(),
            subgroups: Default::default(),
        };
        group.id = store::groups::insert(tx, realm_id, &group)?;
        if let Some(sub) = subgroup.and_then(|s| by_name.get(s).copied()) {
            store::groups::add_subgroups(tx, group.id, &[sub])?;
            group.subgroups.insert(sub);
        }
        by_name.insert(name, group.id);
        groups.insert(group.id, group);
    }
    Ok(groups)
}

/// Rules every new account follows, whoever creates it.
fn validate_new_user(new: &NewUser) -> ApiResult<()> {
    validate::full_name(&new.full_name)?;
    if !validate::is_valid_email(new.email.trim()) {
        return Err(ApiError::bad_request("Bad name or username"));
    }
    Ok(())
}

/// Inserts a validated account with its system-group memberships, as part of a caller's
/// transaction. Returns the user and the groups it joined, to apply once committed.
fn insert_user(
    tx: &Transaction<'_>,
    state: &RealmState,
    config: &ServerConfig,
    new: &NewUser,
    now: i64,
) -> Result<(User, Vec<GroupId>), StoreError> {
    let realm = state.realm();
    let visibility = if new.bot_type.is_some() { EmailVisibility::Everyone } else { realm.default_email_visibility() };
    let delivery_email = new.email.trim().to_owned();
    let api_key = new_api_key();
    let mut user = User {
        id: UserId(0),
        realm_id: realm.id,
        // A placeholder as unique as the key until the id is known.
        email: format!("pending-{api_key}"),
        delivery_email,
        full_name: new.full_name.trim().to_owned(),
        role: new.role,
        is_active: true,
        is_bot: new.bot_type.is_some(),
        bot_type: new.bot_type,
        bot_owner_id: new.bot_owner_id,
        timezone: String::new(),
        date_joined: now,
        avatar_source: "G".to_owned(),
        avatar_version: 1,
        api_key,
        password_hash: new.password_hash.clone(),
        can_create_users: new.can_create_users,
        can_change_user_emails: new.can_change_user_emails,
        email_address_visibility: visibility,
        settings: new_user_settings(realm),
        profile_data: Default::default(),
    };
    user.id = store::users::insert(tx, &user)?;
    user.email = api_email(config, realm, &user);
    store::users::set_email(tx, user.id, &user.email)?;
    let groups = state.role_groups(user.role, now, now);
    for group in &groups {
        store::groups::add_members(tx, *group, &[user.id])?;
    }
    Ok((user, groups))
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

/// A user's API email: the real address when everyone may see it, else `user<ID>@<domain>`.
pub fn api_email(config: &ServerConfig, realm: &Realm, user: &User) -> String {
    match user.email_address_visibility {
        EmailVisibility::Everyone => user.delivery_email.clone(),
        _ => format!("user{}@{}", user.id, config.fake_email_domain(&realm.subdomain)),
    }
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

/// Creates an account in an existing organization.
pub fn create_user(
    state: &mut RealmState,
    store: &Store,
    config: &ServerConfig,
    new: NewUser,
    now: i64,
) -> ApiResult<(CreatedUser, Vec<Outgoing>)> {
    check_new_user(state, &new)?;
    let (user, groups) = match store.write(|tx| insert_user(tx, state, config, &new, now)) {
        Ok(inserted) => inserted,
        Err(e) if is_unique_violation(&e) => return Err(ApiError::bad_request("Email is already in use.")),
        Err(e) => return Err(e.into()),
    };
    for group in groups {
        state.add_group_members(group, &[user.id]);
    }
    state.put_user(user.clone());
    tracing::info!(realm.id = %state.realm().id, user.id = %user.id, "created user");
    let events = user_created_events(state, &user, now);
    Ok((CreatedUser { user_id: user.id, api_key: user.api_key }, events))
}

/// Zulip's `notify_created_user` and system-group membership events: the new user's
/// object goes to every active user, with the real email only to those allowed to see it.
fn user_created_events(state: &RealmState, user: &User, now: i64) -> Vec<Outgoing> {
    let opts = UserDictOptions { client_gravatar: false, include_custom_profile_fields: true };
    let mut with_access: Option<(Map<String, Value>, Vec<UserId>)> = None;
    let mut without_access: Option<(Map<String, Value>, Vec<UserId>)> = None;
    for viewer in state.users().filter(|u| u.is_active) {
        let slot = if can_access_delivery_email(viewer, user) { &mut with_access } else { &mut without_access };
        slot.get_or_insert_with(|| (state.user_dict(viewer, user, opts), Vec::new())).1.push(viewer.id);
    }
    let mut events: Vec<Outgoing> = [with_access, without_access]
        .into_iter()
        .flatten()
        .map(|(person, users)| Outgoing::to(users, Event::new("realm_user", json!({"op": "add", "person": person}))))
        .collect();
    for group in state.role_groups(user.role, now, now) {
        events.push(Outgoing::to(
            state.active_user_ids(),
            Event::new("user_group", json!({"op": "add_members", "group_id": group, "user_ids": [user.id]})),
        ));
    }
    events
}

/// Deactivates (or reactivates) the whole organization: while deactivated, nobody can log
/// in or use an API key there. Active users are told first, as Zulip's `realm`
/// `deactivated` event does.
pub fn set_realm_deactivated(state: &mut RealmState, store: &Store, deactivated: bool) -> ApiResult<Vec<Outgoing>> {
    let id = state.realm().id;
    store.write(|tx| store::realms::set_deactivated(tx, id, deactivated))?;
    state.set_deactivated(deactivated);
    tracing::info!(realm.id = %id, deactivated, "changed organization status");
    if !deactivated {
        return Ok(Vec::new());
    }
    Ok(vec![state.to_everyone(Event::new("realm", json!({"op": "deactivated", "realm_id": id})))])
}

/// Replaces a user's API key; the old one stops working at once.
pub fn regenerate_api_key(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<String> {
    state.user_or_err(user_id)?;
    let api_key = new_api_key();
    store.write(|tx| store::users::set_api_key(tx, user_id, &api_key))?;
    if let Some(user) = state.user_mut(user_id) {
        user.api_key = api_key.clone();
    }
    tracing::info!(realm.id = %state.realm().id, user.id = %user_id, "regenerated API key");
    Ok(api_key)
}

/// A human replacing their own key (`POST /users/me/api_key/regenerate`); bots' keys are
/// managed by their owners.
pub fn regenerate_own_api_key(state: &mut RealmState, store: &Store, user_id: UserId) -> ApiResult<String> {
    if state.user_or_err(user_id)?.is_bot {
        return Err(ApiError::humans_only());
    }
    regenerate_api_key(state, store, user_id)
}
