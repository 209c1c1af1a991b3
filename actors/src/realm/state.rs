//! [`RealmState`]: one organization in memory, answering reads without the database.
//!
//! The state is plain data. Changes go through the operations in [`super::ops`], which
//! validate against this state, write to SQLite and only then apply the change here, so
//! memory never holds anything the database does not.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Connection;

use super::model::{CustomProfileField, Realm, Role, SystemGroup, User, UserGroup};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, RealmId, UserId};
use crate::store::{self, StoreResult};

/// An organization: its row, users and user groups, with lookup indexes.
#[derive(Debug, Clone)]
pub struct RealmState {
    realm: Realm,
    users: BTreeMap<UserId, User>,
    /// Lower-cased delivery email -> user.
    by_delivery_email: HashMap<String, UserId>,
    /// Lower-cased API email -> user.
    by_api_email: HashMap<String, UserId>,
    groups: BTreeMap<GroupId, UserGroup>,
    /// System group name -> id.
    system_groups: HashMap<String, GroupId>,
    /// Custom profile fields, in their `order`.
    profile_fields: Vec<CustomProfileField>,
}

impl RealmState {
    /// Builds the state from its parts (as loaded, or as just created).
    pub fn new(realm: Realm, users: Vec<User>, groups: BTreeMap<GroupId, UserGroup>) -> Self {
        let mut state = RealmState {
            realm,
            users: BTreeMap::new(),
            by_delivery_email: HashMap::new(),
            by_api_email: HashMap::new(),
            system_groups: groups.values().filter(|g| g.is_system_group).map(|g| (g.name.clone(), g.id)).collect(),
            groups,
            profile_fields: Vec::new(),
        };
        for user in users {
            state.put_user(user);
        }
        state
    }

    /// Loads a realm and everything in it.
    pub fn load(conn: &Connection, realm_id: RealmId) -> StoreResult<Option<RealmState>> {
        let Some(realm) = store::realms::by_id(conn, realm_id)? else {
            return Ok(None);
        };
        let mut users = store::users::in_realm(conn, realm_id)?;
        let groups = store::groups::in_realm(conn, realm_id)?;
        let fields = store::profile_fields::in_realm(conn, realm_id)?;
        let mut values = store::profile_fields::values_in_realm(conn, realm_id)?;
        for user in &mut users {
            if let Some(data) = values.remove(&user.id) {
                user.profile_data = data;
            }
        }
        let mut state = RealmState::new(realm, users, groups);
        state.set_profile_fields(fields);
        Ok(Some(state))
    }

    /// Loads the realm with this subdomain.
    pub fn load_by_subdomain(conn: &Connection, subdomain: &str) -> StoreResult<Option<RealmState>> {
        match store::realms::by_subdomain(conn, subdomain)? {
            Some(realm) => Self::load(conn, realm.id),
            None => Ok(None),
        }
    }

    /// The realm row.
    pub fn realm(&self) -> &Realm {
        &self.realm
    }

    /// A user of this realm.
    pub fn user(&self, id: UserId) -> Option<&User> {
        self.users.get(&id)
    }

    /// A user of this realm, or Zulip's "No such user".
    pub fn user_or_err(&self, id: UserId) -> ApiResult<&User> {
        self.user(id).ok_or_else(|| ApiError::bad_request("No such user"))
    }

    /// Every user, by id.
    pub fn users(&self) -> impl Iterator<Item = &User> {
        self.users.values()
    }

    /// `event` for every active user (most organization-wide events go to them).
    pub fn to_everyone(&self, event: Event) -> Outgoing {
        Outgoing::to(self.active_user_ids(), event)
    }

    /// Ids of active users, ascending.
    pub fn active_user_ids(&self) -> Vec<UserId> {
        self.users.values().filter(|u| u.is_active).map(|u| u.id).collect()
    }

    /// The user with this delivery (real) email, compared case-insensitively.
    pub fn user_by_delivery_email(&self, email: &str) -> Option<&User> {
        self.by_delivery_email.get(&email.to_lowercase()).and_then(|id| self.users.get(id))
    }

    /// The user with this API email, compared case-insensitively.
    pub fn user_by_api_email(&self, email: &str) -> Option<&User> {
        self.by_api_email.get(&email.to_lowercase()).and_then(|id| self.users.get(id))
    }

    /// Whether `email` is already some other account's address (other than `except`'s): its
    /// real one, or the API address (`user<ID>@<domain>`) another account goes by, which
    /// must stay unique too.
    pub fn email_taken(&self, email: &str, except: Option<UserId>) -> bool {
        let other = |u: &User| Some(u.id) != except;
        self.user_by_delivery_email(email).is_some_and(other) || self.user_by_api_email(email).is_some_and(other)
    }

    /// A group of this realm.
    pub fn group(&self, id: GroupId) -> Option<&UserGroup> {
        self.groups.get(&id)
    }

