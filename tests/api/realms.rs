//! Several organizations in one server, chosen by the Host header.

use agora_actors::ids::UserId;
use agora_actors::realm::users::SetUserActive;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{expect, json, spawn_app};

#[actix_web::test]
async fn hosts_route_to_their_organizations() {
    let app = spawn_app().await;
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let (status, me) = json(app.as_user(&acme, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!((me["user_id"].as_i64(), me["email"].as_str()), (Some(acme.user_id), Some("boss@acme.test")));
    assert_eq!(me["role"], 100);
    // Ports and case do not matter; www. is the root.
    let response = app
        .request_to("ACME.agora.test:9991", Method::GET, "/users/me")
        .basic_auth(&acme.email, Some(&acme.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = app
        .request_to("www.agora.test", Method::GET, "/users/me")
        .basic_auth(&app.owner.email, Some(&app.owner.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn credentials_of_one_organization_fail_at_another() {
    let app = spawn_app().await;
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let globex = app.create_realm("globex", "boss@globex.test").await;
    let not_associated =
        json!({"result": "error", "msg": "Account is not associated with this subdomain", "code": "UNAUTHORIZED"});

    // acme's owner at globex's host and at the root.
    for host in ["globex.agora.test", "agora.test"] {
        let response = app
            .request_to(host, Method::GET, "/users/me")
            .basic_auth(&acme.email, Some(&acme.api_key))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["www-authenticate"], "Basic realm=\"zulip\"");
        expect(response, 401, not_associated.clone()).await;
    }
    // Logging in with a password at the wrong host fails too.
    let response = app
        .request_to("globex.agora.test", Method::POST, "/fetch_api_key")
        .form(&[("username", &acme.email), ("password", &acme.password)])
        .send()
        .await
        .unwrap();
    assert_eq!(json(response).await.1["code"], "AUTHENTICATION_FAILED");
    // Users of another organization cannot be looked up.
    let (status, body) =
        json(app.as_user(&globex, Method::GET, &format!("/users/{}", acme.user_id)).send().await.unwrap()).await;
    assert_eq!((status, body), (400, json!({"result": "error", "msg": "No such user", "code": "BAD_REQUEST"})));
    let (status, _) =
        json(app.as_user(&globex, Method::GET, &format!("/users/{}", acme.email)).send().await.unwrap()).await;
    assert_eq!(status, 400);
    app.stop().await;
}

#[actix_web::test]
async fn the_same_email_may_exist_in_two_organizations() {
    let app = spawn_app().await;
    let acme = app.create_realm("acme", "pat@example.com").await;
    let globex = app.create_realm("globex", "pat@example.com").await;
    assert_ne!(acme.user_id, globex.user_id);
    for who in [&acme, &globex] {
        let (status, me) = json(app.as_user(who, Method::GET, "/users/me").send().await.unwrap()).await;
        assert_eq!((status, me["user_id"].as_i64()), (200, Some(who.user_id)));
    }
    app.stop().await;
}

#[actix_web::test]
async fn only_the_host_header_chooses_the_organization() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    // Forwarding headers are not trusted: the request still goes to the root organization.
    let response = app
        .as_user(&o, Method::GET, "/users/me")
        .header("X-Forwarded-Host", "nope.agora.test")
        .header("Forwarded", "host=nope.agora.test")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn a_deactivated_account_of_another_organization_is_reported_as_deactivated() {
    let app = spawn_app().await;
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let bob = app.create_user("acme", "bob@acme.test", "Bob Builder", 400).await;
    app.realm("acme").addr.send(SetUserActive { user_id: UserId(bob.user_id), active: false }).await.unwrap().unwrap();
    let response =
        app.request(Method::GET, "/users/me").basic_auth(&bob.email, Some(&bob.api_key)).send().await.unwrap();
    expect(response, 401, json!({"result": "error", "msg": "Account is deactivated", "code": "UNAUTHORIZED"})).await;
    let response =
        app.request(Method::GET, "/users/me").basic_auth(&acme.email, Some(&acme.api_key)).send().await.unwrap();
    expect(
        response,
        401,
        json!({"result": "error", "msg": "Account is not associated with this subdomain", "code": "UNAUTHORIZED"}),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn an_organization_created_after_a_miss_is_found() {
    let app = spawn_app().await;
    let response = app.request_to("later.agora.test", Method::GET, "/server_settings").send().await.unwrap();
    assert_eq!(response.status(), 404);
    // The remembered miss is forgotten when the organization is created.
    let later = app.create_realm("later", "boss@later.test").await;
    let response = app.request_to("later.agora.test", Method::GET, "/server_settings").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(app.as_user(&later, Method::GET, "/users/me").send().await.unwrap().status(), 200);
    app.stop().await;
}

/// Zulip 12 (feature level 464): a new description goes out as `realm` `update_dict`, with
/// its rendering.
#[actix_web::test]
async fn a_new_description_is_an_update_dict_with_its_rendering() {
    let app = spawn_app().await;
    let mut watch = crate::helpers::Watch::new(&app, &app.owner, r#"["realm"]"#).await;
    let form = [("description", "**Welcome**")];
    let response = crate::helpers::send(&app, &app.owner, Method::PATCH, "/realm", &form).await;
    expect(response, 200, json!({"result": "success", "msg": "", "description": "updated"})).await;
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm", "op": "update_dict", "property": "default",
            "data": {"description": "**Welcome**", "rendered_description": "<p><strong>Welcome</strong></p>"}})]
    );
}
