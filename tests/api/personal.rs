//! A user's personal data over HTTP: their status (`POST /users/me/status`,
//! `GET /users/{user_id}/status`), alert words (`/users/me/alert_words`) and muted users
//! (`/users/me/muted_users/{id}`), their register data sets and events, and what alert
//! words and mutes do to new messages (their flags in `GET /messages`, `is:alerted`).

use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::users::{CreateUser, NewUser};
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, post, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

/// A bot of the root organization owned by `owner` (bots have no endpoint yet).
async fn bot(app: &TestApp, owner: &Creds) -> Creds {
    let new = NewUser {
        bot_type: Some(1),
        bot_owner_id: Some(UserId(owner.user_id)),
        ..NewUser::human("helper-bot@agora.test", "Helper Bot", Role::Member, None)
    };
    let created = app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap();
    Creds {
        email: "helper-bot@agora.test".into(),
        password: String::new(),
        api_key: created.api_key,
        user_id: created.user_id.0,
        host: owner.host.clone(),
    }
}

async fn status(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    post(app, who, "/users/me/status", form).await
}

async fn get(app: &TestApp, who: &Creds, path: &str) -> Response {
    app.as_user(who, Method::GET, path).send().await.unwrap()
}

/// The success body of `GET /users/{user_id}/status`.
fn status_body(status: Value) -> Value {
    json!({"result": "success", "msg": "", "status": status})
}

/// `who`'s register data for `fetch_event_types`.
async fn data(app: &TestApp, who: &Creds, types: &str) -> Value {
    register(app, who, &[("fetch_event_types", types)]).await
}

