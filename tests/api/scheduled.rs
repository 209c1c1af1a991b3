//! Scheduled messages over HTTP (`GET`, `POST /scheduled_messages`, `PATCH`, `DELETE
//! /scheduled_messages/{id}`): the objects, Zulip's errors in its order, the
//! `scheduled_messages` events and data set, and the scheduler: sent on time by the timer
//! with the right sender, content, topic and events; deletions and edits respected; never
//! sent twice; late or refused ones marked failed with Notification Bot's notice; and a
//! message that came due while the server was down sent once after a restart.
//!
//! Time is controlled: the timer test uses a due time one second ahead; the others hand the
//! organization's actor a `DeliverDue` with the time they want.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agora_actors::realm::scheduled::DeliverDue;
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::*;
use crate::invites::make_channel;

pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// `POST /scheduled_messages` with `form`.
pub async fn schedule(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    post(app, who, "/scheduled_messages", form).await
}

/// The id of a message scheduled with `form`.
pub async fn scheduled(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(schedule(app, who, form).await).await;
    assert_eq!(status, 200, "{body}");
    body["scheduled_message_id"].as_i64().unwrap()
}

/// The body of `GET /scheduled_messages`.
async fn listed(app: &TestApp, who: &Creds) -> Value {
    let (status, body) = json(send(app, who, Method::GET, "/scheduled_messages", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["scheduled_messages"].clone()
}

/// Hands the organization's actor the time `at`: it sends what is due then.
pub async fn deliver_at(app: &TestApp, at: i64) {
    deliver_in(app, "", at).await;
}

/// [`deliver_at`] for the organization of `subdomain`.
pub async fn deliver_in(app: &TestApp, subdomain: &str, at: i64) {
    let realm = app.realms.find(subdomain).await.unwrap().unwrap();
    realm.addr.send(DeliverDue { now: Some(at) }).await.unwrap();
}

/// Polls `watch` until `count` events arrived (at most 10 s).
pub async fn wait_events(app: &TestApp, watch: &mut Watch, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut events = Vec::new();
    while events.len() < count && Instant::now() < deadline {
        events.extend(watch.events(app).await);
        if events.len() < count {
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }
    events
}

fn stream_dict(id: i64, to: i64, content: &str, rendered: &str, topic: &str, at: i64, failed: bool) -> Value {
    json!({"scheduled_message_id": id, "to": to, "type": "stream", "content": content, "rendered_content": rendered,
           "topic": topic, "scheduled_delivery_timestamp": at, "failed": failed})
}

#[actix_web::test]
async fn scheduled_messages_are_listed_edited_and_deleted_with_their_events_and_data_set() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = make_channel(&app, &iago, "general", false).await;
    let mut watch = Watch::new(&app, &iago, r#"["scheduled_messages"]"#).await;
    let at = now() + 3600;
    let (to, at_s) = (general.to_string(), at.to_string());
    let form = [
        ("type", "stream"),
        ("to", to.as_str()),
        ("topic", "plans"),
        ("content", "**hi**"),
        ("scheduled_delivery_timestamp", at_s.as_str()),
    ];
    let id = scheduled(&app, &iago, &form).await;
    let dict = stream_dict(id, general, "**hi**", "<p><strong>hi</strong></p>", "plans", at, false);
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "scheduled_messages", "op": "add", "scheduled_messages": [dict]})]
    );
    // A direct message to bob, due earlier: listed first.
    let (bob_ids, early) = (json!([bob.user_id]).to_string(), (at - 60).to_string());
    let form = [
        ("type", "direct"),
        ("to", bob_ids.as_str()),
        ("content", "psst"),
        ("scheduled_delivery_timestamp", early.as_str()),
    ];
    let dm = scheduled(&app, &iago, &form).await;
    let dm_dict = json!({"scheduled_message_id": dm, "to": [bob.user_id], "type": "private", "content": "psst",
                         "rendered_content": "<p>psst</p>", "scheduled_delivery_timestamp": at - 60, "failed": false});
    assert_eq!(listed(&app, &iago).await, json!([dm_dict, dict]));
    assert_eq!(listed(&app, &bob).await, json!([]));
    let body = register(&app, &iago, &[("fetch_event_types", r#"["scheduled_messages"]"#)]).await;
    assert_eq!(body["scheduled_messages"], json!([dm_dict, dict]));
    watch.events(&app).await;

    // Any subset of the fields: the whole object comes in the event.
    let later = (at + 60).to_string();
    let path = format!("/scheduled_messages/{id}");
    let form = [("content", "later"), ("topic", "new plans"), ("scheduled_delivery_timestamp", later.as_str())];
    expect(send(&app, &iago, Method::PATCH, &path, &form).await, 200, success()).await;
    let edited = stream_dict(id, general, "later", "<p>later</p>", "new plans", at + 60, false);
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "scheduled_messages", "op": "update", "scheduled_message": edited})]
    );
    // From a channel message to a direct one.
    let form = [("type", "direct"), ("to", bob_ids.as_str())];
    expect(send(&app, &iago, Method::PATCH, &path, &form).await, 200, success()).await;
    let direct = json!({"scheduled_message_id": id, "to": [bob.user_id], "type": "private", "content": "later",
                        "rendered_content": "<p>later</p>", "scheduled_delivery_timestamp": at + 60, "failed": false});
    assert_eq!(watch.events(&app).await[0]["scheduled_message"], direct);
    // Someone else's is not found.
    expect(send(&app, &bob, Method::PATCH, &path, &form).await, 404, error("Scheduled message does not exist")).await;
    expect(send(&app, &bob, Method::DELETE, &path, &[]).await, 404, error("Scheduled message does not exist")).await;

    expect(send(&app, &iago, Method::DELETE, &path, &[]).await, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "scheduled_messages", "op": "remove", "scheduled_message_id": id})]
    );
    assert_eq!(listed(&app, &iago).await, json!([dm_dict]));
    expect(send(&app, &iago, Method::DELETE, &path, &[]).await, 404, error("Scheduled message does not exist")).await;
    let body = json!({"result": "success", "msg": "", "scheduled_messages": [dm_dict], "ignored_parameters_unsupported": ["colour"]});
    expect(send(&app, &iago, Method::GET, "/scheduled_messages?colour=red", &[]).await, 200, body).await;
    app.stop().await;
}

