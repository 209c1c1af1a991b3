//! Drafts over HTTP (`GET`, `POST /drafts`, `PATCH`, `DELETE /drafts/{draft_id}`): Zulip's
//! recorded `POST /drafts`, the checks in Zulip's order, the `drafts` events on every queue
//! of the owner and no one else's, the `drafts` data set, `enable_drafts_synchronization`,
//! and drafts, navigation views and saved snippets surviving a restart.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, post, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

/// A public channel created by the owner with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let invite_only = invite_only.to_string();
    let form = [("name", name), ("subscribers", ids.as_str()), ("invite_only", invite_only.as_str())];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn get(app: &TestApp, who: &Creds, path: &str) -> Response {
    app.as_user(who, Method::GET, path).send().await.unwrap()
}

/// `POST /drafts` with `drafts` (a JSON list).
async fn create(app: &TestApp, who: &Creds, drafts: &Value) -> Response {
    post(app, who, "/drafts", &[("drafts", drafts.to_string().as_str())]).await
}

/// The ids of drafts created by `POST /drafts`.
async fn created(app: &TestApp, who: &Creds, drafts: &Value) -> Vec<i64> {
    let (status, body) = json(create(app, who, drafts).await).await;
    assert_eq!(status, 200, "{body}");
    body["ids"].as_array().unwrap().iter().map(|id| id.as_i64().unwrap()).collect()
}

async fn edit(app: &TestApp, who: &Creds, id: i64, draft: &Value) -> Response {
    send(app, who, Method::PATCH, &format!("/drafts/{id}"), &[("draft", draft.to_string().as_str())]).await
}

async fn delete(app: &TestApp, who: &Creds, id: i64) -> Response {
    send(app, who, Method::DELETE, &format!("/drafts/{id}"), &[]).await
}

/// The body of `GET /drafts`.
fn listing(drafts: Value) -> Value {
    let count = drafts.as_array().unwrap().len();
    json!({"result": "success", "msg": "", "count": count, "drafts": drafts})
}

fn draft(id: i64, kind: &str, to: Value, topic: &str, content: &str, timestamp: i64) -> Value {
    json!({"id": id, "type": kind, "to": to, "topic": topic, "content": content, "timestamp": timestamp})
}

/// Zulip 10.2's recorded `POST /drafts` (zulip-golden/25_drafts_create.json), replayed byte
/// for byte but for the channel id (30 on the recording's server): the same body but for
/// the new draft's id, and the draft stored as sent.
#[actix_web::test]
async fn the_recorded_post_drafts_is_answered_as_zulip_answered_it() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let general = channel(&app, "general", false, &[&iago]).await;
    let recorded = "drafts=%5B%7B%22type%22%3A+%22stream%22%2C+%22to%22%3A+%5B30%5D%2C+%22topic%22%3A+%22draft+topic%22%2C+%22content%22%3A+%22draft+content%22%2C+%22timestamp%22%3A+1795238602%7D%5D";
    let body = recorded.replace("%5B30%5D", &format!("%5B{general}%5D"));
    let response = app
        .as_user(&iago, Method::POST, "/drafts")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("User-Agent", "ZulipPython/0.9.1 (Debian GNU/Linux; 12)")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/json");
    let (status, body) = json(response).await;
    // Recorded: {"result": "success", "msg": "", "ids": [5]}; the id is that server's.
    let id = body["ids"][0].as_i64().unwrap();
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "ids": [id]})));
    let stored = draft(id, "stream", json!([general]), "draft topic", "draft content", 1_795_238_602);
    expect(get(&app, &iago, "/drafts").await, 200, listing(json!([stored]))).await;
    app.stop().await;
}

