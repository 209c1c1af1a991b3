//! Bots over HTTP: `POST`/`GET /bots`, `PATCH`/`DELETE /bots/{bot_id}`,
//! `POST /bots/{bot_id}/api_key/regenerate`, who may create which bots, the `realm_bots`
//! data set and the `realm_bot` events; bot storage (`/bot_storage`).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    admins_and_members_groups, error, expect, json, missing, post, register, send, spawn_app, success, Creds, TestApp,
    Watch, HOST,
};

/// Creates a bot as `owner`; its credentials.
pub async fn create_bot(app: &TestApp, owner: &Creds, short_name: &str, form: &[(&str, &str)]) -> Creds {
    let mut form = form.to_vec();
    form.push(("short_name", short_name));
    if !form.iter().any(|(k, _)| *k == "full_name") {
        form.push(("full_name", short_name));
    }
    let (status, body) = json(post(app, owner, "/bots", &form).await).await;
    assert_eq!(status, 200, "{body}");
    Creds {
        email: format!("{short_name}-bot@{HOST}"),
        password: String::new(),
        api_key: body["api_key"].as_str().unwrap().to_owned(),
        user_id: body["user_id"].as_i64().unwrap(),
        host: owner.host.clone(),
    }
}

/// A new bot's avatar: a Jdenticon, as every new account's in a new organization.
fn jdenticon(body: &Value) -> Value {
    let url = body["avatar_url"].as_str().unwrap();
    assert_eq!(url, format!("/user_avatars/1/jdenticon/{}.png?version=1", body["user_id"]));
    Value::String(url.to_owned())
}

async fn get(app: &TestApp, who: &Creds, path: &str) -> reqwest::Response {
    app.as_user(who, Method::GET, path).send().await.unwrap()
}

