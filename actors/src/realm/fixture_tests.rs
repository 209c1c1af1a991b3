//! Organizations built in memory, for the tests of plans and their application that need no
//! database: the pieces every area's fixture shares (each area's own fixture names its users
//! and channels its way on top of these).

use std::collections::BTreeMap;

use serde_json::Map;

use crate::ids::{ChannelId, GroupId, RealmId, UserId};
use crate::realm::model::{Channel, EmailVisibility, Realm, Role, SystemGroup, User, UserGroup};
use crate::realm::state::RealmState;

/// When the organization and everything in it were created.
pub const T0: i64 = 1_795_238_460;

/// "acme" with its eight system groups (ids 1 to 8, in Zulip's creation order, nested as
/// `create_realm` nests them) and nobody in it.
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
    RealmState::new(realm, Vec::new(), groups)
}

/// Adds an active human with everyone allowed to see their address, in the system groups
/// of `role`.
pub fn human(state: &mut RealmState, id: UserId, email: &str, full_name: &str, api_key: &str, role: Role) -> UserId {
    let user = User {
        id,
        realm_id: state.realm().id,
        delivery_email: email.to_owned(),
        email: email.to_owned(),
        full_name: full_name.to_owned(),
        role,
        is_active: true,
        is_bot: false,
        bot_type: None,
        bot_owner_id: None,
        timezone: String::new(),
        date_joined: T0,
        avatar_source: "G".into(),
        avatar_version: 1,
        api_key: api_key.to_owned(),
        password_hash: None,
        can_create_users: false,
        can_change_user_emails: false,
        email_address_visibility: EmailVisibility::Everyone,
        settings: Map::new(),
        profile_data: Default::default(),
        is_imported_stub: false,
        first_login_pending: false,
        self_edited_settings: Default::default(),
    };
    state.put_user(user);
    for group in state.role_groups(role, T0, T0) {
        state.add_group_members(group, &[id]);
    }
    id
}

/// A channel row with the default permissions (public unless `invite_only`).
pub fn channel(id: ChannelId, name: &str, invite_only: bool, history_public_to_subscribers: bool) -> Channel {
    Channel {
        id,
        name: name.to_owned(),
        description: String::new(),
        rendered_description: String::new(),
        invite_only,
        is_web_public: false,
        history_public_to_subscribers,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: T0,
        is_archived: false,
        settings: Map::new(),
    }
}
