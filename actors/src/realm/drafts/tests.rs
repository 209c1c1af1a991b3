//! Drafts: their shape as Zulip's pydantic model checks it, their checks against an
//! organization built in memory, and their changes against a temporary database.

use serde_json::{json, Value};

use super::input::{parse_draft, parse_drafts, DraftData, DraftKind};
use super::ops::{plan_create, plan_delete, plan_edit, validated};
use crate::error::ErrorCode;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{channel, edit_user, realm, user, T0};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::tests::{add, setup};
use crate::realm::{commit, Change};
use crate::store::drafts::DraftFields;

const NOW: i64 = T0 * 1_000_000 + 250_000;

fn shape_error(raw: &str) -> String {
    parse_drafts(raw).unwrap_err().msg
}

#[test]
fn the_shape_is_checked_field_by_field_with_pydantics_messages() {
    let ok = r#"[{"type": "stream", "to": [3], "topic": "t", "content": "  hi \n", "timestamp": 1.5}]"#;
    let parsed = parse_drafts(ok).unwrap();
    let expected = DraftData {
        kind: DraftKind::Channel,
        to: vec![3],
        topic: "t".into(),
        content: "hi".into(),
        timestamp: Some(1.5),
    };
    assert_eq!(parsed, vec![expected]);
    let none = r#"[{"type": "", "to": [], "topic": "", "content": "x", "timestamp": null}]"#;
    assert_eq!(parse_drafts(none).unwrap()[0].timestamp, None);
    assert_eq!(parse_drafts("[]").unwrap(), Vec::new());
    let cases = [
        ("[", "drafts is not valid JSON"),
        ("{}", "drafts is not a list"),
        ("[[]]", "drafts[0] is not a dict"),
        (r#"[{}]"#, r#"drafts[0]["type"] field is missing: Field required"#),
        (r#"[{"type": "channel"}]"#, r#"Invalid drafts[0]["type"]"#),
        (r#"[{"type": 1, "to": []}]"#, r#"Invalid drafts[0]["type"]"#),
        (r#"[{"type": ""}]"#, r#"drafts[0]["to"] field is missing: Field required"#),
        (r#"[{"type": "", "to": 3}]"#, r#"drafts[0]["to"] is not a list"#),
        (r#"[{"type": "", "to": [1, true]}]"#, r#"drafts[0]["to"][1] is not an integer"#),
        (r#"[{"type": "", "to": [1.0]}]"#, r#"drafts[0]["to"][0] is not an integer"#),
        (r#"[{"type": "", "to": [], "topic": 5}]"#, r#"drafts[0]["topic"] is not a string"#),
        (r#"[{"type": "", "to": [], "topic": ""}]"#, r#"drafts[0]["content"] field is missing: Field required"#),
        (r#"[{"type": "", "to": [], "topic": "", "content": " \n "}]"#, r#"drafts[0]["content"] cannot be blank"#),
        (
            r#"[{"type": "", "to": [], "topic": "", "content": "x", "timestamp": "1"}]"#,
            r#"drafts[0]["timestamp"]["int"] is not an integer"#,
        ),
        // Unknown keys come after every field's own error.
        (
            r#"[{"type": "", "to": [], "topic": "", "content": "x", "id": 4}]"#,
            r#"Argument "id" at drafts[0]["id"] is unexpected"#,
        ),
        (r#"[{"type": "", "to": [], "topic": 3, "id": 4}]"#, r#"drafts[0]["topic"] is not a string"#),
        // The first bad draft is named.
        (r#"[{"type": "", "to": [], "topic": "", "content": "x"}, {"type": "x"}]"#, r#"Invalid drafts[1]["type"]"#),
    ];
    for (raw, msg) in cases {
        assert_eq!(shape_error(raw), msg, "{raw}");
    }
    assert_eq!(parse_draft("[]").unwrap_err().msg, "draft is not a dict");
    assert_eq!(parse_draft(r#"{"type": "x"}"#).unwrap_err().msg, r#"Invalid draft["type"]"#);
}

fn draft(kind: DraftKind, to: &[i64], topic: &str, content: &str, timestamp: Option<f64>) -> DraftData {
    DraftData { kind, to: to.to_vec(), topic: topic.into(), content: content.into(), timestamp }
}

fn fields(kind: &str, to: &[i64], topic: &str, content: &str, micros: i64) -> DraftFields {
    DraftFields {
        kind: kind.into(),
        to: to.to_vec(),
        topic: topic.into(),
        content: content.into(),
        last_edit_micros: micros,
    }
}

#[test]
fn drafts_are_checked_and_addressed_as_zulip_does() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let iago = user(&mut state, "iago", Role::Member);
    let gone = user(&mut state, "gone", Role::Member);
    edit_user(&mut state, gone, |u| u.is_active = false);
    let general = channel(&mut state, "general", false, &[hamlet]);
    let secret = channel(&mut state, "secret", true, &[othello]);
    let me = state.user(hamlet).unwrap().clone();
    let check = |d: DraftData| validated(&state, &me, d, NOW, "draft[\"timestamp\"]");
    let err = |d: DraftData| check(d).unwrap_err().msg;
    use DraftKind::{Channel, Direct, None};

    // Channel drafts: the topic truncated, one channel the user may read.
    let long = "é".repeat(70);
    let ok = check(draft(Channel, &[general.0], &long, "hi", Some(1_600_000_000.123_456_7))).unwrap();
    let topic = format!("{}...", "é".repeat(57));
    assert_eq!(ok, fields("stream", &[general.0], &topic, "hi", 1_600_000_000_123_457));
    assert_eq!(err(draft(Channel, &[general.0], "a\0b", "hi", Option::None)), "Topic must not contain null bytes");
    let beyond = format!("{}\0", "x".repeat(60));
    assert!(check(draft(Channel, &[general.0], &beyond, "hi", Option::None)).is_ok(), "truncated before the check");
    let exactly_one = "Must specify exactly 1 channel ID for channel messages";
    assert_eq!(err(draft(Channel, &[], "t", "hi", Option::None)), exactly_one);
    assert_eq!(err(draft(Channel, &[general.0, general.0], "t", "hi", Option::None)), exactly_one);
    assert_eq!(err(draft(Channel, &[secret.0], "t", "hi", Option::None)), "Invalid channel ID");
    assert_eq!(err(draft(Channel, &[999], "t", "hi", Option::None)), "Invalid channel ID");
    // Content first, then the timestamp, then the addressee.
    assert_eq!(err(draft(Channel, &[], "t", "a\0", Some(-1.0))), "Message must not contain null bytes");
    assert_eq!(err(draft(Channel, &[], "t", "hi", Some(-1.0))), "Timestamp must not be negative.");
    assert_eq!(err(draft(None, &[], "", "hi", Some(1e12))), "draft[\"timestamp\"] is too large");
    assert_eq!(check(draft(None, &[], "", "hi", Some(-0.000_000_1))).unwrap().last_edit_micros, 0);

    // Direct drafts: no topic; the others ascending, or oneself.
    let to_others = check(draft(Direct, &[iago.0, othello.0, hamlet.0, iago.0], "t", "hi", Option::None)).unwrap();
    assert_eq!(to_others, fields("private", &[othello.0, iago.0], "", "hi", NOW));
    assert_eq!(check(draft(Direct, &[hamlet.0], "", "hi", Option::None)).unwrap().to, vec![hamlet.0]);
    assert_eq!(check(draft(Direct, &[hamlet.0, othello.0], "", "hi", Option::None)).unwrap().to, vec![othello.0]);
    assert_eq!(
        err(draft(Direct, &[othello.0, 99_999_999_999_999], "", "hi", Option::None)),
        "Invalid user ID 99999999999999"
    );
    assert_eq!(err(draft(Direct, &[gone.0], "", "hi", Option::None)), "'gone@acme.test' is no longer using Zulip.");
    // A direct draft to nobody, and an unaddressed one (whatever its `to`), are unaddressed.
    assert_eq!(check(draft(Direct, &[], "t", "hi", Option::None)).unwrap(), fields("", &[], "", "hi", NOW));
    assert_eq!(check(draft(None, &[999], "t", "hi", Option::None)).unwrap(), fields("", &[], "", "hi", NOW));
}

/// The events of a change as (body, users).
fn events<C: Change>(
    state: &mut RealmState,
    store: &crate::store::Store,
    change: C,
) -> (C::Output, Vec<(Value, Vec<UserId>)>) {
    let applied = commit(state, store, change).unwrap();
    let events = applied.events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect();
    (applied.output, events)
}

#[test]
fn drafts_are_stored_per_user_and_refused_when_synchronization_is_off() {
    let (_dir, store, config, mut state) = setup();
    let hamlet = add(&mut state, &store, &config, "hamlet@acme.test", Role::Member);
    let othello = add(&mut state, &store, &config, "othello@acme.test", Role::Member);
    let one = |content: &str| draft(DraftKind::None, &[], "", content, Some(T0 as f64));
    let change = plan_create(&state, hamlet, Ok(vec![one("a"), one("b")]), NOW).unwrap();
    let (ids, sent) = events(&mut state, &store, change);
    assert_eq!(ids.len(), 2);
    let dict = |id: i64, content: &str| json!({"id": id, "type": "", "to": [], "topic": "", "content": content, "timestamp": T0});
    assert_eq!(
        sent,
        vec![(json!({"type": "drafts", "op": "add", "drafts": [dict(ids[0], "a"), dict(ids[1], "b")]}), vec![hamlet])]
    );
    // Nothing to create still tells the user.
    let change = plan_create(&state, hamlet, Ok(vec![]), NOW).unwrap();
    let (none, sent) = events(&mut state, &store, change);
    assert_eq!((none, sent), (vec![], vec![(json!({"type": "drafts", "op": "add", "drafts": []}), vec![hamlet])]));

    // Someone else's draft does not exist, before its new content is checked.
    let bad = draft(DraftKind::Channel, &[], "t", "x", None);
    let change = plan_edit(&state, othello, ids[0], Ok(bad.clone()), NOW).unwrap();
    let refused = commit(&mut state, &store, change).unwrap_err();
    assert_eq!(
        (refused.status, refused.code, refused.msg.as_str()),
        (404, Some(ErrorCode::BadRequest), "Draft does not exist")
    );
    let change = plan_edit(&state, hamlet, ids[0], Ok(bad), NOW).unwrap();
    let refused = commit(&mut state, &store, change).unwrap_err();
    assert_eq!(refused.msg, "Must specify exactly 1 channel ID for channel messages");
    let change = plan_delete(&state, othello, ids[0]).unwrap();
    let refused = commit(&mut state, &store, change).unwrap_err();
    assert_eq!((refused.status, refused.msg.as_str()), (404, "Draft does not exist"));

    let change = plan_edit(&state, hamlet, ids[0], Ok(one("c")), NOW).unwrap();
    let (_, sent) = events(&mut state, &store, change);
    assert_eq!(sent, vec![(json!({"type": "drafts", "op": "update", "draft": dict(ids[0], "c")}), vec![hamlet])]);
    let change = plan_delete(&state, hamlet, ids[1]).unwrap();
    let (_, sent) = events(&mut state, &store, change);
    assert_eq!(sent, vec![(json!({"type": "drafts", "op": "remove", "draft_id": ids[1]}), vec![hamlet])]);
    let kept = crate::store::drafts::of_user(&store.conn().unwrap(), hamlet, false, 10).unwrap();
    assert_eq!(kept.iter().map(|d| (d.id, d.content.as_str())).collect::<Vec<_>>(), vec![(ids[0], "c")]);

    // Turned off, every endpoint refuses first, whatever the parameters.
    edit_user(&mut state, hamlet, |u| {
        u.settings.insert("enable_drafts_synchronization".into(), Value::Bool(false));
    });
    let off = "User has disabled synchronizing drafts.";
    let parse_error = Err(crate::error::ApiError::bad_request("drafts is not valid JSON"));
    assert_eq!(plan_create(&state, hamlet, parse_error, NOW).unwrap_err().msg, off);
    assert_eq!(plan_edit(&state, hamlet, 999, Ok(one("x")), NOW).unwrap_err().msg, off);
    assert_eq!(plan_delete(&state, hamlet, 999).unwrap_err().msg, off);
    // Othello still syncs; a parameter error comes next.
    let parse_error = Err(crate::error::ApiError::bad_request("drafts is not valid JSON"));
    assert_eq!(plan_create(&state, othello, parse_error, NOW).unwrap_err().msg, "drafts is not valid JSON");
}
