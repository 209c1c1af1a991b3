//! Settings: plans applied to a state built in memory (no database), the value checks,
//! and changes committed to a real one.

use serde_json::{json, Value};

use super::organization::{plan_realm_settings, plan_user_defaults};
use super::personal::plan_own_settings;
use super::*;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::realm::catalog::{self, Setting};
use crate::realm::commit;
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::tests::memory;
use crate::realm::Change;
use crate::store::Store;

fn setting(name: &str) -> &'static Setting {
    catalog::user_setting(name).unwrap()
}

/// `PATCH /settings` outside any actor: its events.
fn update_own_settings(
    state: &mut RealmState,
    store: &Store,
    config: &ServerConfig,
    user_id: crate::ids::UserId,
    change: OwnSettingsChange,
) -> ApiResult<Vec<Outgoing>> {
    let change = plan_own_settings(state, config, user_id, change)?;
    Ok(commit(state, store, change)?.events)
}

fn bodies(events: &[Outgoing]) -> Vec<Value> {
    events.iter().map(|o| Value::Object(o.event.body().clone())).collect()
}

// --- Plans applied in memory. ---

#[test]
fn a_personal_change_tells_the_user_then_everyone_in_zulips_order() {
    let mut state = memory::state();
    let config = ServerConfig::default();
    let owner = crate::ids::UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let change = OwnSettingsChange {
        full_name: Some(" Emma ".into()),
        settings: vec![(setting("timezone"), json!("Europe/Berlin")), (setting("emojiset"), json!("text"))],
        ..Default::default()
    };
    let applied = plan_own_settings(&state, &config, member, change).unwrap().apply(&mut state);
    assert!(applied.auth, "names and addresses are in the authentication index");
    assert_eq!(
        bodies(&applied.events),
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": member, "full_name": "Emma"}}),
            // No legacy `update_display_settings` events since FL 439.
            json!({"type": "user_settings", "op": "update", "property": "emojiset", "value": "text"}),
            json!({"type": "user_settings", "op": "update", "property": "timezone", "value": "Europe/Berlin"}),
            json!({"type": "realm_user", "op": "update", "person": {"email": "m@acme.test", "user_id": member,
                   "timezone": "Europe/Berlin"}}),
        ]
    );
    let to: Vec<Vec<crate::ids::UserId>> = applied.events.iter().map(|o| o.users.clone()).collect();
    let everyone = vec![owner, member];
    assert_eq!(to, vec![everyone.clone(), vec![member], vec![member], everyone]);
    let user = state.user(member).unwrap();
    assert_eq!((user.full_name.as_str(), user.timezone.as_str()), ("Emma", "Europe/Berlin"));
    assert_eq!(user.settings["emojiset"], json!("text"));

    // The same again changes nothing and tells no one; bots are refused first.
    let same = OwnSettingsChange { settings: vec![(setting("emojiset"), json!("text"))], ..Default::default() };
    assert!(plan_own_settings(&state, &config, member, same.clone()).unwrap().apply(&mut state).events.is_empty());
    state.user_mut(member).unwrap().is_bot = true;
    let err = plan_own_settings(&state, &config, member, same).unwrap_err();
    assert_eq!(err, crate::error::ApiError::humans_only());
}

#[test]
fn a_hidden_address_is_shown_to_whom_the_new_visibility_allows() {
    let mut state = memory::state();
    let config = ServerConfig::default();
    let owner = crate::ids::UserId(1);
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let guest = memory::user(&mut state, "g@acme.test", Role::Guest);
    // Administrators only (3): the member and the guest lose the address, the API email
    // becomes the hidden one.
    let change =
        OwnSettingsChange { settings: vec![(setting("email_address_visibility"), json!(3))], ..Default::default() };
    let applied = plan_own_settings(&state, &config, member, change).unwrap().apply(&mut state);
    let hidden = state.user(member).unwrap().email.clone();
    assert_eq!(hidden, format!("user{member}@acme.localhost"));
    let events = bodies(&applied.events);
    assert_eq!(
        events[0],
        json!({"type": "user_settings", "op": "update", "property": "email_address_visibility", "value": 3})
    );
    assert_eq!(events[1]["person"], json!({"user_id": member, "delivery_email": null}));
    assert_eq!(applied.events[1].users, vec![guest]);
    assert_eq!(events[2]["person"], json!({"user_id": member, "new_email": hidden}));
    assert_eq!(events[3]["person"]["user_id"], json!(member));
    assert_eq!(applied.events[2].users, vec![owner, member, guest]);
}

