//! Emoji over HTTP: the emoji data file `server_emoji_data_url` names (served without
//! authentication, cacheable), `realm_emoji` in register and `GET /realm/emoji`, and
//! reactions and rendering with names from the whole Unicode table.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, register, send, spawn_app, success, Creds, TestApp, Watch, HOST};

/// A request without credentials to `path` (outside `/api/v1`).
async fn fetch(app: &TestApp, method: Method, path: &str, if_none_match: Option<&str>) -> Response {
    let mut request = app.client.request(method, format!("{}{path}", app.address)).header("Host", HOST);
    if let Some(tag) = if_none_match {
        request = request.header("If-None-Match", tag);
    }
    request.send().await.unwrap()
}

fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

/// The path of the emoji data URL register advertises.
async fn advertised_path(app: &TestApp) -> String {
    let state = register(app, &app.owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    let url = state["server_emoji_data_url"].as_str().unwrap().to_owned();
    let start = url.find("/static/").unwrap_or_else(|| panic!("{url}"));
    url[start..].to_owned()
}

#[actix_web::test]
async fn the_emoji_data_file_is_served_where_register_says() {
    let app = spawn_app().await;
    let path = advertised_path(&app).await;
    let hash = path.strip_prefix("/static/generated/emoji/emoji_api.").and_then(|p| p.strip_suffix(".json")).unwrap();
    assert!(hash.len() == 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{path}");

    let response = fetch(&app, Method::GET, &path, None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    assert_eq!(header(&response, "cache-control"), Some("public, max-age=31536000, immutable"));
    assert_eq!(header(&response, "access-control-allow-origin"), Some("*"));
    let etag = format!("\"{hash}\"");
    assert_eq!(header(&response, "etag"), Some(etag.as_str()));
    let data: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let code_to_names = data["code_to_names"].as_object().unwrap();
    assert_eq!(data.as_object().unwrap().len(), 1);
    assert!(code_to_names.len() > 1800, "{} emoji", code_to_names.len());
    assert_eq!(code_to_names["1f419"], json!(["octopus"]));
    assert_eq!(code_to_names["1f951"], json!(["avocado"]));
    assert_eq!(code_to_names["1f44d"], json!(["+1", "thumbs_up", "like"]));
    assert_eq!(code_to_names["1f3f3-200d-1f308"][0], json!("rainbow_flag"));

    // HEAD, a revalidation, and the unhashed name (revalidated each time).
    let head = fetch(&app, Method::HEAD, &path, None).await;
    assert_eq!((head.status().as_u16(), header(&head, "etag")), (200, Some(etag.as_str())));
    assert!(head.bytes().await.unwrap().is_empty());
    let unchanged = fetch(&app, Method::GET, &path, Some(&etag)).await;
    assert_eq!(unchanged.status(), 304);
    assert!(unchanged.bytes().await.unwrap().is_empty());
    let unhashed = fetch(&app, Method::GET, "/static/generated/emoji/emoji_api.json", None).await;
    assert_eq!(unhashed.status(), 200);
    assert_eq!(header(&unhashed, "cache-control"), Some("public, no-cache"));
    assert_eq!(header(&unhashed, "etag"), Some(etag.as_str()));
    assert_eq!(serde_json::from_slice::<Value>(&unhashed.bytes().await.unwrap()).unwrap(), data);

    // Another hash names no file; the file is only read.
    let stale = fetch(&app, Method::GET, "/static/generated/emoji/emoji_api.000000000000.json", None).await;
    assert_eq!(stale.status(), 404);
    assert_eq!(fetch(&app, Method::POST, &path, None).await.status(), 405);
    app.stop().await;
}

#[actix_web::test]
async fn register_has_realm_emoji_and_get_realm_emoji_lists_the_custom_emoji() {
    let app = spawn_app().await;
    let state = register(&app, &app.owner, &[]).await;
    assert_eq!(state["realm_emoji"], json!({}));
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_emoji"]"#)]).await;
    assert_eq!(state["realm_emoji"], json!({}));
    assert!(state.get("server_emoji_data_url").is_none());
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["message"]"#)]).await;
    assert!(state.get("realm_emoji").is_none());

    let response = app.as_user(&app.owner, Method::GET, "/realm/emoji").send().await.unwrap();
    expect(response, 200, json!({"result": "success", "msg": "", "emoji": {}})).await;
    let anonymous = app.request(Method::GET, "/realm/emoji").send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    app.stop().await;
}

/// A direct message from `who` to themselves.
async fn note(app: &TestApp, who: &Creds, content: &str) -> i64 {
    let to = json!([who.user_id]).to_string();
    let form = [("type", "direct"), ("to", to.as_str()), ("content", content)];
    let (status, body) = json(send(app, who, Method::POST, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn message(app: &TestApp, who: &Creds, id: i64) -> Value {
    let (status, body) = json(send(app, who, Method::GET, &format!("/messages/{id}"), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["message"].clone()
}

async fn react(app: &TestApp, who: &Creds, id: i64, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::POST, &format!("/messages/{id}/reactions"), form).await
}

#[actix_web::test]
async fn reactions_take_any_name_of_the_table() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let id = note(&app, &owner, "lunch?").await;
    let mut watch = Watch::new(&app, &owner, r#"["reaction"]"#).await;
    // By name alone (the Python client's `add_reaction`), by alias, and a sequence by name
    // and code.
    expect(react(&app, &owner, id, &[("emoji_name", "avocado")]).await, 200, success()).await;
    expect(react(&app, &owner, id, &[("emoji_name", "like")]).await, 200, success()).await;
    let flag = [("emoji_name", "rainbow_flag"), ("emoji_code", "1f3f3-200d-1f308"), ("reaction_type", "unicode_emoji")];
    expect(react(&app, &owner, id, &flag).await, 200, success()).await;
    // Zulip's errors for a name and code that do not agree, and for the qualified code.
    let wrong_code = [("emoji_name", "avocado"), ("emoji_code", "1f419")];
    expect(react(&app, &owner, id, &wrong_code).await, 400, error("Invalid emoji name.")).await;
    let qualified = [("emoji_name", "rainbow_flag"), ("emoji_code", "1f3f3-fe0f-200d-1f308")];
    expect(react(&app, &owner, id, &qualified).await, 400, error("Invalid emoji code.")).await;
    expect(
        react(&app, &owner, id, &[("emoji_name", "not_an_emoji")]).await,
        400,
        error("Emoji 'not_an_emoji' does not exist"),
    )
    .await;

    let expected: Vec<Value> = [("avocado", "1f951"), ("like", "1f44d"), ("rainbow_flag", "1f3f3-200d-1f308")]
        .iter()
        .map(|(name, code)| {
            json!({"type": "reaction", "op": "add", "user_id": owner.user_id, "message_id": id,
                   "emoji_name": name, "emoji_code": code, "reaction_type": "unicode_emoji"})
        })
        .collect();
    let events = watch.events(&app).await;
    assert_eq!(events, expected);

    // The message lists them too (in whatever order messages list reactions).
    let mut reactions: Vec<(String, String)> = message(&app, &owner, id).await["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["emoji_name"].as_str().unwrap().to_owned(), r["emoji_code"].as_str().unwrap().to_owned()))
        .collect();
    reactions.sort();
    let names = [("avocado", "1f951"), ("like", "1f44d"), ("rainbow_flag", "1f3f3-200d-1f308")];
    assert_eq!(reactions, names.map(|(n, c)| (n.to_owned(), c.to_owned())));
    app.stop().await;
}

#[actix_web::test]
async fn messages_render_names_of_the_whole_table() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let id = note(&app, &owner, ":avocado: :thumbs_up: :rainbow_flag: :nope: :not_an_emoji:").await;
    assert_eq!(
        message(&app, &owner, id).await["content"],
        json!(
            "<p><span aria-label=\"avocado\" class=\"emoji emoji-1f951\" role=\"img\" title=\"avocado\">:avocado:</span> \
             <span aria-label=\"thumbs up\" class=\"emoji emoji-1f44d\" role=\"img\" title=\"thumbs up\">:thumbs_up:</span> \
             <span aria-label=\"rainbow flag\" class=\"emoji emoji-1f3f3-200d-1f308\" role=\"img\" title=\"rainbow flag\">:rainbow_flag:</span> \
             <span aria-label=\"nope\" class=\"emoji emoji-1f645\" role=\"img\" title=\"nope\">:nope:</span> :not_an_emoji:</p>"
        )
    );
    app.stop().await;
}
