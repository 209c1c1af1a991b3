//! Creating an organization, and deactivating or reactivating one.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde_json::{json, Map};

use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::Event;
use crate::ids::{GroupId, RealmId};
use crate::realm::model::{Realm, Role, SystemBot, SystemGroup, User, UserGroup};
use crate::realm::onboarding::post_welcome;
use crate::realm::state::RealmState;
use crate::realm::users::create::{plan_account, validate_new_user};
use crate::realm::users::{CreatedUser, NewUser};
use crate::realm::{Applied, Change};
use crate::store::{self, Store, StoreError};
use crate::validate;

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

/// Creates an organization: the realm row, its system groups and its first owner, in one
/// transaction. Returns the loaded state of the new realm. (No realm actor exists yet: the
/// registry calls this, and starts the actor from the state.)
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
    let result = store.write(|tx| -> ApiResult<(RealmId, CreatedUser)> {
        let realm_id = store::realms::insert(tx, &realm).map_err(|e| {
            if e.is_unique_violation() {
                validate::subdomain_unavailable()
            } else {
                e.into()
            }
        })?;
        let groups = insert_system_groups(tx, realm_id, now)?;
        let state = RealmState::new(Realm { id: realm_id, ..realm.clone() }, Vec::new(), groups);
        let mut account = plan_account(&state, config, &owner, now);
        account.write(tx)?;
        let user = account.user();
        insert_system_bots(tx, realm_id, now)?;
        Ok((realm_id, CreatedUser { user_id: user.id, api_key: user.api_key.clone() }))
    });
    let (realm_id, owner) = result?;
    let conn = store.conn()?;
    let mut state = RealmState::load(&conn, realm_id)?.ok_or_else(|| {
        tracing::error!(realm.id = %realm_id, "realm vanished right after creation");
        ApiError::internal()
    })?;
    drop(conn);
    // Welcome Bot greets the first owner as it greets every new member (and the message
    // list a client opens first is not empty: zulip-terminal fails on an empty one).
    post_welcome(&mut state, store, owner.user_id, now);
    tracing::info!(realm.id = %realm_id, subdomain = %new.subdomain, "created organization");
    Ok((CreatedRealm { realm_id, owner }, state))
}

/// Writes what every organization starts with but its people: the realm row, the system
/// groups and the system bots (an import adds the rest). Returns the realm's id.
pub fn insert_skeleton(tx: &Transaction<'_>, realm: &Realm, now: i64) -> Result<RealmId, StoreError> {
    let realm_id = store::realms::insert(tx, realm)?;
    insert_system_groups(tx, realm_id, now)?;
    insert_system_bots(tx, realm_id, now)?;
    Ok(realm_id)
}

/// Creates the organization's system bots (Zulip's cross-realm bots), after its owner.
fn insert_system_bots(tx: &Transaction<'_>, realm_id: RealmId, now: i64) -> Result<(), StoreError> {
    for (email, name) in SystemBot::ALL {
        let bot = User {
            id: crate::ids::UserId(0),
            realm_id,
            delivery_email: email.to_owned(),
            email: email.to_owned(),
            full_name: name.to_owned(),
            role: Role::Member,
            is_active: true,
            is_bot: true,
            bot_type: Some(1),
            bot_owner_id: None,
            timezone: String::new(),
            date_joined: now,
            avatar_source: "G".to_owned(),
            avatar_version: 1,
            api_key: crate::secrets::new_api_key(),
            password_hash: None,
            can_create_users: false,
            can_change_user_emails: false,
            email_address_visibility: crate::realm::model::EmailVisibility::Everyone,
            settings: Map::new(),
            profile_data: Default::default(),
            is_imported_stub: false,
            first_login_pending: false,
            self_edited_settings: Default::default(),
        };
        store::users::insert(tx, &bot)?;
    }
    Ok(())
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

/// The organization deactivated (or reactivated): while deactivated, nobody can log in or
/// use an API key there.
#[derive(Debug, Clone, Copy)]
pub struct RealmStatus {
    realm_id: RealmId,
    deactivated: bool,
}

/// Plans deactivating (`true`) or reactivating the organization.
pub fn plan_status(state: &RealmState, deactivated: bool) -> RealmStatus {
    RealmStatus { realm_id: state.realm().id, deactivated }
}

impl Change for RealmStatus {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::realms::set_deactivated(tx, self.realm_id, self.deactivated)?)
    }

    /// Active users are told of a deactivation, as Zulip's `realm` `deactivated` event does.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        state.set_deactivated(self.deactivated);
        tracing::info!(realm.id = %self.realm_id, deactivated = self.deactivated, "changed organization status");
        let events = if self.deactivated {
            vec![state.to_everyone(Event::new("realm", json!({"op": "deactivated", "realm_id": self.realm_id})))]
        } else {
            Vec::new()
        };
        Applied::events(events).with_auth()
    }
}
