//! Users: plans applied to a state built in memory (no database), and changes committed
//! to a real one.

use serde_json::{json, Map, Value};

use super::ops::*;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::UserId;
use crate::realm::commit;
use crate::realm::model::Role;
use crate::realm::profile_fields::{create_field, NewField};
use crate::realm::state::RealmState;
use crate::realm::tests::{add, memory, setup};
use crate::realm::Change;
use crate::store::Store;

/// `PATCH /users/{user_id}` outside any actor: its events.
fn update_user(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    target: &UserRef,
    update: UserUpdate,
    config: &ServerConfig,
    now: i64,
) -> ApiResult<Vec<Outgoing>> {
    let change = plan_update(state, config, acting, target, update, now)?;
    Ok(commit(state, store, change)?.events)
}

fn bodies(events: &[Outgoing]) -> Vec<Value> {
    events.iter().map(|o| Value::Object(o.event.body().clone())).collect()
}

// --- Plans applied in memory. ---

#[test]
fn a_new_role_moves_the_user_between_system_groups() {
    let mut state = memory::state();
    let config = ServerConfig::default();
    let owner = UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let (members, full_members, moderators) = (5, 4, 3);
    let update = UserUpdate { role: Some(300), ..UserUpdate::default() };
    let change = plan_update(&state, &config, owner, &UserRef::Id(member), update, memory::T0).unwrap();
    let applied = change.apply(&mut state);
    assert!(applied.auth, "roles are in the authentication index");
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": member, "role": 300}}),
            // The role's own group first, then `role:fullmembers`.
            json!({"type": "user_group", "op": "remove_members", "group_id": members, "user_ids": [member]}),
            json!({"type": "user_group", "op": "remove_members", "group_id": full_members, "user_ids": [member]}),
            json!({"type": "user_group", "op": "add_members", "group_id": moderators, "user_ids": [member]}),
        ]
    );
    assert!(applied.events.iter().all(|o| o.users == vec![owner, member]));
    assert_eq!(state.user(member).unwrap().role, Role::Moderator);
    let direct: Vec<i64> = state.groups().filter(|g| g.members.contains(&member)).map(|g| g.id.0).collect();
    assert_eq!(direct, vec![moderators]);

    // Only owners touch the owner role; the last owner keeps it; an unknown role is
    // refused before anything else.
    let to = |role: i64| UserUpdate { role: Some(role), ..UserUpdate::default() };
    let admin = memory::user(&mut state, "a@acme.test", Role::Administrator);
    let err = plan_update(&state, &config, member, &UserRef::Id(owner), to(400), 0).unwrap_err();
    assert_eq!(err.msg, "Insufficient permission");
    let err = plan_update(&state, &config, admin, &UserRef::Id(owner), to(400), 0).unwrap_err();
    assert_eq!(err, crate::error::ApiError::must_be_owner());
    let err = plan_update(&state, &config, owner, &UserRef::Id(owner), to(400), 0).unwrap_err();
    assert_eq!(err.msg, "The owner permission cannot be removed from the only organization owner.");
    let err = plan_update(&state, &config, owner, &UserRef::Id(UserId(99)), to(7), 0).unwrap_err();
    assert_eq!(err.msg, "Invalid role: Value error, Not in the list of possible values");
}

#[test]
fn deactivating_a_human_takes_their_bots_and_closes_their_queues() {
    let mut state = memory::state();
    let owner = UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let bot = memory::user(&mut state, "bot@acme.test", Role::Member);
    let other = memory::user(&mut state, "bot2@acme.test", Role::Member);
    for id in [bot, other] {
        let user = state.user_mut(id).unwrap();
        user.is_bot = true;
        user.bot_owner_id = Some(if id == bot { member } else { owner });
    }
    let err = plan_deactivate(&state, member, &UserRef::Id(owner), None).unwrap_err();
    assert_eq!(err.msg, "Insufficient permission");
    let err = plan_deactivate(&state, owner, &UserRef::Id(owner), None).unwrap_err();
    assert_eq!(err.msg, "Cannot deactivate the only organization owner");
    let long = "x".repeat(2001);
    let err = plan_deactivate(&state, member, &UserRef::Id(owner), Some(&long)).unwrap_err();
    assert_eq!(err.msg, "deactivation_notification_comment is too long (limit: 2000 characters)");

    let applied = plan_deactivate(&state, owner, &UserRef::Id(member), None).unwrap().apply(&mut state);
    assert!(applied.auth);
    assert_eq!(applied.closed, vec![member, bot]);
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": member, "is_active": false}}),
            json!({"type": "realm_user", "op": "update", "person": {"user_id": bot, "is_active": false}}),
        ]
    );
    // Each is told to those still active once it is applied.
    assert_eq!(applied.events[0].users, vec![owner, bot, other]);
    assert_eq!(applied.events[1].users, vec![owner, other]);

    // Reactivation brings back the account alone, and closes nothing.
    let applied = plan_reactivate(&state, owner, &UserRef::Id(member)).unwrap().apply(&mut state);
    assert!(applied.auth && applied.closed.is_empty());
    assert_eq!(applied.events[0].users, vec![owner, member, other]);
    assert!(!state.user(bot).unwrap().is_active);
    let err = plan_reactivate(&state, owner, &UserRef::Id(member)).unwrap_err();
    assert_eq!(err.msg, "User is already active");
}