#[actix_web::test]
async fn a_member_creates_a_bot_and_its_owner_and_the_administrators_hear_of_it() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let _ = post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let mut owner_watch = Watch::new(&app, &app.owner, r#"["realm_bot", "realm_user"]"#).await;
    let mut hamlet_watch = Watch::new(&app, &hamlet, r#"["realm_bot", "realm_user"]"#).await;
    let mut othello_watch = Watch::new(&app, &othello, r#"["realm_bot", "realm_user"]"#).await;

    let form = [
        ("full_name", "Hamlet's helper"),
        ("short_name", " helper "),
        ("default_sending_stream", "Denmark"),
        ("default_all_public_streams", "true"),
    ];
    let (status, body) = json(post(&app, &hamlet, "/bots", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let (bot_id, api_key) = (body["user_id"].as_i64().unwrap(), body["api_key"].as_str().unwrap().to_owned());
    let avatar = jdenticon(&body);
    assert_eq!(
        body,
        json!({"result": "success", "msg": "", "user_id": bot_id, "api_key": api_key, "avatar_url": avatar,
               "default_sending_stream": "Denmark", "default_events_register_stream": null,
               "default_all_public_streams": true})
    );
    let email = format!("helper-bot@{HOST}");
    // Zulip 12 (feature level 474): what the user object has is not repeated.
    let bot_dict = json!({
        "user_id": bot_id, "default_sending_stream": "Denmark", "default_events_register_stream": null,
        "default_all_public_streams": true, "services": []
    });
    for watch in [&mut owner_watch, &mut hamlet_watch] {
        let events = watch.events(&app).await;
        assert_eq!(events.len(), 2, "{events:?}");
        let person = &events[0]["person"];
        assert_eq!((&events[0]["type"], &events[0]["op"]), (&json!("realm_user"), &json!("add")));
        assert_eq!(
            (&person["user_id"], &person["is_bot"], &person["bot_type"], &person["bot_owner_id"], &person["email"]),
            (&json!(bot_id), &json!(true), &json!(1), &json!(hamlet.user_id), &json!(email))
        );
        assert_eq!(events[1], json!({"type": "realm_bot", "op": "add", "bot": bot_dict}));
    }
    // Others learn of the account only.
    let events = othello_watch.events(&app).await;
    assert_eq!(events.iter().map(|e| e["type"].clone()).collect::<Vec<_>>(), vec![json!("realm_user")]);

    // The bot's key works, and its owner lists it.
    let bot =
        Creds { email: email.clone(), password: String::new(), api_key, user_id: bot_id, host: hamlet.host.clone() };
    let (status, me) = json(get(&app, &bot, "/users/me").await).await;
    assert_eq!((status, &me["is_bot"], &me["full_name"]), (200, &json!(true), &json!("Hamlet's helper")));
    expect(
        get(&app, &hamlet, "/bots").await,
        200,
        json!({"result": "success", "msg": "", "bots": [{"username": email, "full_name": "Hamlet's helper",
            "api_key": bot.api_key, "avatar_url": avatar, "default_sending_stream": "Denmark",
            "default_events_register_stream": null, "default_all_public_streams": true}]}),
    )
    .await;
    expect(get(&app, &othello, "/bots").await, 200, json!({"result": "success", "msg": "", "bots": []})).await;
    // Its key, for its owner and the administrators (Zulip 12, feature level 463).
    let key_path = format!("/bots/{bot_id}/api_key");
    let key = json!({"result": "success", "msg": "", "api_key": bot.api_key});
    expect(get(&app, &hamlet, &key_path).await, 200, key.clone()).await;
    expect(get(&app, &app.owner, &key_path).await, 200, key).await;
    expect(get(&app, &othello, &key_path).await, 400, error("Insufficient permission")).await;
    let human = format!("/bots/{}/api_key", othello.user_id);
    expect(get(&app, &hamlet, &human).await, 400, error("No such bot")).await;

    // realm_bots: administrators see every bot, others their own.
    let data = |who: Creds| {
        let app = &app;
        async move { register(app, &who, &[("fetch_event_types", r#"["realm_bot"]"#)]).await["realm_bots"].clone() }
    };
    assert_eq!(data(hamlet.clone()).await, json!([bot_dict]));
    assert_eq!(data(app.owner.clone()).await, json!([bot_dict]));
    assert_eq!(data(othello.clone()).await, json!([]));
}

#[actix_web::test]
async fn bot_creation_is_checked_as_zulip_checks_it() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    create_bot(&app, &hamlet, "taken", &[("full_name", "Taken Name")]).await;
    let cases: &[(&[(&str, &str)], Value)] = &[
        (&[("full_name", "X")], missing("short_name")),
        (&[("short_name", "x")], missing("full_name")),
        (&[("full_name", "Xyz"), ("short_name", "  ")], error("Bad name or username")),
        (&[("full_name", ""), ("short_name", "x")], error("Name too short!")),
        (&[("full_name", "Xyz"), ("short_name", "bad name")], error("Bad name or username")),
        (&[("full_name", "Xyz"), ("short_name", "taken")], error("Username already in use")),
        (&[("full_name", "Taken Name"), ("short_name", "other")], error("Name is already in use!")),
        (&[("full_name", "Hamlet"), ("short_name", "other")], error("Name is already in use!")),
        (&[("full_name", "Xyz"), ("short_name", "e"), ("bot_type", "4")], error("Embedded bots are not enabled.")),
        (&[("full_name", "Xyz"), ("short_name", "e"), ("bot_type", "7")], error("Invalid bot type")),
        (&[("full_name", "Xyz"), ("short_name", "e"), ("bot_type", "x")], error("bot_type is not valid JSON")),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("bot_type", "3"), ("interface_type", "3")],
            error("Invalid interface type"),
        ),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("payload_url", r#""ftp://x""#)],
            error("payload_url is not a URL"),
        ),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("payload_url", "http://x")],
            error("payload_url is not valid JSON"),
        ),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("default_sending_stream", "nowhere")],
            error("Invalid channel name 'nowhere'"),
        ),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("bot_type", "2"), ("service_name", "nagios")],
            error("Invalid integration 'nagios'."),
        ),
        (
            &[("full_name", "Xyz"), ("short_name", "e"), ("config_data", r#"{"a": 1}"#)],
            error(r#"config_data["a"] is not a string"#),
        ),
    ];
    for (form, expected) in cases {
        let (status, body) = json(post(&app, &hamlet, "/bots", form).await).await;
        assert_eq!((status, &body), (400, expected), "{form:?}");
    }
    expect(
        post(&app, &guest, "/bots", &[("full_name", "G"), ("short_name", "g")]).await,
        400,
        error("Not allowed for guest users"),
    )
    .await;
}

#[actix_web::test]
async fn the_organization_decides_who_may_create_which_bots() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let (admins, members) = admins_and_members_groups(&app).await;
    let setting = format!(r#"{{"new": {admins}, "old": {members}}}"#);
    expect(
        send(&app, &app.owner, Method::PATCH, "/realm", &[("can_create_bots_group", &setting)]).await,
        200,
        success(),
    )
    .await;
    let generic = [("full_name", "Gen"), ("short_name", "gen")];
    expect(post(&app, &hamlet, "/bots", &generic).await, 400, error("Insufficient permission")).await;
    let outgoing = [("full_name", "Out"), ("short_name", "out"), ("bot_type", "3")];
    expect(post(&app, &hamlet, "/bots", &outgoing).await, 400, error("Insufficient permission")).await;
    // Incoming-webhook bots need only can_create_write_only_bots_group.
    create_bot(&app, &hamlet, "hook", &[("bot_type", "2"), ("service_name", "alertmanager")]).await;
    let setting = format!(r#"{{"new": {admins}, "old": {members}}}"#);
    expect(
        send(&app, &app.owner, Method::PATCH, "/realm", &[("can_create_write_only_bots_group", &setting)]).await,
        200,
        success(),
    )
    .await;
    let incoming = [("full_name", "In"), ("short_name", "in"), ("bot_type", "2")];
    expect(post(&app, &hamlet, "/bots", &incoming).await, 400, error("Insufficient permission")).await;
    // Administrators may still.
    create_bot(&app, &app.owner, "admins", &[]).await;
}

#[actix_web::test]
async fn bots_are_updated_by_their_owner_and_administrators() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let _ = post(&app, &hamlet, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let bot = create_bot(&app, &hamlet, "helper", &[("full_name", "Helper")]).await;
    let path = format!("/bots/{}", bot.user_id);
    let mut hamlet_watch = Watch::new(&app, &hamlet, r#"["realm_bot", "realm_user"]"#).await;

    let form = [
        ("full_name", "New Helper"),
        ("default_events_register_stream", "Denmark"),
        ("default_all_public_streams", "true"),
    ];
    let (status, body) = json(send(&app, &hamlet, Method::PATCH, &path, &form).await).await;
    assert_eq!(status, 200, "{body}");
    let avatar = json!(format!("/user_avatars/1/jdenticon/{}.png?version=1", bot.user_id));
    assert_eq!(
        body,
        json!({"result": "success", "msg": "", "full_name": "New Helper", "avatar_url": avatar, "service_interface": 1,
            "service_payload_url": null, "config_data": null, "default_sending_stream": null,
            "default_events_register_stream": "Denmark", "default_all_public_streams": true,
            "bot_owner": "hamlet@agora.test"})
    );
    let update = |fields: Value| {
        let mut bot_fields = json!({"user_id": bot.user_id});
        bot_fields.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        json!({"type": "realm_bot", "op": "update", "bot": bot_fields})
    };
    assert_eq!(
        hamlet_watch.events(&app).await,
        vec![
            json!({"type": "realm_user", "op": "update", "person": {"user_id": bot.user_id, "full_name": "New Helper"}}),
            update(json!({"default_events_register_stream": "Denmark"})),
            update(json!({"default_all_public_streams": true})),
        ]
    );
    // The same name again changes nothing; clearing a channel with "".
    let (status, body) = json(
        send(
            &app,
            &hamlet,
            Method::PATCH,
            &path,
            &[("full_name", "New Helper"), ("default_events_register_stream", "")],
        )
        .await,
    )
    .await;
    assert_eq!((status, &body["default_events_register_stream"]), (200, &Value::Null));
    assert_eq!(hamlet_watch.events(&app).await, vec![update(json!({"default_events_register_stream": null}))]);

    // Someone else's bot, humans and unknown ids.
    expect(
        send(&app, &othello, Method::PATCH, &path, &[("full_name", "Mine")]).await,
        400,
        error("Insufficient permission"),
    )
    .await;
    let human = format!("/bots/{}", othello.user_id);
    expect(send(&app, &hamlet, Method::PATCH, &human, &[]).await, 400, error("No such bot")).await;
    expect(send(&app, &hamlet, Method::PATCH, "/bots/9999", &[]).await, 400, error("No such bot")).await;
    expect(
        send(&app, &hamlet, Method::PATCH, &path, &[("full_name", "Othello")]).await,
        400,
        error("Name is already in use!"),
    )
    .await;
    expect(
        send(&app, &hamlet, Method::PATCH, &path, &[("default_sending_stream", "nowhere")]).await,
        400,
        error("Invalid channel name 'nowhere'"),
    )
    .await;
    for (owner, msg) in [
        ("9999", "Failed to change owner, no such user"),
        (&bot.user_id.to_string()[..], "Failed to change owner, bots can't own other bots"),
    ] {
        expect(send(&app, &hamlet, Method::PATCH, &path, &[("bot_owner_id", owner)]).await, 400, error(msg)).await;
    }

    // A new owner: the previous one gets `delete`, the new one (no administrator) `add`,
    // everyone the `realm_user` update (no `realm_bot` `update` since feature level 474).
    let mut othello_watch = Watch::new(&app, &othello, r#"["realm_bot", "realm_user"]"#).await;
    let mut owner_watch = Watch::new(&app, &app.owner, r#"["realm_bot", "realm_user"]"#).await;
    let othello_id = othello.user_id.to_string();
    let (status, body) = json(send(&app, &hamlet, Method::PATCH, &path, &[("bot_owner_id", &othello_id)]).await).await;
    assert_eq!((status, &body["bot_owner"]), (200, &json!("othello@agora.test")));
    let owner_update = json!({"type": "realm_user", "op": "update", "person": {"user_id": bot.user_id, "bot_owner_id": othello.user_id}});
    assert_eq!(
        hamlet_watch.events(&app).await,
        vec![json!({"type": "realm_bot", "op": "delete", "bot": {"user_id": bot.user_id}}), owner_update.clone()]
    );
    let events = othello_watch.events(&app).await;
    assert_eq!(
        (&events[0]["op"], &events[0]["bot"]["user_id"], &events[1]),
        (&json!("add"), &json!(bot.user_id), &owner_update)
    );
    assert_eq!(owner_watch.events(&app).await, vec![owner_update]);
    // Hamlet no longer administers it.
    expect(
        send(&app, &hamlet, Method::PATCH, &path, &[("full_name", "X")]).await,
        400,
        error("Insufficient permission"),
    )
    .await;
}

#[actix_web::test]
async fn an_outgoing_webhook_bot_has_a_service() {
    let app = spawn_app().await;
    let form = [("bot_type", "3"), ("payload_url", r#""http://127.0.0.1:1/hook""#), ("full_name", "Echo")];
    let bot = create_bot(&app, &app.owner, "echo", &form).await;
    let data = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_bot"]"#)]).await;
    let services = &data["realm_bots"][0]["services"];
    let token = services[0]["token"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 32);
    assert_eq!(services, &json!([{"base_url": "http://127.0.0.1:1/hook", "interface": 1, "token": token}]));
    let mut watch = Watch::new(&app, &app.owner, r#"["realm_bot"]"#).await;
    let path = format!("/bots/{}", bot.user_id);
    let form = [("service_payload_url", r#""https://example.com/new""#), ("service_interface", "2")];
    let (status, body) = json(send(&app, &app.owner, Method::PATCH, &path, &form).await).await;
    assert_eq!(
        (status, &body["service_payload_url"], &body["service_interface"]),
        (200, &json!("https://example.com/new"), &json!(2))
    );
    let services = json!([{"base_url": "https://example.com/new", "interface": 2, "token": token}]);
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm_bot", "op": "update", "bot": {"user_id": bot.user_id, "services": services}})]
    );
    expect(
        send(
            &app,
            &app.owner,
            Method::PATCH,
            &path,
            &[("service_payload_url", r#""https://x.org""#), ("service_interface", "9")],
        )
        .await,
        400,
        error("Invalid interface type"),
    )
    .await;
}

#[actix_web::test]
async fn keys_are_regenerated_and_bots_deactivated_by_their_owner() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let bot = create_bot(&app, &hamlet, "helper", &[]).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["realm_bot", "realm_user"]"#).await;
    let regenerate = format!("/bots/{}/api_key/regenerate", bot.user_id);
    expect(post(&app, &othello, &regenerate, &[]).await, 400, error("Insufficient permission")).await;
    let (status, body) = json(post(&app, &hamlet, &regenerate, &[]).await).await;
    let new_key = body["api_key"].as_str().unwrap().to_owned();
    assert_eq!((status, new_key.len()), (200, 32));
    assert_eq!(body, json!({"result": "success", "msg": "", "api_key": new_key}));
    // No event: bot objects have no key since feature level 474.
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let (status, _) = json(get(&app, &bot, "/users/me").await).await;
    assert_eq!(status, 401);
    let renewed = Creds { api_key: new_key, ..bot.clone() };
    let (status, _) = json(get(&app, &renewed, "/users/me").await).await;
    assert_eq!(status, 200);

    let path = format!("/bots/{}", bot.user_id);
    expect(send(&app, &othello, Method::DELETE, &path, &[]).await, 400, error("Insufficient permission")).await;
    expect(send(&app, &hamlet, Method::DELETE, &path, &[]).await, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": bot.user_id, "is_active": false}})]
    );
    let response = get(&app, &renewed, "/users/me").await;
    expect(response, 401, json!({"result": "error", "msg": "Account is deactivated", "code": "UNAUTHORIZED"})).await;
    // Again: nothing to do.
    expect(send(&app, &hamlet, Method::DELETE, &path, &[]).await, 200, success()).await;
    expect(get(&app, &hamlet, "/bots").await, 200, json!({"result": "success", "msg": "", "bots": []})).await;
    // Reactivation: the `realm_user` update only (the bot stayed in `realm_bots`).
    expect(post(&app, &app.owner, &format!("/users/{}/reactivate", bot.user_id), &[]).await, 200, success()).await;
    let events = watch.events(&app).await;
    assert_eq!(events.iter().map(|e| e["type"].clone()).collect::<Vec<_>>(), vec![json!("realm_user")]);
}

#[actix_web::test]
async fn deactivating_a_user_takes_their_bots_along_without_realm_bot_events() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let bot = create_bot(&app, &hamlet, "helper", &[]).await;
    let mut watch = Watch::new(&app, &app.owner, r#"["realm_bot"]"#).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", hamlet.user_id), &[]).await, 200, success())
        .await;
    // Since feature level 474 `is_active` is not on bot objects: no `realm_bot` event.
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let (_, me) = json(get(&app, &bot, "/users/me").await).await;
    assert_eq!(me["code"], "UNAUTHORIZED");
}

#[actix_web::test]
async fn bot_storage_keeps_strings_as_zulip_does() {
    let app = spawn_app().await;
    let bot = create_bot(&app, &app.owner, "keeper", &[]).await;
    let storage = |body: Value| json!({"result": "success", "msg": "", "storage": body});
    expect(get(&app, &bot, "/bot_storage").await, 200, storage(json!({}))).await;
    // Bots only, since feature level 494.
    let human = error("Must be a bot user");
    expect(get(&app, &app.owner, "/bot_storage").await, 400, human.clone()).await;
    expect(send(&app, &app.owner, Method::PUT, "/bot_storage", &[("storage", "{}")]).await, 400, human.clone()).await;
    expect(send(&app, &app.owner, Method::DELETE, "/bot_storage", &[]).await, 400, human).await;
    let put = |form: &'static str| {
        let (app, bot) = (&app, &bot);
        async move { send(app, bot, Method::PUT, "/bot_storage", &[("storage", form)]).await }
    };
    expect(put(r#"{"a": "1", "b": "\"two\""}"#).await, 200, success()).await;
    expect(put(r#"{"a": "one"}"#).await, 200, success()).await;
    expect(get(&app, &bot, "/bot_storage").await, 200, storage(json!({"a": "one", "b": "\"two\""}))).await;
    expect(get(&app, &bot, r#"/bot_storage?keys=["b"]"#).await, 200, storage(json!({"b": "\"two\""}))).await;
    expect(get(&app, &bot, r#"/bot_storage?keys=["b","c"]"#).await, 400, error("Key does not exist.")).await;
    expect(put(r#"{"a": 1}"#).await, 400, error(r#"storage["a"] is not a string"#)).await;
    expect(put("[]").await, 400, error("storage is not a dict")).await;
    expect(send(&app, &bot, Method::PUT, "/bot_storage", &[]).await, 400, missing("storage")).await;
    expect(get(&app, &bot, "/bot_storage?keys=5").await, 400, error("keys is not a list")).await;

    let delete = |form: &'static [(&'static str, &'static str)]| {
        let (app, bot) = (&app, &bot);
        async move { send(app, bot, Method::DELETE, "/bot_storage", form).await }
    };
    expect(delete(&[("keys", r#"["a", "zz"]"#)]).await, 400, error("Key does not exist.")).await;
    expect(get(&app, &bot, "/bot_storage").await, 200, storage(json!({"a": "one", "b": "\"two\""}))).await;
    expect(delete(&[("keys", r#"["a"]"#)]).await, 200, success()).await;
    expect(get(&app, &bot, "/bot_storage").await, 200, storage(json!({"b": "\"two\""}))).await;
    expect(delete(&[]).await, 200, success()).await;
    expect(get(&app, &bot, "/bot_storage").await, 200, storage(json!({}))).await;

    // Zulip's limit: 10,000,000 characters of keys and values per user.
    let big = "x".repeat(999_990);
    for i in 0..10 {
        let form = json!({ format!("k{i}"): big }).to_string();
        expect(send(&app, &bot, Method::PUT, "/bot_storage", &[("storage", form.as_str())]).await, 200, success())
            .await;
    }
    // 10 × (2 + 999,990) = 9,999,920 stored: 81 more characters are 1 too many.
    let form = json!({"extra": "y".repeat(76)}).to_string();
    expect(
        send(&app, &bot, Method::PUT, "/bot_storage", &[("storage", form.as_str())]).await,
        400,
        error("Request exceeds storage limit by 1 characters. The limit is 10000000 characters."),
    )
    .await;
    // Replacing a value counts only the difference.
    let form = json!({"k0": "x".repeat(1_000_000)}).to_string();
    expect(send(&app, &bot, Method::PUT, "/bot_storage", &[("storage", form.as_str())]).await, 200, success()).await;
}

#[actix_web::test]
async fn a_bots_role_is_changed_as_a_users_is() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let bot = create_bot(&app, &hamlet, "helper", &[]).await;
    let path = format!("/bots/{}", bot.user_id);
    let mut watch = Watch::new(&app, &hamlet, r#"["realm_user"]"#).await;
    // Its owner may not make it an administrator.
    expect(
        send(&app, &hamlet, Method::PATCH, &path, &[("role", "200")]).await,
        400,
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"}),
    )
    .await;
    expect(
        send(&app, &hamlet, Method::PATCH, &path, &[("role", "7")]).await,
        400,
        error("Invalid role: Value error, Not in the list of possible values"),
    )
    .await;
    let (status, _) = json(send(&app, &app.owner, Method::PATCH, &path, &[("role", "200")]).await).await;
    assert_eq!(status, 200);
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": bot.user_id, "role": 200}})]
    );
}

/// Zulip 12 (feature level 473): a bot with administrator permissions may set another user's
/// status, as an administrator may; a bot without them may not.
#[actix_web::test]
async fn administrator_bots_set_a_users_status() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let bot = create_bot(&app, &app.owner, "statuses", &[]).await;
    let path = format!("/users/{}/status", hamlet.user_id);
    let form = [("status_text", "on vacation")];
    expect(post(&app, &bot, &path, &form).await, 400, error("Insufficient permission")).await;
    let role = send(&app, &app.owner, Method::PATCH, &format!("/bots/{}", bot.user_id), &[("role", "200")]).await;
    assert_eq!(role.status(), 200);
    expect(post(&app, &bot, &path, &form).await, 200, success()).await;
    let (_, body) = json(get(&app, &hamlet, &path).await).await;
    assert_eq!(body["status"]["status_text"], "on vacation");
}

/// Zulip 12 (feature level 458): a bot's subscriptions and group memberships are queried as
/// a human's are.
#[actix_web::test]
async fn a_bots_subscription_and_membership_are_queried_as_a_users() {
    let app = spawn_app().await;
    let bot = create_bot(&app, &app.owner, "member", &[]).await;
    let principals = format!("[{}]", bot.user_id);
    let form = [("subscriptions", r#"[{"name": "Denmark"}]"#), ("principals", principals.as_str())];
    assert_eq!(post(&app, &app.owner, "/users/me/subscriptions", &form).await.status(), 200);
    let (_, body) = json(get(&app, &app.owner, "/get_stream_id?stream=Denmark").await).await;
    let channel = body["stream_id"].as_i64().unwrap();
    let subscribed = get(&app, &app.owner, &format!("/users/{}/subscriptions/{channel}", bot.user_id)).await;
    expect(subscribed, 200, json!({"result": "success", "msg": "", "is_subscribed": true})).await;
    let (_, groups) = json(get(&app, &app.owner, "/user_groups").await).await;
    let everyone = groups["user_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "role:everyone")
        .map(|g| g["id"].as_i64().unwrap())
        .unwrap();
    let member = get(&app, &app.owner, &format!("/user_groups/{everyone}/members/{}", bot.user_id)).await;
    let (status, body) = json(member).await;
    assert_eq!((status, body["result"].as_str()), (200, Some("success")), "{body}");
}

#[actix_web::test]
async fn a_bots_short_name_gives_it_a_new_email() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let bot = create_bot(&app, &hamlet, "helper", &[]).await;
    create_bot(&app, &hamlet, "taken", &[]).await;
    let path = format!("/bots/{}", bot.user_id);
    let patch = |who: &Creds, short_name: &str| {
        let form = [("short_name", short_name.to_owned())];
        let request = app.as_user(who, Method::PATCH, &path).form(&form);
        async move { request.send().await.unwrap() }
    };
    expect(patch(&othello, "mine").await, 400, error("Insufficient permission")).await;
    expect(patch(&hamlet, "  ").await, 400, error("Bad name or username")).await;
    expect(patch(&hamlet, "a b").await, 400, error("Bad name or username")).await;
    expect(patch(&hamlet, "taken").await, 400, error("Username already in use")).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["realm_user", "realm_bot"]"#).await;
    // The same name changes nothing.
    assert_eq!(patch(&hamlet, "helper").await.status(), 200);
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    assert_eq!(patch(&hamlet, " assistant ").await.status(), 200);
    let email = format!("assistant-bot@{HOST}");
    let events = watch.events(&app).await;
    let people: Vec<&Value> = events.iter().map(|e| &e["person"]).collect();
    assert_eq!(people[0], &json!({"user_id": bot.user_id, "delivery_email": email}));
    assert_eq!(people.last().unwrap(), &&json!({"user_id": bot.user_id, "new_email": email}));
    assert!(events.iter().all(|e| e["type"] == "realm_user"), "no realm_bot event since level 474: {events:?}");
    // The bot signs in with its new address; the old one no longer works.
    let (status, me) = json(get(&app, &Creds { email: email.clone(), ..bot.clone() }, "/users/me").await).await;
    assert_eq!((status, &me["email"]), (200, &json!(email)));
    let (status, _) = json(get(&app, &bot, "/users/me").await).await;
    assert_eq!(status, 401);
    // And the old address is free again.
    create_bot(&app, &hamlet, "helper", &[("full_name", "Second helper")]).await;
    app.stop().await;
}