#[actix_web::test]
async fn status_changes_are_checked_as_zulip_checks_them() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["user_status", "user_settings"]"#).await;
    let too_long = "x".repeat(61);
    let refusals: &[(&[(&str, &str)], &str)] = &[
        (&[], "Client did not pass any new values."),
        (&[("emoji_code", "")], "Client did not pass any new values."),
        (
            &[("status_text", "In a meeting"), ("emoji_code", "1f4bb")],
            "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
        ),
        (
            &[("status_text", "In a meeting"), ("emoji_code", "1f4bb"), ("emoji_name", "invalid")],
            "Emoji 'invalid' does not exist",
        ),
        (&[("emoji_name", "octopus"), ("emoji_code", "1f389")], "Invalid emoji name."),
        (
            &[("emoji_name", "octopus"), ("emoji_code", "1f419"), ("reaction_type", "realm_emoji")],
            "Invalid custom emoji.",
        ),
        (
            &[("emoji_name", "octopus"), ("emoji_code", "zzz"), ("reaction_type", "unicode_emoji")],
            "Invalid emoji code.",
        ),
        (&[("emoji_name", "octopus"), ("reaction_type", "nope")], "Invalid emoji type."),
        (&[("status_text", too_long.as_str())], "status_text is too long (limit: 60 characters)"),
        // `away` is parsed first, as in Zulip's signature.
        (&[("status_text", too_long.as_str()), ("away", "yes")], "away is not valid JSON"),
        (&[("away", "1")], "away is not a boolean"),
    ];
    for (form, msg) in refusals {
        expect(status(&app, &hamlet, form).await, 400, error(msg)).await;
    }
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    // Bots are refused before their parameters are looked at.
    let robot = bot(&app, &hamlet).await;
    let humans_only = error("This endpoint does not accept bot requests.");
    expect(status(&app, &robot, &[("away", "yes")]).await, 400, humans_only).await;
    // The path takes POST only; other users' statuses are read by id.
    let response = get(&app, &hamlet, "/users/me/status").await;
    expect(response, 405, json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["POST"]})).await;
    expect(get(&app, &hamlet, "/users/hamlet@agora.test/status").await, 404, not_found()).await;
    expect(get(&app, &hamlet, "/users/9999/status").await, 400, error("No such user")).await;
    expect(get(&app, &hamlet, &format!("/users/{}/status", robot.user_id)).await, 400, error("No such user")).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_status_reaches_everyone_and_shows_only_what_is_set() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 600).await;
    let mut mine = Watch::new(&app, &hamlet, r#"["user_status", "user_settings"]"#).await;
    let mut theirs = Watch::new(&app, &othello, r#"["user_status", "user_settings"]"#).await;
    let path = format!("/users/{}/status", hamlet.user_id);
    expect(get(&app, &othello, &path).await, 200, status_body(json!({}))).await;

    let form = [("status_text", "  on vacation "), ("emoji_name", "octopus"), ("shade", "blue")];
    let ignored = json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["shade"]});
    expect(status(&app, &hamlet, &form).await, 200, ignored).await;
    let event = json!({"type": "user_status", "user_id": hamlet.user_id, "status_text": "on vacation",
                       "emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "unicode_emoji"});
    assert_eq!(mine.events(&app).await, vec![event.clone()]);
    assert_eq!(theirs.events(&app).await, vec![event]);
    let shown = json!({"status_text": "on vacation", "emoji_name": "octopus", "emoji_code": "1f419",
                       "reaction_type": "unicode_emoji"});
    expect(get(&app, &othello, &path).await, 200, status_body(shown.clone())).await;
    let state = data(&app, &othello, r#"["user_status"]"#).await;
    assert_eq!(state["user_status"], json!({ hamlet.user_id.to_string(): shown }));

    // `away` turns `presence_enabled` off (the user is told), and shows as `away`.
    expect(status(&app, &hamlet, &[("away", "true"), ("emoji_name", "")]).await, 200, success()).await;
    let setting = json!({"type": "user_settings", "op": "update", "property": "presence_enabled", "value": false});
    let event = json!({"type": "user_status", "user_id": hamlet.user_id, "away": true, "emoji_name": "",
                       "emoji_code": "", "reaction_type": "unicode_emoji"});
    assert_eq!(mine.events(&app).await, vec![setting, event.clone()]);
    assert_eq!(theirs.events(&app).await, vec![event]);
    let shown = json!({"away": true, "status_text": "on vacation"});
    expect(get(&app, &othello, &path).await, 200, status_body(shown.clone())).await;
    let state = data(&app, &hamlet, r#"["user_status", "user_settings"]"#).await;
    assert_eq!(state["user_status"], json!({ hamlet.user_id.to_string(): shown }));
    assert_eq!(state["user_settings"]["presence_enabled"], json!(false));

    // Cleared, the status leaves the data set.
    expect(status(&app, &hamlet, &[("away", "false"), ("status_text", "")]).await, 200, success()).await;
    expect(get(&app, &othello, &path).await, 200, status_body(json!({}))).await;
    assert_eq!(data(&app, &othello, r#"["user_status"]"#).await["user_status"], json!({}));
    // Deactivated users are not looked up, nor listed.
    expect(status(&app, &othello, &[("status_text", "gone fishing")]).await, 200, success()).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", othello.user_id), &[]).await, 200, success())
        .await;
    let path = format!("/users/{}/status", othello.user_id);
    expect(get(&app, &hamlet, &path).await, 400, error("User is deactivated")).await;
    assert_eq!(data(&app, &hamlet, r#"["user_status"]"#).await["user_status"], json!({}));
    app.stop().await;
}

#[actix_web::test]
async fn administrators_set_other_users_statuses_as_zulip_lets_them() {
    let app = spawn_app().await;
    let iago = app.create_user("", "iago@agora.test", "Iago", 200).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let robot = bot(&app, &hamlet).await;
    let mut watch = Watch::new(&app, &othello, r#"["user_status", "user_settings"]"#).await;
    let path = format!("/users/{}/status", hamlet.user_id);

    // The parameters are checked first, then the user, then the values.
    let too_long = "x".repeat(61);
    type Refusal<'a> = (&'a Creds, String, Vec<(&'a str, &'a str)>, &'a str);
    let refusals: &[Refusal] = &[
        (
            &hamlet,
            path.clone(),
            vec![("status_text", too_long.as_str())],
            "status_text is too long (limit: 60 characters)",
        ),
        (&hamlet, format!("/users/{}/status", othello.user_id), vec![("status_text", "hi")], "Insufficient permission"),
        // Not even one's own status (that is `/users/me/status`).
        (&hamlet, path.clone(), vec![("status_text", "hi")], "Insufficient permission"),
        (&iago, "/users/9999/status".into(), vec![("status_text", "hi")], "No such user"),
        (&iago, format!("/users/{}/status", robot.user_id), vec![("status_text", "hi")], "No such user"),
        // `away` is no parameter here: it counts for nothing.
        (&iago, path.clone(), vec![("away", "true")], "Client did not pass any new values."),
        (&iago, path.clone(), vec![("emoji_code", "1f419")], "Client did not pass any new values."),
        (
            &iago,
            path.clone(),
            vec![("status_text", "x"), ("emoji_code", "1f419")],
            "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
        ),
        (&iago, path.clone(), vec![("emoji_name", "invalid")], "Emoji 'invalid' does not exist"),
    ];
    for (who, path, form, msg) in refusals {
        expect(post(&app, who, path, form).await, 400, error(msg)).await;
    }
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    let form = [("status_text", " In a meeting "), ("emoji_name", "octopus"), ("away", "true")];
    let ignored = json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["away"]});
    expect(post(&app, &iago, &path, &form).await, 200, ignored).await;
    let event = json!({"type": "user_status", "user_id": hamlet.user_id, "status_text": "In a meeting",
                       "emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "unicode_emoji"});
    // No `presence_enabled` change: the user's availability is theirs.
    assert_eq!(watch.events(&app).await, vec![event]);
    let shown = json!({"status_text": "In a meeting", "emoji_name": "octopus", "emoji_code": "1f419",
                       "reaction_type": "unicode_emoji"});
    expect(get(&app, &othello, &path).await, 200, status_body(shown.clone())).await;

    // Only what is given changes; an empty text clears the text.
    expect(post(&app, &iago, &path, &[("status_text", "")]).await, 200, success()).await;
    let event = json!({"type": "user_status", "user_id": hamlet.user_id, "status_text": ""});
    assert_eq!(watch.events(&app).await, vec![event]);

    // A deactivated user's status is not set.
    expect(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", othello.user_id), &[]).await, 200, success())
        .await;
    let othello_path = format!("/users/{}/status", othello.user_id);
    expect(post(&app, &iago, &othello_path, &[("status_text", "hi")]).await, 400, error("User is deactivated")).await;

    // Kept across a restart.
    let data_dir = app.data_dir.clone();
    let _tmp = app.stop().await;
    let app = spawn_app_at(&data_dir).await;
    let shown = json!({"emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "unicode_emoji"});
    expect(get(&app, &iago, &path).await, 200, status_body(shown)).await;
    app.stop().await;
}

async fn alert_words(app: &TestApp, who: &Creds, method: Method, words: &[&str]) -> Response {
    let words = json!(words).to_string();
    send(app, who, method, "/users/me/alert_words", &[("alert_words", words.as_str())]).await
}

fn words_body(words: &[&str]) -> Value {
    json!({"result": "success", "msg": "", "alert_words": words})
}

#[actix_web::test]
async fn alert_words_are_added_listed_and_removed_with_zulips_rules() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let mut mine = Watch::new(&app, &hamlet, r#"["alert_words"]"#).await;
    let mut theirs = Watch::new(&app, &othello, r#"["alert_words"]"#).await;
    expect(get(&app, &hamlet, "/users/me/alert_words").await, 200, words_body(&[])).await;

    let response = alert_words(&app, &hamlet, Method::POST, &[" milk ", "", "Tea", "coffee", "TEA"]).await;
    expect(response, 200, words_body(&["milk", "TEA", "coffee"])).await;
    let event = |words: &[&str]| json!({"type": "alert_words", "alert_words": words});
    assert_eq!(mine.events(&app).await, vec![event(&["milk", "TEA", "coffee"])]);
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    // Known words (in any case) are skipped; the list comes back all the same.
    expect(alert_words(&app, &hamlet, Method::POST, &["MILK"]).await, 200, words_body(&["milk", "TEA", "coffee"]))
        .await;
    assert_eq!(mine.events(&app).await, vec![event(&["milk", "TEA", "coffee"])]);
    expect(get(&app, &hamlet, "/users/me/alert_words").await, 200, words_body(&["milk", "TEA", "coffee"])).await;
    assert_eq!(data(&app, &hamlet, r#"["alert_words"]"#).await["alert_words"], json!(["milk", "TEA", "coffee"]));
    assert_eq!(data(&app, &othello, r#"["alert_words"]"#).await["alert_words"], json!([]));

    let response = alert_words(&app, &hamlet, Method::DELETE, &["tea", "water"]).await;
    expect(response, 200, words_body(&["milk", "coffee"])).await;
    assert_eq!(mine.events(&app).await, vec![event(&["milk", "coffee"])]);

    let long = "x".repeat(101);
    let response = alert_words(&app, &hamlet, Method::POST, &["fine", &long]).await;
    expect(response, 400, error("alert_words[1] is too long (limit: 100 characters)")).await;
    for method in [Method::POST, Method::DELETE] {
        let path = "/users/me/alert_words";
        expect(send(&app, &hamlet, method.clone(), path, &[]).await, 400, missing("alert_words")).await;
        let response = send(&app, &hamlet, method.clone(), path, &[("alert_words", "milk")]).await;
        expect(response, 400, error("alert_words is not valid JSON")).await;
        let response = send(&app, &hamlet, method.clone(), path, &[("alert_words", r#"{"a": 1}"#)]).await;
        expect(response, 400, error("alert_words is not a list")).await;
        let response = send(&app, &hamlet, method, path, &[("alert_words", r#"["a", 1]"#)]).await;
        expect(response, 400, error("alert_words[1] is not a string")).await;
    }
    assert_eq!(mine.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

/// A channel created by the owner with `subscribers`.
async fn channel(app: &TestApp, name: &str, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let (status, body) =
        json(post(app, &app.owner, "/channels/create", &[("name", name), ("subscribers", &ids)]).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Sends a message with `form` (unread for its sender too) and returns its id.
async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let mut form = form.to_vec();
    form.push(("read_by_sender", "false"));
    let (status, body) = json(post(app, who, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn says(app: &TestApp, who: &Creds, channel: i64, content: &str) -> i64 {
    sent(app, who, &[("type", "channel"), ("to", &channel.to_string()), ("topic", "talk"), ("content", content)]).await
}

/// Each message `who` fetches with `narrow` (newest last) as (id, flags).
async fn flags(app: &TestApp, who: &Creds, narrow: Value) -> Vec<(i64, Value)> {
    let narrow = narrow.to_string();
    let query = [("anchor", "newest"), ("num_before", "100"), ("num_after", "0"), ("narrow", narrow.as_str())];
    let (status, body) = json(app.as_user(who, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().iter().map(|m| (m["id"].as_i64().unwrap(), m["flags"].clone())).collect()
}

#[actix_web::test]
async fn alert_words_flag_messages_when_sent_and_edited_and_narrow_with_is_alerted() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let general = channel(&app, "general", &[&hamlet, &othello]).await;
    expect(
        alert_words(&app, &hamlet, Method::POST, &["Deploy", "tea time"]).await,
        200,
        words_body(&["Deploy", "tea time"]),
    )
    .await;
    let mut watch = Watch::new(&app, &hamlet, r#"["message", "update_message"]"#).await;

    let alerted = says(&app, &othello, general, "We DEPLOY today, (tea time) after.").await;
    let inside = says(&app, &othello, general, "redeploy the deployment").await;
    let code = says(&app, &othello, general, "```\ndeploy\n```").await;
    let events = watch.events(&app).await;
    assert_eq!(
        events.iter().map(|e| (e["message"]["id"].as_i64().unwrap(), e["flags"].clone())).collect::<Vec<_>>(),
        [(alerted, json!(["has_alert_word"])), (inside, json!([])), (code, json!([])),]
    );
    let all = json!([{"operator": "channel", "operand": general}]);
    assert_eq!(
        flags(&app, &hamlet, all.clone()).await,
        [(alerted, json!(["has_alert_word"])), (inside, json!([])), (code, json!([])),]
    );
    // Only the owner of the words is flagged.
    assert!(flags(&app, &othello, all.clone()).await.iter().all(|(_, f)| *f == json!(["read"]) || *f == json!([])));
    let is_alerted = json!([{"operator": "is", "operand": "alerted"}]);
    assert_eq!(flags(&app, &hamlet, is_alerted.clone()).await, [(alerted, json!(["has_alert_word"]))]);
    assert_eq!(flags(&app, &othello, is_alerted.clone()).await, []);

    // Edits recompute the flag, in the `update_message` events too.
    let edit = |id: i64, content: &'static str| {
        let app = &app;
        let othello = &othello;
        async move { send(app, othello, Method::PATCH, &format!("/messages/{id}"), &[("content", content)]).await }
    };
    let edited = json!({"result": "success", "msg": "", "detached_uploads": []});
    expect(edit(alerted, "nothing to see").await, 200, edited.clone()).await;
    expect(edit(inside, "time to deploy!").await, 200, edited).await;
    let flags_of_edits: Vec<(i64, Value)> =
        watch.events(&app).await.iter().map(|e| (e["message_id"].as_i64().unwrap(), e["flags"].clone())).collect();
    assert_eq!(flags_of_edits, [(alerted, json!([])), (inside, json!(["has_alert_word"]))]);
    assert_eq!(flags(&app, &hamlet, is_alerted).await, [(inside, json!(["has_alert_word"]))]);

    // Words removed alert no more.
    alert_words(&app, &hamlet, Method::DELETE, &["deploy"]).await;
    let later = says(&app, &othello, general, "deploy").await;
    assert_eq!(flags(&app, &hamlet, all).await.last(), Some(&(later, json!([]))));
    app.stop().await;
}

/// The JSON 404 of a path no route serves.
fn not_found() -> Value {
    json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"})
}

fn mute_path(id: i64) -> String {
    format!("/users/me/muted_users/{id}")
}

#[actix_web::test]
async fn mutes_are_checked_as_zulip_checks_them() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let cordelia = app.create_user("", "cordelia@agora.test", "Cordelia", 400).await;
    let other_org = app.create_realm("elsewhere", "owner@elsewhere.test").await;
    let mut watch = Watch::new(&app, &hamlet, r#"["muted_users"]"#).await;
    let me = hamlet.user_id;
    expect(send(&app, &hamlet, Method::POST, &mute_path(me), &[]).await, 400, error("Cannot mute self")).await;
    for id in [9999, other_org.user_id] {
        expect(send(&app, &hamlet, Method::POST, &mute_path(id), &[]).await, 400, error("No such user")).await;
        expect(send(&app, &hamlet, Method::DELETE, &mute_path(id), &[]).await, 400, error("No such user")).await;
    }
    let not_muted = error("User is not muted");
    expect(send(&app, &hamlet, Method::DELETE, &mute_path(cordelia.user_id), &[]).await, 400, not_muted.clone()).await;
    expect(send(&app, &hamlet, Method::DELETE, &mute_path(me), &[]).await, 400, not_muted.clone()).await;
    let response = app.as_user(&hamlet, Method::POST, "/users/me/muted_users/abc").send().await.unwrap();
    expect(response, 404, not_found()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    expect(send(&app, &hamlet, Method::POST, &mute_path(cordelia.user_id), &[]).await, 200, success()).await;
    let events = watch.events(&app).await;
    let timestamp = events[0]["muted_users"][0]["timestamp"].as_i64().unwrap();
    let list = json!([{"id": cordelia.user_id, "timestamp": timestamp}]);
    assert_eq!(events, vec![json!({"type": "muted_users", "muted_users": list})]);
    assert_eq!(data(&app, &hamlet, r#"["muted_users"]"#).await["muted_users"], list);
    assert_eq!(data(&app, &cordelia, r#"["muted_users"]"#).await["muted_users"], json!([]));
    let twice = error("User already muted");
    expect(send(&app, &hamlet, Method::POST, &mute_path(cordelia.user_id), &[]).await, 400, twice).await;
    // A bot, or a deactivated user, may be muted too.
    let robot = bot(&app, &cordelia).await;
    expect(send(&app, &hamlet, Method::POST, &mute_path(robot.user_id), &[]).await, 200, success()).await;
    let events = watch.events(&app).await;
    let list = json!([{"id": cordelia.user_id, "timestamp": timestamp},
                      {"id": robot.user_id, "timestamp": events[0]["muted_users"][1]["timestamp"]}]);
    assert_eq!(events, vec![json!({"type": "muted_users", "muted_users": list})]);

    expect(send(&app, &hamlet, Method::DELETE, &mute_path(cordelia.user_id), &[]).await, 200, success()).await;
    let list = json!([{"id": robot.user_id, "timestamp": list[1]["timestamp"]}]);
    assert_eq!(watch.events(&app).await, vec![json!({"type": "muted_users", "muted_users": list})]);
    expect(send(&app, &hamlet, Method::DELETE, &mute_path(cordelia.user_id), &[]).await, 400, not_muted).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_muted_senders_messages_are_read_for_the_muter() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let cordelia = app.create_user("", "cordelia@agora.test", "Cordelia", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let general = channel(&app, "general", &[&hamlet, &cordelia, &othello]).await;
    let before = says(&app, &cordelia, general, "before").await;
    let read_before = says(&app, &cordelia, general, "read before").await;
    let theirs = says(&app, &othello, general, "othello's").await;
    let form = [("messages", json!([read_before]).to_string()), ("op", "add".into()), ("flag", "read".into())];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _) = json(post(&app, &hamlet, "/messages/flags", &form).await).await;
    assert_eq!(status, 200);
    let mut watch = Watch::new(&app, &hamlet, r#"["message", "update_message_flags", "muted_users"]"#).await;

    // Muting marks the unread messages of the muted user read, before the list event.
    expect(send(&app, &hamlet, Method::POST, &mute_path(cordelia.user_id), &[]).await, 200, success()).await;
    let events = watch.events(&app).await;
    assert_eq!(
        events[0],
        json!({"type": "update_message_flags", "op": "add", "operation": "add", "flag": "read",
                                 "messages": [before], "all": false})
    );
    assert_eq!(events[1]["type"], "muted_users");
    assert_eq!(events.len(), 2);

    // New messages of the muted user arrive read, for the muter alone.
    let dm =
        sent(&app, &cordelia, &[("type", "direct"), ("to", &json!([hamlet.user_id]).to_string()), ("content", "hi")])
            .await;
    let after = says(&app, &cordelia, general, "after").await;
    let events = watch.events(&app).await;
    let flags_seen: Vec<(i64, Value)> =
        events.iter().map(|e| (e["message"]["id"].as_i64().unwrap(), e["flags"].clone())).collect();
    assert_eq!(flags_seen, [(dm, json!(["read"])), (after, json!(["read"]))]);
    let all = json!([{"operator": "channel", "operand": general}]);
    assert_eq!(
        flags(&app, &hamlet, all.clone()).await,
        [(before, json!(["read"])), (read_before, json!(["read"])), (theirs, json!([])), (after, json!(["read"])),]
    );
    assert_eq!(flags(&app, &othello, all).await.last(), Some(&(after, json!([]))));
    let private = json!([{"operator": "is", "operand": "dm"}]);
    assert_eq!(flags(&app, &hamlet, private).await, [(dm, json!(["read"]))]);

    // Unmuted, new messages are unread again.
    expect(send(&app, &hamlet, Method::DELETE, &mute_path(cordelia.user_id), &[]).await, 200, success()).await;
    let later = says(&app, &cordelia, general, "later").await;
    let all = json!([{"operator": "channel", "operand": general}]);
    assert_eq!(flags(&app, &hamlet, all).await.last(), Some(&(later, json!([]))));
    app.stop().await;
}

#[actix_web::test]
async fn statuses_alert_words_and_mutes_survive_a_restart() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let cordelia = app.create_user("", "cordelia@agora.test", "Cordelia", 400).await;
    expect(status(&app, &hamlet, &[("status_text", "busy"), ("emoji_name", "tada")]).await, 200, success()).await;
    expect(alert_words(&app, &hamlet, Method::POST, &["b", "a"]).await, 200, words_body(&["b", "a"])).await;
    expect(send(&app, &hamlet, Method::POST, &mute_path(cordelia.user_id), &[]).await, 200, success()).await;
    let types = r#"["user_status", "alert_words", "muted_users"]"#;
    let before = data(&app, &hamlet, types).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let after = data(&app, &hamlet, types).await;
    for key in ["user_status", "alert_words", "muted_users"] {
        assert_eq!(before[key], after[key], "{key}");
    }
    assert_eq!(
        after["user_status"],
        json!({ hamlet.user_id.to_string(): {"status_text": "busy", "emoji_name": "tada", "emoji_code": "1f389",
                                             "reaction_type": "unicode_emoji"} })
    );
    assert_eq!(after["alert_words"], json!(["b", "a"]));
    assert_eq!(after["muted_users"][0]["id"], json!(cordelia.user_id));
    // The restored words and mutes still act on new messages.
    let general = channel(&app, "general", &[&hamlet, &cordelia]).await;
    let id = says(&app, &cordelia, general, "a b c").await;
    let all = json!([{"operator": "channel", "operand": general}]);
    assert_eq!(flags(&app, &hamlet, all).await, [(id, json!(["read", "has_alert_word"]))]);
    app.stop().await;
    drop(tmp);
}
