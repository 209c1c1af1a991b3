//! Attachments planned and applied on a state built in memory.

use serde_json::json;

use super::ops::{plan_create, plan_delete, NewUpload};
use crate::ids::UserId;
use crate::realm::fixture_tests::{human, organization};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn state() -> RealmState {
    let mut state = organization();
    human(&mut state, UserId(10), "a@acme.example", "A", "key-a", Role::Member);
    human(&mut state, UserId(11), "b@acme.example", "B", "key-b", Role::Member);
    state
}

fn upload(path: &str, size: i64) -> NewUpload {
    NewUpload { path_id: path.into(), name: "a.txt".into(), size, content_type: Some("text/plain".into()), image: None }
}

#[test]
fn an_upload_becomes_its_owners_attachment_with_an_add_event() {
    let mut state = state();
    let applied = plan_create(&state, UserId(10), upload("1/ab/x/a.txt", 5), 100).unwrap().apply(&mut state);
    assert_eq!(applied.events[0].users, vec![UserId(10)]);
    let event = serde_json::Value::Object(applied.events[0].event.body().clone());
    assert_eq!(
        event,
        // Since feature levels 443 and 472: seconds, and `message_ids`.
        json!({"type": "attachment", "op": "add", "attachment": {
            "id": 0, "name": "a.txt", "path_id": "1/ab/x/a.txt", "size": 5, "create_time": 100, "message_ids": []},
            "upload_space_used": 5})
    );
    assert_eq!(state.uploads().space_used(), 5);
    assert_eq!(plan_create(&state, UserId(999), upload("1/ab/y/a.txt", 5), 100).unwrap_err().msg, "No such user");
}

#[test]
fn only_the_owner_deletes() {
    let mut state = state();
    let (owner, other) = (UserId(10), UserId(11));
    let applied = plan_create(&state, owner, upload("1/ab/x/a.txt", 5), 100).unwrap().apply(&mut state);
    let id = applied.output;
    assert_eq!(plan_delete(&state, other, id).unwrap_err().msg, "Invalid attachment");
    assert_eq!(plan_delete(&state, owner, id + 1).unwrap_err().msg, "Invalid attachment");
    let applied = plan_delete(&state, owner, id).unwrap().apply(&mut state);
    assert_eq!(applied.output, "1/ab/x/a.txt");
    assert_eq!(
        serde_json::Value::Object(applied.events[0].event.body().clone()),
        json!({"type": "attachment", "op": "remove", "attachment": {"id": id}, "upload_space_used": 0})
    );
    assert!(state.uploads().by_id(id).is_none());
}