#[test]
fn defaults_for_new_users_change_for_administrators_only() {
    let mut state = memory::state();
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    let enter = || vec![(setting("enter_sends"), json!(true))];
    assert_eq!(plan_user_defaults(&state, member, enter()).unwrap_err(), crate::error::ApiError::must_be_admin());
    let applied = plan_user_defaults(&state, crate::ids::UserId(1), enter()).unwrap().apply(&mut state);
    assert_eq!(
        bodies(&applied.events),
        vec![json!({"type": "realm_user_settings_defaults", "op": "update", "property": "enter_sends", "value": true})]
    );
    assert_eq!(state.realm().user_defaults["enter_sends"], json!(true));
    assert!(plan_user_defaults(&state, crate::ids::UserId(1), enter()).unwrap().apply(&mut state).events.is_empty());
}

// --- Value checks and changes against a database. ---

fn error(settings: &[(&str, Value)]) -> String {
    let values: Vec<SettingValue> = settings.iter().map(|(n, v)| (setting(n), v.clone())).collect();
    check_values(&values).unwrap_err().msg
}

#[test]
fn values_are_checked_with_zulips_messages() {
    assert_eq!(
        error(&[("emojiset", json!("apple"))]),
        "Invalid emojiset: Value error, Not in the list of possible values"
    );
    assert_eq!(
        error(&[("color_scheme", json!(7))]),
        "Invalid color_scheme: Value error, Not in the list of possible values"
    );
    assert_eq!(error(&[("default_language", json!("xx"))]), "Invalid default_language");
    assert_eq!(error(&[("notification_sound", json!("boing"))]), "Invalid notification sound 'boing'");
    assert_eq!(
        error(&[("email_notifications_batching_period_seconds", json!(604_810))]),
        "Invalid email batching period: 604810 seconds"
    );
    assert_eq!(
        error(&[("timezone", json!("Mars/Olympus"))]),
        "Invalid timezone: Value error, Not a recognized time zone"
    );
    assert_eq!(error(&[("timezone", json!(""))]), "Invalid timezone: Value error, Not a recognized time zone");
    let fine: Vec<SettingValue> = vec![
        (setting("timezone"), json!("Europe/Paris")),
        (setting("default_language"), json!("de")),
        (setting("notification_sound"), json!("none")),
        (setting("email_notifications_batching_period_seconds"), json!(1)),
    ];
    assert!(check_values(&fine).is_ok());
}

#[test]
fn parse_time_checks_come_before_check_settings_values() {
    let msg = error(&[("default_language", json!("xx")), ("web_home_view", json!("nowhere"))]);
    assert_eq!(msg, "Invalid web_home_view: Value error, Not in the list of possible values");
}

/// Memory and database agree after every kind of change, and after a refused one.
#[test]
fn memory_and_database_agree() {
    use crate::realm::model::Role;
    use crate::realm::tests::{add, setup};

    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    let change = OwnSettingsChange {
        full_name: Some("Robert".into()),
        email: Some("robert@acme.test".into()),
        password: None,
        settings: vec![
            (setting("email_address_visibility"), json!(4)),
            (setting("emojiset"), json!("text")),
            (setting("timezone"), json!("Europe/Berlin")),
        ],
    };
    let events = update_own_settings(&mut state, &store, &config, bob, change).unwrap();
    assert!(!events.is_empty());
    let refused = OwnSettingsChange { settings: vec![(setting("emojiset"), json!("apple"))], ..Default::default() };
    assert!(update_own_settings(&mut state, &store, &config, bob, refused).is_err());
    let defaults = vec![(setting("enter_sends"), json!(true))];
    let change = plan_user_defaults(&state, owner, defaults).unwrap();
    commit(&mut state, &store, change).unwrap();
    let flag = catalog::realm_setting("name_changes_disabled").unwrap();
    let change = plan_realm_settings(&state, owner, vec![(flag, json!(true))], Vec::new(), 0).unwrap();
    commit(&mut state, &store, change).unwrap();
    let carol = add(&mut state, &store, &config, "carol@acme.test", Role::Member);

    let conn = store.conn().unwrap();
    let loaded = RealmState::load(&conn, state.realm().id).unwrap().unwrap();
    assert_eq!(loaded.realm(), state.realm());
    for id in [owner, bob, carol] {
        assert_eq!(loaded.user(id), state.user(id));
    }
    let bob = loaded.user(bob).unwrap();
    let hidden = format!("user{}@acme.localhost", bob.id.0);
    assert_eq!((bob.email.as_str(), bob.delivery_email.as_str()), (hidden.as_str(), "robert@acme.test"));
    assert_eq!(loaded.user(carol).unwrap().settings.get("enter_sends"), Some(&json!(true)));
}

