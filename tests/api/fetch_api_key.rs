//! `POST /fetch_api_key`.

use agora_actors::ids::UserId;
use agora_actors::realm::messages::SetUserActive;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{json, spawn_app, TestApp};

async fn fetch(app: &TestApp, host: &str, form: &[(&str, &str)]) -> (u16, serde_json::Value) {
    json(app.request_to(host, Method::POST, "/fetch_api_key").form(form).send().await.unwrap()).await
}

#[actix_web::test]
async fn the_right_password_returns_the_api_key() {
    let app = spawn_app().await;
    let o = &app.owner;
    let (status, body) = fetch(&app, "agora.test", &[("username", &o.email), ("password", &o.password)]).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"result": "success", "msg": "", "api_key": o.api_key, "email": o.email, "user_id": 1}));
    // The username is compared case-insensitively.
    let (status, _) =
        fetch(&app, "agora.test", &[("username", &o.email.to_uppercase()), ("password", &o.password)]).await;
    assert_eq!(status, 200);
    app.stop().await;
}

#[actix_web::test]
async fn each_failure_has_zulips_code() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let failed =
        json!({"result": "error", "msg": "Your username or password is incorrect", "code": "AUTHENTICATION_FAILED"});
    assert_eq!(
        fetch(&app, "agora.test", &[("username", &o.email), ("password", "wrong")]).await,
        (401, failed.clone())
    );
    assert_eq!(
        fetch(&app, "agora.test", &[("username", "nobody@agora.test"), ("password", "x")]).await,
        (401, failed.clone())
    );
    assert_eq!(
        fetch(&app, "agora.test", &[("username", "not an email"), ("password", "x")]).await,
        (400, json!({"result": "error", "msg": "Enter a valid email address.", "code": "BAD_REQUEST"}))
    );
    assert_eq!(
        fetch(&app, "agora.test", &[("username", &o.email)]).await,
        (
            400,
            json!({"result": "error", "msg": "Missing 'password' argument", "var_name": "password", "code": "REQUEST_VARIABLE_MISSING"})
        )
    );
    assert_eq!(
        fetch(&app, "nope.agora.test", &[("username", &o.email), ("password", &o.password)]).await,
        (404, json!({"result": "error", "msg": "Invalid subdomain", "code": "NONEXISTENT_SUBDOMAIN"}))
    );

    // A deactivated account is refused before its password is even checked.
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    let deactivated = json!({"result": "error", "msg": "Account is deactivated", "code": "USER_DEACTIVATED"});
    assert_eq!(
        fetch(&app, "agora.test", &[("username", &bob.email), ("password", &bob.password)]).await,
        (401, deactivated.clone())
    );
    assert_eq!(fetch(&app, "agora.test", &[("username", &bob.email), ("password", "wrong")]).await, (401, deactivated));
    app.stop().await;
}

#[actix_web::test]
async fn repeated_failures_are_rate_limited_per_username() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    for _ in 0..5 {
        let (status, _) = fetch(&app, "agora.test", &[("username", &o.email), ("password", "wrong")]).await;
        assert_eq!(status, 401);
    }
    let response = app
        .request(Method::POST, "/fetch_api_key")
        .form(&[("username", &o.email), ("password", &o.password)])
        .send()
        .await
        .unwrap();
    let retry_after: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1790..=1800).contains(&retry_after), "{retry_after}");
    let (status, body) = json(response).await;
    assert_eq!(status, 429);
    assert_eq!(body["result"], "error");
    assert_eq!(body["msg"], "API usage exceeded rate limit");
    assert_eq!(body["code"], "RATE_LIMIT_HIT");
    assert!(body["retry-after"].as_f64().unwrap() > 1790.0);
    // Other usernames are not affected.
    let (status, _) = fetch(&app, "agora.test", &[("username", "someone@agora.test"), ("password", "x")]).await;
    assert_eq!(status, 401);
    app.stop().await;
}

#[actix_web::test]
async fn a_success_forgets_earlier_failures() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    for _ in 0..4 {
        assert_eq!(fetch(&app, "agora.test", &[("username", &o.email), ("password", "wrong")]).await.0, 401);
    }
    assert_eq!(fetch(&app, "agora.test", &[("username", &o.email), ("password", &o.password)]).await.0, 200);
    for _ in 0..4 {
        assert_eq!(fetch(&app, "agora.test", &[("username", &o.email), ("password", "wrong")]).await.0, 401);
    }
    assert_eq!(fetch(&app, "agora.test", &[("username", &o.email), ("password", &o.password)]).await.0, 200);
    app.stop().await;
}
