//! Linkifiers planned and applied on an organization built in memory.

use serde_json::{json, Value};

use super::format::linkifiers_list;
use super::ops::{check, plan_add, plan_remove, plan_reorder, plan_update, Extras, LinkifierChange};
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{realm, user};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

/// Applies a change as if written, a new linkifier getting id `id`.
fn apply(state: &mut RealmState, change: LinkifierChange, id: i64) -> (i64, Vec<(Value, Vec<UserId>)>) {
    let change = match change {
        LinkifierChange::Add { realm_id, mut linkifier } => {
            linkifier.id = id;
            LinkifierChange::Add { realm_id, linkifier }
        }
        other => other,
    };
    let applied = change.apply(state);
    (applied.output, applied.events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect())
}

fn refusal(state: &RealmState, pattern: &str, template: &str) -> (String, Value) {
    let err = check(state, 0, pattern, template).unwrap_err();
    (err.msg, err.data.get("errors").cloned().unwrap_or_default())
}

#[test]
fn checks_in_djangos_order_with_zulips_messages() {
    let state = realm();
    let blank = json!(["This field cannot be blank."]);
    assert_eq!(
        refusal(&state, "", ""),
        ("This field cannot be blank.".into(), json!({"pattern": blank, "url_template": blank}))
    );
    assert_eq!(
        refusal(&state, "(foo", "{id"),
        (
            "Invalid URL template.".into(),
            json!({"url_template": ["Invalid URL template."], "__all__": ["Bad regular expression: missing ): (foo"]})
        )
    );
    assert_eq!(
        refusal(&state, r"ZUL-(?P<id>\d+)", "$fgfg").0,
        "Group 'id' in linkifier pattern is not present in URL template."
    );
    assert_eq!(
        refusal(&state, r"ZUL-(?P<id>\d+)", "https://realm.com/my_realm_filter/{hello}").0,
        "Group 'hello' in URL template is not present in linkifier pattern."
    );
    assert_eq!(
        refusal(&state, r"ZUL-(?P<id>\d+)-(?P<hello>\d+)-(?P<world>\d+)", "https://realm.com/my_realm_filter/{hello}")
            .0,
        "Group 'id' in linkifier pattern is not present in URL template."
    );
    assert!(check(&state, 0, r"ZULZ-(?P<hello>\d+)-(?P<world>\d+)", "https://realm.com/{hello}/{world}").is_ok());
    assert!(check(&state, 0, "3#123", "https://example.com").is_ok());
}

