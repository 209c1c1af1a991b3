//! Envelopes for paths and methods no route serves.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{expect, json, spawn_app};

#[actix_web::test]
async fn unknown_paths_get_a_json_404() {
    let app = spawn_app().await;
    for path in ["/no/such/endpoint", "/users/me/nothing/here"] {
        let response = app.request(Method::GET, path).send().await.unwrap();
        assert_eq!(response.headers()["content-type"], "application/json");
        expect(response, 404, json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"})).await;
    }
    let response = app.client.get(format!("{}/elsewhere", app.address)).send().await.unwrap();
    assert_eq!(json(response).await.0, 404);
    app.stop().await;
}

#[actix_web::test]
async fn wrong_methods_get_405_with_the_allowed_ones() {
    let app = spawn_app().await;
    let response = app.request(Method::DELETE, "/server_settings").send().await.unwrap();
    assert_eq!(response.headers()["allow"], "GET");
    expect(response, 405, json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["GET"]})).await;
    let response = app.request(Method::GET, "/fetch_api_key").send().await.unwrap();
    expect(response, 405, json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["POST"]})).await;
    // The method is checked before authentication.
    let response = app.request(Method::PATCH, "/users/me").send().await.unwrap();
    assert_eq!(json(response).await.0, 405);
    app.stop().await;
}

#[actix_web::test]
async fn options_and_head_are_answered() {
    let app = spawn_app().await;
    let response = app.request(Method::OPTIONS, "/users/me").send().await.unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(response.headers()["allow"], "GET, DELETE");
    let response = app.request(Method::HEAD, "/server_settings").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "");
    app.stop().await;
}
