//! `GET /users/me` and `GET /users/{user_id|email}`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_same, expect, json, spawn_app};

/// Checks `date_joined` is Zulip's minute-precision form, within a minute of now, and
/// returns it.
fn date_joined(body: &Value) -> Value {
    let s = body["date_joined"].as_str().unwrap();
    let parsed = chrono::DateTime::parse_from_str(&format!("{s}:00"), "%Y-%m-%dT%H:%M%z:00").unwrap_or_else(|e| {
        panic!("{s}: {e}");
    });
    assert!(s.ends_with("+00:00") && s.len() == "2026-11-21T05:21+00:00".len(), "{s}");
    let age = chrono::Utc::now().timestamp() - parsed.timestamp();
    assert!((0..=120).contains(&age), "{s}");
    body["date_joined"].clone()
}

#[actix_web::test]
async fn own_profile_has_every_field() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let (status, body) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(status, 200);
    let expected = json!({
        "result": "success",
        "msg": "",
        "email": "owner@agora.test",
        "user_id": 1,
        "avatar_version": 1,
        "is_admin": true,
        "is_owner": true,
        "is_guest": false,
        "role": 100,
        "is_bot": false,
        "full_name": "Organization Owner",
        "timezone": "",
        "is_active": true,
        "date_joined": date_joined(&body),
        "delivery_email": "owner@agora.test",
        "avatar_url": "https://secure.gravatar.com/avatar/b9d9bf51d76ead8e017ab84ee34805d3?d=identicon&version=1",
        "profile_data": {},
        "max_message_id": -1,
    });
    assert_same(&body, &expected);
    app.stop().await;
}

#[actix_web::test]
async fn other_users_by_id_and_by_email() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice Adams", 600).await;
    let o = app.owner.clone();

    let (status, body) =
        json(app.as_user(&o, Method::GET, &format!("/users/{}", alice.user_id)).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let user = json!({
        "email": "alice@agora.test",
        "user_id": alice.user_id,
        "avatar_version": 1,
        "is_admin": false,
        "is_owner": false,
        "is_guest": true,
        "role": 600,
        "is_bot": false,
        "full_name": "Alice Adams",
        "timezone": "",
        "is_active": true,
        "date_joined": date_joined(&body["user"]),
        "delivery_email": "alice@agora.test",
        // The address is the real one, so the client computes the gravatar itself.
        "avatar_url": null,
    });
    assert_same(&body, &json!({"result": "success", "msg": "", "user": user}));

    let (_, by_email) = json(app.as_user(&o, Method::GET, "/users/ALICE@agora.test").send().await.unwrap()).await;
    assert_same(&by_email["user"], &user);

    let path = format!("/users/{}?client_gravatar=false&include_custom_profile_fields=true", alice.user_id);
    let (_, body) = json(app.as_user(&o, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(
        body["user"]["avatar_url"],
        "https://secure.gravatar.com/avatar/bb70480bd1937fc7c991436e727595ae?d=identicon&version=1"
    );
    assert_eq!(body["user"]["profile_data"], json!({}));

    // A guest sees the owner too.
    let (status, body) = json(app.as_user(&alice, Method::GET, "/users/1").send().await.unwrap()).await;
    assert_eq!((status, body["user"]["full_name"].as_str()), (200, Some("Organization Owner")));
    app.stop().await;
}

#[actix_web::test]
async fn unknown_users_are_bad_requests() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let no_such_user = json!({"result": "error", "msg": "No such user", "code": "BAD_REQUEST"});
    for path in ["/users/999", "/users/99999999999999999999999", "/users/nobody@agora.test"] {
        let response = app.as_user(&o, Method::GET, path).send().await.unwrap();
        expect(response, 400, no_such_user.clone()).await;
    }
    app.stop().await;
}

/// An administrator allowed to create users (as `agora create-user --can-create-users`).
pub async fn create_user_admin(app: &crate::helpers::TestApp) -> crate::helpers::Creds {
    use agora::admin::AdminRequest;
    use agora_actors::secrets::{hash_password, HashCost};
    let request = AdminRequest::CreateUser {
        subdomain: String::new(),
        email: "admin@agora.test".into(),
        full_name: "Admin".into(),
        role: 200,
        password_hash: Some(hash_password("pw-admin", HashCost::cheapest()).unwrap()),
        can_create_users: true,
    };
    let out = request.run_in_server(&app.realms).await.unwrap();
    crate::helpers::Creds {
        email: "admin@agora.test".into(),
        password: "pw-admin".into(),
        api_key: out["api_key"].as_str().unwrap().into(),
        user_id: out["user_id"].as_i64().unwrap(),
        host: crate::helpers::HOST.into(),
    }
}
