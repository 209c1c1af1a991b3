//! Custom emoji planned and applied on a state built in memory: Zulip's name rules, the
//! order of its checks, who may add and remove, and the `realm_emoji` event.

use serde_json::{json, Value};

use super::ops::{check_name, normalize_name, plan_add, plan_remove, EmojiUpload};
use crate::ids::UserId;
use crate::realm::fixture_tests::{human, organization};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn state() -> RealmState {
    let mut state = organization();
    human(&mut state, UserId(10), "admin@acme.example", "Admin", "k1", Role::Administrator);
    human(&mut state, UserId(11), "member@acme.example", "Member", "k2", Role::Member);
    human(&mut state, UserId(12), "other@acme.example", "Other", "k3", Role::Member);
    human(&mut state, UserId(13), "guest@acme.example", "Guest", "k4", Role::Guest);
    state
}

fn upload(name: &str) -> EmojiUpload {
    EmojiUpload { name: name.into(), files: 1, file_name: Some("f.png".into()), bad_image: None }
}

fn refusal(state: &RealmState, user: i64, upload: EmojiUpload) -> String {
    plan_add(state, UserId(user), upload).unwrap_err().msg
}

#[test]
fn names_follow_zulips_rules() {
    assert!(check_name("party_parrot").is_ok() && check_name("a-1").is_ok());
    assert_eq!(check_name("").unwrap_err().msg, "Emoji name is missing");
    assert_eq!(check_name("ends_").unwrap_err().msg, "Emoji names must end with either a letter or digit.");
    assert_eq!(
        check_name("Caps").unwrap_err().msg,
        "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."
    );
    assert_eq!(normalize_name("  my emoji "), "my_emoji");
}

#[test]
fn adding_is_checked_in_zulips_order_and_announced() {
    let mut state = state();
    assert_eq!(refusal(&state, 13, upload("qq1")), "Not allowed for guest users");
    assert_eq!(
        refusal(&state, 11, upload("Bad!")),
        "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."
    );
    assert_eq!(refusal(&state, 11, EmojiUpload { files: 0, ..upload("qq1") }), "You must upload exactly one file.");
    assert_eq!(refusal(&state, 11, upload("smile")), "Only administrators can override built-in emoji.");
    let bad = EmojiUpload {
        bad_image: Some("Could not decode image; did you upload an image file?".into()),
        ..upload("qq1")
    };
    let err = plan_add(&state, UserId(11), bad).unwrap_err();
    assert_eq!(
        (err.code.map(|c| c.as_str()), err.msg.as_str()),
        (Some("BAD_IMAGE"), "Could not decode image; did you upload an image file?")
    );

    let applied = plan_add(&state, UserId(11), upload("my parrot")).unwrap().apply(&mut state);
    let expected = json!({"0": {"id": "0", "name": "my_parrot", "source_url": "/user_avatars/1/emoji/images/f.png",
                                 "deactivated": false, "author_id": 11, "still_url": null}});
    assert_eq!(
        Value::Object(applied.events[0].event.body().clone()),
        json!({"type": "realm_emoji", "op": "update", "realm_emoji": expected})
    );
    assert_eq!(applied.events[0].users, vec![UserId(10), UserId(11), UserId(12), UserId(13)]);
    assert_eq!(
        Value::Object(applied.events[1].event.body().clone()),
        json!({"type": "realm_emoji", "op": "add", "emoji": expected["0"]})
    );
    assert_eq!(applied.events[1].users, applied.events[0].users);
    assert_eq!(refusal(&state, 10, upload("my_parrot")), "A custom emoji with this name already exists.");
    assert!(plan_add(&state, UserId(10), upload("smile")).is_ok());
}

#[test]
fn the_author_or_an_administrator_deactivates() {
    let mut state = state();
    plan_add(&state, UserId(11), upload("qparrot")).unwrap().apply(&mut state);
    assert_eq!(
        plan_remove(&state, UserId(12), "qparrot").unwrap_err().msg,
        "Must be an organization administrator or emoji author"
    );
    assert_eq!(plan_remove(&state, UserId(12), "nope").unwrap_err().msg, "Emoji 'nope' does not exist");
    plan_remove(&state, UserId(11), "qparrot").unwrap().apply(&mut state);
    assert!(state.uploads().active_emoji("qparrot").is_none());
    assert!(state.uploads().emoji_dicts(state.realm().id)["0"]["deactivated"].as_bool().unwrap());
    assert_eq!(plan_remove(&state, UserId(10), "qparrot").unwrap_err().msg, "Emoji 'qparrot' does not exist");
    // The name is free again.
    assert!(plan_add(&state, UserId(12), upload("qparrot")).is_ok());
}