    /// Every group, by id.
    pub fn groups(&self) -> impl Iterator<Item = &UserGroup> {
        self.groups.values()
    }

    /// The custom profile fields, in their `order`.
    pub fn profile_fields(&self) -> &[CustomProfileField] {
        &self.profile_fields
    }

    /// The id of a system group (`role:members`, ...).
    pub fn system_group_id(&self, name: &str) -> Option<GroupId> {
        self.system_groups.get(name).copied()
    }

    /// The system groups a user of `role` is a direct member of: the role's own group, and
    /// `role:fullmembers` for members past the organization's waiting period.
    pub fn role_groups(&self, role: Role, date_joined: i64, now: i64) -> Vec<GroupId> {
        let mut names = vec![role.system_group()];
        let waited_days = (now - date_joined).div_euclid(86_400);
        if role == Role::Member && waited_days >= self.realm.waiting_period_threshold() {
            names.push(SystemGroup::FULL_MEMBERS);
        }
        names.into_iter().filter_map(|n| self.system_group_id(n)).collect()
    }

    /// Whether `user` belongs to `group`, directly or through subgroups.
    pub fn is_member_recursive(&self, group: GroupId, user: UserId) -> bool {
        let mut stack = vec![group];
        let mut seen = Vec::new();
        while let Some(g) = stack.pop() {
            if seen.contains(&g) {
                continue;
            }
            seen.push(g);
            if let Some(grp) = self.groups.get(&g) {
                if grp.members.contains(&user) {
                    return true;
                }
                stack.extend(grp.subgroups.iter().copied());
            }
        }
        false
    }

    /// Whether `user` is in a group-setting value (spec 2.1): a group id, or an anonymous
    /// group `{"direct_members": [...], "direct_subgroups": [...]}`.
    pub fn group_setting_contains(&self, value: &serde_json::Value, user: UserId) -> bool {
        if let Some(id) = value.as_i64() {
            return self.is_member_recursive(GroupId(id), user);
        }
        let ids = |key: &str| -> Vec<i64> {
            value
                .get(key)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_i64()).collect())
                .unwrap_or_default()
        };
        ids("direct_members").contains(&user.0)
            || ids("direct_subgroups").into_iter().any(|g| self.is_member_recursive(GroupId(g), user))
    }

    // --- Changes. Only `ops` calls these, after the database has committed. ---

    /// Marks the realm deactivated or active.
    pub(crate) fn set_deactivated(&mut self, deactivated: bool) {
        self.realm.deactivated = deactivated;
    }

    /// Replaces the organization's row (name, description, settings...).
    pub(crate) fn set_realm(&mut self, realm: Realm) {
        self.realm = realm;
    }

    /// Replaces the organization's defaults of personal settings for new users.
    pub(crate) fn set_user_defaults(&mut self, defaults: serde_json::Map<String, serde_json::Value>) {
        self.realm.user_defaults = defaults;
    }

    /// Adds or replaces a user and its index entries.
    pub(crate) fn put_user(&mut self, user: User) {
        if let Some(old) = self.users.get(&user.id) {
            self.by_delivery_email.remove(&old.delivery_email.to_lowercase());
            self.by_api_email.remove(&old.email.to_lowercase());
        }
        self.by_delivery_email.insert(user.delivery_email.to_lowercase(), user.id);
        self.by_api_email.insert(user.email.to_lowercase(), user.id);
        self.users.insert(user.id, user);
    }

    /// Mutable access to a user for field changes that touch no index.
    pub(crate) fn user_mut(&mut self, id: UserId) -> Option<&mut User> {
        self.users.get_mut(&id)
    }

    /// Replaces the custom profile fields (sorted here by `order`).
    pub(crate) fn set_profile_fields(&mut self, mut fields: Vec<CustomProfileField>) {
        fields.sort_by_key(|f| (f.order, f.id));
        self.profile_fields = fields;
    }

    /// Adds direct members to a group.
    pub(crate) fn add_group_members(&mut self, group: GroupId, users: &[UserId]) {
        if let Some(g) = self.groups.get_mut(&group) {
            g.members.extend(users.iter().copied());
        }
    }

    /// Removes direct members from a group.
    #[allow(dead_code)] // Until the group operations use it.
    pub(crate) fn remove_group_members(&mut self, group: GroupId, users: &[UserId]) {
        if let Some(g) = self.groups.get_mut(&group) {
            for user in users {
                g.members.remove(user);
            }
        }
    }

    /// Adds or replaces a group (system groups keep their name index).
    pub(crate) fn put_group(&mut self, group: UserGroup) {
        if group.is_system_group {
            self.system_groups.insert(group.name.clone(), group.id);
        }
        self.groups.insert(group.id, group);
    }

    /// Mutable access to a group, for changes that touch no index.
    #[allow(dead_code)] // Until the group operations use it.
    pub(crate) fn group_mut(&mut self, id: GroupId) -> Option<&mut UserGroup> {
        self.groups.get_mut(&id)
    }
}
