//! Personal settings (`PATCH /settings`) and organization defaults for new users (`PATCH
//! /realm/user_settings_defaults`): validation, permissions, events and who gets them,
//! persistence.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    admins_and_members_groups, assert_same, expect, gravatar_default, json, register, spawn_app, spawn_app_at, Creds,
    TestApp, Watch,
};

const SUCCESS: &str = r#"{"result":"success","msg":""}"#;

async fn patch(app: &TestApp, who: &Creds, path: &str, form: &[(&str, &str)]) -> Response {
    app.as_user(who, Method::PATCH, path).form(form).send().await.unwrap()
}

fn success() -> Value {
    serde_json::from_str(SUCCESS).unwrap()
}

fn bad_request(msg: &str) -> Value {
    json!({"result": "error", "msg": msg, "code": "BAD_REQUEST"})
}

/// The `user_settings` register object of `who`.
async fn user_settings(app: &TestApp, who: &Creds) -> Value {
    let body = register(app, who, &[("fetch_event_types", r#"["user_settings"]"#)]).await;
    body["user_settings"].clone()
}

/// `POST /fetch_api_key` at the root organization.
async fn fetch_api_key(app: &TestApp, email: &str, password: &str) -> (u16, Value) {
    let form = [("username", email), ("password", password)];
    json(app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap()).await
}

/// A queue of `who` for every event type, without `user_settings_object`.
async fn legacy_watch(app: &TestApp, who: &Creds) -> Watch {
    Watch::with_form(app, who, &[("client_capabilities", r#"{"notification_settings_null":false}"#)]).await
}

fn settings_events() -> &'static str {
    r#"["user_settings","update_display_settings","update_global_notifications","realm_user"]"#
}

#[actix_web::test]
async fn preferences_change_with_user_settings_events_for_the_user_only() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut modern = Watch::new(&app, &app.owner, settings_events()).await;
    let mut legacy = legacy_watch(&app, &app.owner).await;
    let mut other = Watch::new(&app, &bob, settings_events()).await;

    let form = [("emojiset", "twitter"), ("enable_sounds", "false"), ("default_language", "de"), ("color", "red")];
    expect(
        patch(&app, &app.owner, "/settings", &form).await,
        200,
        json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["color"]}),
    )
    .await;
    let update = |property: &str, value: Value| json!({"type": "user_settings", "op": "update", "property": property, "value": value});
    let mut language = update("default_language", json!("de"));
    language["language_name"] = json!("Deutsch");
    let modern_events = vec![language, update("emojiset", json!("twitter")), update("enable_sounds", json!(false))];
    assert_eq!(modern.events(&app).await, modern_events);

    // A client without `user_settings_object` gets the same: the legacy
    // `update_display_settings` and `update_global_notifications` events are no longer
    // sent since FL 439.
    assert_eq!(legacy.events(&app).await, modern_events);
    assert_eq!(other.events(&app).await, Vec::<Value>::new());

    // Setting the same values again changes nothing and sends nothing.
    expect(patch(&app, &app.owner, "/settings", &form[..3]).await, 200, success()).await;
    assert_eq!(modern.events(&app).await, Vec::<Value>::new());

    let settings = user_settings(&app, &app.owner).await;
    assert_eq!((settings["emojiset"].clone(), settings["enable_sounds"].clone()), (json!("twitter"), json!(false)));
    assert_eq!(user_settings(&app, &bob).await["emojiset"], json!("google"));
    app.stop().await;
}

#[actix_web::test]
async fn legacy_paths_and_legacy_register_keys() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    expect(patch(&app, &o, "/settings/display", &[("left_side_userlist", "true")]).await, 200, success()).await;
    expect(patch(&app, &o, "/settings/notifications", &[("enable_digest_emails", "false")]).await, 200, success())
        .await;
    let body =
        register(&app, &o, &[("fetch_event_types", r#"["update_display_settings","update_global_notifications"]"#)])
            .await;
    assert_eq!((body["left_side_userlist"].clone(), body["enable_digest_emails"].clone()), (json!(true), json!(false)));
    app.stop().await;
}

#[actix_web::test]
async fn invalid_values_get_zulips_messages() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let cases = [
        ("emojiset", "apple", "Invalid emojiset: Value error, Not in the list of possible values"),
        ("web_home_view", "nowhere", "Invalid web_home_view: Value error, Not in the list of possible values"),
        ("color_scheme", "9", "Invalid color_scheme: Value error, Not in the list of possible values"),
        (
            "email_address_visibility",
            "6",
            "Invalid email_address_visibility: Value error, Not in the list of possible values",
        ),
        ("default_language", "xx", "Invalid default_language"),
        ("notification_sound", "boing", "Invalid notification sound 'boing'"),
        ("email_notifications_batching_period_seconds", "0", "Invalid email batching period: 0 seconds"),
        ("email_notifications_batching_period_seconds", "604810", "Invalid email batching period: 604810 seconds"),
        ("timezone", "Mars/Olympus_Mons", "Invalid timezone: Value error, Not a recognized time zone"),
        ("timezone", "", "Invalid timezone: Value error, Not a recognized time zone"),
        ("enter_sends", "1", "enter_sends is not a boolean"),
        ("color_scheme", "dark", "color_scheme is not valid JSON"),
    ];
    for (name, value, msg) in cases {
        expect(patch(&app, &o, "/settings", &[(name, value)]).await, 400, bad_request(msg)).await;
    }
    // Nothing of a refused request is applied.
    let form = [("enter_sends", "true"), ("emojiset", "apple")];
    expect(patch(&app, &o, "/settings", &form).await, 400, bad_request(cases[0].2)).await;
    assert_eq!(user_settings(&app, &o).await["enter_sends"], json!(false));
    for (name, value) in
        [("notification_sound", "none"), ("timezone", "America/New_York"), ("web_home_view", "all_messages")]
    {
        expect(patch(&app, &o, "/settings", &[(name, value)]).await, 200, success()).await;
    }
    app.stop().await;
}

#[actix_web::test]
async fn full_name_changes_go_to_every_active_user() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut owner_watch = Watch::new(&app, &app.owner, r#"["realm_user"]"#).await;
    let mut bob_watch = Watch::new(&app, &bob, r#"["realm_user"]"#).await;
    expect(patch(&app, &bob, "/settings", &[("full_name", "  Robert  ")]).await, 200, success()).await;
    let event =
        json!({"type": "realm_user", "op": "update", "person": {"user_id": bob.user_id, "full_name": "Robert"}});
    assert_eq!(owner_watch.events(&app).await, vec![event.clone()]);
    assert_eq!(bob_watch.events(&app).await, vec![event]);
    expect(patch(&app, &bob, "/settings", &[("full_name", "x")]).await, 400, bad_request("Name too short!")).await;
    let (_, me) = json(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(me["full_name"], json!("Robert"));
    app.stop().await;
}

#[actix_web::test]
async fn timezone_changes_reach_everyone() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let mut bob_watch = Watch::new(&app, &bob, r#"["realm_user","user_settings"]"#).await;
    expect(patch(&app, &app.owner, "/settings", &[("timezone", "Europe/Paris")]).await, 200, success()).await;
    let person = json!({"email": app.owner.email, "user_id": app.owner.user_id, "timezone": "Europe/Paris"});
    assert_eq!(bob_watch.events(&app).await, vec![json!({"type": "realm_user", "op": "update", "person": person})]);
    app.stop().await;
}

#[actix_web::test]
async fn email_visibility_changes_the_api_email_and_who_sees_the_real_one() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let mut owner_watch = Watch::new(&app, &app.owner, r#"["realm_user"]"#).await;
    let mut carol_watch = Watch::new(&app, &carol, r#"["realm_user"]"#).await;
    let mut bob_watch = Watch::new(&app, &bob, r#"["realm_user","user_settings"]"#).await;

    // Administrators only: members lose the real address, then everyone gets the fake API
    // email and the avatar (which clients can no longer compute from the email).
    expect(patch(&app, &bob, "/settings", &[("email_address_visibility", "3")]).await, 200, success()).await;
    let fake = format!("user{}@agora.test", bob.user_id);
    let update = |person: Value| json!({"type": "realm_user", "op": "update", "person": person});
    let new_email = update(json!({"user_id": bob.user_id, "new_email": fake}));
    let avatar = avatar_update(&app, &carol, bob.user_id).await;
    assert_eq!(owner_watch.events(&app).await, vec![new_email.clone(), avatar.clone()]);
    assert_eq!(
        carol_watch.events(&app).await,
        vec![update(json!({"user_id": bob.user_id, "delivery_email": null})), new_email.clone(), avatar.clone()]
    );
    let setting = json!({"type": "user_settings", "op": "update", "property": "email_address_visibility", "value": 3});
    assert_eq!(bob_watch.events(&app).await, vec![setting, new_email, avatar.clone()]);
    let (_, seen) =
        json(app.as_user(&carol, Method::GET, &format!("/users/{}", bob.user_id)).send().await.unwrap()).await;
    assert_eq!(
        (seen["user"]["email"].as_str(), seen["user"]["delivery_email"].clone()),
        (Some(fake.as_str()), Value::Null)
    );

    // Back to everyone: the real address is the API email again, and members see it.
    expect(patch(&app, &bob, "/settings", &[("email_address_visibility", "1")]).await, 200, success()).await;
    let real = update(json!({"user_id": bob.user_id, "new_email": "bob@agora.test"}));
    assert_eq!(owner_watch.events(&app).await, vec![real.clone(), avatar.clone()]);
    assert_eq!(
        carol_watch.events(&app).await,
        vec![update(json!({"user_id": bob.user_id, "delivery_email": "bob@agora.test"})), real, avatar]
    );

    // Between two restricted values the API email stays fake: only the real address moves.
    expect(patch(&app, &bob, "/settings", &[("email_address_visibility", "5")]).await, 200, success()).await;
    expect(patch(&app, &bob, "/settings", &[("email_address_visibility", "4")]).await, 200, success()).await;
    owner_watch.events(&app).await;
    expect(patch(&app, &bob, "/settings", &[("email_address_visibility", "3")]).await, 200, success()).await;
    assert_eq!(
        owner_watch.events(&app).await,
        vec![update(json!({"user_id": bob.user_id, "delivery_email": "bob@agora.test"}))]
    );
    app.stop().await;
}

/// The `realm_user` avatar update Zulip sends about `user_id`, as `viewer` would see the
/// avatar fields.
async fn avatar_update(app: &TestApp, viewer: &Creds, user_id: i64) -> Value {
    let path = format!("/users/{user_id}?client_gravatar=false");
    let (_, body) = json(app.as_user(viewer, Method::GET, &path).send().await.unwrap()).await;
    let url = body["user"]["avatar_url"].as_str().unwrap().to_owned();
    let medium = url.replace("&version=", "&s=500&version=");
    json!({"type": "realm_user", "op": "update", "person": {
        "avatar_source": "G", "avatar_url": url, "avatar_url_medium": medium, "avatar_version": 1, "user_id": user_id,
    }})
}

#[actix_web::test]
async fn email_changes_apply_at_once_with_their_events() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let mut carol_watch = Watch::new(&app, &carol, r#"["realm_user"]"#).await;
    for (email, msg) in [("not an address", "Invalid address."), ("carol@agora.test", "Already has an account.")] {
        expect(patch(&app, &bob, "/settings", &[("email", email)]).await, 400, bad_request(msg)).await;
    }
    expect(patch(&app, &bob, "/settings", &[("email", " bobby@agora.test ")]).await, 200, success()).await;
    let update = |person: Value| json!({"type": "realm_user", "op": "update", "person": person});
    assert_eq!(
        carol_watch.events(&app).await,
        vec![
            update(json!({"user_id": bob.user_id, "delivery_email": "bobby@agora.test"})),
            avatar_update(&app, &carol, bob.user_id).await,
            update(json!({"user_id": bob.user_id, "new_email": "bobby@agora.test"})),
        ]
    );
    // The new address authenticates; the old one no longer does.
    let moved = Creds { email: "bobby@agora.test".into(), ..bob.clone() };
    assert_eq!(app.as_user(&moved, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    assert_eq!(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap().status(), 401);
    app.stop().await;
}

#[actix_web::test]
async fn password_changes_need_the_old_password_and_a_strong_new_one() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let wrong = [("old_password", "nope"), ("new_password", "Sturdy-Horse-42")];
    expect(patch(&app, &bob, "/settings", &wrong).await, 400, bad_request("Wrong password!")).await;
    let weak = [("old_password", bob.password.as_str()), ("new_password", "aaaaaaaa")];
    expect(patch(&app, &bob, "/settings", &weak).await, 400, bad_request("New password is too weak!")).await;
    let good = [("old_password", bob.password.as_str()), ("new_password", "Sturdy-Horse-42")];
    expect(patch(&app, &bob, "/settings", &good).await, 200, success()).await;

    let (status, body) = fetch_api_key(&app, "bob@agora.test", "Sturdy-Horse-42").await;
    assert_eq!((status, body["api_key"].as_str()), (200, Some(bob.api_key.as_str())));
    let (status, body) = fetch_api_key(&app, "bob@agora.test", &bob.password).await;
    assert_eq!((status, body["msg"].as_str()), (401, Some("Your username or password is incorrect")));
    // The old password no longer proves anything.
    expect(patch(&app, &bob, "/settings", &good).await, 400, bad_request("Wrong password!")).await;
    app.stop().await;
}

#[actix_web::test]
async fn old_password_guesses_are_limited_as_logins_are() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guess = [("old_password", "guess"), ("new_password", "Sturdy-Horse-42")];
    for _ in 0..5 {
        expect(patch(&app, &bob, "/settings", &guess).await, 400, bad_request("Wrong password!")).await;
    }
    // Past 5 attempts in 30 minutes even the right password is refused, in Zulip's words.
    let good = [("old_password", bob.password.as_str()), ("new_password", "Sturdy-Horse-42")];
    let (status, body) = json(patch(&app, &bob, "/settings", &good).await).await;
    let msg = body["msg"].as_str().unwrap().to_owned();
    let seconds = ["1799", "1798"]
        .into_iter()
        .find(|s| msg == format!("You're making too many attempts! Try again in {s} seconds."));
    assert!(seconds.is_some(), "{msg}");
    assert_same(&body, &bad_request(&msg));
    assert_eq!(status, 400);
    // They are the same attempts as logins'.
    let (status, body) = fetch_api_key(&app, "bob@agora.test", &bob.password).await;
    assert_eq!((status, body["code"].as_str()), (429, Some("RATE_LIMIT_HIT")));
    // Other accounts are not affected, and a right password forgets earlier guesses.
    let owner = app.owner.clone();
    let guess = [("old_password", "guess"), ("new_password", "Sturdy-Horse-42")];
    for _ in 0..4 {
        expect(patch(&app, &owner, "/settings", &guess).await, 400, bad_request("Wrong password!")).await;
    }
    let weak = [("old_password", owner.password.as_str()), ("new_password", "aaaaaaaa")];
    expect(patch(&app, &owner, "/settings", &weak).await, 400, bad_request("New password is too weak!")).await;
    for _ in 0..4 {
        expect(patch(&app, &owner, "/settings", &guess).await, 400, bad_request("Wrong password!")).await;
    }
    app.stop().await;
}

#[actix_web::test]
async fn only_administrators_change_defaults_and_everyone_is_told() {
    let app = spawn_app().await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let moderator = app.create_user("", "mod@agora.test", "Mod", 300).await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let denied =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    for who in [&moderator, &member, &guest] {
        expect(
            patch(&app, who, "/realm/user_settings_defaults", &[("enter_sends", "true")]).await,
            400,
            denied.clone(),
        )
        .await;
    }
    let mut guest_watch = Watch::new(&app, &guest, r#"["realm_user_settings_defaults"]"#).await;
    let form = [("enter_sends", "true"), ("emojiset", "text"), ("emoji_set", "text"), ("default_language", "de")];
    expect(
        patch(&app, &admin, "/realm/user_settings_defaults", &form).await,
        200,
        json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["default_language", "emoji_set"]}),
    )
    .await;
    let update = |property: &str, value: Value| json!({"type": "realm_user_settings_defaults", "op": "update", "property": property, "value": value});
    assert_eq!(
        guest_watch.events(&app).await,
        vec![update("emojiset", json!("text")), update("enter_sends", json!(true))]
    );
    expect(
        patch(&app, &app.owner, "/realm/user_settings_defaults", &form[..2]).await,
        200,
        json!({"result": "success", "msg": ""}),
    )
    .await;
    assert_eq!(guest_watch.events(&app).await, Vec::<Value>::new());

    let cases = [
        ("emojiset", "apple", "Invalid emojiset: Value error, Not in the list of possible values"),
        ("notification_sound", "invalid", "Invalid notification sound 'invalid'"),
        ("email_notifications_batching_period_seconds", "-1", "Invalid email batching period: -1 seconds"),
        (
            "web_animate_image_previews",
            "sometimes",
            "Invalid web_animate_image_previews: Value error, Not in the list of possible values",
        ),
    ];
    for (name, value, msg) in cases {
        expect(patch(&app, &admin, "/realm/user_settings_defaults", &[(name, value)]).await, 400, bad_request(msg))
            .await;
    }
    let body = register(&app, &member, &[("fetch_event_types", r#"["realm_user_settings_defaults"]"#)]).await;
    let defaults = &body["realm_user_settings_defaults"];
    assert_eq!((defaults["enter_sends"].clone(), defaults["emojiset"].clone()), (json!(true), json!("text")));
    app.stop().await;
}

#[actix_web::test]
async fn defaults_apply_to_new_users_only() {
    let app = spawn_app().await;
    let old = app.create_user("", "old@agora.test", "Old", 400).await;
    let form = [
        ("twenty_four_hour_time", "true"),
        ("email_address_visibility", "4"),
        ("enable_drafts_synchronization", "false"),
    ];
    expect(patch(&app, &app.owner, "/realm/user_settings_defaults", &form).await, 200, success()).await;
    let new = app.create_user("", "new@agora.test", "New", 400).await;

    let fresh = user_settings(&app, &new).await;
    let kept = user_settings(&app, &old).await;
    for (name, fresh_value, kept_value) in [
        ("twenty_four_hour_time", json!(true), json!(false)),
        ("email_address_visibility", json!(4), json!(1)),
        ("enable_drafts_synchronization", json!(false), json!(true)),
    ] {
        assert_eq!((name, fresh[name].clone(), kept[name].clone()), (name, fresh_value, kept_value));
    }
    // Nobody may see the new user's real address: the API email is a fake one.
    let (_, seen) =
        json(app.as_user(&old, Method::GET, &format!("/users/{}", new.user_id)).send().await.unwrap()).await;
    assert_eq!(seen["user"]["email"], json!(format!("user{}@agora.test", new.user_id)));
    app.stop().await;
}

#[actix_web::test]
async fn settings_and_defaults_survive_a_restart() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    expect(patch(&app, &o, "/settings", &[("emojiset", "text"), ("timezone", "Asia/Tokyo")]).await, 200, success())
        .await;
    expect(patch(&app, &o, "/realm/user_settings_defaults", &[("color_scheme", "2")]).await, 200, success()).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let settings = user_settings(&app, &o).await;
    assert_eq!((settings["emojiset"].clone(), settings["timezone"].clone()), (json!("text"), json!("Asia/Tokyo")));
    let body = register(&app, &o, &[("fetch_event_types", r#"["realm_user_settings_defaults"]"#)]).await;
    assert_eq!(body["realm_user_settings_defaults"]["color_scheme"], json!(2));
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn organization_settings_are_for_administrators_and_some_for_owners() {
    let app = spawn_app().await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let moderator = app.create_user("", "mod@agora.test", "Mod", 300).await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let denied =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    for who in [&moderator, &member] {
        expect(patch(&app, who, "/realm", &[("name_changes_disabled", "true")]).await, 400, denied.clone()).await;
    }
    let owners_only =
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"});
    for (name, value) in
        [("invite_required", "false"), ("waiting_period_threshold", "3"), ("message_retention_days", "30")]
    {
        expect(patch(&app, &admin, "/realm", &[(name, value)]).await, 400, owners_only.clone()).await;
    }

    let mut member_watch = Watch::new(&app, &member, r#"["realm"]"#).await;
    let form = [
        ("name_changes_disabled", "true"),
        ("name", "Agora HQ"),
        ("message_content_edit_limit_seconds", "\"unlimited\""),
    ];
    expect(
        patch(&app, &admin, "/realm", &form).await,
        200,
        json!({"result": "success", "msg": "", "message_content_edit_limit_seconds": null, "name": "updated", "name_changes_disabled": true}),
    )
    .await;
    assert_eq!(
        member_watch.events(&app).await,
        vec![
            json!({"type": "realm", "op": "update_dict", "property": "default", "data": {"message_content_edit_limit_seconds": null}}),
            json!({"type": "realm", "op": "update", "property": "name", "value": "Agora HQ"}),
            json!({"type": "realm", "op": "update", "property": "name_changes_disabled", "value": true}),
        ]
    );
    expect(patch(&app, &admin, "/realm", &form).await, 200, success()).await;
    let owner = [("waiting_period_threshold", "3"), ("message_retention_days", "\"unlimited\"")];
    expect(
        patch(&app, &app.owner, "/realm", &owner).await,
        200,
        json!({"result": "success", "msg": "", "waiting_period_threshold": 3}),
    )
    .await;
    let body = register(&app, &member, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(
        (
            body["realm_name"].clone(),
            body["realm_name_changes_disabled"].clone(),
            body["realm_waiting_period_threshold"].clone()
        ),
        (json!("Agora HQ"), json!(true), json!(3))
    );

    let cases = [
        ("default_language", "xx", "Invalid language 'xx'"),
        ("gif_rating_policy", "9", "Invalid gif_rating_policy 9"),
        ("media_preview_size", "120", "Invalid media_preview_size"),
        ("video_chat_provider", "7", "Invalid video_chat_provider 7"),
        ("org_type", "7", "Invalid org_type"),
        ("message_edit_history_visibility_policy", "some", "Invalid message_edit_history_visibility_policy"),
        ("name", "This name is far too long for any organization", "name is too long (limit: 40 characters)"),
        ("jitsi_server_url", "\"ftp://meet\"", "jitsi_server_url is not an allowed_type"),
        ("inline_image_preview", "yes", "inline_image_preview is not valid JSON"),
    ];
    for (name, value, msg) in cases {
        expect(patch(&app, &admin, "/realm", &[(name, value)]).await, 400, bad_request(msg)).await;
    }
    let zero = [("move_messages_within_stream_limit_seconds", "0")];
    expect(
        patch(&app, &admin, "/realm", &zero).await,
        400,
        json!({"result": "error", "msg": "Bad value for 'move_messages_within_stream_limit_seconds': 0", "var_name": "move_messages_within_stream_limit_seconds", "bad_value": 0, "code": "BAD_REQUEST"}),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn organization_rules_on_names_and_emails() {
    let app = spawn_app().await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let rules =
        [("name_changes_disabled", "true"), ("email_changes_disabled", "true"), ("require_unique_names", "true")];
    expect(patch(&app, &app.owner, "/realm", &rules).await, 200, json!({"result": "success", "msg": "", "email_changes_disabled": true, "name_changes_disabled": true, "require_unique_names": true}))
        .await;

    // A member's name change is silently ignored, as in Zulip; an administrator's goes through.
    let mut watch = Watch::new(&app, &bob, r#"["realm_user"]"#).await;
    expect(patch(&app, &bob, "/settings", &[("full_name", "Robert")]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    expect(patch(&app, &admin, "/settings", &[("full_name", "Boss")]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await.len(), 1);
    expect(
        patch(&app, &admin, "/settings", &[("full_name", "bob")]).await,
        400,
        bad_request("Unique names required in this organization."),
    )
    .await;

    let disabled = bad_request("Email address changes are disabled in this organization.");
    expect(patch(&app, &bob, "/settings", &[("email", "robert@agora.test")]).await, 400, disabled).await;
    expect(patch(&app, &admin, "/settings", &[("email", "boss@agora.test")]).await, 200, success()).await;
    app.stop().await;
}

/// An address and a visibility changed in one request: the address first, under the old
/// visibility, then the visibility; nobody is told the same thing twice.
#[actix_web::test]
async fn email_and_visibility_changed_together() {
    let app = spawn_app().await;
    gravatar_default(&app).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let mut member = Watch::new(&app, &carol, r#"["realm_user"]"#).await;
    let mut owner = Watch::new(&app, &app.owner, r#"["realm_user"]"#).await;
    let form = [("email", "robert@agora.test"), ("email_address_visibility", "3")];
    expect(patch(&app, &bob, "/settings", &form).await, 200, success()).await;

    let id = bob.user_id;
    let person = |p: Value| json!({"type": "realm_user", "op": "update", "person": p});
    let fake = format!("user{id}@agora.test");
    let kinds = |events: &[Value]| -> Vec<Value> {
        events.iter().map(|e| e["person"].as_object().unwrap().keys().nth(1).cloned().into()).collect()
        // The key after `user_id` (or after `avatar_source`).
    };
    let member_events = member.events(&app).await;
    assert_eq!(member_events[0], person(json!({"user_id": id, "delivery_email": "robert@agora.test"})));
    assert_eq!(member_events[2], person(json!({"user_id": id, "new_email": "robert@agora.test"})));
    assert_eq!(member_events[3], person(json!({"user_id": id, "delivery_email": null})));
    assert_eq!(member_events[4], person(json!({"user_id": id, "new_email": fake})));
    assert_eq!(
        kinds(&member_events),
        ["delivery_email", "avatar_url", "new_email", "delivery_email", "new_email", "avatar_url"]
    );
    // The owner may still see the address: no second `delivery_email`.
    let owner_events = owner.events(&app).await;
    assert_eq!(kinds(&owner_events), ["delivery_email", "avatar_url", "new_email", "new_email", "avatar_url"]);
    app.stop().await;
}

/// A new waiting period moves members out of (and back into) `role:fullmembers`.
#[actix_web::test]
async fn the_waiting_period_decides_who_is_a_full_member() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let moderator = app.create_user("", "mod@agora.test", "Max", 300).await;
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let full = state["realm_user_groups"].as_array().unwrap().iter().find(|g| g["name"] == "role:fullmembers").unwrap();
    let group = full["id"].as_i64().unwrap();
    assert_eq!(full["members"], json!([bob.user_id]));
    let mut watch = Watch::new(&app, &moderator, r#"["user_group"]"#).await;

    let threshold = |days: &'static str| [("waiting_period_threshold", days)];
    expect(
        patch(&app, &app.owner, "/realm", &threshold("10")).await,
        200,
        json!({"result": "success", "msg": "", "waiting_period_threshold": 10}),
    )
    .await;
    let moved = |op: &str| json!({"type": "user_group", "op": op, "group_id": group, "user_ids": [bob.user_id]});
    assert_eq!(watch.events(&app).await, [moved("remove_members")]);
    expect(
        patch(&app, &app.owner, "/realm", &threshold("0")).await,
        200,
        json!({"result": "success", "msg": "", "waiting_period_threshold": 0}),
    )
    .await;
    assert_eq!(watch.events(&app).await, [moved("add_members")]);
    // Zulip leaves the Jitsi server out of the reply.
    let jitsi = [("jitsi_server_url", r#""https://meet.example.org""#)];
    expect(patch(&app, &app.owner, "/realm", &jitsi).await, 200, success()).await;
    app.stop().await;
}

/// Group-valued organization settings: `{"new", "old"}` values checked against their
/// rules, an `update_dict` event, and the permission they grant enforced at once.
#[actix_web::test]
async fn organization_group_settings_change_who_may_do_what() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (admins, members) = admins_and_members_groups(&app).await;
    let mut watch = Watch::new(&app, &bob, r#"["realm"]"#).await;

    let setting = |new: i64, old: i64| format!(r#"{{"new": {new}, "old": {old}}}"#);
    let wrong_old = setting(admins, admins);
    let response = patch(&app, &app.owner, "/realm", &[("can_create_public_channel_group", wrong_old.as_str())]).await;
    expect(
        response,
        400,
        json!({"result": "error", "msg": "'old' value does not match the expected value.", "code": "EXPECTATION_MISMATCH"}),
    )
    .await;
    let unknown = r#"{"new": 99999}"#;
    let response = patch(&app, &app.owner, "/realm", &[("can_create_public_channel_group", unknown)]).await;
    expect(response, 400, bad_request("Invalid user group")).await;
    let response = patch(&app, &bob, "/realm", &[("can_create_public_channel_group", unknown)]).await;
    assert_eq!(response.status(), 400);

    let change = setting(admins, members);
    expect(
        patch(&app, &app.owner, "/realm", &[("can_create_public_channel_group", change.as_str())]).await,
        200,
        success(),
    )
    .await;
    assert_eq!(
        watch.events(&app).await,
        [
            json!({"type": "realm", "op": "update_dict", "property": "default", "data": {"can_create_public_channel_group": admins}})
        ]
    );
    // Bob, a member, may no longer create public channels.
    let form = [("subscriptions", r#"[{"name": "bobs-channel"}]"#)];
    let response = app.as_user(&bob, Method::POST, "/users/me/subscriptions").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let state = register(&app, &bob, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(state["realm_can_create_public_channel_group"], json!(admins));
    app.stop().await;
}

/// Who may call an endpoint is checked before any of its parameters is decoded, as Zulip's
/// view decorators (`require_realm_admin`, `human_users_only`) do; `POST /users` asks for
/// its three parameters before the right to create accounts (and hashes no password for
/// those without it).
#[actix_web::test]
async fn who_may_call_is_checked_before_the_parameters() {
    use agora_actors::ids::UserId;
    use agora_actors::realm::model::Role;
    use agora_actors::realm::users::{CreateUser, NewUser};

    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let denied =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    let send = |who: &Creds, method: Method, path: &str, form: &[(&str, &str)]| {
        app.as_user(who, method, path).form(form).send()
    };
    for (method, path, form) in [
        (Method::PATCH, "/realm", &[("name_changes_disabled", "maybe")][..]),
        (Method::PATCH, "/realm/user_settings_defaults", &[("enter_sends", "maybe")]),
        (Method::POST, "/realm/profile_fields", &[("name", "Desk")]),
        (Method::PATCH, "/realm/profile_fields", &[("order", "nope")]),
        (Method::PATCH, "/realm/profile_fields/abc", &[]),
        (Method::DELETE, "/realm/profile_fields/abc", &[]),
    ] {
        expect(send(&member, method, path, form).await.unwrap(), 400, denied.clone()).await;
    }

    let bot = NewUser {
        bot_type: Some(1),
        bot_owner_id: Some(UserId(app.owner.user_id)),
        ..NewUser::human("helper-bot@agora.test", "Helper Bot", Role::Member, None)
    };
    let created = app.realm("").addr.send(CreateUser(bot)).await.unwrap().unwrap();
    let bot = Creds {
        email: "helper-bot@agora.test".into(),
        password: String::new(),
        api_key: created.api_key,
        user_id: created.user_id.0,
        host: app.owner.host.clone(),
    };
    let humans_only = bad_request("This endpoint does not accept bot requests.");
    for (method, path, form) in [
        (Method::PATCH, "/settings", &[("enter_sends", "maybe")][..]),
        (Method::PATCH, "/users/me/profile_data", &[]),
        (Method::DELETE, "/users/me/profile_data", &[("data", "nope")]),
    ] {
        expect(send(&bot, method, path, form).await.unwrap(), 400, humans_only.clone()).await;
    }

    let missing = json!({"result": "error", "msg": "Missing 'full_name' argument", "var_name": "full_name",
                         "code": "REQUEST_VARIABLE_MISSING"});
    let form = [("email", "new@agora.test"), ("password", "pw-strong-enough")];
    expect(send(&member, Method::POST, "/users", &form).await.unwrap(), 400, missing).await;
    let form = [("email", "new@agora.test"), ("password", "pw-strong-enough"), ("full_name", "New")];
    expect(send(&member, Method::POST, "/users", &form).await.unwrap(), 400, denied).await;
    app.stop().await;
}