// --- Against a database. ---

/// Memory and database hold the same after a request changing every field at once,
/// and after a refused one.
#[test]
fn a_combined_update_leaves_memory_and_database_equal() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let admin = add(&mut state, &store, &config, "a@acme.test", Role::Administrator);
    let new = NewField {
        name: "Desk".into(),
        hint: String::new(),
        field_type: 1,
        field_data: Map::new(),
        display_in_profile_summary: false,
        required: false,
        editable_by_user: true,
        use_for_user_matching: false,
    };
    let (field, _) = create_field(&mut state, &store, owner, new).unwrap();
    let reload = |store: &Store| {
        let conn = store.conn().unwrap();
        RealmState::load_by_subdomain(&conn, "acme").unwrap().unwrap()
    };
    let users = |s: &RealmState| s.users().cloned().collect::<Vec<_>>();
    let groups = |s: &RealmState| s.groups().cloned().collect::<Vec<_>>();
    let mut owner_user = state.user(owner).unwrap().clone();
    owner_user.can_change_user_emails = true;
    state.put_user(owner_user);

    let update = UserUpdate {
        full_name: Some("Robert Admin".into()),
        role: Some(400),
        profile_data: Some(vec![json!({"id": field, "value": "4th floor"})]),
        new_email: Some("robert@acme.test".into()),
    };
    let events = update_user(&mut state, &store, owner, &UserRef::Id(admin), update, &config, 0).unwrap();
    let changed = state.user(admin).unwrap();
    assert_eq!(
        (changed.role, changed.full_name.as_str(), changed.delivery_email.as_str()),
        (Role::Member, "Robert Admin", "robert@acme.test")
    );
    assert_eq!(changed.profile_data.len(), 1);
    let kinds: Vec<&str> = events.iter().map(|o| o.event.json()).collect();
    assert!(kinds[0].contains(r#""role":400"#), "{kinds:?}");
    let reloaded = reload(&store);
    // `can_change_user_emails` was granted in memory only, for this test.
    assert_eq!(users(&reloaded)[1..], users(&state)[1..]);
    assert_eq!(groups(&reloaded), groups(&state));

    // A refused request (its profile data names no field) changes nothing anywhere.
    let update = UserUpdate {
        full_name: Some("Someone Else".into()),
        role: Some(300),
        profile_data: Some(vec![json!({"id": 999, "value": "x"})]),
        new_email: None,
    };
    let err = update_user(&mut state, &store, owner, &UserRef::Id(admin), update, &config, 0).unwrap_err();
    assert_eq!(err.msg, "Field id 999 not found.");
    assert_eq!(state.user(admin).unwrap().full_name, "Robert Admin");
    assert_eq!(users(&reload(&store))[1..], users(&state)[1..]);
}

/// An imported stub's first login: no longer a stub, joined then; its later logins change
/// nothing (FL 433, 475).
#[test]
fn an_imported_stubs_first_login_makes_it_an_ordinary_account() {
    let mut state = memory::state();
    let stub = memory::user(&mut state, "s@acme.test", Role::Member);
    let user = state.user_mut(stub).unwrap();
    user.is_imported_stub = true;
    user.first_login_pending = true;
    let when = memory::T0 + 86_400;
    let applied = plan_first_login(&state, stub, when).unwrap().apply(&mut state);
    let joined = crate::realm::format::format_date_joined(when);
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": stub, "is_imported_stub": false}}),
            json!({"type": "realm_user", "op": "update", "person": {"user_id": stub, "date_joined": joined}}),
        ]
    );
    let user = state.user(stub).unwrap();
    assert!(!user.is_imported_stub && !user.first_login_pending && user.date_joined == when);
    assert!(plan_first_login(&state, stub, when + 1).is_none());
}
