//! Zulip 12's user changes over HTTP: `GET /users/{user_id}/channels` (FL 440),
//! `is_imported_stub` (FL 433), `date_joined` at the first login (FL 475), custom profile
//! fields' `use_for_user_matching` (FL 455) and paragraphs in the profile summary (FL 476).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, send, spawn_app, Creds, TestApp, Watch};
use crate::users::create_user_admin;

async fn get(app: &TestApp, who: &Creds, path: &str) -> (u16, Value) {
    json(app.as_user(who, Method::GET, path).send().await.unwrap()).await
}

/// Subscribes `principals` to a new channel `name` as `who`; its id.
async fn channel(app: &TestApp, who: &Creds, name: &str, private: bool, principals: &[i64]) -> i64 {
    let subs = json!([{ "name": name }]).to_string();
    let principals = json!(principals).to_string();
    let private = private.to_string();
    let form = [("subscriptions", subs.as_str()), ("principals", &principals), ("invite_only", &private)];
    let (status, body) = json(send(app, who, Method::POST, "/users/me/subscriptions", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let (_, body) = get(app, &app.owner, &format!("/get_stream_id?stream={name}")).await;
    body["stream_id"].as_i64().unwrap()
}

#[actix_web::test]
async fn a_users_channels_are_those_the_viewer_may_see() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let public = channel(&app, &alice, "open", false, &[alice.user_id]).await;
    let secret = channel(&app, &alice, "secret", true, &[alice.user_id]).await;
    channel(&app, &bob, "bobs", false, &[bob.user_id]).await;

    let path = format!("/users/{}/channels", alice.user_id);
    let ids = |body: Value| body["subscribed_channel_ids"].clone();
    // Bob sees the public channel only; Alice and administrators see both.
    let (status, body) = get(&app, &bob, &path).await;
    assert_eq!((status, ids(body)), (200, json!([public])));
    let (_, body) = get(&app, &alice, &path).await;
    assert_eq!(ids(body), json!([public, secret]));
    let (_, body) = get(&app, &app.owner, &path).await;
    assert_eq!(body, json!({"result": "success", "msg": "", "subscribed_channel_ids": [public, secret]}));
    expect(app.as_user(&bob, Method::GET, "/users/999/channels").send().await.unwrap(), 400, error("No such user"))
        .await;
    // A bot's channels are answered too (FL 458).
    let form = [("full_name", "Helper"), ("short_name", "helper")];
    let (status, bot) = json(send(&app, &alice, Method::POST, "/bots", &form).await).await;
    assert_eq!(status, 200, "{bot}");
    let (status, body) = get(&app, &bob, &format!("/users/{}/channels", bot["user_id"])).await;
    assert_eq!((status, ids(body)), (200, json!([])));
    app.stop().await;
}

#[actix_web::test]
async fn user_objects_say_whether_they_are_imported_stubs() {
    let app = spawn_app().await;
    let (_, me) = get(&app, &app.owner, "/users/me").await;
    assert_eq!(me["is_imported_stub"], json!(false));
    let (_, all) = get(&app, &app.owner, "/users").await;
    assert!(all["members"].as_array().unwrap().iter().all(|u| u["is_imported_stub"] == json!(false)), "{all}");
    app.stop().await;
}

#[actix_web::test]
async fn an_account_made_through_the_api_joins_at_its_first_login() {
    let app = spawn_app().await;
    let admin = create_user_admin(&app).await;
    let form = [("email", "new@agora.test"), ("password", "pw-new-person"), ("full_name", "New Person")];
    let (status, body) = json(app.as_user(&admin, Method::POST, "/users").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let new_id = body["user_id"].as_i64().unwrap();
    let mut watch = Watch::new(&app, &app.owner, r#"["realm_user"]"#).await;
    let login = || async {
        let form = [("username", "new@agora.test"), ("password", "pw-new-person")];
        let response = app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap();
        assert_eq!(response.status(), 200);
    };
    login().await;
    let events = watch.events(&app).await;
    let (_, user) = get(&app, &app.owner, &format!("/users/{new_id}")).await;
    let joined = user["user"]["date_joined"].clone();
    assert_eq!(
        events,
        [json!({"type": "realm_user", "op": "update", "person": {"user_id": new_id, "date_joined": joined}})]
    );
    assert_eq!(user["user"]["is_imported_stub"], json!(false));
    // Only the first login.
    login().await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn user_matching_fields_and_paragraphs_in_the_summary() {
    let app = spawn_app().await;
    let create = |form: Vec<(&'static str, &'static str)>| {
        let app = &app;
        async move { send(app, &app.owner, Method::POST, "/realm/profile_fields", &form).await }
    };
    // FL 476: a paragraph may show in the summary; FL 455: short text and external accounts
    // may match users, other types may not.
    let (status, body) =
        json(create(vec![("name", "About"), ("field_type", "2"), ("display_in_profile_summary", "true")]).await).await;
    assert_eq!(status, 200, "{body}");
    let about = body["id"].as_i64().unwrap();
    let (status, body) =
        json(create(vec![("name", "Handle"), ("field_type", "1"), ("use_for_user_matching", "true")]).await).await;
    assert_eq!(status, 200, "{body}");
    let handle = body["id"].as_i64().unwrap();
    let refused = error("Field type not supported for user matching.");
    expect(create(vec![("name", "X"), ("field_type", "2"), ("use_for_user_matching", "true")]).await, 400, refused)
        .await;
    let (_, list) = get(&app, &app.owner, "/realm/profile_fields").await;
    let fields = list["custom_fields"].as_array().unwrap();
    let by_id = |id: i64| fields.iter().find(|f| f["id"] == id).unwrap().clone();
    assert_eq!(by_id(about)["display_in_profile_summary"], json!(true));
    assert_eq!(by_id(about).get("use_for_user_matching"), None);
    assert_eq!(by_id(handle)["use_for_user_matching"], json!(true));
    // Turned off through `PATCH`, it is left out again; refused on a paragraph.
    let path = format!("/realm/profile_fields/{handle}");
    let off = send(&app, &app.owner, Method::PATCH, &path, &[("use_for_user_matching", "false")]).await;
    assert_eq!(off.status(), 200);
    let path = format!("/realm/profile_fields/{about}");
    let on = send(&app, &app.owner, Method::PATCH, &path, &[("use_for_user_matching", "true")]).await;
    expect(on, 400, error("Field type not supported for user matching.")).await;
    let (_, list) = get(&app, &app.owner, "/realm/profile_fields").await;
    assert!(list["custom_fields"].as_array().unwrap().iter().all(|f| f.get("use_for_user_matching").is_none()));
    app.stop().await;
}

#[actix_web::test]
async fn administrators_change_other_users_settings() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let patch = |who: &Creds, form: Vec<(&'static str, String)>| {
        let (app, who) = (&app, who.clone());
        async move {
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            send(app, &who, Method::PATCH, "/settings", &form).await
        }
    };
    let both = json!({"user_ids": [alice.user_id, bob.user_id], "skip_if_already_edited": true}).to_string();
    // Alice chose her own `enter_sends` (on, then off again).
    for value in ["true", "false"] {
        assert_eq!(patch(&alice, vec![("enter_sends", value.into())]).await.status(), 200);
    }
    let must_be_admin =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(
        patch(&alice, vec![("target_users", both.clone()), ("enter_sends", "true".into())]).await,
        400,
        must_be_admin,
    )
    .await;
    let cannot = error("Cannot change this setting for other users.");
    for (name, value) in [("email", "x@agora.test"), ("presence_enabled", "false"), ("timezone", "Europe/Paris")] {
        let form = vec![("target_users", both.clone()), (name, value.into())];
        expect(patch(&app.owner, form).await, 400, cannot.clone()).await;
    }
    let cases = [
        (json!({"user_ids": [1]}), error(r#"target_users["skip_if_already_edited"] field is missing"#)),
        (json!({"skip_if_already_edited": false}), error("Either user_ids or group_ids must be provided.")),
        (json!({"user_ids": [999], "skip_if_already_edited": false}), error("Invalid user ID: 999")),
    ];
    for (target, expected) in cases {
        let form = vec![("target_users", target.to_string()), ("enter_sends", "true".into())];
        expect(patch(&app.owner, form).await, 400, expected).await;
    }

    // Skipping those who chose: Bob's changes, Alice's stays.
    let mut alices = Watch::new(&app, &alice, r#"["user_settings"]"#).await;
    let mut bobs = Watch::new(&app, &bob, r#"["user_settings"]"#).await;
    let response = patch(&app.owner, vec![("target_users", both.clone()), ("enter_sends", "true".into())]).await;
    expect(response, 200, json!({"result": "success", "msg": ""})).await;
    let enter_sends = json!({"type": "user_settings", "op": "update", "property": "enter_sends", "value": true});
    assert_eq!(bobs.events(&app).await, std::slice::from_ref(&enter_sends));
    assert_eq!(alices.events(&app).await, Vec::<Value>::new());
    // Not skipping: Alice's changes too; Bob's is already so.
    let everyone = json!({"user_ids": [alice.user_id], "group_ids": [], "skip_if_already_edited": false}).to_string();
    let response = patch(&app.owner, vec![("target_users", everyone), ("enter_sends", "true".into())]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(alices.events(&app).await, [enter_sends]);
    assert_eq!(bobs.events(&app).await, Vec::<Value>::new());
    let (_, state) =
        json(send(&app, &bob, Method::POST, "/register", &[("fetch_event_types", r#"["user_settings"]"#)]).await).await;
    assert_eq!(state["user_settings"]["enter_sends"], json!(true));
    app.stop().await;
}

#[actix_web::test]
async fn the_default_avatar_source_the_workplace_users_and_the_realm_uuid() {
    let app = spawn_app().await;
    let (_, members) = crate::helpers::admins_and_members_groups(&app).await;
    let state = crate::helpers::register(&app, &app.owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    // Jdenticon in a new organization, as in Zulip 12.
    assert_eq!(state["realm_default_avatar_source"], json!("J"));
    assert_eq!(state["realm_workplace_users_group"], json!(members));
    let uuid = state["realm_uuid"].as_str().unwrap();
    assert_eq!((uuid.len(), uuid.chars().nth(14)), (36, Some('4')), "{uuid}");
    let mut watch = Watch::new(&app, &app.owner, r#"["realm"]"#).await;
    let response = send(&app, &app.owner, Method::PATCH, "/realm", &[("default_avatar_source", "G")]).await;
    assert_eq!(response.status(), 200);
    let events = watch.events(&app).await;
    assert_eq!(events, [json!({"type": "realm", "op": "update", "property": "default_avatar_source", "value": "G"})]);
    let refused = send(&app, &app.owner, Method::PATCH, "/realm", &[("default_avatar_source", "U")]).await;
    assert_eq!(refused.status(), 400);
    let state = crate::helpers::register(&app, &app.owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(state["realm_default_avatar_source"], json!("G"));
    assert_eq!(state["realm_uuid"], json!(uuid));
    app.stop().await;
}
