//! Details found while trying real clients: the mobile app's `idle_queue_timeout`, the
//! conflict check of `prev_content_sha256`, topic settings that follow a moved topic,
//! `automatic_new_visibility_policy`, small `recipient_id`s.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{error, expect, json, poll_now, queue_id, spawn_app};

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
    assert_eq!(body["idle_queue_timeout_secs"], json!(600));
    // The mobile app's value, JSON-quoted (as the app sends it) or bare (as the Python client).
    for value in [r#""mobile""#, "mobile"] {
        let (status, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", value)]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["idle_queue_timeout_secs"], json!(43200));
        assert!(body.get("ignored_parameters_unsupported").is_none(), "{body}");
        let (status, _) = json(poll_now(&app, &o, &queue_id(&body), -1).send().await.unwrap()).await;
        assert_eq!(status, 200);
    }
    // Seconds, capped at 7 days.
    let (_, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", "3600")]).await;
    assert_eq!(body["idle_queue_timeout_secs"], json!(3600));
    let (_, body) = register(vec![("event_types", r#"["message"]"#), ("idle_queue_timeout", "99999999")]).await;
    assert_eq!(body["idle_queue_timeout_secs"], json!(604800));
    for bad in ["desktop", "0", "-5"] {
        let response =
            app.as_user(&o, Method::POST, "/register").form(&[("idle_queue_timeout", bad)]).send().await.unwrap();
        expect(response, 400, error("Invalid idle_queue_timeout")).await;
    }
}
