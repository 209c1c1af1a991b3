use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::config::ServerConfig;
use crate::realm::model::Role;
use crate::realm::organization::{create_realm, NewRealm};
use crate::realm::users::NewUser;

const T0: i64 = 1_795_238_460;

/// A realm with one owner and a group "support" created by the owner.
fn setup() -> (tempfile::TempDir, Store, RealmState, UserId, GroupId) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let new = NewRealm {
        subdomain: "acme".into(),
        name: "Acme".into(),
        owner: NewUser::human("boss@acme.test", "The Boss", Role::Owner, None),
    };
    let (created, mut state) = create_realm(&store, &ServerConfig::default(), new, T0).unwrap();
    let owner = created.owner.user_id;
    let group = NewGroup { name: "support".into(), members: vec![owner.0], ..NewGroup::default() };
    let (id, events) = create_group(&mut state, &store, owner, group, T0).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].users, vec![owner]);
    (dir, store, state, owner, id)
}

/// The state with these organization settings.
fn with_realm_settings(state: &RealmState, settings: serde_json::Value) -> RealmState {
    let mut realm = state.realm().clone();
    realm.settings = settings.as_object().cloned().unwrap_or_default();
    let users = state.users().cloned().collect();
    let groups: BTreeMap<GroupId, UserGroup> = state.groups().map(|g| (g.id, g.clone())).collect();
    RealmState::new(realm, users, groups)
}

#[test]
fn realm_settings_using_a_group_object_to_its_deactivation() {
    let (_dir, _store, state, owner, id) = setup();
    assert!(deactivation_objections(&state, id).is_empty());
    let state = with_realm_settings(
        &state,
        json!({
            "can_create_groups": id,
            "can_invite_users_group": {"direct_members": [owner], "direct_subgroups": [id]},
            "can_add_custom_emoji_group": {"direct_members": [owner], "direct_subgroups": []},
        }),
    );
    let objections = deactivation_objections(&state, id);
    assert_eq!(objections, vec![json!({"type": "realm", "settings": ["can_create_groups", "can_invite_users_group"]})]);
}

#[test]
fn memory_matches_the_database_after_each_change() {
    let (_dir, store, mut state, owner, id) = setup();
    let update = GroupUpdate { description: Some("Helps".into()), ..GroupUpdate::default() };
    update_group(&mut state, &store, owner, id, update).unwrap();
    let change = MembershipChange { add_subgroups: vec![1], delete: vec![owner.0], ..MembershipChange::default() };
    change_membership(&mut state, &store, owner, id, change, MembershipEndpoint::Members).unwrap();
    let loaded = RealmState::load(&store.conn().unwrap(), state.realm().id).unwrap().unwrap();
    assert_eq!(loaded.group(id), state.group(id));
    // A refused request changes nothing anywhere.
    let change = MembershipChange { add: vec![owner.0], add_subgroups: vec![1], ..MembershipChange::default() };
    let err = change_membership(&mut state, &store, owner, id, change, MembershipEndpoint::Members).unwrap_err();
    assert_eq!(err.msg, "User group 1 is already a subgroup of this group.");
    let loaded = RealmState::load(&store.conn().unwrap(), state.realm().id).unwrap().unwrap();
    assert_eq!(loaded.group(id), state.group(id));
    assert!(!state.group(id).unwrap().members.contains(&owner));
}
