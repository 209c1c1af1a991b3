//! Organizations built in memory, for tests of plans and their application that need no
//! database: the system groups with their subgroup chain, users by role, channels and
//! subscriptions put straight into the state.

use std::collections::BTreeMap;

use serde_json::Map;

use crate::ids::{ChannelId, GroupId, RealmId, UserId};
use crate::realm::model::{Channel, EmailVisibility, Realm, Role, Subscription, SystemGroup, User, UserGroup};
use crate::realm::state::RealmState;

/// When the organization and its users were created.
pub const T0: i64 = 1_795_238_460;

/// The owner every organization built here starts with.
pub const OWNER: UserId = UserId(1);

/// An organization with its system groups (ids 1 to 8, in Zulip's creation order) and its
/// owner, [`OWNER`].
pub fn organization() -> RealmState {
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
    for (i, (name, description, subgroup)) in SystemGroup::DEFINITIONS.into_iter().enumerate() {
        let id = GroupId(i as i64 + 1);
        let group = UserGroup {
            id,
            name: name.into(),
            description: description.into(),
            is_system_group: true,
            creator_id: None,
            date_created: Some(T0),
            deactivated: false,
            settings: Map::new(),
            members: Default::default(),
            subgroups: subgroup.and_then(|s| by_name.get(s).copied()).into_iter().collect(),
        };
        by_name.insert(name, id);
        groups.insert(id, group);
    }
    let mut state = RealmState::new(realm, Vec::new(), groups);
    add_user(&mut state, OWNER.0, Role::Owner);
    state
}

/// Adds an active human user `id` of `role` (named `u<id>`), in its role's system groups.
pub fn add_user(state: &mut RealmState, id: i64, role: Role) -> UserId {
    let user = User {
        id: UserId(id),
        realm_id: state.realm().id,
        delivery_email: format!("u{id}@acme.test"),
        email: format!("u{id}@acme.test"),
        full_name: format!("User {id}"),
        role,
        is_active: true,
        is_bot: false,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        date_joined: T0,
        avatar_source: "G".into(),
        avatar_version: 1,
        api_key: format!("key{id}"),
        password_hash: None,
        can_create_users: false,
        can_change_user_emails: false,
        email_address_visibility: EmailVisibility::Everyone,
        settings: Map::new(),
        profile_data: Default::default(),
    };
    for group in state.role_groups(role, T0, T0) {
        state.add_group_members(group, &[user.id]);
    }
    state.put_user(user);
    UserId(id)
}

/// Adds a channel `id` named `name` (public unless `invite_only`), administered by the
/// organization's administrators only.
pub fn add_channel(state: &mut RealmState, id: i64, name: &str, invite_only: bool) -> ChannelId {
    state.put_channel(Channel {
        id: ChannelId(id),
        name: name.into(),
        description: String::new(),
        rendered_description: String::new(),
        invite_only,
        is_web_public: false,
        history_public_to_subscribers: !invite_only,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: T0,
        is_archived: false,
        settings: Map::new(),
    });
    ChannelId(id)
}

/// Subscribes `user` to `channel` (with a color of its own).
pub fn subscribe(state: &mut RealmState, user: UserId, channel: ChannelId) {
    state.put_subscription(Subscription::new(user, channel, "#c2c2c2".into()));
}
