//! Status changes planned and applied on an organization built in memory.

use serde_json::{json, Value};

use super::format::{status_of, user_status_data};
use super::ops::plan_update_status;
use super::*;
use crate::events::Outgoing;
use crate::realm::chat::fixture_tests::{bot, edit_user, realm, user, T0};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn request(fields: Value) -> StatusRequest {
    let s = |name: &str| fields.get(name).and_then(Value::as_str).map(str::to_owned);
    StatusRequest {
        away: fields.get("away").and_then(Value::as_bool),
        status_text: s("status_text"),
        emoji_name: s("emoji_name"),
        emoji_code: s("emoji_code"),
        reaction_type: s("reaction_type"),
    }
}

/// Plans and applies a change; its events as (body, users).
fn update(state: &mut RealmState, user: UserId, fields: Value) -> ApiResult<Vec<(Value, Vec<UserId>)>> {
    let change = plan_update_status(state, user, Ok(request(fields)), T0 + 5)?;
    let applied = change.apply(state);
    Ok(applied.events.into_iter().map(|o: Outgoing| (Value::Object(o.event.body().clone()), o.users)).collect())
}

fn refusal(state: &RealmState, user: UserId, fields: Value) -> String {
    plan_update_status(state, user, Ok(request(fields)), T0).err().map(|e| e.msg).unwrap_or_default()
}

fn shown(state: &RealmState, viewer: UserId, user: UserId) -> Value {
    status_of(state, state.user(viewer).unwrap(), user).unwrap()
}

#[test]
fn requests_are_checked_in_zulips_order() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let robot = bot(&mut state, "robot", hamlet);
    // Bots first, even before a parameter that did not parse.
    let bad = Err(crate::error::ApiError::bad_request("away is not a boolean"));
    assert_eq!(
        plan_update_status(&state, robot, bad, T0).unwrap_err().msg,
        "This endpoint does not accept bot requests."
    );
    let bad = Err(crate::error::ApiError::bad_request("away is not a boolean"));
    assert_eq!(plan_update_status(&state, hamlet, bad, T0).unwrap_err().msg, "away is not a boolean");
    assert_eq!(refusal(&state, hamlet, json!({})), "Client did not pass any new values.");
    // A code or type alone is not enough (but empty ones do not count).
    assert_eq!(refusal(&state, hamlet, json!({"emoji_code": ""})), "Client did not pass any new values.");
    assert_eq!(
        refusal(&state, hamlet, json!({"status_text": "In a meeting", "emoji_code": "1f419"})),
        "Client must pass emoji_name if they pass either emoji_code or reaction_type."
    );
    assert_eq!(
        refusal(&state, hamlet, json!({"status_text": "x", "reaction_type": "unicode_emoji"})),
        "Client must pass emoji_name if they pass either emoji_code or reaction_type."
    );
    assert!(refusal(&state, hamlet, json!({"status_text": "x", "emoji_code": "", "reaction_type": ""})).is_empty());
    assert_eq!(
        refusal(&state, hamlet, json!({"status_text": "x", "emoji_name": "invalid", "emoji_code": "1f419"})),
        "Emoji 'invalid' does not exist"
    );
    assert_eq!(refusal(&state, hamlet, json!({"emoji_name": "octopus", "emoji_code": "1f389"})), "Invalid emoji name.");
    assert_eq!(
        refusal(
            &state,
            hamlet,
            json!({"emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "realm_emoji"})
        ),
        "Invalid custom emoji."
    );
    assert_eq!(
        refusal(&state, hamlet, json!({"emoji_name": "octopus", "emoji_code": "x", "reaction_type": "unicode_emoji"})),
        "Invalid emoji code."
    );
    assert_eq!(
        refusal(&state, hamlet, json!({"emoji_name": "octopus", "reaction_type": "other"})),
        "Invalid emoji type."
    );
    // 60 characters once stripped.
    let long = format!("  {}  ", "x".repeat(60));
    assert!(refusal(&state, hamlet, json!({ "status_text": long })).is_empty());
    assert_eq!(
        refusal(&state, hamlet, json!({ "status_text": "é".repeat(61) })),
        "status_text is too long (limit: 60 characters)"
    );
    // Nothing was applied.
    assert_eq!(shown(&state, hamlet, hamlet), json!({}));
}

#[test]
fn only_what_is_given_changes_and_everyone_is_told() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Guest);
    let gone = user(&mut state, "gone", Role::Member);
    edit_user(&mut state, gone, |u| u.is_active = false);
    let everyone = vec![hamlet, othello];

    let events = update(&mut state, hamlet, json!({"status_text": "  on vacation ", "emoji_name": "octopus"})).unwrap();
    let expected = json!({"type": "user_status", "user_id": hamlet, "status_text": "on vacation",
                          "emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "unicode_emoji"});
    assert_eq!(events, vec![(expected, everyone.clone())]);
    let status = json!({"status_text": "on vacation", "emoji_name": "octopus", "emoji_code": "1f419",
                        "reaction_type": "unicode_emoji"});
    assert_eq!(shown(&state, othello, hamlet), status);
    assert_eq!(state.user_data().status(hamlet).unwrap().timestamp, T0 + 5);

    // The text alone keeps the emoji; an empty name clears it.
    let events = update(&mut state, hamlet, json!({"status_text": "back soon"})).unwrap();
    assert_eq!(
        events,
        vec![(json!({"type": "user_status", "user_id": hamlet, "status_text": "back soon"}), everyone.clone())]
    );
    assert_eq!(shown(&state, hamlet, hamlet)["emoji_name"], json!("octopus"));
    let events = update(&mut state, hamlet, json!({"emoji_name": ""})).unwrap();
    let cleared = json!({"type": "user_status", "user_id": hamlet, "emoji_name": "", "emoji_code": "",
                         "reaction_type": "unicode_emoji"});
    assert_eq!(events, vec![(cleared, everyone.clone())]);
    assert_eq!(shown(&state, hamlet, hamlet), json!({"status_text": "back soon"}));
    // Zulip's own emoji.
    update(&mut state, hamlet, json!({"emoji_name": "zulip"})).unwrap();
    assert_eq!(shown(&state, hamlet, hamlet)["reaction_type"], json!("zulip_extra_emoji"));
}

#[test]
fn away_is_presence_enabled_turned_around() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let events = update(&mut state, hamlet, json!({"away": true})).unwrap();
    assert_eq!(
        events,
        vec![
            (
                json!({"type": "user_settings", "op": "update", "property": "presence_enabled", "value": false}),
                vec![hamlet]
            ),
            (json!({"type": "user_status", "user_id": hamlet, "away": true}), vec![hamlet, othello]),
        ]
    );
    assert_eq!(state.user(hamlet).unwrap().settings["presence_enabled"], json!(false));
    assert_eq!(shown(&state, othello, hamlet), json!({"away": true}));
    assert_eq!(user_status_data(&state), json!({ hamlet.to_string(): {"away": true} }));
    // Sent again even when it does not change, as Zulip's `do_change_user_setting` does.
    let events = update(&mut state, hamlet, json!({"away": false, "status_text": ""})).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].0, json!({"type": "user_status", "user_id": hamlet, "away": false, "status_text": ""}));
    assert_eq!(shown(&state, hamlet, hamlet), json!({}));
    // A row that shows nothing is left out of the data set.
    assert_eq!(user_status_data(&state), json!({}));
}

