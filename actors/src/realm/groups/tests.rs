//! User groups: plans applied to a state built in memory (no database), and changes
//! committed to a real one.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::ops::*;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{GroupId, UserId};
use crate::realm::commit;
use crate::realm::model::{Role, UserGroup};
use crate::realm::organization::{create_realm, NewRealm};
use crate::realm::state::RealmState;
use crate::realm::tests::memory;
use crate::realm::users::NewUser;
use crate::realm::Change;
use crate::store::Store;

const T0: i64 = 1_795_238_460;

// --- Plans applied in memory. ---

/// The groups of the in-memory organization.
const OWNERS: GroupId = GroupId(1);
const MEMBERS: GroupId = GroupId(5);
const EVERYONE: GroupId = GroupId(6);
const NOBODY: GroupId = GroupId(8);

fn bodies(events: &[Outgoing]) -> Vec<Value> {
    events.iter().map(|o| Value::Object(o.event.body().clone())).collect()
}

/// The in-memory organization with a member `m` (id 2) and a group "support" (id 100)
/// that the owner created with the owner in it.
fn with_support() -> (RealmState, UserId, UserId, GroupId) {
    let mut state = memory::state();
    let owner = UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let new = NewGroup { name: "support".into(), members: vec![owner.0], ..NewGroup::default() };
    let change = plan_create(&state, owner, new, T0).unwrap().written_as(GroupId(100));
    change.apply(&mut state);
    (state, owner, member, GroupId(100))
}

#[test]
fn a_created_group_is_announced_then_given_its_subgroups() {
    let mut state = memory::state();
    let owner = UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let new = NewGroup {
        name: "support".into(),
        description: "Helps".into(),
        members: vec![member.0, owner.0],
        subgroups: Some(vec![OWNERS.0, MEMBERS.0, OWNERS.0]),
        settings: vec![("can_join_group".into(), json!(MEMBERS.0))],
    };
    let change = plan_create(&state, owner, new, T0).unwrap();
    assert_eq!(change.group().id, GroupId(0), "the id comes with the write");
    let applied = change.written_as(GroupId(100)).apply(&mut state);
    assert_eq!(applied.output, GroupId(100));
    assert!(!applied.auth && applied.closed.is_empty());
    let group = json!({
        "name": "support",
        "creator_id": owner,
        "date_created": T0,
        "members": [owner, member],
        "description": "Helps",
        "id": 100,
        "is_system_group": false,
        "direct_subgroup_ids": [],
        "can_add_members_group": {"direct_members": [owner], "direct_subgroups": []},
        "can_join_group": MEMBERS,
        "can_leave_group": EVERYONE,
        "can_manage_group": {"direct_members": [owner], "direct_subgroups": []},
        "can_mention_group": EVERYONE,
        "can_remove_members_group": NOBODY,
        "deactivated": false,
    });
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "user_group", "op": "add", "group": group}),
            json!({"type": "user_group", "op": "add_subgroups", "group_id": 100, "direct_subgroup_ids": [1, 5]}),
        ]
    );
    assert!(applied.events.iter().all(|o| o.users == vec![owner, member]));
    let stored = state.group(GroupId(100)).unwrap();
    assert_eq!(stored.members.iter().copied().collect::<Vec<_>>(), vec![owner, member]);
    assert_eq!(stored.subgroups.iter().copied().collect::<Vec<_>>(), vec![OWNERS, MEMBERS]);
}

#[test]
fn group_creation_is_checked_in_zulips_order() {
    let mut state = memory::state();
    let owner = UserId(1);
    let guest = memory::user(&mut state, "g@acme.test", Role::Guest);
    let err = |state: &RealmState, acting: UserId, new: NewGroup| plan_create(state, acting, new, T0).unwrap_err().msg;
    let named = |name: &str| NewGroup { name: name.into(), ..NewGroup::default() };
    assert_eq!(err(&state, guest, named("x")), "Not allowed for guest users");
    let bad = NewGroup { members: vec![999], ..named("") };
    assert_eq!(err(&state, owner, bad), "Invalid user ID: 999");
    assert_eq!(err(&state, owner, named("")), "User group name can't be empty!");
    assert_eq!(err(&state, owner, named("role:x")), "User group name cannot start with 'role:'.");
    assert_eq!(err(&state, owner, named("role:owners")), "User group name cannot start with 'role:'.");
    plan_create(&state, owner, named("support"), T0).unwrap().written_as(GroupId(100)).apply(&mut state);
    assert_eq!(err(&state, owner, named("support")), "User group 'support' already exists.");
    let sub = NewGroup { subgroups: Some(vec![77]), ..named("other") };
    assert_eq!(err(&state, owner, sub), "Invalid user group ID: 77");
}

