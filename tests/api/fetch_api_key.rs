//! `POST /fetch_api_key`.

use std::time::Duration;

use agora::http::hashing::PoolSize;
use agora_actors::ids::UserId;
use agora_actors::realm::organization::SetRealmDeactivated;
use agora_actors::realm::users::SetUserActive;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{expect, spawn_app, spawn_app_with, TestApp};

async fn fetch(app: &TestApp, host: &str, form: &[(&str, &str)], status: u16, expected: Value) {
    expect(app.request_to(host, Method::POST, "/fetch_api_key").form(form).send().await.unwrap(), status, expected)
        .await;
}

async fn status(app: &TestApp, form: &[(&str, &str)]) -> u16 {
    app.request(Method::POST, "/fetch_api_key").form(form).send().await.unwrap().status().as_u16()
}

fn failed() -> Value {
    json!({"result": "error", "msg": "Your username or password is incorrect", "code": "AUTHENTICATION_FAILED"})
}

#[actix_web::test]
async fn the_right_password_returns_the_api_key() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let ok = json!({"result": "success", "msg": "", "api_key": o.api_key, "email": o.email, "user_id": 1});
    fetch(&app, "agora.test", &[("username", &o.email), ("password", &o.password)], 200, ok.clone()).await;
    // The username is compared case-insensitively.
    fetch(&app, "agora.test", &[("username", &o.email.to_uppercase()), ("password", &o.password)], 200, ok).await;
    app.stop().await;
}

#[actix_web::test]
async fn each_failure_has_zulips_code() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    fetch(&app, "agora.test", &[("username", &o.email), ("password", "wrong")], 401, failed()).await;
    fetch(&app, "agora.test", &[("username", "nobody@agora.test"), ("password", "x")], 401, failed()).await;
    let not_email = json!({"result": "error", "msg": "Enter a valid email address.", "code": "BAD_REQUEST"});
    fetch(&app, "agora.test", &[("username", "not an email"), ("password", "x")], 400, not_email).await;
    let missing = json!({"result": "error", "msg": "Missing 'password' argument", "var_name": "password", "code": "REQUEST_VARIABLE_MISSING"});
    fetch(&app, "agora.test", &[("username", &o.email)], 400, missing.clone()).await;
    let invalid = json!({"result": "error", "msg": "Invalid subdomain", "code": "NONEXISTENT_SUBDOMAIN"});
    fetch(&app, "nope.agora.test", &[("username", &o.email), ("password", &o.password)], 404, invalid).await;
    // As in Zulip, the parameters are checked before the organization.
    fetch(&app, "nope.agora.test", &[("username", &o.email)], 400, missing).await;
    app.stop().await;
}

#[actix_web::test]
async fn deactivated_accounts_and_organizations_are_refused_before_the_password_check() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    let realm = app.realm("");
    realm.addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    let deactivated = json!({"result": "error", "msg": "Account is deactivated", "code": "USER_DEACTIVATED"});
    fetch(&app, "agora.test", &[("username", &bob.email), ("password", &bob.password)], 401, deactivated.clone()).await;
    fetch(&app, "agora.test", &[("username", &bob.email), ("password", "wrong")], 401, deactivated).await;

    let o = app.owner.clone();
    realm.addr.send(SetRealmDeactivated(true)).await.unwrap().unwrap();
    let gone = json!({"result": "error", "msg": "This organization has been deactivated", "code": "REALM_DEACTIVATED"});
    fetch(&app, "agora.test", &[("username", &o.email), ("password", &o.password)], 401, gone).await;
    realm.addr.send(SetRealmDeactivated(false)).await.unwrap().unwrap();
    assert_eq!(status(&app, &[("username", &o.email), ("password", &o.password)]).await, 200);
    app.stop().await;
}

#[actix_web::test]
async fn repeated_failures_are_rate_limited_per_username() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    for _ in 0..5 {
        assert_eq!(status(&app, &[("username", &o.email), ("password", "wrong")]).await, 401);
    }
    let response = app
        .request(Method::POST, "/fetch_api_key")
        .form(&[("username", &o.email), ("password", &o.password)])
        .send()
        .await
        .unwrap();
    let retry_after: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1790..=1800).contains(&retry_after), "{retry_after}");
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let seconds = body["retry-after"].as_f64().unwrap();
    assert!((1790.0..=1800.0).contains(&seconds), "{seconds}");
    assert_eq!(
        serde_json::to_string(&body).unwrap(),
        serde_json::to_string(&json!({
            "result": "error", "msg": "API usage exceeded rate limit", "retry-after": seconds, "code": "RATE_LIMIT_HIT"
        }))
        .unwrap()
    );
    // Other usernames are not affected.
    assert_eq!(status(&app, &[("username", "someone@agora.test"), ("password", "x")]).await, 401);
    app.stop().await;
}

#[actix_web::test]
async fn a_success_forgets_earlier_failures() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    for _ in 0..2 {
        for _ in 0..4 {
            assert_eq!(status(&app, &[("username", &o.email), ("password", "wrong")]).await, 401);
        }
        assert_eq!(status(&app, &[("username", &o.email), ("password", &o.password)]).await, 200);
    }
    app.stop().await;
}

/// Takes the `places` places of the server's hashing pool (its threads and its queue)
/// with work that runs until the returned senders are dropped.
async fn fill_hash_pool(app: &TestApp, places: usize) -> Vec<std::sync::mpsc::Sender<()>> {
    let releases = (0..places)
        .map(|_| {
            let (release, held) = std::sync::mpsc::channel::<()>();
            let pool = app.hash_pool.clone();
            tokio::spawn(async move { pool.run(move || held.recv().is_err()).await });
            release
        })
        .collect();
    while app.hash_pool.free_places() > 0 {
        tokio::task::yield_now().await;
    }
    releases
}

#[actix_web::test]
async fn password_hashing_has_a_bounded_pool() {
    let app = spawn_app_with(|s| s.hash_pool = PoolSize { threads: 1, queue: 1, wait: Duration::ZERO }).await;
    let o = app.owner.clone();
    // Two hashes in progress: one running, one waiting its turn.
    let releases = fill_hash_pool(&app, 2).await;
    // A third is refused at once, whatever needs the hash.
    let busy = json!({"result": "error", "msg": "API usage exceeded rate limit", "retry-after": 1.0, "code": "RATE_LIMIT_HIT"});
    let response = app
        .request(Method::POST, "/fetch_api_key")
        .form(&[("username", o.email.as_str()), ("password", o.password.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["retry-after"], "1");
    expect(response, 429, busy.clone()).await;
    let change = [("old_password", o.password.as_str()), ("new_password", "Sturdy-Horse-42")];
    let response = app.as_user(&o, Method::PATCH, "/settings").form(&change).send().await.unwrap();
    expect(response, 429, busy).await;
    // Once the pool is free again, so are logins.
    drop(releases);
    while app.hash_pool.free_places() < 2 {
        tokio::task::yield_now().await;
    }
    assert_eq!(status(&app, &[("username", &o.email), ("password", &o.password)]).await, 200);
    app.stop().await;
}
