//! State survives a restart of the server on the same data directory.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_same, json, spawn_app, spawn_app_at};

#[actix_web::test]
async fn organizations_users_and_keys_survive_a_restart() {
    let app = spawn_app().await;
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let bob = app.create_user("acme", "bob@acme.test", "Bob Builder", 300).await;
    let mut owner = app.owner.clone();
    let (_, body) = json(app.as_user(&owner, Method::POST, "/users/me/api_key/regenerate").send().await.unwrap()).await;
    owner.api_key = body["api_key"].as_str().unwrap().to_owned();
    let (_, bob_before) =
        json(app.as_user(&acme, Method::GET, &format!("/users/{}", bob.user_id)).send().await.unwrap()).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    // No second bootstrap: the zuliprc still holds the original (now replaced) key.
    assert_ne!(app.owner.api_key, owner.api_key);
    assert_eq!(app.as_user(&owner, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    let (status, body) = json(app.as_user(&app.owner, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((status, body["msg"].as_str()), (401, Some("Invalid API key")));

    let (status, bob_after) =
        json(app.as_user(&acme, Method::GET, &format!("/users/{}", bob.user_id)).send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_same(&bob_after, &bob_before);
    assert_eq!(bob_after["user"]["role"], json!(300));
    let response = app
        .request_to(&bob.host, Method::POST, "/fetch_api_key")
        .form(&[("username", &bob.email), ("password", &bob.password)])
        .send()
        .await
        .unwrap();
    assert_eq!(json(response).await.1["api_key"], bob.api_key.as_str());
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn a_second_server_cannot_use_the_same_data_directory() {
    let app = spawn_app().await;
    let err = agora::startup::Application::build(crate::helpers::test_settings(&app.data_dir)).await.err().unwrap();
    assert!(err.to_string().contains("another agora server"), "{err}");
    app.stop().await;
}

#[actix_web::test]
async fn a_dead_realm_actor_is_replaced_on_the_next_request() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let first = app.realm("");
    first.addr.send(agora_actors::realm::actor::StopRealm).await.unwrap();
    for _ in 0..400 {
        if !first.is_alive() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!first.is_alive());
    let (status, me) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((status, me["user_id"].as_i64()), (200, Some(1)));
    assert!(app.realm("").is_alive());
    app.stop().await;
}