#[test]
fn administrators_add_update_reorder_and_remove_and_everyone_is_told() {
    let mut state = realm();
    let iago = user(&mut state, "iago", Role::Administrator);
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let must_be_admin =
        plan_add(&state, hamlet, "#(?P<id>[0-9]+)", "https://e.com/{id}", Extras::default()).unwrap_err();
    assert_eq!(must_be_admin.msg, "Must be an organization administrator");

    let change = plan_add(&state, iago, "  #(?P<id>[0-9]+) ", " https://e.com/{id}\n", Extras::default()).unwrap();
    let one = json!({"pattern": "#(?P<id>[0-9]+)", "url_template": "https://e.com/{id}", "id": 4,
                     "example_input": null, "reverse_template": null, "alternative_url_templates": []});
    let event = json!({"type": "realm_linkifiers", "realm_linkifiers": [one]});
    assert_eq!(apply(&mut state, change, 4), (4, vec![(event, vec![iago, hamlet])]));

    let duplicate = plan_add(&state, iago, "#(?P<id>[0-9]+)", "https://f.com/{id}", Extras::default()).unwrap_err();
    assert_eq!(duplicate.msg, "Realm filter with this Realm and Pattern already exists.");
    let change = plan_add(&state, iago, "ZUL-(?P<id>[0-9]+)", "https://z.com/{id}", Extras::default()).unwrap();
    apply(&mut state, change, 9);
    assert_eq!(
        state.linkifiers().topic_links_json("#1 ZUL-2"),
        json!([
            {"text": "#1", "url": "https://e.com/1"}, {"text": "ZUL-2", "url": "https://z.com/2"}
        ])
    );

    assert_eq!(plan_update(&state, iago, 5, "(", "x", Extras::default()).unwrap_err().msg, "Linkifier not found.");
    let extras = Extras {
        example_input: Some("#7".into()),
        reverse_template: Some("#{id}".into()),
        alternative_url_templates: Some(vec!["https://old.e.com/{id}".into()]),
    };
    let change = plan_update(&state, iago, 4, "#(?P<id>[0-9]+)", "https://e.com/{id}", extras).unwrap();
    apply(&mut state, change, 0);
    // An update keeps the fields it does not name; an empty text clears one.
    let extras = Extras { reverse_template: Some(String::new()), ..Extras::default() };
    let change = plan_update(&state, iago, 4, "#(?P<id>[0-9]+)", "https://e.com/t/{id}", extras).unwrap();
    apply(&mut state, change, 0);
    let updated = linkifiers_list(state.linkifiers())[0].clone();
    assert_eq!(
        (
            updated["example_input"].clone(),
            updated["reverse_template"].clone(),
            updated["alternative_url_templates"].clone()
        ),
        (json!("#7"), json!(null), json!(["https://old.e.com/{id}"]))
    );
    assert_eq!(
        plan_reorder(&state, iago, vec![9, 4, 9]).unwrap_err().msg,
        "The ordered list must not contain duplicated linkifiers"
    );
    assert_eq!(
        plan_reorder(&state, iago, vec![9]).unwrap_err().msg,
        "The ordered list must enumerate all existing linkifiers exactly once"
    );
    let change = plan_reorder(&state, iago, vec![9, 4]).unwrap().unwrap();
    apply(&mut state, change, 0);
    let ids: Vec<i64> = state.linkifiers().list().map(|l| l.id).collect();
    assert_eq!(ids, [9, 4]);
    assert_eq!(linkifiers_list(state.linkifiers())[1]["url_template"], "https://e.com/t/{id}");

    assert_eq!(plan_remove(&state, iago, 5).unwrap_err().msg, "Linkifier not found.");
    let change = plan_remove(&state, iago, 9).unwrap();
    apply(&mut state, change, 0);
    let change = plan_remove(&state, iago, 4).unwrap();
    apply(&mut state, change, 0);
    assert!(plan_reorder(&state, iago, vec![]).unwrap().is_none(), "nothing to order: no event");
}

/// Reverse linkification (FL 471, 478): the example must match the pattern whole and come
/// back from the reverse template; alternative templates are URL templates of the pattern's
/// groups; an update keeps what it does not name, and an empty text clears it.
#[test]
fn reverse_templates_must_give_back_their_example() {
    use super::ops::check_extras;
    use crate::markdown::linkifier::Linkifier;
    let base = Linkifier {
        id: 1,
        pattern: "#(?P<id>[0-9]+)".into(),
        url_template: "https://e.com/{id}".into(),
        example_input: Some("#42".into()),
        reverse_template: Some("#{id}".into()),
        alternative_url_templates: vec!["https://old.e.com/issues/{id}".into()],
    };
    assert_eq!(check_extras(&base), Ok(()));
    let with = |f: &dyn Fn(&mut Linkifier)| {
        let mut l = base.clone();
        f(&mut l);
        check_extras(&l).map_err(|e| e.msg)
    };
    assert_eq!(with(&|l| l.example_input = None), Err("An example input is required for a reverse template.".into()));
    assert_eq!(
        with(&|l| l.example_input = Some("#4x".into())),
        Err("Example input does not match the linkifier pattern.".into())
    );
    assert_eq!(
        with(&|l| l.reverse_template = Some("# {id}".into())),
        Err("Reverse template does not reproduce the example input.".into())
    );
    assert!(with(&|l| l.reverse_template = Some("{{#}}{id}".into())).is_err());
    assert_eq!(with(&|l| l.reverse_template = None), Ok(()));
    assert_eq!(
        with(&|l| l.alternative_url_templates = vec!["https://x/{nope}".into()]),
        Err("Group 'nope' in URL template is not present in linkifier pattern.".into())
    );
    let braces = Linkifier {
        pattern: "\\{(?P<id>[0-9]+)\\}".into(),
        url_template: "https://e.com/{id}".into(),
        example_input: Some("{7}".into()),
        reverse_template: Some("{{{id}}}".into()),
        ..base.clone()
    };
    assert_eq!(check_extras(&braces), Ok(()));
}