#[test]
fn settings_follow_zulips_parameter_order() {
    let names: Vec<&str> = own_settings().iter().map(|s| s.name).collect();
    assert_eq!(names.len(), catalog::USER_SETTINGS.len());
    assert_eq!(&names[..3], ["twenty_four_hour_time", "web_mark_read_on_scroll_policy", "web_channel_default_view"]);
    // Settings newer than Zulip 10.2 come last.
    assert!(names.ends_with(&[
        "web_left_sidebar_unreads_count_summary",
        "web_left_sidebar_show_channel_folders",
        "web_inbox_show_channel_folders"
    ]));
    let defaults: Vec<&str> = default_settings().iter().map(|s| s.name).collect();
    assert_eq!(defaults[0], "starred_message_counts");
    for absent in
        ["default_language", "enable_login_emails", "enable_marketing_emails", "allow_private_data_export", "timezone"]
    {
        assert!(!defaults.contains(&absent), "{absent}");
    }
}

#[test]
fn language_names() {
    assert_eq!(catalog::language_name("de"), Some("Deutsch"));
    assert_eq!(catalog::language_name("en"), Some("English"));
    assert_eq!(catalog::language_name("klingon"), None);
}

/// `PATCH /realm`'s parameter handling.
mod organization_settings {
    use super::super::organization::*;
    use super::*;
    use crate::realm::catalog::Kind;

    fn setting(name: &str) -> &'static Setting {
        catalog::realm_setting(name).unwrap()
    }

    #[test]
    fn wires_follow_zulips_parameter_types() {
        assert_eq!(wire(setting("invite_required")), Wire::Bool);
        assert_eq!(wire(setting("gif_rating_policy")), Wire::Int);
        assert_eq!(wire(setting("name")), Wire::Str);
        assert_eq!(wire(setting("message_retention_days")), Wire::Json);
        assert_eq!(wire(setting("message_content_edit_limit_seconds")), Wire::Json);
        assert!(realm_settings().all(|s| !matches!(s.kind, Kind::Group(_))));
        assert_eq!(wire(setting("signup_announcements_stream_id")), Wire::Int);
        assert!(realm_settings().all(|s| s.name != "push_notifications_enabled"));
    }

    #[test]
    fn special_values_are_normalized() {
        let limit = setting("message_content_edit_limit_seconds");
        assert_eq!(normalize(limit, &json!("unlimited")).unwrap(), Value::Null);
        assert_eq!(normalize(limit, &json!(60)).unwrap(), json!(60));
        assert_eq!(
            normalize(limit, &json!(0)).unwrap_err().msg,
            "Bad value for 'message_content_edit_limit_seconds': 0"
        );
        let retention = setting("message_retention_days");
        assert_eq!(normalize(retention, &json!("unlimited")).unwrap(), json!(-1));
        assert_eq!(
            normalize(retention, &json!("forever")).unwrap_err().msg,
            "Bad value for 'message_retention_days': forever"
        );
        assert_eq!(normalize(setting("jitsi_server_url"), &json!("default")).unwrap(), Value::Null);
    }

    #[test]
    fn parsing_checks() {
        let msg = |name: &str, value: Value| check_parsed(setting(name), &value).unwrap_err().msg;
        assert_eq!(msg("org_type", json!(7)), "Invalid org_type");
        assert_eq!(
            msg("message_edit_history_visibility_policy", json!("some")),
            "Invalid message_edit_history_visibility_policy"
        );
        assert_eq!(msg("name", json!("x".repeat(41))), "name is too long (limit: 40 characters)");
        assert_eq!(msg("jitsi_server_url", json!("ftp://x")), "jitsi_server_url is not an allowed_type");
        assert!(check_parsed(setting("jitsi_server_url"), &json!("https://meet.example.org")).is_ok());
    }
}