#[actix_web::test]
async fn scheduling_refuses_what_zulip_refuses_in_its_order() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = make_channel(&app, &iago, "general", false).await;
    let secret = make_channel(&app, &iago, "secret", true).await;
    let (g, s, future, past) =
        (general.to_string(), secret.to_string(), (now() + 3600).to_string(), (now() - 10).to_string());
    type Case<'a> = (Vec<(&'a str, &'a str)>, u16, Value);
    let cases: Vec<Case> = vec![
        (vec![("type", "stream"), ("to", &g), ("scheduled_delivery_timestamp", &future)], 400, missing("content")),
        (vec![("type", "stream"), ("content", "x"), ("scheduled_delivery_timestamp", &future)], 400, missing("to")),
        (vec![("to", &g), ("content", "x"), ("scheduled_delivery_timestamp", &future)], 400, missing("type")),
        (vec![("type", "stream"), ("to", &g), ("content", "x")], 400, missing("scheduled_delivery_timestamp")),
        (
            vec![("type", "mail"), ("to", &g), ("content", "x"), ("scheduled_delivery_timestamp", &future)],
            400,
            error("Invalid type"),
        ),
        (
            vec![
                ("type", "stream"),
                ("to", &g),
                ("content", "x"),
                ("topic", "t"),
                ("scheduled_delivery_timestamp", &past),
            ],
            400,
            error("Scheduled delivery time must be in the future."),
        ),
        (
            vec![
                ("type", "stream"),
                ("to", "[1]"),
                ("content", "x"),
                ("topic", "t"),
                ("scheduled_delivery_timestamp", &future),
            ],
            400,
            error("Invalid data type for channel ID"),
        ),
        (
            vec![("type", "direct"), ("to", "1"), ("content", "x"), ("scheduled_delivery_timestamp", &future)],
            400,
            error("Invalid data type for recipients"),
        ),
        (
            vec![("type", "direct"), ("to", "[999]"), ("content", "x"), ("scheduled_delivery_timestamp", &future)],
            400,
            error("Invalid user ID 999"),
        ),
        (
            vec![
                ("type", "stream"),
                ("to", "999"),
                ("content", "x"),
                ("topic", "t"),
                ("scheduled_delivery_timestamp", &future),
            ],
            400,
            json!({"result": "error", "msg": "Channel with ID '999' does not exist", "stream_id": 999, "code": "STREAM_DOES_NOT_EXIST"}),
        ),
        (
            vec![("type", "stream"), ("to", &g), ("content", "x"), ("scheduled_delivery_timestamp", &future)],
            400,
            error("Missing topic"),
        ),
        (
            vec![
                ("type", "stream"),
                ("to", &g),
                ("content", " "),
                ("topic", "t"),
                ("scheduled_delivery_timestamp", &future),
            ],
            400,
            error("Message must not be empty"),
        ),
    ];
    for (form, status, body) in cases {
        expect(schedule(&app, &iago, &form).await, status, body).await;
    }
    // The permissions of a send, at schedule time: bob may not post to a private channel.
    let form = [
        ("type", "channel"),
        ("to", s.as_str()),
        ("content", "x"),
        ("topic", "t"),
        ("scheduled_delivery_timestamp", future.as_str()),
    ];
    expect(schedule(&app, &bob, &form).await, 400, error("Not authorized to send to channel 'secret'")).await;
    assert_eq!(listed(&app, &bob).await, json!([]));

    let form = [
        ("type", "stream"),
        ("to", g.as_str()),
        ("content", "x"),
        ("topic", "t"),
        ("scheduled_delivery_timestamp", future.as_str()),
    ];
    let id = scheduled(&app, &iago, &form).await;
    let path = format!("/scheduled_messages/{id}");
    let cases: Vec<(Vec<(&str, &str)>, Value)> = vec![
        (vec![], error("Nothing to change")),
        (vec![("type", "direct")], error("Recipient required when updating type of scheduled message.")),
        (
            vec![("type", "channel"), ("to", &g)],
            error("Topic required when updating scheduled message type to channel."),
        ),
        (vec![("scheduled_delivery_timestamp", &past)], error("Scheduled delivery time must be in the future.")),
        (vec![("to", "[1]")], error("Invalid data type for channel ID")),
        (vec![("content", "")], error("Message must not be empty")),
    ];
    for (form, body) in cases {
        expect(send(&app, &iago, Method::PATCH, &path, &form).await, 400, body).await;
    }
    expect(
        send(&app, &bob, Method::PATCH, &path, &[("content", "y")]).await,
        404,
        error("Scheduled message does not exist"),
    )
    .await;
    // An edit is checked as a send: bob may not move his message to the private channel.
    let bobs = scheduled(&app, &bob, &form).await;
    let form = [("to", s.as_str())];
    let path = format!("/scheduled_messages/{bobs}");
    expect(
        send(&app, &bob, Method::PATCH, &path, &form).await,
        400,
        error("Not authorized to send to channel 'secret'"),
    )
    .await;
    expect(
        send(&app, &iago, Method::PATCH, "/scheduled_messages/999999", &[("content", "z")]).await,
        404,
        error("Scheduled message does not exist"),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn the_timer_sends_a_due_message_on_time_through_the_normal_send_path() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = make_channel(&app, &iago, "general", false).await;
    send(&app, &bob, Method::POST, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "general"}]"#)]).await;
    let mut bobs = Watch::new(&app, &bob, r#"["message"]"#).await;
    let mut iagos = Watch::new(&app, &iago, r#"["message", "scheduled_messages"]"#).await;
    let due = now() + 1;
    let (to, at) = (general.to_string(), due.to_string());
    let form = [
        ("type", "stream"),
        ("to", to.as_str()),
        ("topic", "soon"),
        ("content", "on time"),
        ("scheduled_delivery_timestamp", at.as_str()),
        ("read_by_sender", "true"),
    ];
    let id = scheduled(&app, &iago, &form).await;
    assert_eq!(iagos.events(&app).await.len(), 1);

    let events = wait_events(&app, &mut bobs, 1).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let message = &events[0]["message"];
    assert!(now() >= due);
    assert_eq!(message["content"], json!("on time"));
    assert_eq!((message["sender_id"].as_i64(), message["subject"].as_str()), (Some(iago.user_id), Some("soon")));
    assert_eq!(message["stream_id"], json!(general));
    assert!(message["timestamp"].as_i64().unwrap() >= due);
    assert_eq!(events[0]["flags"], json!([]));
    let events = wait_events(&app, &mut iagos, 2).await;
    assert_eq!(events[0]["type"], json!("message"));
    assert_eq!(events[0]["flags"], json!(["read"]));
    assert_eq!(events[1], json!({"type": "scheduled_messages", "op": "remove", "scheduled_message_id": id}));
    assert_eq!(listed(&app, &iago).await, json!([]));
    // Sent once: a later pass finds nothing due.
    deliver_at(&app, now() + 10).await;
    let sent: Vec<_> = inbox(&app, &bob).await.into_iter().filter(|m| m.3 == "on time").collect();
    assert_eq!(sent.len(), 1);
    // The delivered message is gone for edits and deletions as in Zulip.
    let path = format!("/scheduled_messages/{id}");
    expect(
        send(&app, &iago, Method::PATCH, &path, &[("content", "x")]).await,
        400,
        error("Scheduled message was already sent"),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn deleted_and_edited_messages_are_respected_and_none_is_sent_twice() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let at = now() + 3600;
    let (to, at_s) = (json!([bob.user_id]).to_string(), at.to_string());
    let first = [
        ("type", "direct"),
        ("to", to.as_str()),
        ("content", "first"),
        ("scheduled_delivery_timestamp", at_s.as_str()),
    ];
    let deleted = scheduled(&app, &iago, &first).await;
    let second = [
        ("type", "direct"),
        ("to", to.as_str()),
        ("content", "second"),
        ("scheduled_delivery_timestamp", at_s.as_str()),
    ];
    let edited = scheduled(&app, &iago, &second).await;
    expect(send(&app, &iago, Method::DELETE, &format!("/scheduled_messages/{deleted}"), &[]).await, 200, success())
        .await;
    let path = format!("/scheduled_messages/{edited}");
    expect(send(&app, &iago, Method::PATCH, &path, &[("content", "second, edited")]).await, 200, success()).await;

    deliver_at(&app, at - 1).await;
    assert!(inbox(&app, &bob).await.iter().all(|m| m.0 != iago.email));
    deliver_at(&app, at).await;
    deliver_at(&app, at + 5).await;
    let from_iago: Vec<_> = inbox(&app, &bob).await.into_iter().filter(|m| m.0 == iago.email).collect();
    assert_eq!(from_iago.len(), 1, "{from_iago:?}");
    assert_eq!((from_iago[0].3.as_str(), from_iago[0].4.clone()), ("second, edited", vec![]));
    // The API client's own message stays unread for it (Zulip's default for API clients).
    let mine: Vec<_> = inbox(&app, &iago).await.into_iter().filter(|m| m.3 == "second, edited").collect();
    assert_eq!(mine[0].4, Vec::<String>::new());
    assert_eq!(listed(&app, &iago).await, json!([]));
    app.stop().await;
}

#[actix_web::test]
async fn a_message_that_cannot_be_sent_is_marked_failed_and_its_sender_told() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let general = make_channel(&app, &iago, "general", false).await;
    let mut watch = Watch::new(&app, &iago, r#"["scheduled_messages"]"#).await;
    let at = now() + 3600;
    let (to, at_s) = (general.to_string(), at.to_string());
    let form = [
        ("type", "stream"),
        ("to", to.as_str()),
        ("topic", "t"),
        ("content", "too late"),
        ("scheduled_delivery_timestamp", at_s.as_str()),
    ];
    let id = scheduled(&app, &iago, &form).await;
    watch.events(&app).await;
    // More than ten minutes late.
    deliver_at(&app, at + 601).await;
    let failed = stream_dict(id, general, "too late", "<p>too late</p>", "t", at, true);
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "scheduled_messages", "op": "update", "scheduled_message": failed})]
    );
    assert_eq!(listed(&app, &iago).await, json!([failed]));
    let time = chrono::DateTime::from_timestamp(at, 0).unwrap().format("%Y-%m-%dT%H:%M:%S+00:00");
    let notice = format!(
        "The message you scheduled for <time:{time}> was not sent because of the following error:\n\n> Message could not be sent at the scheduled time.\n\n[View scheduled messages](#scheduled)"
    );
    let last = inbox(&app, &iago).await.pop().unwrap();
    assert_eq!((last.0.as_str(), last.3), ("notification-bot@zulip.com", notice));
    // Not tried again; a new time is required to edit it, which clears the failure.
    deliver_at(&app, at + 700).await;
    assert!(watch.events(&app).await.is_empty());
    let path = format!("/scheduled_messages/{id}");
    expect(
        send(&app, &iago, Method::PATCH, &path, &[("content", "again")]).await,
        400,
        error("Scheduled delivery time must be in the future."),
    )
    .await;
    let later = (now() + 7200).to_string();
    expect(
        send(&app, &iago, Method::PATCH, &path, &[("scheduled_delivery_timestamp", later.as_str())]).await,
        200,
        success(),
    )
    .await;
    assert_eq!(listed(&app, &iago).await[0]["failed"], json!(false));
    app.stop().await;
}

