//! `GET /server_settings`.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_same, json, spawn_app};

fn base() -> serde_json::Value {
    json!({
        "result": "success",
        "msg": "",
        "authentication_methods": {
            "password": true, "dev": false, "email": true, "ldap": false, "remoteuser": false,
            "github": false, "discord": false, "azuread": false, "gitlab": false, "google": false,
            "apple": false, "saml": false, "openid connect": false
        },
        "zulip_version": "12.0",
        "zulip_merge_base": "12.0",
        "zulip_feature_level": 498,
        "push_notifications_enabled": false,
        "is_incompatible": false,
    })
}

#[actix_web::test]
async fn root_organization_settings_need_no_authentication() {
    let app = spawn_app().await;
    let response = app.request(Method::GET, "/server_settings").send().await.unwrap();
    // Agora names itself in the `Server` header: Zulip's body has no field for it.
    assert_eq!(response.headers()["server"], concat!("Agora/", env!("CARGO_PKG_VERSION")));
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    let mut expected = base();
    let extra = json!({
        "email_auth_enabled": true,
        "require_email_format_usernames": true,
        "realm_url": "http://agora.test",
        "realm_name": "Agora",
        "realm_icon": "https://secure.gravatar.com/avatar/d41d8cd98f00b204e9800998ecf8427e?d=identicon",
        "realm_description": "",
        "realm_web_public_access_enabled": false,
        "external_authentication_methods": [],
        "realm_uri": "http://agora.test",
    });
    expected.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    // Keys come in Zulip's order too.
    assert_same(&body, &expected);
    app.stop().await;
}

#[actix_web::test]
async fn each_organization_answers_at_its_own_host() {
    let app = spawn_app().await;
    app.create_realm("acme", "boss@acme.test").await;
    let response = app.request_to("acme.agora.test:8080", Method::GET, "/server_settings").send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["realm_name"], "Org acme");
    assert_eq!(body["realm_url"], "http://acme.agora.test");
    assert_eq!(body["realm_uri"], "http://acme.agora.test");
    assert_eq!(body["realm_icon"], "https://secure.gravatar.com/avatar/53bce4f1dfa0fe8e7ca126f91b35d3a6?d=identicon");
    app.stop().await;
}

#[actix_web::test]
async fn an_unknown_subdomain_is_404() {
    let app = spawn_app().await;
    let response = app.request_to("nope.agora.test", Method::GET, "/server_settings").send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 404);
    assert_eq!(body, json!({"result": "error", "msg": "Invalid subdomain", "code": "NONEXISTENT_SUBDOMAIN"}));
    app.stop().await;
}

#[actix_web::test]
async fn clients_named_zulip_invalid_are_told_they_are_incompatible() {
    let app = spawn_app().await;
    let response =
        app.request(Method::GET, "/server_settings").header("User-Agent", "ZulipInvalid/1.0").send().await.unwrap();
    let (_, body) = json(response).await;
    assert_eq!(body["is_incompatible"], true);
    let response = app
        .request(Method::GET, "/server_settings")
        .header("User-Agent", "ZulipPython/0.9.1 (Debian GNU/Linux; 12)")
        .send()
        .await
        .unwrap();
    assert_eq!(json(response).await.1["is_incompatible"], false);
    app.stop().await;
}
