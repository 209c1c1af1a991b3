//! Saved snippets planned and applied on an organization built in memory.

use serde_json::{json, Value};

use super::ops::{plan_create, plan_delete, plan_edit, SnippetChange};
use super::saved_snippets_list;
use crate::error::ErrorCode;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{realm, user, T0};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

/// Applies a change as if written with id `id` for a new snippet.
fn apply(state: &mut RealmState, change: SnippetChange, id: i64) -> (i64, Vec<(Value, Vec<UserId>)>) {
    let change = match change {
        SnippetChange::Create { realm_id, user_id, mut snippet } => {
            snippet.id = id;
            SnippetChange::Create { realm_id, user_id, snippet }
        }
        other => other,
    };
    let applied = change.apply(state);
    (applied.output, applied.events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect())
}

#[test]
fn snippets_are_personal_and_each_change_is_told_to_their_owner() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let change = plan_create(&state, hamlet, "Greeting".into(), "Hello!".into(), T0).unwrap();
    let snippet = json!({"id": 7, "title": "Greeting", "content": "Hello!", "date_created": T0});
    let add = json!({"type": "saved_snippets", "op": "add", "saved_snippet": snippet});
    assert_eq!(apply(&mut state, change, 7), (7, vec![(add, vec![hamlet])]));
    assert_eq!(saved_snippets_list(&state, othello), json!([]));

    let missing = |state: &RealmState, who: UserId, id: i64| {
        let err = plan_edit(state, who, id, Some("x".into()), None).unwrap_err();
        let deleted = plan_delete(state, who, id).unwrap_err();
        assert_eq!(err, deleted);
        (err.status, err.code, err.msg)
    };
    let not_found = (404, Some(ErrorCode::BadRequest), "Saved snippet does not exist.".to_owned());
    assert_eq!(missing(&state, othello, 7), not_found);
    assert_eq!(missing(&state, hamlet, 8), not_found);

    let change = plan_edit(&state, hamlet, 7, None, Some("Hi there".into())).unwrap();
    let snippet = json!({"id": 7, "title": "Greeting", "content": "Hi there", "date_created": T0});
    let update = json!({"type": "saved_snippets", "op": "update", "saved_snippet": snippet});
    assert_eq!(apply(&mut state, change, 0), (7, vec![(update, vec![hamlet])]));
    let change = plan_create(&state, hamlet, "Bye".into(), "Bye!".into(), T0 + 5).unwrap();
    apply(&mut state, change, 9);
    assert_eq!(
        saved_snippets_list(&state, hamlet),
        json!([{"id": 7, "title": "Greeting", "content": "Hi there", "date_created": T0},
               {"id": 9, "title": "Bye", "content": "Bye!", "date_created": T0 + 5}])
    );
    let change = plan_delete(&state, hamlet, 7).unwrap();
    let remove = json!({"type": "saved_snippets", "op": "remove", "saved_snippet_id": 7});
    assert_eq!(apply(&mut state, change, 0), (7, vec![(remove, vec![hamlet])]));
    assert_eq!(saved_snippets_list(&state, hamlet).as_array().map(Vec::len), Some(1));
}

#[test]
fn titles_and_contents_are_stripped_as_python_strips_them() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let change = plan_create(&state, hamlet, "\u{1c}Title\u{1f}".into(), "\u{1d}Body".into(), T0).unwrap();
    apply(&mut state, change, 3);
    let change = plan_edit(&state, hamlet, 3, None, Some("New\u{1e}".into())).unwrap();
    apply(&mut state, change, 0);
    assert_eq!(
        saved_snippets_list(&state, hamlet),
        json!([{"id": 3, "title": "Title", "content": "New", "date_created": T0}])
    );
}
