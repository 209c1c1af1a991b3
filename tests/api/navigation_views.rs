//! Navigation views over HTTP (`GET`, `POST /navigation_views`, `PATCH`, `DELETE
//! /navigation_views/{fragment}`): Zulip's checks in its order, fragments with slashes,
//! the `navigation_view` events on every queue of the owner and no one else's, and the
//! `navigation_views` data set.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, missing, post, register, send, spawn_app, success, Creds, TestApp, Watch};

async fn add(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    post(app, who, "/navigation_views", form).await
}

async fn update(app: &TestApp, who: &Creds, fragment: &str, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::PATCH, &format!("/navigation_views/{fragment}"), form).await
}

async fn remove(app: &TestApp, who: &Creds, fragment: &str) -> Response {
    send(app, who, Method::DELETE, &format!("/navigation_views/{fragment}"), &[]).await
}

async fn listed(app: &TestApp, who: &Creds) -> Response {
    app.as_user(who, Method::GET, "/navigation_views").send().await.unwrap()
}

fn listing(views: Value) -> Value {
    json!({"result": "success", "msg": "", "navigation_views": views})
}

/// "Navigation view does not exist." with the spec's `NOT_FOUND` (section 7).
fn absent() -> Value {
    json!({"result": "error", "msg": "Navigation view does not exist.", "code": "NOT_FOUND"})
}