#[actix_web::test]
async fn a_send_refused_at_delivery_time_fails_with_zulips_error() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let secret = make_channel(&app, &iago, "secret", true).await;
    let ids = json!([bob.user_id]).to_string();
    send(
        &app,
        &iago,
        Method::POST,
        "/users/me/subscriptions",
        &[("subscriptions", r#"[{"name": "secret"}]"#), ("principals", ids.as_str())],
    )
    .await;
    let at = now() + 3600;
    let (to, at_s) = (secret.to_string(), at.to_string());
    let form = [
        ("type", "stream"),
        ("to", to.as_str()),
        ("topic", "t"),
        ("content", "hush"),
        ("scheduled_delivery_timestamp", at_s.as_str()),
    ];
    let id = scheduled(&app, &bob, &form).await;
    // Bob leaves the private channel before the message is due.
    let unsub =
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["secret"]"#)]).await;
    assert_eq!(unsub.status(), 200);
    deliver_at(&app, at).await;
    let listing = listed(&app, &bob).await;
    assert_eq!((listing[0]["scheduled_message_id"].as_i64(), &listing[0]["failed"]), (Some(id), &json!(true)));
    let last = inbox(&app, &bob).await.pop().unwrap();
    assert!(last.3.contains("> Not authorized to send to channel 'secret'"), "{}", last.3);
    assert!(inbox(&app, &iago).await.iter().all(|m| m.3 != "hush"));
    app.stop().await;
}

#[actix_web::test]
async fn a_message_due_while_the_server_was_down_is_sent_once_after_a_restart() {
    let app = spawn_app().await;
    // Another organization than the root one, which nothing asks for after the restart.
    let iago = app.create_realm("acme", "boss@acme.test").await;
    let general = make_channel(&app, &iago, "general", false).await;
    let due = now() + 1;
    let (to, at) = (general.to_string(), due.to_string());
    let form = [
        ("type", "stream"),
        ("to", to.as_str()),
        ("topic", "restart"),
        ("content", "while down"),
        ("scheduled_delivery_timestamp", at.as_str()),
    ];
    scheduled(&app, &iago, &form).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    // The server stays down until the message is due.
    while now() <= due {
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }

    let app = spawn_app_at(&data_dir).await;
    // The server started the organization itself, for its pending message.
    assert!(app.realms.directory.get("acme").is_some());
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut sent = Vec::new();
    while sent.is_empty() && Instant::now() < deadline {
        sent = inbox(&app, &iago).await.into_iter().filter(|m| m.3 == "while down").collect();
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!((sent[0].1.as_str(), sent[0].2.as_str()), ("general", "restart"));
    assert_eq!(listed(&app, &iago).await, json!([]));
    app.stop().await;

    // And never again.
    let app = spawn_app_at(&data_dir).await;
    deliver_in(&app, "acme", now() + 5).await;
    let sent: Vec<_> = inbox(&app, &iago).await.into_iter().filter(|m| m.3 == "while down").collect();
    assert_eq!(sent.len(), 1);
    app.stop().await;
    drop(tmp);
}
