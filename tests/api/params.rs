//! Parameter decoding on the wire: missing and malformed parameters, merging of body and
//! query, and `ignored_parameters_unsupported`.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{expect, json, spawn_app};

#[actix_web::test]
async fn a_missing_parameter_names_the_variable() {
    let app = spawn_app().await;
    let response = app.request(Method::POST, "/fetch_api_key").form(&[("password", "x")]).send().await.unwrap();
    expect(response, 400, json!({"result": "error", "msg": "Missing 'username' argument", "var_name": "username", "code": "REQUEST_VARIABLE_MISSING"})).await;
    app.stop().await;
}

#[actix_web::test]
async fn malformed_json_parameters_get_zulips_messages() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let cases = [
        ("client_gravatar=True", "client_gravatar is not valid JSON"),
        ("client_gravatar=1", "client_gravatar is not a boolean"),
        ("include_custom_profile_fields=%22yes%22", "include_custom_profile_fields is not a boolean"),
    ];
    for (query, msg) in cases {
        let response = app.as_user(&o, Method::GET, &format!("/users/1?{query}")).send().await.unwrap();
        expect(response, 400, json!({"result": "error", "msg": msg, "code": "BAD_REQUEST"})).await;
    }
    let response = app
        .as_user(&o, Method::GET, "/users/1?client_gravatar=false&client_external_avatar=true")
        .send()
        .await
        .unwrap();
    expect(
        response,
        400,
        json!({
            "result": "error",
            "msg": "Can't decide between 'client_external_avatar' and 'client_gravatar' arguments",
            "var_name1": "client_external_avatar",
            "var_name2": "client_gravatar",
            "code": "REQUEST_CONFUSING_VAR"
        }),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn unknown_parameters_are_reported_sorted() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let response = app.as_user(&o, Method::GET, "/users/me?zebra=1&apple=2&apple=3").send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["ignored_parameters_unsupported"], json!(["apple", "zebra"]));
    // The list is the last key of the body.
    assert_eq!(body.as_object().unwrap().keys().next_back().unwrap(), "ignored_parameters_unsupported");

    // Body and query string are merged; used parameters are not reported.
    let response = app
        .request(Method::POST, "/fetch_api_key?password=from-query&dont_block=true")
        .form(&[("username", o.email.as_str()), ("password", o.password.as_str()), ("bogus_param", "1")])
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ignored_parameters_unsupported"], json!(["bogus_param", "dont_block"]));

    // Without unknown parameters the key is absent.
    let (_, body) = json(app.as_user(&o, Method::GET, "/users/me").send().await.unwrap()).await;
    assert!(body.get("ignored_parameters_unsupported").is_none());
    app.stop().await;
}

#[actix_web::test]
async fn multipart_bodies_carry_parameters_too() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let form = reqwest::multipart::Form::new()
        .text("username", o.email.clone())
        .text("password", o.password.clone())
        .text("extra", "1");
    let response = app.request(Method::POST, "/fetch_api_key").multipart(form).send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["api_key"], o.api_key.as_str());
    assert_eq!(body["ignored_parameters_unsupported"], json!(["extra"]));
    app.stop().await;
}

#[actix_web::test]
async fn get_bodies_are_not_parameters() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    // As in Django, a GET's form body is not read.
    let response = app
        .as_user(&o, Method::GET, "/users/1")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("client_gravatar=True")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn a_broken_body_is_a_json_error_not_a_crash() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/fetch_api_key")
        .header("Content-Type", "multipart/form-data; boundary=xyz")
        .body("--xyz\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nunterminated")
        .send()
        .await
        .unwrap();
    expect(response, 400, json!({"result": "error", "msg": "Malformed request body", "code": "BAD_REQUEST"})).await;
    app.stop().await;
}
