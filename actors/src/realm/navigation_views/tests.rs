//! Navigation views planned and applied on an organization built in memory.

use serde_json::{json, Value};

use super::navigation_views_list;
use super::ops::{plan_add, plan_remove, plan_update};
use crate::error::ErrorCode;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{realm, user};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn events(state: &mut RealmState, change: impl Change) -> Vec<(Value, Vec<UserId>)> {
    change.apply(state).events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect()
}

fn name(n: &str) -> Option<String> {
    Some(n.to_owned())
}

#[test]
fn views_are_added_as_zulip_checks_them_and_told_to_their_owner() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let add_err = |state: &RealmState, fragment: &str, n: Option<String>| {
        plan_add(state, hamlet, fragment.into(), true, n).unwrap_err().msg
    };
    assert_eq!(add_err(&state, "inbox", name("Mine")), "Built-in views cannot have a custom name.");
    assert_eq!(add_err(&state, "narrow/is/alerted", None), "Custom views must have a valid name.");

    let change = plan_add(&state, hamlet, "recent".into(), true, None).unwrap();
    let view = json!({"fragment": "recent", "is_pinned": true, "name": null});
    let add = json!({"type": "navigation_view", "op": "add", "navigation_view": view});
    assert_eq!(events(&mut state, change), vec![(add, vec![hamlet])]);
    let change = plan_add(&state, hamlet, "narrow/is/alerted".into(), false, name("Alerts")).unwrap();
    events(&mut state, change);
    let exists = "Navigation view already exists.";
    assert_eq!(add_err(&state, "recent", None), exists);
    assert_eq!(add_err(&state, "narrow/is/private", name("Alerts")), exists);
    // Views are personal.
    assert!(plan_add(&state, othello, "recent".into(), false, None).is_ok());
    assert_eq!(navigation_views_list(&state, othello), json!([]));
    assert_eq!(
        navigation_views_list(&state, hamlet),
        json!([{"fragment": "recent", "is_pinned": true, "name": null},
               {"fragment": "narrow/is/alerted", "is_pinned": false, "name": "Alerts"}])
    );
}

#[test]
fn views_are_changed_and_removed_in_zulips_order() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    for (fragment, n) in [("inbox", None), ("narrow/is/alerted", name("Alerts")), ("narrow/is/dm", name("DMs"))] {
        let change = plan_add(&state, hamlet, fragment.into(), true, n).unwrap();
        events(&mut state, change);
    }
    let update_err = |state: &RealmState, who: UserId, fragment: &str, pinned: Option<bool>, n: Option<String>| {
        let err = plan_update(state, who, fragment, pinned, n).unwrap_err();
        (err.status, err.code, err.msg)
    };
    let bad = |msg: &str| (400, Some(ErrorCode::BadRequest), msg.to_owned());
    let missing = (404, Some(ErrorCode::NotFound), "Navigation view does not exist.".to_owned());
    assert_eq!(update_err(&state, hamlet, "inbox", None, name("x")), bad("Built-in views cannot have a custom name."));
    // A name in use is refused before the view is looked up, even its own name.
    assert_eq!(update_err(&state, hamlet, "nowhere", None, name("DMs")), bad("Navigation view already exists."));
    assert_eq!(update_err(&state, hamlet, "narrow/is/dm", None, name("DMs")), bad("Navigation view already exists."));
    assert_eq!(update_err(&state, hamlet, "nowhere", Some(true), None), missing);
    assert_eq!(update_err(&state, othello, "inbox", Some(true), None), missing);

    let change = plan_update(&state, hamlet, "narrow/is/alerted", Some(false), name("Alert words")).unwrap();
    let update = json!({"type": "navigation_view", "op": "update", "fragment": "narrow/is/alerted",
                        "data": {"name": "Alert words", "is_pinned": false}});
    assert_eq!(events(&mut state, change), vec![(update, vec![hamlet])]);
    let change = plan_update(&state, hamlet, "inbox", None, None).unwrap();
    let update = json!({"type": "navigation_view", "op": "update", "fragment": "inbox", "data": {}});
    assert_eq!(events(&mut state, change), vec![(update, vec![hamlet])]);

    let err = plan_remove(&state, othello, "inbox").unwrap_err();
    assert_eq!((err.status, err.code, err.msg), missing);
    let change = plan_remove(&state, hamlet, "inbox").unwrap();
    let remove = json!({"type": "navigation_view", "op": "remove", "fragment": "inbox"});
    assert_eq!(events(&mut state, change), vec![(remove, vec![hamlet])]);
    assert_eq!(
        navigation_views_list(&state, hamlet),
        json!([{"fragment": "narrow/is/alerted", "is_pinned": false, "name": "Alert words"},
               {"fragment": "narrow/is/dm", "is_pinned": true, "name": "DMs"}])
    );
}
