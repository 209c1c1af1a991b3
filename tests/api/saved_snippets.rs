//! Saved snippets over HTTP (`GET`, `POST /saved_snippets`, `PATCH`, `DELETE
//! /saved_snippets/{saved_snippet_id}`): Zulip's limits and errors, the `saved_snippets`
//! events on every queue of the owner and no one else's, and the `saved_snippets` data set.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, missing, post, register, send, spawn_app, success, Creds, TestApp, Watch};

async fn create(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    post(app, who, "/saved_snippets", form).await
}

async fn created(app: &TestApp, who: &Creds, title: &str, content: &str) -> i64 {
    let (status, body) = json(create(app, who, &[("title", title), ("content", content)]).await).await;
    assert_eq!(status, 200, "{body}");
    body["saved_snippet_id"].as_i64().unwrap()
}

async fn edit(app: &TestApp, who: &Creds, id: i64, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::PATCH, &format!("/saved_snippets/{id}"), form).await
}

async fn delete(app: &TestApp, who: &Creds, id: i64) -> Response {
    send(app, who, Method::DELETE, &format!("/saved_snippets/{id}"), &[]).await
}

async fn listed(app: &TestApp, who: &Creds) -> Response {
    app.as_user(who, Method::GET, "/saved_snippets").send().await.unwrap()
}

fn listing(snippets: Value) -> Value {
    json!({"result": "success", "msg": "", "saved_snippets": snippets})
}

fn absent() -> Value {
    json!({"result": "error", "msg": "Saved snippet does not exist.", "code": "BAD_REQUEST"})
}

#[actix_web::test]
async fn snippets_change_with_events_on_each_queue_of_their_owner_only() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let mut phone = Watch::new(&app, &hamlet, r#"["saved_snippets"]"#).await;
    let mut laptop = Watch::new(&app, &hamlet, r#"["saved_snippets"]"#).await;
    let mut theirs = Watch::new(&app, &othello, r#"["saved_snippets"]"#).await;
    expect(listed(&app, &hamlet).await, 200, listing(json!([]))).await;

    let before = chrono::Utc::now().timestamp();
    let (status, body) =
        json(create(&app, &hamlet, &[("title", "  Greeting "), ("content", "\n Hello! \n")]).await).await;
    let after = chrono::Utc::now().timestamp();
    let id = body["saved_snippet_id"].as_i64().unwrap();
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "saved_snippet_id": id})));
    let events = phone.events(&app).await;
    assert_eq!(laptop.events(&app).await, events);
    let created_at = events[0]["saved_snippet"]["date_created"].as_i64().unwrap();
    assert!((before..=after).contains(&created_at));
    let snippet = json!({"id": id, "title": "Greeting", "content": "Hello!", "date_created": created_at});
    assert_eq!(events, vec![json!({"type": "saved_snippets", "op": "add", "saved_snippet": snippet})]);
    expect(listed(&app, &hamlet).await, 200, listing(json!([snippet]))).await;

    expect(edit(&app, &hamlet, id, &[("content", " Hi! ")]).await, 200, success()).await;
    let snippet = json!({"id": id, "title": "Greeting", "content": "Hi!", "date_created": created_at});
    let event = json!({"type": "saved_snippets", "op": "update", "saved_snippet": snippet});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    expect(edit(&app, &hamlet, id, &[("title", "Hi"), ("content", "Hi there")]).await, 200, success()).await;
    let snippet = json!({"id": id, "title": "Hi", "content": "Hi there", "date_created": created_at});
    let event = json!({"type": "saved_snippets", "op": "update", "saved_snippet": snippet});
    assert_eq!(phone.events(&app).await, vec![event]);
    let second = created(&app, &hamlet, "Bye", "Bye!").await;
    assert!(second > id);
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["saved_snippets"]"#)]).await;
    assert_eq!(state["saved_snippets"][0], snippet);
    assert_eq!(state["saved_snippets"][1]["id"], json!(second));
    laptop.events(&app).await;
    phone.events(&app).await;

    // Snippets are personal.
    expect(listed(&app, &othello).await, 200, listing(json!([]))).await;
    expect(edit(&app, &othello, id, &[("title", "Mine")]).await, 404, absent()).await;
    expect(delete(&app, &othello, id).await, 404, absent()).await;
    let state = register(&app, &othello, &[("fetch_event_types", r#"["saved_snippets"]"#)]).await;
    assert_eq!(state["saved_snippets"], json!([]));

    expect(delete(&app, &hamlet, id).await, 200, success()).await;
    let event = json!({"type": "saved_snippets", "op": "remove", "saved_snippet_id": id});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    expect(delete(&app, &hamlet, id).await, 404, absent()).await;
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn limits_and_refusals_are_zulips() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["saved_snippets"]"#).await;
    let title_60 = format!(" {} ", "é".repeat(60));
    let content_10000 = "x".repeat(10_000);
    let id = created(&app, &hamlet, &title_60, &content_10000).await;
    assert_eq!(watch.events(&app).await.len(), 1);

    let (title_61, content_10001) = ("t".repeat(61), "x".repeat(10_001));
    let refusals: &[(&[(&str, &str)], Value)] = &[
        (&[("content", "x")], missing("title")),
        (&[("title", " \n "), ("content", "")], error("title cannot be blank")),
        (&[("title", &title_61)], error("title is too long (limit: 60 characters)")),
        (&[("title", "t")], missing("content")),
        (&[("title", "t"), ("content", "  ")], error("content cannot be blank")),
        (&[("title", "t"), ("content", &content_10001)], error("content is too long (limit: 10000 characters)")),
    ];
    for (form, body) in refusals {
        expect(create(&app, &hamlet, form).await, 400, body.clone()).await;
    }
    let edit_refusals: &[(&[(&str, &str)], &str)] = &[
        (&[("title", ""), ("content", "")], "title cannot be blank"),
        (&[("title", &title_61), ("content", "")], "title is too long (limit: 60 characters)"),
        (&[("title", "fine"), ("content", " ")], "content cannot be blank"),
        (&[("content", &content_10001)], "content is too long (limit: 10000 characters)"),
    ];
    for (form, msg) in edit_refusals {
        expect(edit(&app, &hamlet, id, form).await, 400, error(msg)).await;
    }
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let kept = json!({"id": id, "title": "é".repeat(60), "content": content_10000, "date_created": 0});
    let (_, body) = json(listed(&app, &hamlet).await).await;
    assert_eq!(
        (&body["saved_snippets"][0]["title"], &body["saved_snippets"][0]["content"]),
        (&kept["title"], &kept["content"])
    );
    expect(edit(&app, &hamlet, id, &[("title", "")]).await, 400, error("title cannot be blank")).await;
    // Without anything to change, Zulip answers at once: no lookup, no event.
    expect(edit(&app, &hamlet, id + 100, &[]).await, 200, success()).await;
    expect(edit(&app, &hamlet, id + 100, &[("title", "x")]).await, 404, absent()).await;
    let not_found = json!({"result": "error", "msg": "Not Found", "code": "NOT_FOUND"});
    expect(delete_path(&app, &hamlet, "/saved_snippets/first").await, 404, not_found).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

async fn delete_path(app: &TestApp, who: &Creds, path: &str) -> Response {
    send(app, who, Method::DELETE, path, &[]).await
}
