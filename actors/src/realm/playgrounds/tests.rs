//! Playgrounds planned and applied on an organization built in memory.

use serde_json::{json, Value};

use super::ops::{check, plan_add, plan_remove, PlaygroundChange};
use super::AddPlayground;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{realm, set_realm, user};
use crate::realm::model::{Playground, Role};
use crate::realm::state::RealmState;
use crate::realm::Change;

fn add(acting: UserId, name: &str, language: &str, template: Option<&str>) -> AddPlayground {
    AddPlayground {
        acting,
        name: name.into(),
        pygments_language: language.into(),
        url_template: template.map(str::to_owned),
    }
}

/// Applies a change as if written, a new playground getting id `id`.
fn apply(state: &mut RealmState, change: PlaygroundChange, id: i64) -> Vec<(Value, Vec<UserId>)> {
    let change = match change {
        PlaygroundChange::Add { realm_id, mut playground } => {
            playground.id = id;
            PlaygroundChange::Add { realm_id, playground }
        }
        other => other,
    };
    let applied = change.apply(state);
    applied.events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect()
}

fn refusal(state: &RealmState, name: &str, language: &str, template: &str) -> (String, Value) {
    let playground =
        Playground { id: 0, name: name.into(), pygments_language: language.into(), url_template: template.into() };
    let err = check(state, &playground).unwrap_err();
    (err.msg, err.data.get("errors").cloned().unwrap_or_default())
}

#[test]
fn the_model_checks_come_in_djangos_order_with_zulips_messages() {
    let mut state = realm();
    let blank = json!(["This field cannot be blank."]);
    let missing_code = r#"Missing the required variable "code" in the URL template"#;
    assert_eq!(
        refusal(&state, "", "", ""),
        (
            "This field cannot be blank.".into(),
            json!({"url_template": blank, "name": blank, "pygments_language": blank, "__all__": [missing_code]})
        )
    );
    assert_eq!(
        refusal(&state, "Python", "Python", "https://python.example.com?code={code"),
        ("Invalid URL template.".into(), json!({"url_template": ["Invalid URL template."]}))
    );
    assert_eq!(refusal(&state, "Python", "Python", "https://python.example.com").0, missing_code);
    assert_eq!(
        refusal(&state, "Python", "Python", "https://python.example.com?code={code}&lang={lang}").0,
        r#""code" should be the only variable present in the URL template"#
    );
    let python = Playground {
        id: 1,
        name: "Python playground".into(),
        pygments_language: "Python".into(),
        url_template: "https://python.example.com?code={code}".into(),
    };
    assert!(check(&state, &python).is_ok());
    state.set_playgrounds(vec![python.clone()]);
    let taken = "Realm playground with this Realm, Pygments language and Name already exists.";
    assert_eq!(
        refusal(&state, "Python playground", "Python", "https://other.example.com/{code}"),
        (taken.into(), json!({"__all__": [taken]}))
    );
    // The same name for another language, another name for the same one; case counts.
    assert!(check(&state, &Playground { pygments_language: "Python3".into(), ..python.clone() }).is_ok());
    assert!(check(&state, &Playground { name: "python playground".into(), ..python.clone() }).is_ok());
}

#[test]
fn adding_checks_the_role_and_the_language_first_then_strips() {
    let mut state = realm();
    let iago = user(&mut state, "iago", Role::Administrator);
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let err = |msg: AddPlayground, state: &RealmState| plan_add(state, msg).unwrap_err().msg;
    assert_eq!(err(add(hamlet, "P", "Python", None), &state), "Must be an organization administrator");
    let long = "x".repeat(41);
    assert_eq!(err(add(iago, "P", &long, None), &state), "pygments_language is too long (limit: 40 characters)");
    assert_eq!(err(add(iago, "P", "a$b", None), &state), "Invalid characters in pygments language");
    assert_eq!(err(add(iago, "P", "Python", None), &state), "Missing 'url_template' argument");
    // Python's `$` lets a final newline through, then the value is stripped.
    let change =
        plan_add(&state, add(iago, " Python 3 ", "c++, objective-c#/x.y\n", Some(" https://x.example/{code} ")))
            .unwrap();
    let events = apply(&mut state, change, 7);
    let list = json!([{"id": 7, "name": "Python 3", "pygments_language": "c++, objective-c#/x.y",
                       "url_template": "https://x.example/{code}"}]);
    assert_eq!(events, vec![(json!({"type": "realm_playgrounds", "realm_playgrounds": list}), vec![iago, hamlet])]);
}

#[test]
fn removing_clears_the_default_code_block_language_that_was_its_own() {
    let mut state = realm();
    let iago = user(&mut state, "iago", Role::Administrator);
    let change = plan_add(&state, add(iago, "Rust", "Rust", Some("https://play.rust-lang.org/?code={code}"))).unwrap();
    apply(&mut state, change, 1);
    let change = plan_add(&state, add(iago, "Go", "Go", Some("https://go.dev/play/?code={code}"))).unwrap();
    apply(&mut state, change, 2);
    assert_eq!(plan_remove(&state, iago, 3).unwrap_err().msg, "Invalid playground");
    set_realm(&mut state, "default_code_block_language", json!("Rust"));
    // Another language's playground leaves the default alone.
    let change = plan_remove(&state, iago, 2).unwrap();
    let events = apply(&mut state, change, 0);
    assert_eq!(events.len(), 1);
    let change = plan_remove(&state, iago, 1).unwrap();
    let events = apply(&mut state, change, 0);
    assert_eq!(
        events,
        vec![
            (
                json!({"type": "realm", "op": "update", "property": "default_code_block_language", "value": ""}),
                vec![iago]
            ),
            (json!({"type": "realm_playgrounds", "realm_playgrounds": []}), vec![iago]),
        ]
    );
    assert_eq!(state.realm().settings["default_code_block_language"], json!(""));
}
