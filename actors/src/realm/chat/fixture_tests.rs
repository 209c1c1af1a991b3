//! An organization built in memory for the plan tests of this area: the system groups,
//! users, channels and subscriptions, with no database behind them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::ids::{ChannelId, GroupId, RealmId, UserId};
use crate::realm::model::{Channel, EmailVisibility, Realm, Role, Subscription, SystemGroup, User, UserGroup};
use crate::realm::state::RealmState;

/// When everything in the fixture happened.
pub const T0: i64 = 1_795_238_460;

/// An organization with its eight system groups (nested as Zulip nests them) and nobody.
pub fn realm() -> RealmState {
    let realm = Realm {
        id: RealmId(1),
        subdomain: "acme".into(),
        name: "Acme".into(),
        description: String::new(),
        settings: Map::new(),
        user_defaults: Map::new(),
        deactivated: false,
        date_created: T0,
    };
    let mut by_name: BTreeMap<&str, GroupId> = BTreeMap::new();
    let mut groups = BTreeMap::new();
    for (i, (name, description, subgroup)) in SystemGroup::DEFINITIONS.iter().enumerate() {
        let id = GroupId(1 + i as i64);
        let group = UserGroup {
            id,
            name: (*name).to_owned(),
            description: (*description).to_owned(),
            is_system_group: true,
            creator_id: None,
            date_created: Some(T0),
            deactivated: false,
            settings: Map::new(),
            members: BTreeSet::new(),
            subgroups: subgroup.and_then(|s| by_name.get(s).copied()).into_iter().collect(),
        };
        by_name.insert(name, id);
        groups.insert(id, group);
    }
    RealmState::new(realm, Vec::new(), groups)
}

/// Adds an active user `name` (email `name@acme.test`, full name `name`) in the system
/// groups of `role`.
pub fn user(state: &mut RealmState, name: &str, role: Role) -> UserId {
    let id = UserId(100 + state.users().count() as i64);
    let email = format!("{name}@acme.test");
    state.put_user(User {
        id,
        realm_id: state.realm().id,
        delivery_email: email.clone(),
        email,
        full_name: name.to_owned(),
        role,
        is_active: true,
        is_bot: false,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        date_joined: T0,
        avatar_source: "G".into(),
        avatar_version: 1,
        api_key: format!("key-{name}"),
        password_hash: None,
        can_create_users: false,
        can_change_user_emails: false,
        email_address_visibility: EmailVisibility::Everyone,
        settings: Map::new(),
        profile_data: BTreeMap::new(),
    });
    for group in state.role_groups(role, T0, T0) {
        state.add_group_members(group, &[id]);
    }
    id
}

/// Adds a (generic) bot owned by `owner`.
pub fn bot(state: &mut RealmState, name: &str, owner: UserId) -> UserId {
    let id = user(state, name, Role::Member);
    let bot = state.user_mut(id).map(|u| {
        u.is_bot = true;
        u.bot_type = Some(1);
        u.bot_owner_id = Some(owner);
    });
    assert!(bot.is_some());
    id
}

/// Changes a user.
pub fn edit_user(state: &mut RealmState, id: UserId, change: impl FnOnce(&mut User)) {
    let mut user = state.user(id).cloned().unwrap_or_else(|| panic!("no user {id}"));
    change(&mut user);
    state.put_user(user);
}

/// Adds a channel (public unless `invite_only`, history shared with subscribers, default
/// permissions) with `members` subscribed.
pub fn channel(state: &mut RealmState, name: &str, invite_only: bool, members: &[UserId]) -> ChannelId {
    let id = ChannelId(10 + state.channels().count() as i64);
    state.put_channel(Channel {
        id,
        name: name.to_owned(),
        description: String::new(),
        rendered_description: String::new(),
        invite_only,
        is_web_public: false,
        history_public_to_subscribers: true,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: T0,
        is_archived: false,
        settings: Map::new(),
    });
    for member in members {
        state.put_subscription(Subscription::new(*member, id, "#c2c2c2".into()));
    }
    id
}

/// Sets an organization setting.
pub fn set_realm(state: &mut RealmState, name: &str, value: Value) {
    let mut realm = state.realm().clone();
    realm.settings.insert(name.to_owned(), value);
    state.set_realm(realm);
}

/// Sets an organization group setting to a system group.
pub fn set_realm_group(state: &mut RealmState, setting: &str, group: &str) {
    let id = state.system_group_id(group).unwrap_or_else(|| panic!("no group {group}"));
    set_realm(state, setting, Value::from(id));
}