#[test]
fn the_data_set_holds_active_users_with_a_status_and_lookups_follow_zulips_access() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let iago = user(&mut state, "iago", Role::Administrator);
    let gone = user(&mut state, "gone", Role::Member);
    let robot = bot(&mut state, "robot", hamlet);
    update(&mut state, iago, json!({"status_text": "admin things"})).unwrap();
    update(&mut state, hamlet, json!({"emoji_name": "+1"})).unwrap();
    update(&mut state, gone, json!({"status_text": "leaving"})).unwrap();
    edit_user(&mut state, gone, |u| u.is_active = false);
    assert_eq!(
        user_status_data(&state),
        json!({
            hamlet.to_string(): {"emoji_name": "+1", "emoji_code": "1f44d", "reaction_type": "unicode_emoji"},
            iago.to_string(): {"status_text": "admin things"},
        })
    );
    let viewer = state.user(hamlet).unwrap();
    let err = |id: UserId| status_of(&state, viewer, id).unwrap_err().msg;
    assert_eq!(err(UserId(999)), "No such user");
    assert_eq!(err(robot), "No such user");
    assert_eq!(err(gone), "User is deactivated");
}

#[test]
fn administrators_set_others_statuses_after_the_parameters_are_checked() {
    use super::ops::plan_update_status_for;
    let mut state = realm();
    let iago = user(&mut state, "iago", Role::Administrator);
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let robot = bot(&mut state, "robot", hamlet);
    let refusal = |state: &RealmState, acting: UserId, target: UserId, fields: Value| {
        plan_update_status_for(state, acting, target, request(fields), T0).err().map(|e| e.msg).unwrap_or_default()
    };
    let too_long = json!({"status_text": "x".repeat(61)});
    assert_eq!(refusal(&state, hamlet, UserId(999), too_long), "status_text is too long (limit: 60 characters)");
    assert_eq!(refusal(&state, hamlet, hamlet, json!({"status_text": "hi"})), "Insufficient permission");
    assert_eq!(refusal(&state, iago, robot, json!({"status_text": "hi"})), "No such user");
    // `away` is no parameter of this endpoint.
    assert_eq!(refusal(&state, iago, hamlet, json!({"away": true})), "Client did not pass any new values.");
    let change = plan_update_status_for(&state, iago, hamlet, request(json!({"status_text": " busy "})), T0).unwrap();
    let applied = change.apply(&mut state);
    let bodies: Vec<Value> = applied.events.iter().map(|o| Value::Object(o.event.body().clone())).collect();
    assert_eq!(bodies, vec![json!({"type": "user_status", "user_id": hamlet, "status_text": "busy"})]);
    assert_eq!(shown(&state, iago, hamlet), json!({"status_text": "busy"}));
}