#[actix_web::test]
async fn every_change_reaches_each_queue_of_the_owner_and_nobody_else() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let iago = app.create_user("", "iago@agora.test", "Iago", 400).await;
    let general = channel(&app, "general", false, &[&hamlet]).await;
    let mut phone = Watch::new(&app, &hamlet, r#"["drafts"]"#).await;
    let mut laptop = Watch::new(&app, &hamlet, r#"["drafts"]"#).await;
    let mut theirs = Watch::new(&app, &othello, r#"["drafts"]"#).await;

    let drafts = json!([
        {"type": "stream", "to": [general], "topic": "lunch", "content": "  Who is in? \n", "timestamp": 1_700_000_300},
        {"type": "private", "to": [iago.user_id, othello.user_id, hamlet.user_id], "topic": "ignored",
         "content": "group", "timestamp": 1_700_000_100.9},
        {"type": "private", "to": [hamlet.user_id], "topic": "", "content": "note to self", "timestamp": 1_700_000_200},
        {"type": "private", "to": [], "topic": "x", "content": "nobody yet", "timestamp": 1_700_000_400},
    ]);
    let ids = created(&app, &hamlet, &drafts).await;
    assert_eq!(ids.len(), 4);
    let (dm_to, others) = (json!([othello.user_id, iago.user_id]), hamlet.user_id);
    let stored = [
        draft(ids[0], "stream", json!([general]), "lunch", "Who is in?", 1_700_000_300),
        draft(ids[1], "private", dm_to, "", "group", 1_700_000_100),
        draft(ids[2], "private", json!([others]), "", "note to self", 1_700_000_200),
        draft(ids[3], "", json!([]), "", "nobody yet", 1_700_000_400),
    ];
    let added = json!({"type": "drafts", "op": "add", "drafts": stored});
    assert_eq!(phone.events(&app).await, vec![added.clone()]);
    assert_eq!(laptop.events(&app).await, vec![added]);
    // Listed least recently edited first; register has the newest first.
    let oldest_first = json!([stored[1], stored[2], stored[0], stored[3]]);
    expect(get(&app, &hamlet, "/drafts").await, 200, listing(oldest_first)).await;
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["drafts"]"#)]).await;
    assert_eq!(state["drafts"], json!([stored[3], stored[0], stored[2], stored[1]]));

    // Without a timestamp the server fills in the time of the request.
    let before = chrono::Utc::now().timestamp();
    let id = created(&app, &hamlet, &json!([{"type": "", "to": [], "topic": "", "content": "now"}])).await[0];
    let after = chrono::Utc::now().timestamp();
    let events = phone.events(&app).await;
    assert_eq!(laptop.events(&app).await, events);
    let stamp = events[0]["drafts"][0]["timestamp"].as_i64().unwrap();
    assert!((before..=after).contains(&stamp), "{before} <= {stamp} <= {after}");
    assert_eq!(
        events,
        vec![json!({"type": "drafts", "op": "add", "drafts": [draft(id, "", json!([]), "", "now", stamp)]})]
    );

    // Editing replaces the whole draft.
    let changed =
        json!({"type": "stream", "to": [general], "topic": "dinner", "content": "Who?", "timestamp": 1_700_000_500});
    let with_extra = send(
        &app,
        &hamlet,
        Method::PATCH,
        &format!("/drafts/{}", ids[0]),
        &[("draft", changed.to_string().as_str()), ("colour", "red")],
    )
    .await;
    let ignored = json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["colour"]});
    expect(with_extra, 200, ignored).await;
    let updated = draft(ids[0], "stream", json!([general]), "dinner", "Who?", 1_700_000_500);
    let update = json!({"type": "drafts", "op": "update", "draft": updated});
    assert_eq!(phone.events(&app).await, vec![update.clone()]);
    assert_eq!(laptop.events(&app).await, vec![update]);

    // Another user's drafts do not exist for them; theirs stay as they were.
    let absent = json!({"result": "error", "msg": "Draft does not exist", "code": "BAD_REQUEST"});
    expect(edit(&app, &othello, ids[1], &changed).await, 404, absent.clone()).await;
    expect(delete(&app, &othello, ids[1]).await, 404, absent.clone()).await;
    expect(get(&app, &othello, "/drafts").await, 200, listing(json!([]))).await;
    assert_eq!(register(&app, &othello, &[("fetch_event_types", r#"["drafts"]"#)]).await["drafts"], json!([]));

    expect(delete(&app, &hamlet, ids[1]).await, 200, success()).await;
    let remove = json!({"type": "drafts", "op": "remove", "draft_id": ids[1]});
    assert_eq!(phone.events(&app).await, vec![remove.clone()]);
    assert_eq!(laptop.events(&app).await, vec![remove]);
    expect(delete(&app, &hamlet, ids[1]).await, 404, absent).await;
    let (_, listed) = json(get(&app, &hamlet, "/drafts").await).await;
    assert_eq!(listed["count"], json!(4));
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn refusals_are_zulips_in_zulips_order_and_create_nothing() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let gone = app.create_user("", "gone@agora.test", "Gone", 400).await;
    let general = channel(&app, "general", false, &[&hamlet]).await;
    let secret = channel(&app, "secret", true, &[&othello]).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", gone.user_id), &[]).await, 200, success())
        .await;
    let mut watch = Watch::new(&app, &hamlet, r#"["drafts"]"#).await;
    let kept =
        created(&app, &hamlet, &json!([{"type": "", "to": [], "topic": "", "content": "kept", "timestamp": 5}])).await;

    expect(post(&app, &hamlet, "/drafts", &[]).await, 400, missing("drafts")).await;
    let ok = json!({"type": "", "to": [], "topic": "", "content": "fine"});
    let refusals: Vec<(Value, String)> = vec![
        (
            json!({"type": "stream", "to": [general, secret], "topic": "t", "content": "x"}),
            "Must specify exactly 1 channel ID for channel messages".into(),
        ),
        (
            json!({"type": "stream", "to": [], "topic": "t", "content": "x"}),
            "Must specify exactly 1 channel ID for channel messages".into(),
        ),
        (json!({"type": "stream", "to": [secret], "topic": "t", "content": "x"}), "Invalid channel ID".into()),
        (json!({"type": "stream", "to": [9999], "topic": "t", "content": "x"}), "Invalid channel ID".into()),
        (
            json!({"type": "stream", "to": [general], "topic": "a\u{0}b", "content": "x"}),
            "Topic must not contain null bytes".into(),
        ),
        (
            json!({"type": "stream", "to": [general], "topic": "t", "content": "a\u{0}b"}),
            "Message must not contain null bytes".into(),
        ),
        (
            json!({"type": "private", "to": [othello.user_id, 99_999_999_999_999i64], "topic": "", "content": "x"}),
            "Invalid user ID 99999999999999".into(),
        ),
        (
            json!({"type": "private", "to": [gone.user_id], "topic": "", "content": "x"}),
            "'gone@agora.test' is no longer using Zulip.".into(),
        ),
        (
            json!({"type": "", "to": [], "topic": "", "content": "x", "timestamp": -1}),
            "Timestamp must not be negative.".into(),
        ),
        (
            json!({"type": "", "to": [], "topic": "", "content": "   "}),
            r#"drafts[1]["content"] cannot be blank"#.into(),
        ),
        (json!({"type": "group", "to": [], "topic": "", "content": "x"}), r#"Invalid drafts[1]["type"]"#.into()),
        (
            json!({"type": "", "to": ["5"], "topic": "", "content": "x"}),
            r#"drafts[1]["to"][0] is not an integer"#.into(),
        ),
        (
            json!({"type": "", "to": [], "content": "x"}),
            r#"drafts[1]["topic"] field is missing: Field required"#.into(),
        ),
        (
            json!({"type": "", "to": [], "topic": "", "content": "x", "id": 3}),
            r#"Argument "id" at drafts[1]["id"] is unexpected"#.into(),
        ),
    ];
    for (bad, msg) in &refusals {
        // The first draft is fine: nothing is created when a later one is refused.
        expect(create(&app, &hamlet, &json!([ok, bad])).await, 400, error(msg)).await;
    }
    expect(post(&app, &hamlet, "/drafts", &[("drafts", "[{")]).await, 400, error("drafts is not valid JSON")).await;
    expect(post(&app, &hamlet, "/drafts", &[("drafts", "{}")]).await, 400, error("drafts is not a list")).await;
    let (_, listed) = json(get(&app, &hamlet, "/drafts").await).await;
    assert_eq!(listed["count"], json!(1));
    assert_eq!(watch.events(&app).await.len(), 1, "only the first creation");

    // Edits: the draft must be the user's before its new content is looked at.
    let bad = json!({"type": "stream", "to": [], "topic": "t", "content": "x"});
    let absent = json!({"result": "error", "msg": "Draft does not exist", "code": "BAD_REQUEST"});
    expect(edit(&app, &hamlet, kept[0] + 100, &bad).await, 404, absent).await;
    let refused = error("Must specify exactly 1 channel ID for channel messages");
    expect(edit(&app, &hamlet, kept[0], &bad).await, 400, refused).await;
    let path = format!("/drafts/{}", kept[0]);
    expect(send(&app, &hamlet, Method::PATCH, &path, &[]).await, 400, missing("draft")).await;
    let not_a_dict = error("draft is not a dict");
    expect(send(&app, &hamlet, Method::PATCH, &path, &[("draft", "[]")]).await, 400, not_a_dict).await;
    // Ids are numbers; other methods are not served.
    let not_found = json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"});
    expect(send(&app, &hamlet, Method::DELETE, "/drafts/abc", &[]).await, 404, not_found).await;
    let not_allowed = json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["PATCH", "DELETE"]});
    expect(get(&app, &hamlet, &path).await, 405, not_allowed).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let listing_now = listing(json!([draft(kept[0], "", json!([]), "", "kept", 5)]));
    expect(get(&app, &hamlet, "/drafts").await, 200, listing_now).await;
    app.stop().await;
}

#[actix_web::test]
async fn turning_synchronization_off_deletes_the_drafts_and_refuses_new_ones() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let one = json!([{"type": "", "to": [], "topic": "", "content": "x", "timestamp": 5}]);
    let ids = created(&app, &hamlet, &one).await;
    let theirs = created(&app, &othello, &one).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["drafts", "user_settings"]"#).await;

    let off = [("enable_drafts_synchronization", "false")];
    expect(send(&app, &hamlet, Method::PATCH, "/settings", &off).await, 200, success()).await;
    // The setting changes; no draft is announced as removed (the clients keep theirs).
    let setting =
        json!({"type": "user_settings", "op": "update", "property": "enable_drafts_synchronization", "value": false});
    assert_eq!(watch.events(&app).await, vec![setting]);
    let refused = error("User has disabled synchronizing drafts.");
    expect(get(&app, &hamlet, "/drafts").await, 400, refused.clone()).await;
    expect(create(&app, &hamlet, &one).await, 400, refused.clone()).await;
    // Refused before the parameters are looked at.
    expect(post(&app, &hamlet, "/drafts", &[]).await, 400, refused.clone()).await;
    expect(post(&app, &hamlet, "/drafts", &[("drafts", "nonsense")]).await, 400, refused.clone()).await;
    expect(edit(&app, &hamlet, ids[0], &json!({})).await, 400, refused.clone()).await;
    expect(delete(&app, &hamlet, ids[0]).await, 400, refused).await;
    assert_eq!(register(&app, &hamlet, &[("fetch_event_types", r#"["drafts"]"#)]).await["drafts"], json!([]));
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    // Turned on again, the stored drafts are gone; other users kept theirs.
    let on = [("enable_drafts_synchronization", "true")];
    expect(send(&app, &hamlet, Method::PATCH, "/settings", &on).await, 200, success()).await;
    expect(get(&app, &hamlet, "/drafts").await, 200, listing(json!([]))).await;
    let absent = json!({"result": "error", "msg": "Draft does not exist", "code": "BAD_REQUEST"});
    expect(delete(&app, &hamlet, ids[0]).await, 404, absent).await;
    let kept = listing(json!([draft(theirs[0], "", json!([]), "", "x", 5)]));
    expect(get(&app, &othello, "/drafts").await, 200, kept).await;
    app.stop().await;
}

#[actix_web::test]
async fn drafts_views_and_snippets_survive_a_restart() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let one = json!([{"type": "private", "to": [hamlet.user_id], "topic": "", "content": "x", "timestamp": 5}]);
    let ids = created(&app, &hamlet, &one).await;
    let form = [("fragment", "narrow/is/alerted"), ("is_pinned", "true"), ("name", "Alerts")];
    expect(post(&app, &hamlet, "/navigation_views", &form).await, 200, success()).await;
    let form = [("title", "Hello"), ("content", "Hello there")];
    let (_, snippet) = json(post(&app, &hamlet, "/saved_snippets", &form).await).await;
    let fetch = [("fetch_event_types", r#"["drafts", "navigation_views", "saved_snippets"]"#)];
    let before = register(&app, &hamlet, &fetch).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let after = register(&app, &hamlet, &fetch).await;
    for key in ["drafts", "navigation_views", "saved_snippets"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    assert_eq!(after["drafts"], json!([draft(ids[0], "private", json!([hamlet.user_id]), "", "x", 5)]));
    assert_eq!(
        after["navigation_views"],
        json!([{"fragment": "narrow/is/alerted", "is_pinned": true, "name": "Alerts"}])
    );
    assert_eq!(after["saved_snippets"][0]["id"], snippet["saved_snippet_id"]);
    // New ones get new ids.
    let next = created(&app, &hamlet, &one).await;
    assert!(next[0] > ids[0]);
    app.stop().await;
    drop(tmp);
}

/// Zulip deletes these only with the account itself (which Agora never deletes):
/// deactivation keeps them for when the user comes back. Ids are unique across
/// organizations, and another organization's user finds none of them.
#[actix_web::test]
async fn deactivation_keeps_them_and_other_organizations_never_see_them() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let boss = app.create_realm("acme", "boss@acme.test").await;
    let one = json!([{"type": "", "to": [], "topic": "", "content": "x", "timestamp": 5}]);
    let ids = created(&app, &hamlet, &one).await;
    let form = [("fragment", "inbox"), ("is_pinned", "true")];
    expect(post(&app, &hamlet, "/navigation_views", &form).await, 200, success()).await;
    let snippet = [("title", "Hello"), ("content", "Hello there")];
    let (_, body) = json(post(&app, &hamlet, "/saved_snippets", &snippet).await).await;
    let snippet_id = body["saved_snippet_id"].as_i64().unwrap();

    let absent = json!({"result": "error", "msg": "Draft does not exist", "code": "BAD_REQUEST"});
    expect(delete(&app, &boss, ids[0]).await, 404, absent).await;
    expect(get(&app, &boss, "/drafts").await, 200, listing(json!([]))).await;
    let missing_snippet = json!({"result": "error", "msg": "Saved snippet does not exist.", "code": "BAD_REQUEST"});
    let path = format!("/saved_snippets/{snippet_id}");
    expect(send(&app, &boss, Method::DELETE, &path, &[]).await, 404, missing_snippet).await;
    let missing_view = json!({"result": "error", "msg": "Navigation view does not exist.", "code": "NOT_FOUND"});
    expect(send(&app, &boss, Method::DELETE, "/navigation_views/inbox", &[]).await, 404, missing_view).await;
    let boss_ids = created(&app, &boss, &one).await;
    assert!(boss_ids[0] > ids[0]);

    let fetch = [("fetch_event_types", r#"["drafts", "navigation_views", "saved_snippets"]"#)];
    let before = register(&app, &hamlet, &fetch).await;
    let user_path = format!("/users/{}", hamlet.user_id);
    expect(send(&app, &app.owner, Method::DELETE, &user_path, &[]).await, 200, success()).await;
    let reactivate = format!("/users/{}/reactivate", hamlet.user_id);
    expect(send(&app, &app.owner, Method::POST, &reactivate, &[]).await, 200, success()).await;
    let after = register(&app, &hamlet, &fetch).await;
    for key in ["drafts", "navigation_views", "saved_snippets"] {
        assert_eq!(after[key], before[key], "{key}");
        assert_eq!(after[key].as_array().map(Vec::len), Some(1), "{key}");
    }
    app.stop().await;
}