#[actix_web::test]
async fn views_change_with_events_on_each_queue_of_their_owner_only() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let mut phone = Watch::new(&app, &hamlet, r#"["navigation_view"]"#).await;
    let mut laptop = Watch::new(&app, &hamlet, r#"["navigation_view"]"#).await;
    let mut theirs = Watch::new(&app, &othello, r#"["navigation_view"]"#).await;
    expect(listed(&app, &hamlet).await, 200, listing(json!([]))).await;

    expect(add(&app, &hamlet, &[("fragment", " recent "), ("is_pinned", "true")]).await, 200, success()).await;
    let recent = json!({"fragment": "recent", "is_pinned": true, "name": null});
    let event = json!({"type": "navigation_view", "op": "add", "navigation_view": recent});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    let form = [("fragment", "narrow/is/alerted"), ("is_pinned", "false"), ("name", " Alert words "), ("x", "1")];
    let ignored = json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["x"]});
    expect(add(&app, &hamlet, &form).await, 200, ignored).await;
    let alerted = json!({"fragment": "narrow/is/alerted", "is_pinned": false, "name": "Alert words"});
    let event = json!({"type": "navigation_view", "op": "add", "navigation_view": alerted});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    expect(listed(&app, &hamlet).await, 200, listing(json!([recent, alerted]))).await;

    // The fragment in the path keeps its slashes, raw or encoded.
    expect(
        update(&app, &hamlet, "narrow/is/alerted", &[("name", "Alerts"), ("is_pinned", "true")]).await,
        200,
        success(),
    )
    .await;
    let event = json!({"type": "navigation_view", "op": "update", "fragment": "narrow/is/alerted",
                       "data": {"name": "Alerts", "is_pinned": true}});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    expect(update(&app, &hamlet, "narrow%2Fis%2Falerted", &[("is_pinned", "false")]).await, 200, success()).await;
    let event = json!({"type": "navigation_view", "op": "update", "fragment": "narrow/is/alerted",
                       "data": {"is_pinned": false}});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    let alerted = json!({"fragment": "narrow/is/alerted", "is_pinned": false, "name": "Alerts"});
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["navigation_views"]"#)]).await;
    assert_eq!(state["navigation_views"], json!([recent, alerted]));

    // Views are personal: another user neither sees nor changes them.
    expect(listed(&app, &othello).await, 200, listing(json!([]))).await;
    expect(update(&app, &othello, "recent", &[("is_pinned", "false")]).await, 404, absent()).await;
    expect(remove(&app, &othello, "recent").await, 404, absent()).await;
    expect(add(&app, &othello, &[("fragment", "recent"), ("is_pinned", "false")]).await, 200, success()).await;
    let state = register(&app, &othello, &[("fetch_event_types", r#"["navigation_views"]"#)]).await;
    assert_eq!(state["navigation_views"], json!([{"fragment": "recent", "is_pinned": false, "name": null}]));
    assert_eq!(theirs.events(&app).await.len(), 1, "only their own view");

    expect(remove(&app, &hamlet, "recent").await, 200, success()).await;
    let event = json!({"type": "navigation_view", "op": "remove", "fragment": "recent"});
    assert_eq!(phone.events(&app).await, vec![event.clone()]);
    assert_eq!(laptop.events(&app).await, vec![event]);
    expect(remove(&app, &hamlet, "narrow%2Fis%2Falerted").await, 200, success()).await;
    let event = json!({"type": "navigation_view", "op": "remove", "fragment": "narrow/is/alerted"});
    assert_eq!(phone.events(&app).await, vec![event]);
    expect(remove(&app, &hamlet, "recent").await, 404, absent()).await;
    expect(listed(&app, &hamlet).await, 200, listing(json!([]))).await;
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn refusals_are_zulips_in_zulips_order() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["navigation_view"]"#).await;
    expect(add(&app, &hamlet, &[("fragment", "inbox"), ("is_pinned", "true")]).await, 200, success()).await;
    let form = [("fragment", "narrow/is/dm"), ("is_pinned", "true"), ("name", "DMs")];
    expect(add(&app, &hamlet, &form).await, 200, success()).await;
    assert_eq!(watch.events(&app).await.len(), 2);

    let exists = "Navigation view already exists.";
    let refusals: &[(&[(&str, &str)], Value)] = &[
        (&[("is_pinned", "true")], missing("fragment")),
        (&[("fragment", "  "), ("is_pinned", "yes")], error("fragment cannot be blank")),
        (&[("fragment", "feed")], missing("is_pinned")),
        (&[("fragment", "feed"), ("is_pinned", "yes")], error("is_pinned is not valid JSON")),
        (&[("fragment", "feed"), ("is_pinned", "1")], error("is_pinned is not a boolean")),
        (&[("fragment", "feed"), ("is_pinned", "true"), ("name", " ")], error("name cannot be blank")),
        (
            &[("fragment", "feed"), ("is_pinned", "true"), ("name", "Feed")],
            error("Built-in views cannot have a custom name."),
        ),
        (
            &[("fragment", "narrow/is/starred"), ("is_pinned", "true"), ("name", "Stars")],
            error("Built-in views cannot have a custom name."),
        ),
        (&[("fragment", "narrow/view"), ("is_pinned", "true")], error("Custom views must have a valid name.")),
        (&[("fragment", " inbox"), ("is_pinned", "false")], error(exists)),
        (&[("fragment", "narrow/is/dm"), ("is_pinned", "false"), ("name", "Other")], error(exists)),
        (&[("fragment", "narrow/other"), ("is_pinned", "false"), ("name", "DMs")], error(exists)),
    ];
    for (form, body) in refusals {
        expect(add(&app, &hamlet, form).await, 400, body.clone()).await;
    }
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], u16, Value);
    let updates: &[Case<'_>] = &[
        ("inbox", &[("name", "Mine")], 400, error("Built-in views cannot have a custom name.")),
        ("inbox", &[("is_pinned", "maybe")], 400, error("is_pinned is not valid JSON")),
        ("inbox", &[("name", "")], 400, error("name cannot be blank")),
        // A name in use comes before the view is looked up (even the view's own name).
        ("narrow/is/dm", &[("name", "DMs")], 400, error(exists)),
        ("nowhere", &[("name", "DMs")], 400, error(exists)),
        ("nowhere", &[("is_pinned", "true")], 404, absent()),
        ("narrow/is", &[("is_pinned", "true")], 404, absent()),
    ];
    for (fragment, form, status, body) in updates {
        expect(update(&app, &hamlet, fragment, form).await, *status, body.clone()).await;
    }
    expect(remove(&app, &hamlet, "narrow/is/dm/extra").await, 404, absent()).await;
    let not_allowed = json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["PATCH", "DELETE"]});
    let response = app.as_user(&hamlet, Method::GET, "/navigation_views/inbox").send().await.unwrap();
    expect(response, 405, not_allowed).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    // Changing nothing still tells the clients, as in Zulip.
    expect(update(&app, &hamlet, "inbox", &[]).await, 200, success()).await;
    let event = json!({"type": "navigation_view", "op": "update", "fragment": "inbox", "data": {}});
    assert_eq!(watch.events(&app).await, vec![event]);
    app.stop().await;
}
