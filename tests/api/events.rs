//! The event system over HTTP: `POST /register`, long-polling `GET /events`,
//! `DELETE /events`, heartbeats, expiry and queues across a restart.

use std::time::Duration;

use agora_actors::config::QueueConfig;
use agora_actors::ids::UserId;
use agora_actors::realm::users::SetUserActive;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    assert_same, expect, json, poll, poll_now, queue_id, register, spawn_app, spawn_app_at, spawn_app_with,
};

fn keys(body: &Value) -> Vec<&str> {
    body.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Short heartbeats and expiry, for tests that wait for them.
fn quick(settings: &mut agora::settings::Settings) {
    settings.queues = QueueConfig {
        heartbeat_min: Duration::from_millis(300),
        heartbeat_jitter: Duration::ZERO,
        default_timeout: Duration::from_millis(600),
        gc_interval: Duration::from_millis(100),
        ..QueueConfig::default()
    };
}

#[actix_web::test]
async fn register_returns_a_queue_and_the_state_it_starts_from() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let body = register(&app, &o, &[]).await;
    let k = keys(&body);
    assert_eq!(&k[..6], ["result", "msg", "queue_id", "zulip_version", "zulip_feature_level", "zulip_merge_base"]);
    assert_eq!(k.last(), Some(&"last_event_id"));
    assert_eq!(body["last_event_id"], json!(-1));
    assert_eq!(body["zulip_feature_level"], json!(498));
    // A release number tools parse; Agora names itself in the `Server` header only.
    assert_eq!(body["zulip_version"], json!("12.0"));
    assert_eq!(body["zulip_merge_base"], json!("12.0"));
    assert!(body.get("agora_version").is_none(), "{body}");
    assert_eq!(body["event_queue_longpoll_timeout_seconds"], json!(90));
    assert_eq!(body["max_message_length"], json!(10000));
    let qid = queue_id(&body);
    assert_eq!(qid.len(), 36, "a UUID: {qid}");
    // The caller's own data (realm_user).
    assert_eq!(body["user_id"], json!(o.user_id));
    assert_eq!(body["email"], json!(o.email));
    assert_eq!(body["is_owner"], json!(true));
    assert_eq!(body["full_name"], body["realm_users"][0]["full_name"]);
    let bots: Vec<&Value> = body["cross_realm_bots"].as_array().unwrap().iter().map(|b| &b["email"]).collect();
    assert_eq!(
        bots,
        [&json!("emailgateway@zulip.com"), &json!("notification-bot@zulip.com"), &json!("welcome-bot@zulip.com")]
    );
    assert_eq!(body["realm_non_active_users"], json!([]));
    assert!(body["realm_users"][0].get("is_active").is_none(), "post-processing drops is_active");
    let user_keys = keys(&body["realm_users"][0]);
    assert_eq!(
        user_keys,
        [
            "email",
            "user_id",
            "avatar_version",
            "is_admin",
            "is_owner",
            "is_guest",
            "role",
            "is_bot",
            "full_name",
            "timezone",
            "date_joined",
            "delivery_email",
            "is_imported_stub",
            "avatar_url",
            "profile_data"
        ],
        "Zulip's order, as in the golden register response (with is_imported_stub, level 433)"
    );
    assert_eq!(body["realm_users"][0]["profile_data"], json!({}));
    // Groups: the eight system groups, by id.
    let groups: Vec<&str> =
        body["realm_user_groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(groups.len(), 8);
    assert!(groups.contains(&"role:owners") && groups.contains(&"role:nobody"));
    assert_eq!(body["custom_profile_fields"], json!([]));
    // Without user_settings_object, the legacy top-level settings come too.
    assert!(body.get("user_settings").is_some());
    assert_eq!(body["enter_sends"], body["user_settings"]["enter_sends"]);
    assert_eq!(body["notification_sound"], json!("zulip"));
    assert!(body.get("realm_user_settings_defaults").is_some());
    app.stop().await;
}

#[actix_web::test]
async fn fetch_event_types_and_capabilities_choose_the_keys() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let limits = [
        "max_stream_name_length",
        "max_stream_description_length",
        "max_channel_folder_name_length",
        "max_channel_folder_description_length",
        "max_topic_length",
        "max_message_length",
    ];

    let body = register(&app, &o, &[("fetch_event_types", r#"["realm_user"]"#)]).await;
    let k = keys(&body);
    for key in ["cross_realm_bots", "avatar_url", "is_admin", "user_id", "realm_users", "realm_non_active_users"] {
        assert!(k.contains(&key), "{key} missing");
    }
    for key in ["user_settings", "realm_user_groups", "realm_name", "custom_profile_fields", "enter_sends"] {
        assert!(!k.contains(&key), "{key} not asked for");
    }
    // Limits and the long-poll timeout are always sent.
    for key in limits.iter().chain(&["event_queue_longpoll_timeout_seconds"]) {
        assert!(k.contains(key), "{key} missing");
    }

    // `event_types` alone also chooses the data.
    let body = register(&app, &o, &[("event_types", r#"["user_settings"]"#)]).await;
    let k = keys(&body);
    assert!(k.contains(&"user_settings") && !k.contains(&"realm_users"));
    assert!(!k.contains(&"enter_sends"), "legacy settings belong to other fetch types");

    // Legacy settings come with their own fetch types, unless the client takes the object.
    let legacy = r#"["user_settings","update_display_settings","update_global_notifications"]"#;
    let body = register(&app, &o, &[("fetch_event_types", legacy)]).await;
    assert!(body.get("enter_sends").is_some() && body.get("enable_sounds").is_some());
    let caps = r#"{"notification_settings_null": false, "user_settings_object": true}"#;
    let body = register(&app, &o, &[("fetch_event_types", legacy), ("client_capabilities", caps)]).await;
    assert!(body.get("enter_sends").is_none() && body.get("enable_sounds").is_none());
    assert_eq!(body["user_settings"]["enter_sends"], json!(false));

    // Unknown kinds are ignored.
    let body = register(&app, &o, &[("fetch_event_types", r#"["no_such_thing"]"#)]).await;
    assert!(keys(&body).contains(&"max_topic_length") && body.get("realm_users").is_none());
    app.stop().await;
}

#[actix_web::test]
async fn client_gravatar_leaves_computable_avatars_out() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    crate::helpers::gravatar_default(&app).await;
    let gus = app.create_user("", "gus@agora.test", "Gus", 400).await;
    let rt = r#"["realm_user"]"#;
    let avatar_of = |body: &Value, id: i64| {
        body["realm_users"].as_array().unwrap().iter().find(|u| u["user_id"] == id).unwrap()["avatar_url"].clone()
    };
    let body = register(&app, &o, &[("fetch_event_types", rt)]).await;
    assert_eq!(avatar_of(&body, gus.user_id), Value::Null, "client_gravatar defaults to true");
    // A Jdenticon (the owner's, made when Jdenticon was the default) is always given.
    assert_eq!(avatar_of(&body, o.user_id), json!("/user_avatars/1/jdenticon/1.png?version=1"));
    let body = register(&app, &o, &[("fetch_event_types", rt), ("client_gravatar", "false")]).await;
    assert!(avatar_of(&body, gus.user_id).as_str().unwrap().starts_with("https://secure.gravatar.com/avatar/"));
    app.stop().await;
}

#[actix_web::test]
async fn register_rejects_bad_parameters() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let cases: [(&[(&str, &str)], &str); 7] = [
        (&[("narrow", r#"[["search", "x"]]"#)], "Operator search not supported."),
        (&[("narrow", r#"[["is"]]"#)], "narrow[0] should have exactly 2 items"),
        (&[("narrow", r#"["is"]"#)], "narrow[0] is not a list"),
        (&[("event_types", "message")], "event_types is not valid JSON"),
        (
            &[("client_capabilities", r#"{"bulk_message_deletion": true}"#)],
            "notification_settings_null key is missing from client_capabilities",
        ),
        (&[("apply_markdown", "yes")], "apply_markdown is not valid JSON"),
        (
            &[("client_gravatar", "true"), ("client_external_avatar", "true")],
            "Can't decide between 'client_external_avatar' and 'client_gravatar' arguments",
        ),
    ];
    for (form, msg) in cases {
        let (status, body) = json(app.as_user(&o, Method::POST, "/register").form(form).send().await.unwrap()).await;
        assert_eq!((status, body["msg"].as_str().unwrap()), (400, msg), "{form:?}");
    }
    // Guests may not follow every public channel.
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let response =
        app.as_user(&guest, Method::POST, "/register").form(&[("all_public_streams", "true")]).send().await.unwrap();
    expect(
        response,
        400,
        json!({"result": "error", "msg": "User not authorized for this query", "code": "BAD_REQUEST"}),
    )
    .await;
    let response = app.request(Method::POST, "/register").send().await.unwrap();
    assert_eq!(response.status(), 401);
    app.stop().await;
}

#[actix_web::test]
async fn a_waiting_poll_returns_when_an_event_arrives() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[("event_types", r#"["realm_user"]"#)]).await);
    let waiting = tokio::spawn(poll(&app, &o, &qid, -1).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "the poll waits while the queue is empty");

    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let response = waiting.await.unwrap().unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    let person = &body["events"][0]["person"];
    let expected = json!({
        "result": "success",
        "msg": "",
        "events": [{"type": "realm_user", "op": "add", "person": person, "id": 0}],
        "queue_id": qid,
    });
    crate::helpers::assert_same(&body, &expected);
    assert_eq!(person["user_id"], json!(bob.user_id));
    assert_eq!(person["email"], json!("bob@agora.test"));
    assert_eq!(person["profile_data"], json!({}));
    assert!(person["avatar_url"].is_string(), "events never rely on client_gravatar");

    // The event stays until acknowledged; the next poll with the same id gets it again,
    // without queue_id (an immediate answer).
    let (_, again) = json(poll(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!(again["events"], body["events"]);
    assert!(again.get("queue_id").is_none());
    app.stop().await;
}

#[actix_web::test]
async fn dont_block_pruning_and_their_errors() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[]).await);
    expect(
        poll_now(&app, &o, &qid, -1).send().await.unwrap(),
        200,
        json!({"result": "success", "msg": "", "events": []}),
    )
    .await;

    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (_, body) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    let events = body["events"].as_array().unwrap();
    // realm_user add, then role:members and role:fullmembers memberships.
    let shape: Vec<(Value, Value, Value)> =
        events.iter().map(|e| (e["type"].clone(), e["op"].clone(), e["id"].clone())).collect();
    assert_eq!(
        shape,
        vec![
            (json!("realm_user"), json!("add"), json!(0)),
            (json!("user_group"), json!("add_members"), json!(1)),
            (json!("user_group"), json!("add_members"), json!(2)),
        ]
    );
    assert_eq!(events[1]["user_ids"], json!([bob.user_id]));

    // Acknowledge the first two.
    let (_, body) = json(poll_now(&app, &o, &qid, 1).send().await.unwrap()).await;
    assert_eq!(body["events"].as_array().unwrap().iter().map(|e| e["id"].clone()).collect::<Vec<_>>(), vec![json!(2)]);
    let err = |msg: &str| json!({"result": "error", "msg": msg, "code": "BAD_REQUEST"});
    expect(
        poll_now(&app, &o, &qid, 0).send().await.unwrap(),
        400,
        err("An event newer than 0 has already been pruned!"),
    )
    .await;
    expect(poll_now(&app, &o, &qid, 7).send().await.unwrap(), 400, err("Event 7 was not in this queue")).await;
    // The failed call above still acknowledged event 2.
    expect(
        poll_now(&app, &o, &qid, 2).send().await.unwrap(),
        200,
        json!({"result": "success", "msg": "", "events": []}),
    )
    .await;

    let missing = app.as_user(&o, Method::GET, &format!("/events?queue_id={qid}")).send().await.unwrap();
    expect(missing, 400, err("Missing 'last_event_id' argument")).await;
    let missing = app.as_user(&o, Method::GET, "/events?last_event_id=-1").send().await.unwrap();
    expect(missing, 400, err("Missing 'queue_id' argument")).await;
    let bad = json!({"result": "error", "msg": "Bad event queue ID: hamster", "queue_id": "hamster", "code": "BAD_EVENT_QUEUE_ID"});
    expect(poll(&app, &o, "hamster", -1).send().await.unwrap(), 400, bad).await;
    // Another user's queue is as unknown as a bogus one.
    let bad = json!({"result": "error", "msg": format!("Bad event queue ID: {qid}"), "queue_id": qid, "code": "BAD_EVENT_QUEUE_ID"});
    expect(poll(&app, &bob, &qid, -1).send().await.unwrap(), 400, bad.clone()).await;
    let delete = app.as_user(&bob, Method::DELETE, "/events").form(&[("queue_id", qid.as_str())]).send().await.unwrap();
    expect(delete, 400, bad).await;
    app.stop().await;
}

#[actix_web::test]
async fn get_events_without_a_queue_creates_one_when_not_blocking() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let (status, body) = json(app.as_user(&o, Method::GET, "/events?dont_block=true").send().await.unwrap()).await;
    assert_eq!((status, &body["events"]), (200, &json!([])));
    let qid = queue_id(&body);
    app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (_, body) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!(body["events"][0]["type"], json!("realm_user"));
    app.stop().await;
}

#[actix_web::test]
async fn a_second_poll_finishes_the_first_and_disconnects_lose_nothing() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[("event_types", r#"["realm_user"]"#)]).await);
    let first = tokio::spawn(poll(&app, &o, &qid, -1).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = tokio::spawn(poll(&app, &o, &qid, -1).send());
    let (status, body) = json(first.await.unwrap().unwrap()).await;
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "events": [], "queue_id": qid})));

    // The second poll's client goes away; the event that arrives afterwards waits.
    second.abort();
    tokio::time::sleep(Duration::from_millis(50)).await;
    app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (_, body) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!(body["events"][0]["op"], json!("add"));
    app.stop().await;
}

/// Quick heartbeats, but queues that live as long as usual: a loaded machine may take longer
/// than `quick`'s queue timeout between a register and its first poll.
fn quick_heartbeats(settings: &mut agora::settings::Settings) {
    quick(settings);
    settings.queues.default_timeout = QueueConfig::default().default_timeout;
}

#[actix_web::test]
async fn an_idle_poll_gets_a_heartbeat() {
    let app = spawn_app_with(quick_heartbeats).await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[]).await);
    let (status, body) = json(poll(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!(
        (status, body),
        (200, json!({"result": "success", "msg": "", "events": [{"type": "heartbeat", "id": 0}], "queue_id": qid}))
    );
    // The heartbeat is an event like any other: acknowledged by its id.
    let (status, _) = json(poll_now(&app, &o, &qid, 0).send().await.unwrap()).await;
    assert_eq!(status, 200);
    app.stop().await;
}

#[actix_web::test]
async fn idle_queues_expire_but_polled_ones_live() {
    let app = spawn_app_with(quick).await;
    let o = app.owner.clone();
    let idle = queue_id(&register(&app, &o, &[]).await);
    let polled = queue_id(&register(&app, &o, &[]).await);
    // Keep polling one queue (each poll waits for a heartbeat) for longer than the timeout.
    let mut last = -1;
    for _ in 0..4 {
        let (status, body) = json(poll(&app, &o, &polled, last).send().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        last = body["events"][0]["id"].as_i64().unwrap();
    }
    let (status, body) = json(poll_now(&app, &o, &idle, -1).send().await.unwrap()).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("BAD_EVENT_QUEUE_ID")));
    let (status, _) = json(poll_now(&app, &o, &polled, last).send().await.unwrap()).await;
    assert_eq!(status, 200);
    app.stop().await;
}

#[actix_web::test]
async fn deleting_a_queue_finishes_its_poll() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[]).await);
    let waiting = tokio::spawn(poll(&app, &o, &qid, -1).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let delete = app.as_user(&o, Method::DELETE, "/events").form(&[("queue_id", qid.as_str())]).send().await.unwrap();
    expect(delete, 200, json!({"result": "success", "msg": ""})).await;
    let (status, body) = json(waiting.await.unwrap().unwrap()).await;
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "events": [], "queue_id": qid})));
    let (status, body) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("BAD_EVENT_QUEUE_ID")));
    let delete = app.as_user(&o, Method::DELETE, "/events").form(&[("queue_id", qid.as_str())]).send().await.unwrap();
    assert_eq!(delete.status(), 400);
    let missing = app.as_user(&o, Method::DELETE, "/events").send().await.unwrap();
    let (status, body) = json(missing).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("REQUEST_VARIABLE_MISSING")));
    app.stop().await;
}

#[actix_web::test]
async fn every_queue_of_a_user_gets_the_event_and_no_other_realm_leaks_in() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let q1 = queue_id(&register(&app, &o, &[]).await);
    let q2 = queue_id(&register(&app, &o, &[("event_types", r#"["realm_user"]"#)]).await);
    let qa = queue_id(&register(&app, &acme, &[]).await);

    app.create_user("acme", "ann@acme.test", "Ann", 400).await;
    let (_, body) = json(poll_now(&app, &acme, &qa, -1).send().await.unwrap()).await;
    assert_eq!(body["events"][0]["person"]["email"], json!("ann@acme.test"));
    for qid in [&q1, &q2] {
        expect(
            poll_now(&app, &o, qid, -1).send().await.unwrap(),
            200,
            json!({"result": "success", "msg": "", "events": []}),
        )
        .await;
    }
    // A queue id is only known at its own organization.
    let (status, _) = json(poll_now(&app, &acme, &q1, -1).send().await.unwrap()).await;
    assert_eq!(status, 400);

    app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (_, b1) = json(poll_now(&app, &o, &q1, -1).send().await.unwrap()).await;
    let (_, b2) = json(poll_now(&app, &o, &q2, -1).send().await.unwrap()).await;
    assert_eq!(b1["events"].as_array().unwrap().len(), 3, "everything");
    assert_eq!(b2["events"].as_array().unwrap().len(), 1, "only realm_user");
    assert_eq!(b1["events"][0], b2["events"][0]);
    app.stop().await;
}

#[actix_web::test]
async fn deactivated_users_lose_their_queues() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let bob_queue = queue_id(&register(&app, &bob, &[]).await);
    let owner_queue = queue_id(&register(&app, &o, &[("event_types", r#"["realm_user"]"#)]).await);
    let waiting = tokio::spawn(poll(&app, &bob, &bob_queue, -1).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    // Bob's waiting poll is finished with what his queue held: nothing, since the news of
    // his deactivation goes to the users still active.
    let (status, body) = json(waiting.await.unwrap().unwrap()).await;
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "events": [], "queue_id": bob_queue})));
    assert!(app.realm("").queues.get(&bob_queue).is_none());
    let (_, body) = json(poll_now(&app, &o, &owner_queue, -1).send().await.unwrap()).await;
    assert_eq!(body["events"][0]["person"], json!({"user_id": bob.user_id, "is_active": false}));
    app.stop().await;
}

#[actix_web::test]
async fn queues_survive_a_graceful_restart() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let qid = queue_id(&register(&app, &o, &[]).await);
    let narrowed =
        queue_id(&register(&app, &o, &[("event_types", r#"["user_group"]"#), ("apply_markdown", "true")]).await);
    app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (_, before) = json(poll_now(&app, &o, &qid, -1).send().await.unwrap()).await;
    let (_, body) = json(poll_now(&app, &o, &qid, 0).send().await.unwrap()).await;
    assert_eq!(body["events"].as_array().unwrap().len(), 2, "event 0 acknowledged");

    // A poll waiting at shutdown is released with a retryable 503.
    let waiting = tokio::spawn(poll(&app, &o, &narrowed, 1).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let data_dir = app.data_dir.clone();
    let stopping = tokio::spawn(app.stop());
    let (status, body) = json(waiting.await.unwrap().unwrap()).await;
    assert_eq!((status, body["result"].as_str()), (503, Some("error")));
    // With Zulip's code for a server that cannot serve yet.
    assert_same(
        &body,
        &json!({"result": "error", "msg": "The server is restarting; please try again.", "code": "SERVER_NOT_READY"}),
    );
    let tmp = stopping.await.unwrap();

    let app = spawn_app_at(&data_dir).await;
    let (status, body) = json(poll_now(&app, &o, &qid, 0).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let events = body["events"].as_array().unwrap();
    // The unacknowledged events, then Zulip's restart notice, with ids continuing.
    assert_eq!(events[0], before["events"][1]);
    assert_eq!(events[1], before["events"][2]);
    assert_eq!(events[2]["type"], json!("restart"));
    assert_eq!(events[2]["id"], json!(3));
    assert_eq!(events[2]["zulip_feature_level"], json!(498));
    // The other queue kept its own registration: it only takes user_group events.
    let (status, body) = json(poll_now(&app, &o, &narrowed, 1).send().await.unwrap()).await;
    assert_eq!((status, body["events"].clone()), (200, json!([])));
    app.create_user("", "carol@agora.test", "Carol", 400).await;
    let (_, body) = json(poll_now(&app, &o, &narrowed, 1).send().await.unwrap()).await;
    assert!(body["events"].as_array().unwrap().iter().all(|e| e["type"] == json!("user_group")));
    assert_eq!(body["events"].as_array().unwrap().len(), 2);
    app.stop().await;
    drop(tmp);
}

/// A data set read from storage that cannot be read fails the register with Zulip's error
/// envelope; the client never gets a state with a data set silently emptied.
#[actix_web::test]
async fn a_storage_failure_fails_the_register() {
    let app = spawn_app().await;
    let db = rusqlite::Connection::open(app.data_dir.join("agora.sqlite3")).unwrap();
    db.execute_batch("ALTER TABLE user_messages RENAME TO user_messages_away").unwrap();
    let response = app
        .as_user(&app.owner, Method::POST, "/register")
        .form(&[("fetch_event_types", r#"["starred_messages"]"#)])
        .send()
        .await
        .unwrap();
    expect(response, 500, json!({"result": "error", "msg": "Internal server error"})).await;
}
