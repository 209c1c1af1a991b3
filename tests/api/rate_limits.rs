//! Zulip's general rate limits: per user once authenticated (`api_by_user`), per client
//! address for public routes and failed credentials (`api_by_ip`), with the
//! `X-RateLimit-*` headers on every rate-limited response and 429 `RATE_LIMIT_HIT` past the
//! limit.

use std::time::{SystemTime, UNIX_EPOCH};

use agora::settings::Settings;
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{assert_same, spawn_app_with, TestApp, TEST_RATE_LIMIT};

/// `user` requests per user and `ip` per address, per minute.
fn limits(user: usize, ip: usize) -> impl FnOnce(&mut Settings) {
    move |s| {
        s.api_rate_limit.per_user.max = user;
        s.api_rate_limit.per_ip.max = ip;
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// The `X-RateLimit-*` headers: limit, remaining, and seconds from now to the reset.
fn rate_headers(response: &Response) -> Option<(u64, u64, u64)> {
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
    let reset = header("x-ratelimit-reset")?;
    Some((header("x-ratelimit-limit")?, header("x-ratelimit-remaining")?, reset.saturating_sub(now())))
}

/// Asserts the limit and what is left, and that the reset is `in_secs` from now (to the
/// second: a second may tick between the server's clock and ours).
fn assert_rate(response: &Response, limit: u64, remaining: u64, in_secs: u64) {
    let (got_limit, got_remaining, got_in) = rate_headers(response).expect("X-RateLimit-* headers");
    assert_eq!((got_limit, got_remaining), (limit, remaining));
    assert!((in_secs.saturating_sub(1)..=in_secs).contains(&got_in), "reset in {got_in} s, not {in_secs}");
}

/// Asserts a 429 with Zulip's body, whose `retry-after` is at most `secs` and close to it.
async fn assert_refused(response: Response, secs: f64) {
    assert_eq!(response.status(), 429);
    let retry_after: f64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert_eq!(retry_after, secs.ceil());
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let seconds = body["retry-after"].as_f64().unwrap();
    assert!(seconds <= secs && seconds > secs - 1.0, "{seconds}");
    assert_same(
        &body,
        &json!({"result": "error", "msg": "API usage exceeded rate limit", "retry-after": seconds, "code": "RATE_LIMIT_HIT"}),
    );
}

async fn me(app: &TestApp, who: &crate::helpers::Creds) -> Response {
    app.as_user(who, Method::GET, "/users/me").send().await.unwrap()
}

#[actix_web::test]
async fn every_authenticated_response_carries_the_limits_until_the_429() {
    // 3 a minute: one more every 20 s.
    let app = spawn_app_with(limits(3, TEST_RATE_LIMIT)).await;
    let o = app.owner.clone();
    let response = me(&app, &o).await;
    assert_eq!(response.status(), 200);
    assert_rate(&response, 3, 2, 20);
    // Errors count and carry the headers too.
    let response = app.as_user(&o, Method::GET, "/users/1?client_gravatar=True").send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_rate(&response, 3, 1, 40);
    let response = me(&app, &o).await;
    assert_rate(&response, 3, 0, 60);
    let response = me(&app, &o).await;
    assert_rate(&response, 3, 0, 20);
    assert_refused(response, 20.0).await;

    // Each user has a budget of their own.
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let response = me(&app, &bob).await;
    assert_eq!(response.status(), 200);
    assert_rate(&response, 3, 2, 20);
    app.stop().await;
}

#[actix_web::test]
async fn public_routes_are_limited_per_address() {
    let app = spawn_app_with(limits(TEST_RATE_LIMIT, 2)).await;
    let response = app.request(Method::GET, "/server_settings").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_rate(&response, 2, 1, 30);
    let form = [("username", app.owner.email.as_str()), ("password", app.owner.password.as_str())];
    let response = app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_rate(&response, 2, 0, 60);
    let response = app.request(Method::GET, "/server_settings").send().await.unwrap();
    assert_rate(&response, 2, 0, 30);
    assert_refused(response, 30.0).await;
    let response = app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap();
    assert_refused(response, 30.0).await;

    // Authenticated requests from the same address count per user.
    let response = me(&app, &app.owner).await;
    assert_eq!(response.status(), 200);
    // (A slot of this limit is 0.6 ms: the reset is this second or the next.)
    assert_rate(&response, TEST_RATE_LIMIT as u64, TEST_RATE_LIMIT as u64 - 1, 1);
    app.stop().await;
}

#[actix_web::test]
async fn failed_credentials_count_against_the_address() {
    let app = spawn_app_with(limits(TEST_RATE_LIMIT, 2)).await;
    let mut wrong = app.owner.clone();
    wrong.api_key = "A".repeat(32);
    let invalid = json!({"result": "error", "msg": "Invalid API key", "code": "UNAUTHORIZED"});
    for remaining in [1, 0] {
        let response = me(&app, &wrong).await;
        assert_rate(&response, 2, remaining, 30 * (2 - remaining));
        assert_eq!(response.status(), 401);
        assert_same(&serde_json::from_str(&response.text().await.unwrap()).unwrap(), &invalid);
    }
    // Guessing stops here; the right key still works.
    assert_refused(me(&app, &wrong).await, 30.0).await;
    let response = me(&app, &app.owner).await;
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn rate_limits_can_be_turned_off() {
    let app = spawn_app_with(|s| {
        limits(1, 1)(s);
        s.api_rate_limit.enabled = false;
    })
    .await;
    for _ in 0..3 {
        let response = me(&app, &app.owner).await;
        assert_eq!(response.status(), 200);
        assert!(rate_headers(&response).is_none());
        let response = app.request(Method::GET, "/server_settings").send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(rate_headers(&response).is_none());
    }
    app.stop().await;
}