#[test]
fn membership_steps_run_in_order_against_the_working_copy() {
    let (mut state, owner, member, id) = with_support();
    let change = MembershipChange {
        add: vec![member.0],
        delete: vec![owner.0],
        add_subgroups: vec![MEMBERS.0],
        delete_subgroups: vec![],
    };
    let applied = plan_membership(&state, owner, id, change, MembershipEndpoint::Members).unwrap().apply(&mut state);
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "user_group", "op": "add_members", "group_id": id, "user_ids": [member]}),
            json!({"type": "user_group", "op": "remove_members", "group_id": id, "user_ids": [owner]}),
            json!({"type": "user_group", "op": "add_subgroups", "group_id": id, "direct_subgroup_ids": [MEMBERS]}),
        ]
    );
    let group = state.group(id).unwrap();
    assert_eq!(group.members.iter().copied().collect::<Vec<_>>(), vec![member]);
    assert_eq!(group.subgroups.iter().copied().collect::<Vec<_>>(), vec![MEMBERS]);

    // Each step sees what the steps before it did; a refusal leaves the state alone.
    let again = MembershipChange { add: vec![owner.0], delete: vec![owner.0], ..MembershipChange::default() };
    let plan = plan_membership(&state, owner, id, again, MembershipEndpoint::Members).unwrap();
    assert_eq!(bodies(&plan.apply(&mut state.clone()).events).len(), 2);
    let twice = MembershipChange { add: vec![owner.0, member.0], ..MembershipChange::default() };
    let err = plan_membership(&state, owner, id, twice, MembershipEndpoint::Members).unwrap_err();
    assert_eq!(err.msg, format!("User {member} is already a member of this group"));
    let nothing = MembershipChange::default();
    let err = plan_membership(&state, owner, id, nothing, MembershipEndpoint::Subgroups).unwrap_err();
    assert_eq!(err.msg, "Nothing to do. Specify at least one of \"add\" or \"delete\".");
}

#[test]
fn members_join_and_leave_as_the_group_settings_allow() {
    let (mut state, owner, member, id) = with_support();
    let join = |state: &RealmState| {
        let change = MembershipChange { add: vec![member.0], ..MembershipChange::default() };
        plan_membership(state, member, id, change, MembershipEndpoint::Members)
    };
    assert_eq!(join(&state).unwrap_err().msg, "Insufficient permission");
    let open =
        GroupUpdate { settings: vec![("can_join_group".into(), json!({"new": MEMBERS.0}))], ..GroupUpdate::default() };
    let applied = plan_update(&state, owner, id, open).unwrap().apply(&mut state);
    assert_eq!(
        bodies(&applied.events),
        vec![json!({"type": "user_group", "op": "update", "group_id": id, "data": {"can_join_group": MEMBERS}})]
    );
    let applied = join(&state).unwrap().apply(&mut state);
    assert_eq!(applied.events[0].users, vec![owner, member]);
    assert!(state.group(id).unwrap().members.contains(&member));
}

#[test]
fn a_reactivated_group_is_announced_again_as_it_was() {
    let (mut state, owner, _, id) = with_support();
    plan_deactivate(&state, owner, id).unwrap().apply(&mut state);
    assert!(state.group(id).unwrap().deactivated);
    let update = GroupUpdate {
        name: Some("helpers".into()),
        deactivated: Some(false),
        settings: vec![("can_mention_group".into(), json!({"new": NOBODY.0}))],
        ..GroupUpdate::default()
    };
    let applied = plan_update(&state, owner, id, update).unwrap().apply(&mut state);
    let events = bodies(&applied.events);
    let ops: Vec<(&str, &Value)> =
        events.iter().map(|e| (e["op"].as_str().unwrap(), e.get("data").unwrap_or(&Value::Null))).collect();
    assert_eq!(
        ops,
        vec![
            ("update", &json!({"name": "helpers"})),
            ("update", &json!({"deactivated": false})),
            ("add", &Value::Null),
            ("update", &json!({"can_mention_group": NOBODY})),
        ]
    );
    // The rename of a deactivated group says so (for the queue filter); the new `add`
    // shows the new name and the settings as they were.
    assert_eq!(events[0]["deactivated"], json!(true));
    assert_eq!(
        (events[2]["group"]["name"].clone(), events[2]["for_reactivation"].clone()),
        (json!("helpers"), json!(true))
    );
    assert_eq!(events[2]["group"]["can_mention_group"], json!(EVERYONE));
    let group = state.group(id).unwrap();
    assert_eq!((group.name.as_str(), group.deactivated), ("helpers", false));
    // Nothing to change: no event, nothing written.
    let same = GroupUpdate { name: Some("helpers".into()), ..GroupUpdate::default() };
    assert!(plan_update(&state, owner, id, same).unwrap().apply(&mut state).events.is_empty());
}

// --- Against a database. ---

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

fn update_group(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: GroupId,
    update: GroupUpdate,
) -> ApiResult<()> {
    let change = plan_update(state, acting, id, update)?;
    commit(state, store, change)?;
    Ok(())
}

fn change_membership(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: GroupId,
    change: MembershipChange,
    endpoint: MembershipEndpoint,
) -> ApiResult<()> {
    let change = plan_membership(state, acting, id, change, endpoint)?;
    commit(state, store, change)?;
    Ok(())
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
