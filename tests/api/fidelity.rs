//! Details found while trying real clients: the mobile app's `idle_queue_timeout`, the
//! conflict check of `prev_content_sha256`, topic settings that follow a moved topic,
//! `automatic_new_visibility_policy`, small `recipient_id`s.

use agora_actors::server_info;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{error, expect, json, poll_now, queue_id, spawn_app};

/// The queue's timeout is in the response from the feature level where Zulip's has it.
fn assert_timeout(body: &serde_json::Value, seconds: i64) {
    if server_info::FEATURE_LEVEL >= server_info::IDLE_QUEUE_TIMEOUT_LEVEL {
        assert_eq!(body["idle_queue_timeout_secs"], json!(seconds), "{body}");
    } else {
        assert!(body.get("idle_queue_timeout_secs").is_none(), "{body}");
    }
}

#[actix_web::test]
async fn register_takes_the_mobile_apps_idle_queue_timeout() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let register = |form: Vec<(&'static str, &'static str)>| {
        let app = &app;
        let o = &o;
        async move { json(app.as_user(o, Method::POST, "/register").form(&form).send().await.unwrap()).await }
    };
    // Without it: Zulip's 10 minutes.
    let (_, body) = register(vec![("event_types", r#"["message"]"#)]).await;
    assert_timeout(&body, 600);
    // The mobile app's value, JSON-quoted (as the app sends it) or bare (as the Python client).
    for value in [r#""mobile""#, "mobile"] {
        let (status, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", value)]).await;
        assert_eq!(status, 200, "{body}");
        assert_timeout(&body, 43200);
        assert!(body.get("ignored_parameters_unsupported").is_none(), "{body}");
        let (status, _) = json(poll_now(&app, &o, &queue_id(&body), -1).send().await.unwrap()).await;
        assert_eq!(status, 200);
    }
    // Seconds, capped at 7 days.
    let (_, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", "3600")]).await;
    assert_timeout(&body, 3600);
    let (_, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", "99999999")]).await;
    assert_timeout(&body, 604800);
    for bad in ["desktop", "0", "-5"] {
        let response =
            app.as_user(&o, Method::POST, "/register").form(&[("idle_queue_timeout", bad)]).send().await.unwrap();
        expect(response, 400, error("Invalid idle_queue_timeout")).await;
    }
}

async fn channel(app: &crate::helpers::TestApp, name: &str, members: &[&crate::helpers::Creds]) -> i64 {
    let mut ids: Vec<i64> = members.iter().map(|c| c.user_id).collect();
    ids.push(app.owner.user_id);
    let ids = json!(ids).to_string();
    let (status, body) =
        json(crate::helpers::post(app, &app.owner, "/channels/create", &[("name", name), ("subscribers", &ids)]).await)
            .await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn sent(app: &crate::helpers::TestApp, who: &crate::helpers::Creds, form: &[(&str, &str)]) -> serde_json::Value {
    let (status, body) = json(crate::helpers::post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[actix_web::test]
async fn edits_check_the_content_hash_the_client_saw() {
    use sha2::Digest;
    let app = spawn_app().await;
    let o = app.owner.clone();
    channel(&app, "notes", &[]).await;
    let id = sent(&app, &o, &[("type", "stream"), ("to", "notes"), ("topic", "t"), ("content", "first")]).await["id"]
        .as_i64()
        .unwrap();
    let hash = |s: &str| sha2::Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let path = format!("/messages/{id}");
    let stale = hash("something else");
    let response =
        crate::helpers::send(&app, &o, Method::PATCH, &path, &[("content", "second"), ("prev_content_sha256", &stale)])
            .await;
    expect(response, 400, json!({"result": "error", "msg": "'prev_content_sha256' value does not match the expected value.", "code": "EXPECTATION_MISMATCH"})).await;
    let current = hash("first");
    let response = crate::helpers::send(
        &app,
        &o,
        Method::PATCH,
        &path,
        &[("content", "second"), ("prev_content_sha256", &current)],
    )
    .await;
    assert_eq!(json(response).await.0, 200);
    // The old hash no longer matches, for a topic move too.
    let response =
        crate::helpers::send(&app, &o, Method::PATCH, &path, &[("topic", "u"), ("prev_content_sha256", &current)])
            .await;
    assert_eq!(json(response).await.1["code"], json!("EXPECTATION_MISMATCH"));
}

#[actix_web::test]
async fn sending_follows_or_unmutes_the_topic_exactly_when_zulip_does() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let c = channel(&app, "plans", &[]).await;
    let form = |topic: &'static str| [("type", "stream"), ("to", "plans"), ("topic", topic), ("content", "x")];
    let mut watch = crate::helpers::Watch::new(&app, &o, r#"["user_topic"]"#).await;
    // Default: follow on initiation.
    assert_eq!(sent(&app, &o, &form("a")).await["automatic_new_visibility_policy"], json!(3));
    let events = watch.events(&app).await;
    assert_eq!((events.len(), &events[0]["visibility_policy"], &events[0]["topic_name"]), (1, &json!(3), &json!("a")));
    assert!(sent(&app, &o, &form("a")).await.get("automatic_new_visibility_policy").is_none());
    // A topic someone else started is not followed on initiation...
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let subscribe = json!([{"name": "plans"}]).to_string();
    assert_eq!(
        json(crate::helpers::post(&app, &bob, "/users/me/subscriptions", &[("subscriptions", &subscribe)]).await)
            .await
            .0,
        200
    );
    sent(&app, &bob, &form("b")).await;
    assert!(sent(&app, &o, &form("b")).await.get("automatic_new_visibility_policy").is_none());
    // ...but is unmuted on send in a muted channel (the default of the other policy).
    let mute = json!([{"stream_id": c, "property": "is_muted", "value": true}]).to_string();
    let response =
        crate::helpers::post(&app, &o, "/users/me/subscriptions/properties", &[("subscription_data", &mute)]).await;
    assert_eq!(json(response).await.0, 200);
    assert_eq!(sent(&app, &o, &form("b")).await["automatic_new_visibility_policy"], json!(2));
    assert!(sent(&app, &o, &form("b")).await.get("automatic_new_visibility_policy").is_none());
    // Following on send upgrades an unmuted topic; "never" does nothing.
    let settings = [("automatically_follow_topics_policy", "2")];
    assert_eq!(json(crate::helpers::send(&app, &o, Method::PATCH, "/settings", &settings).await).await.0, 200);
    assert_eq!(sent(&app, &o, &form("b")).await["automatic_new_visibility_policy"], json!(3));
    let never =
        [("automatically_follow_topics_policy", "4"), ("automatically_unmute_topics_in_muted_streams_policy", "4")];
    assert_eq!(json(crate::helpers::send(&app, &o, Method::PATCH, "/settings", &never).await).await.0, 200);
    assert!(sent(&app, &o, &form("c")).await.get("automatic_new_visibility_policy").is_none());
}

#[actix_web::test]
async fn moving_a_topic_moves_its_followed_and_muted_settings() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let c = channel(&app, "moves", &[&bob]).await;
    let id = sent(&app, &bob, &[("type", "stream"), ("to", "moves"), ("topic", "old"), ("content", "x")]).await["id"]
        .as_i64()
        .unwrap();
    sent(&app, &bob, &[("type", "stream"), ("to", "moves"), ("topic", "busy"), ("content", "y")]).await;
    let set = |who: crate::helpers::Creds, topic: &'static str, policy: &'static str| {
        let app = &app;
        async move {
            let c = c.to_string();
            let form = [("stream_id", c.as_str()), ("topic", topic), ("visibility_policy", policy)];
            assert_eq!(json(crate::helpers::post(app, &who, "/user_topics", &form).await).await.0, 200);
        }
    };
    set(o.clone(), "old", "1").await; // owner muted "old"
    set(bob.clone(), "busy", "1").await; // bob muted "busy"; bob follows "old" from sending
    let mut watch = crate::helpers::Watch::new(&app, &bob, r#"["user_topic"]"#).await;
    let path = format!("/messages/{id}");
    let form = [("topic", "busy"), ("propagate_mode", "change_all"), ("send_notification_to_new_thread", "false")];
    assert_eq!(json(crate::helpers::send(&app, &o, Method::PATCH, &path, &form).await).await.0, 200);
    // Bob's "old" was followed: merged into "busy" (which had messages), followed wins.
    let events: Vec<(serde_json::Value, serde_json::Value)> =
        watch.events(&app).await.iter().map(|e| (e["topic_name"].clone(), e["visibility_policy"].clone())).collect();
    assert_eq!(events, [(json!("old"), json!(0)), (json!("busy"), json!(3))]);
    let (_, body) = json(
        app.as_user(&o, Method::POST, "/register")
            .form(&[("fetch_event_types", r#"["user_topic"]"#)])
            .send()
            .await
            .unwrap(),
    )
    .await;
    let topics: Vec<(serde_json::Value, serde_json::Value)> = body["user_topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["topic_name"].clone(), t["visibility_policy"].clone()))
        .collect();
    // The owner's muted "old" merged with nothing for "busy": inherit wins, so no row.
    assert!(topics.is_empty(), "{topics:?}");
    // Moving to a new topic carries the setting as it is.
    let form = [("topic", "fresh"), ("propagate_mode", "change_all"), ("send_notification_to_new_thread", "false")];
    assert_eq!(json(crate::helpers::send(&app, &o, Method::PATCH, &path, &form).await).await.0, 200);
    let events: Vec<(serde_json::Value, serde_json::Value)> =
        watch.events(&app).await.iter().map(|e| (e["topic_name"].clone(), e["visibility_policy"].clone())).collect();
    assert_eq!(events, [(json!("busy"), json!(0)), (json!("fresh"), json!(3))]);
}

#[actix_web::test]
async fn recipient_ids_are_small_and_stable() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let cat = app.create_user("", "cat@agora.test", "Cat", 400).await;
    let c = channel(&app, "ids", &[]).await;
    let recipient = |id: i64, who: crate::helpers::Creds| {
        let app = &app;
        async move {
            let (_, body) =
                json(app.as_user(&who, Method::GET, &format!("/messages/{id}")).send().await.unwrap()).await;
            body["message"]["recipient_id"].as_i64().unwrap()
        }
    };
    let id = |v: serde_json::Value| v["id"].as_i64().unwrap();
    let m1 = id(sent(&app, &o, &[("type", "stream"), ("to", "ids"), ("topic", "t"), ("content", "x")]).await);
    let m2 = id(sent(&app, &o, &[("type", "direct"), ("to", &format!("[{}]", bob.user_id)), ("content", "x")]).await);
    let m3 = id(sent(&app, &bob, &[("type", "direct"), ("to", &format!("[{}]", o.user_id)), ("content", "x")]).await);
    let group = format!("[{},{}]", bob.user_id, cat.user_id);
    let m4 = id(sent(&app, &o, &[("type", "direct"), ("to", &group), ("content", "x")]).await);
    let m5 = id(sent(
        &app,
        &cat,
        &[("type", "direct"), ("to", &format!("[{},{}]", o.user_id, bob.user_id)), ("content", "x")],
    )
    .await);
    assert_eq!(recipient(m1, o.clone()).await, 3 * c);
    assert_eq!(recipient(m2, o.clone()).await, 3 * bob.user_id + 1);
    assert_eq!(recipient(m3, o.clone()).await, 3 * o.user_id + 1);
    let g = recipient(m4, o.clone()).await;
    assert_eq!(g % 3, 2);
    assert!(g < 1000, "{g}");
    assert_eq!(recipient(m5, bob.clone()).await, g);
    // Stable across a restart.
    let dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let app = crate::helpers::spawn_app_at(&dir).await;
    let (_, body) = json(app.as_user(&o, Method::GET, &format!("/messages/{m4}")).send().await.unwrap()).await;
    assert_eq!(body["message"]["recipient_id"], json!(g));
    drop(tmp);
}
