//! Code playgrounds over HTTP (`POST /realm/playgrounds`, `DELETE
//! /realm/playgrounds/{playground_id}`): who may change them, Zulip's errors in its order,
//! the `realm_playgrounds` event and data set, and that they outlive a restart.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, post, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

const PYTHON: [(&str, &str); 3] = [
    ("name", "Python playground"),
    ("pygments_language", "Python"),
    ("url_template", "https://python.example.com?code={code}"),
];

async fn add(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    post(app, who, "/realm/playgrounds", form).await
}

async fn remove(app: &TestApp, who: &Creds, id: i64) -> Response {
    send(app, who, Method::DELETE, &format!("/realm/playgrounds/{id}"), &[]).await
}

fn entry(id: i64, name: &str, language: &str, url_template: &str) -> Value {
    json!({"id": id, "name": name, "pygments_language": language, "url_template": url_template})
}

fn event(list: Value) -> Vec<Value> {
    vec![json!({"type": "realm_playgrounds", "realm_playgrounds": list})]
}

/// A refused playground: the first message, and all of them by field.
fn invalid(msg: &str, errors: Value) -> Value {
    json!({"result": "error", "msg": msg, "errors": errors, "code": "BAD_REQUEST"})
}

async fn registered(app: &TestApp, who: &Creds) -> Value {
    register(app, who, &[("fetch_event_types", r#"["realm_playgrounds"]"#)]).await["realm_playgrounds"].clone()
}

#[actix_web::test]
async fn administrators_add_and_remove_playgrounds_and_everyone_is_told() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "King Hamlet", 400).await;
    let admin_only =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    // The role is checked before any parameter, as Zulip's `require_realm_admin`.
    expect(add(&app, &hamlet, &[]).await, 400, admin_only.clone()).await;
    expect(remove(&app, &hamlet, 1).await, 400, admin_only).await;
    assert_eq!(registered(&app, &hamlet).await, json!([]));

    let mut watch = Watch::new(&app, &hamlet, r#"["realm_playgrounds"]"#).await;
    let (status, body) = json(add(&app, &app.owner, &PYTHON).await).await;
    let python = body["id"].as_i64().unwrap();
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "id": python})));
    let first = entry(python, "Python playground", "Python", "https://python.example.com?code={code}");
    assert_eq!(watch.events(&app).await, event(json!([first.clone()])));
    // The same language twice, values stripped.
    let form = [
        ("name", " Python 2 "),
        ("pygments_language", "Python "),
        ("url_template", " https://py2.example.com/{code} "),
    ];
    let (status, body) = json(add(&app, &app.owner, &form).await).await;
    assert_eq!(status, 200, "{body}");
    let second = entry(body["id"].as_i64().unwrap(), "Python 2", "Python", "https://py2.example.com/{code}");
    let both = json!([first.clone(), second.clone()]);
    assert_eq!(watch.events(&app).await, event(both.clone()));
    assert_eq!(registered(&app, &hamlet).await, both);

    // Missing ones are "Invalid playground"; removing sends the rest.
    expect(remove(&app, &app.owner, 9999).await, 400, error("Invalid playground")).await;
    expect(remove(&app, &app.owner, python).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, event(json!([second.clone()])));
    expect(remove(&app, &app.owner, python).await, 400, error("Invalid playground")).await;

    // Kept across a restart.
    let data_dir = app.data_dir.clone();
    let _tmp = app.stop().await;
    let app = spawn_app_at(&data_dir).await;
    assert_eq!(registered(&app, &hamlet).await, json!([second]));
    app.stop().await;
}

#[actix_web::test]
async fn playgrounds_are_checked_in_zulips_order_with_its_messages() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    expect(add(&app, &owner, &[]).await, 400, missing("name")).await;
    expect(add(&app, &owner, &[("name", "P")]).await, 400, missing("pygments_language")).await;
    // The language is checked before `url_template` is found missing.
    let long = "x".repeat(41);
    let too_long = error("pygments_language is too long (limit: 40 characters)");
    expect(add(&app, &owner, &[("name", "P"), ("pygments_language", &long)]).await, 400, too_long).await;
    let bad = error("Invalid characters in pygments language");
    expect(add(&app, &owner, &[("name", "P"), ("pygments_language", "a$b")]).await, 400, bad).await;
    expect(add(&app, &owner, &[("name", "P"), ("pygments_language", "Python")]).await, 400, missing("url_template"))
        .await;

    let blank = json!(["This field cannot be blank."]);
    let missing_code = r#"Missing the required variable "code" in the URL template"#;
    let form = [("name", " "), ("pygments_language", ""), ("url_template", "")];
    let errors = json!({"url_template": blank, "name": blank, "pygments_language": blank, "__all__": [missing_code]});
    expect(add(&app, &owner, &form).await, 400, invalid("This field cannot be blank.", errors)).await;
    let cases: &[(&str, &str, Value)] = &[
        (
            "https://python.example.com?code={code",
            "Invalid URL template.",
            json!({"url_template": ["Invalid URL template."]}),
        ),
        ("https://python.example.com", missing_code, json!({"__all__": [missing_code]})),
        (
            "https://python.example.com?code={code}&v={version}",
            r#""code" should be the only variable present in the URL template"#,
            json!({"__all__": [r#""code" should be the only variable present in the URL template"#]}),
        ),
    ];
    for (template, msg, errors) in cases {
        let form = [("name", "P"), ("pygments_language", "Python"), ("url_template", template)];
        expect(add(&app, &owner, &form).await, 400, invalid(msg, errors.clone())).await;
    }
    expect(add(&app, &owner, &PYTHON).await, 200, json!({"result": "success", "msg": "", "id": 1})).await;
    let taken = "Realm playground with this Realm, Pygments language and Name already exists.";
    expect(add(&app, &owner, &PYTHON).await, 400, invalid(taken, json!({"__all__": [taken]}))).await;
    app.stop().await;
}

#[actix_web::test]
async fn removing_the_playground_of_the_default_code_block_language_clears_it() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let rust =
        [("name", "Rust"), ("pygments_language", "Rust"), ("url_template", "https://play.rust-lang.org/?code={code}")];
    let (status, body) = json(add(&app, &owner, &rust).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    let setting = [("default_code_block_language", "Rust")];
    let (status, body) = json(send(&app, &owner, Method::PATCH, "/realm", &setting).await).await;
    assert_eq!(status, 200, "{body}");
    let mut watch = Watch::new(&app, &owner, r#"["realm", "realm_playgrounds"]"#).await;
    expect(remove(&app, &owner, id).await, 200, success()).await;
    let cleared = json!({"type": "realm", "op": "update", "property": "default_code_block_language", "value": ""});
    assert_eq!(watch.events(&app).await, vec![cleared, json!({"type": "realm_playgrounds", "realm_playgrounds": []})]);
    let state = register(&app, &owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(state["realm_default_code_block_language"], json!(""));
    app.stop().await;
}
