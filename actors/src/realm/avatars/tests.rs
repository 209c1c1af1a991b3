//! Avatar changes planned and applied on a state built in memory.

use serde_json::{json, Value};

use super::ops::plan_change;
use crate::ids::UserId;
use crate::realm::fixture_tests::{human, organization};
use crate::realm::model::Role;
use crate::realm::Change;

#[test]
fn an_upload_bumps_the_version_and_tells_everyone() {
    let mut state = organization();
    human(&mut state, UserId(10), "a@acme.example", "A", "k1", Role::Member);
    human(&mut state, UserId(11), "b@acme.example", "B", "k2", Role::Administrator);
    let path = crate::uploads::names::avatar_path(state.realm().id, UserId(10));
    let applied = plan_change(&state, UserId(10), true).unwrap().apply(&mut state);
    assert_eq!(applied.output, format!("/user_avatars/{path}.png?version=2"));
    assert_eq!(
        Value::Object(applied.events[0].event.body().clone()),
        json!({"type": "realm_user", "op": "update", "person": {
            "user_id": 10, "avatar_source": "U", "avatar_url": applied.output,
            "avatar_url_medium": format!("/user_avatars/{path}-medium.png?version=2"), "avatar_version": 2}})
    );
    assert_eq!(applied.events[0].users, vec![UserId(10), UserId(11)]);
    let back = plan_change(&state, UserId(10), false).unwrap().apply(&mut state);
    // Back to the organization's default, a Jdenticon in a new organization.
    assert_eq!(back.output, format!("/user_avatars/{}/jdenticon/10.png?version=3", state.realm().id.0));

    let mut realm = state.realm().clone();
    realm.settings.insert("avatar_changes_disabled".into(), json!(true));
    state.set_realm(realm);
    assert_eq!(
        plan_change(&state, UserId(10), true).unwrap_err().msg,
        "Avatar changes are disabled in this organization."
    );
    assert!(plan_change(&state, UserId(11), true).is_ok());
}
