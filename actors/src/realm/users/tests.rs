//! Users: operations against a real state and database.

use serde_json::{json, Map};

use super::ops::*;
use super::UserRef;
use crate::realm::model::Role;
use crate::realm::profile_fields::{create_field, NewField};
use crate::realm::state::RealmState;
use crate::realm::tests::{add, setup};
use crate::store::Store;

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
