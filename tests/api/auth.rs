//! HTTP Basic authentication on API routes: success and every refusal, with exact bodies
//! and headers.

use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::organization::SetRealmDeactivated;
use agora_actors::realm::users::NewUser;
use agora_actors::realm::users::{CreateUser, SetUserActive};
use reqwest::{Method, Response};
use serde_json::json;

use crate::helpers::{expect, json, spawn_app};

async fn refused(response: Response, status: u16, msg: &str) {
    let www = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
    let (got_status, body) = json(response).await;
    assert_eq!((got_status, body), (status, json!({"result": "error", "msg": msg, "code": "UNAUTHORIZED"})));
    assert_eq!(www.as_deref(), Some("Basic realm=\"zulip\""));
}

#[actix_web::test]
async fn valid_credentials_authenticate() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let (status, body) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(body["user_id"], 1);
    // The email is matched case-insensitively and surrounding spaces are ignored.
    let response = app
        .request(Method::GET, "/users/me")
        .basic_auth(format!(" {} ", o.email.to_uppercase()), Some(format!(" {} ", o.api_key)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn every_refusal_is_a_401_with_zulips_message() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let get = || app.request(Method::GET, "/users/me");

    refused(get().send().await.unwrap(), 401, "Not logged in: API authentication or user session required").await;
    refused(
        get().header("Authorization", "").send().await.unwrap(),
        401,
        "Not logged in: API authentication or user session required",
    )
    .await;
    refused(get().basic_auth(&o.email, Some("short")).send().await.unwrap(), 401, "Malformed API key").await;
    let wrong_key = "A".repeat(32);
    refused(get().basic_auth(&o.email, Some(&wrong_key)).send().await.unwrap(), 401, "Invalid API key").await;
    refused(get().basic_auth("other@agora.test", Some(&o.api_key)).send().await.unwrap(), 401, "Invalid API key").await;
    refused(
        get().header("Authorization", "Basic not-base64!").send().await.unwrap(),
        401,
        "Invalid authorization header for basic auth",
    )
    .await;
    refused(
        get().header("Authorization", "Basic a b").send().await.unwrap(),
        401,
        "Invalid authorization header for basic auth",
    )
    .await;

    // Another scheme is a plain 400.
    let response = get().header("Authorization", "Bearer abc").send().await.unwrap();
    assert!(response.headers().get("www-authenticate").is_none());
    expect(
        response,
        400,
        json!({"result": "error", "msg": "This endpoint requires HTTP basic authentication.", "code": "BAD_REQUEST"}),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn a_deactivated_account_is_refused_at_once() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    assert_eq!(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    refused(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap(), 401, "Account is deactivated").await;
    app.realm("").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: true }).await.unwrap().unwrap();
    assert_eq!(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn a_regenerated_key_replaces_the_old_one() {
    let app = spawn_app().await;
    let mut o = app.owner.clone();
    let response = app.as_user(&o, Method::POST, "/users/me/api_key/regenerate").send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    let new_key = body["api_key"].as_str().unwrap().to_owned();
    assert_eq!(body, json!({"result": "success", "msg": "", "api_key": new_key}));
    assert_eq!(new_key.len(), 32);
    assert!(new_key.chars().all(|c| c.is_ascii_alphanumeric()));
    assert_ne!(new_key, o.api_key);
    refused(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap(), 401, "Invalid API key").await;
    o.api_key = new_key;
    assert_eq!(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn a_deactivated_organization_refuses_every_key() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    app.realm("").addr.send(SetRealmDeactivated(true)).await.unwrap().unwrap();
    refused(
        app.as_user(&o, Method::GET, "/users/me").send().await.unwrap(),
        401,
        "This organization has been deactivated",
    )
    .await;
    app.realm("").addr.send(SetRealmDeactivated(false)).await.unwrap().unwrap();
    assert_eq!(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn incoming_webhook_bots_may_not_use_the_api() {
    let app = spawn_app().await;
    let new = NewUser {
        bot_type: Some(2),
        bot_owner_id: Some(UserId(1)),
        ..NewUser::human("hook-bot@agora.test", "Hook Bot", Role::Member, None)
    };
    let created = app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap();
    let response = app
        .request(Method::GET, "/users/me")
        .basic_auth("hook-bot@agora.test", Some(&created.api_key))
        .send()
        .await
        .unwrap();
    refused(response, 401, "This API is not available to incoming webhook bots.").await;
    app.stop().await;
}

#[actix_web::test]
async fn only_authenticated_successes_forbid_caching() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let response = app.as_user(&o, Method::GET, "/users/me").send().await.unwrap();
    assert_eq!(response.headers()["cache-control"], "max-age=0, no-cache, no-store, must-revalidate, private");
    assert!(response.headers().contains_key("expires"));
    let response = app.request(Method::GET, "/server_settings").send().await.unwrap();
    assert!(!response.headers().contains_key("cache-control"));
    let response = app.request(Method::GET, "/users/me").send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert!(!response.headers().contains_key("cache-control"));
    app.stop().await;
}
