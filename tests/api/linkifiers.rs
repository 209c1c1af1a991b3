//! Linkifiers over HTTP (`GET /realm/linkifiers`, `POST /realm/filters`, `PATCH` and
//! `DELETE /realm/filters/{filter_id}`, `PATCH /realm/linkifiers`): who may change them,
//! Zulip's errors, the `realm_linkifiers` event and data sets per the
//! `linkifier_url_template` capability; their effect on rendered messages and `topic_links`;
//! and `POST /messages/render`.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, missing, post, register, send, spawn_app, success, Creds, TestApp, Watch};

const TRAC: (&str, &str) = ("#(?P<id>[0-9]+)", "https://trac.example.com/ticket/{id}");
const GITHUB: (&str, &str) =
    ("(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)", "https://github.com/{org}/{repo}/issues/{id}");

async fn add(app: &TestApp, who: &Creds, pattern: &str, url_template: &str) -> Response {
    post(app, who, "/realm/filters", &[("pattern", pattern), ("url_template", url_template)]).await
}

async fn added(app: &TestApp, (pattern, url_template): (&str, &str)) -> i64 {
    let (status, body) = json(add(app, &app.owner, pattern, url_template).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn listed(app: &TestApp, who: &Creds) -> Value {
    let (status, body) = json(app.as_user(who, Method::GET, "/realm/linkifiers").send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["linkifiers"].clone()
}

fn entry((pattern, url_template): (&str, &str), id: i64) -> Value {
    json!({"pattern": pattern, "url_template": url_template, "id": id,
           "example_input": null, "reverse_template": null, "alternative_url_templates": []})
}

fn event(list: Value) -> Vec<Value> {
    vec![json!({"type": "realm_linkifiers", "realm_linkifiers": list})]
}

/// A refused linkifier: the first message, and all of them by field.
fn invalid(msg: &str, errors: Value) -> Value {
    json!({"result": "error", "msg": msg, "errors": errors, "code": "BAD_REQUEST"})
}

/// A queue of `who` for `realm_linkifiers` events, registered without the
/// `linkifier_url_template` capability.
async fn legacy_watch(app: &TestApp, who: &Creds) -> Watch {
    let form = [
        ("event_types", r#"["realm_linkifiers", "realm_filters"]"#),
        ("client_capabilities", r#"{"notification_settings_null": true}"#),
    ];
    Watch::with_form(app, who, &form).await
}

#[actix_web::test]
async fn only_administrators_change_linkifiers_and_everyone_capable_is_told() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "King Hamlet", 400).await;
    let admin_only =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    // The role is checked before any parameter, as Zulip's `require_realm_admin`.
    expect(post(&app, &hamlet, "/realm/filters", &[]).await, 400, admin_only.clone()).await;
    expect(send(&app, &hamlet, Method::DELETE, "/realm/filters/15", &[]).await, 400, admin_only.clone()).await;
    expect(send(&app, &hamlet, Method::PATCH, "/realm/filters/15", &[]).await, 400, admin_only.clone()).await;
    let reorder = [("ordered_linkifier_ids", "[]")];
    expect(send(&app, &hamlet, Method::PATCH, "/realm/linkifiers", &reorder).await, 400, admin_only).await;
    // Zulip serves no `GET /realm/filters` any more.
    let response = app.as_user(&hamlet, Method::GET, "/realm/filters").send().await.unwrap();
    expect(response, 405, json!({"result": "error", "msg": "Method Not Allowed", "allowed_methods": ["POST"]})).await;

    let mut watch = Watch::new(&app, &hamlet, r#"["realm_linkifiers", "realm_filters"]"#).await;
    let mut legacy = legacy_watch(&app, &hamlet).await;
    let (status, body) = json(add(&app, &app.owner, &format!("  {} ", TRAC.0), TRAC.1).await).await;
    let trac = body["id"].as_i64().unwrap();
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "id": trac})));
    assert_eq!(watch.events(&app).await, event(json!([entry(TRAC, trac)])));
    let github = added(&app, GITHUB).await;
    let both = json!([entry(TRAC, trac), entry(GITHUB, github)]);
    assert_eq!(watch.events(&app).await, event(both.clone()));
    assert_eq!(listed(&app, &hamlet).await, both);

    let update = [("pattern", "#(?P<id>[0-9]{1,6})"), ("url_template", "https://trac.example.com/t/{id}")];
    let path = format!("/realm/filters/{}", github + 100);
    expect(send(&app, &app.owner, Method::PATCH, &path, &update).await, 400, error("Linkifier not found.")).await;
    let path = format!("/realm/filters/{trac}");
    expect(send(&app, &app.owner, Method::PATCH, &path, &update[..1]).await, 400, missing("url_template")).await;
    expect(send(&app, &app.owner, Method::PATCH, &path, &update).await, 200, success()).await;
    let changed = entry((update[0].1, update[1].1), trac);
    assert_eq!(watch.events(&app).await, event(json!([changed, entry(GITHUB, github)])));

    let call = |ids: Value| {
        let request = app.as_user(&app.owner, Method::PATCH, "/realm/linkifiers");
        let request = request.form(&[("ordered_linkifier_ids", ids.to_string())]);
        async move { request.send().await.unwrap() }
    };
    let duplicated = error("The ordered list must not contain duplicated linkifiers");
    expect(call(json!([github, trac, github])).await, 400, duplicated).await;
    let incomplete = error("The ordered list must enumerate all existing linkifiers exactly once");
    expect(call(json!([github])).await, 400, incomplete.clone()).await;
    expect(call(json!([github, trac, trac + 1000])).await, 400, incomplete).await;
    expect(call(json!([github, trac])).await, 200, success()).await;
    let reordered = json!([entry(GITHUB, github), changed]);
    assert_eq!(watch.events(&app).await, event(reordered.clone()));
    assert_eq!(listed(&app, &app.owner).await, reordered);
    // A new linkifier comes last.
    let third = added(&app, ("3#123", "https://example.com")).await;
    assert_eq!(listed(&app, &hamlet).await[2]["id"], json!(third));
    watch.events(&app).await;

    let path = format!("/realm/filters/{}", third + 1);
    expect(send(&app, &app.owner, Method::DELETE, &path, &[]).await, 400, error("Linkifier not found.")).await;
    for id in [github, trac, third] {
        let path = format!("/realm/filters/{id}");
        expect(send(&app, &app.owner, Method::DELETE, &path, &[]).await, 200, success()).await;
    }
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 3);
    assert_eq!(events[2], event(json!([]))[0]);
    // Nothing to order: no event.
    expect(call(json!([])).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    // A client without `linkifier_url_template` got none of it (no legacy `realm_filters`
    // either, as Zulip has stopped sending them).
    assert_eq!(legacy.events(&app).await, Vec::<Value>::new());
}

#[actix_web::test]
async fn patterns_and_templates_are_checked_as_zulip_checks_them() {
    let app = spawn_app().await;
    let owner = &app.owner;
    expect(post(&app, owner, "/realm/filters", &[("url_template", "x")]).await, 400, missing("pattern")).await;
    expect(post(&app, owner, "/realm/filters", &[("pattern", "x")]).await, 400, missing("url_template")).await;
    let blank = json!(["This field cannot be blank."]);
    let both_blank = invalid("This field cannot be blank.", json!({"pattern": blank, "url_template": blank}));
    expect(add(&app, owner, " ", "").await, 400, both_blank).await;
    let cases: &[(&str, &str, &str, Value)] = &[
        (
            "(foo",
            "https://e.com",
            "Bad regular expression: missing ): (foo",
            json!({"__all__": ["Bad regular expression: missing ): (foo"]}),
        ),
        (
            r"ZUL-(?P<id>\d????)",
            "https://e.com/{id}",
            "Bad regular expression: bad repetition operator: ????",
            Value::Null,
        ),
        // Lookaround is not RE2 (nor Rust's regex): refused with RE2's message.
        (
            r"(?<=\s)#(?P<id>\d+)",
            "https://e.com/{id}",
            "Bad regular expression: invalid perl operator: (?<=",
            Value::Null,
        ),
        (r"(?P<id>\d+)\1", "https://e.com/{id}", r"Bad regular expression: invalid escape sequence: \1", Value::Null),
        (r"ZUL-(?P<id>\d+)", "$fgfg", "Group 'id' in linkifier pattern is not present in URL template.", Value::Null),
        (
            r"ZUL-(?P<id>\d+)",
            "https://e.com/{hello}",
            "Group 'hello' in URL template is not present in linkifier pattern.",
            Value::Null,
        ),
        (r"#(?P<id>[123])", "{id", "Invalid URL template.", json!({"url_template": ["Invalid URL template."]})),
    ];
    for (pattern, template, msg, errors) in cases {
        let errors = if errors.is_null() { json!({"__all__": [msg]}) } else { errors.clone() };
        expect(add(&app, owner, pattern, template).await, 400, invalid(msg, errors)).await;
    }
    let zulip_examples = [
        (r"ZUL-(?P<id>\d+)", "https://realm.com/my_realm_filter/#hashtag/{id}"),
        (r"PR (?P<id>[0-9]+)", "https://example.com/~user/web#view_type=type&model=model&action=12345&id={id}"),
        (r"ZUL-URL-(?P<id>\d+)", "https://example.com/%ba/{id}"),
        (
            r"FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})",
            "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}",
        ),
    ];
    for example in zulip_examples {
        added(&app, example).await;
    }
    let duplicate = "Realm filter with this Realm and Pattern already exists.";
    let response = add(&app, owner, r"ZUL-(?P<id>\d+)", "https://other.com/{id}").await;
    expect(response, 400, invalid(duplicate, json!({"__all__": [duplicate]}))).await;
    assert_eq!(listed(&app, owner).await.as_array().unwrap().len(), 4);
}

#[actix_web::test]
async fn data_sets_follow_the_url_template_capability() {
    let app = spawn_app().await;
    let trac = added(&app, TRAC).await;
    let fetch = [("fetch_event_types", r#"["realm_linkifiers", "realm_filters"]"#)];
    let modern =
        [fetch[0], ("client_capabilities", r#"{"notification_settings_null": true, "linkifier_url_template": true}"#)];
    let state = register(&app, &app.owner, &modern).await;
    assert_eq!(state["realm_linkifiers"], json!([entry(TRAC, trac)]));
    assert_eq!(state["realm_filters"], json!([]));
    let state = register(&app, &app.owner, &fetch).await;
    assert_eq!((&state["realm_linkifiers"], &state["realm_filters"]), (&json!([]), &json!([])));
}

/// Sends `content` to `channel` under `topic`; its id.
async fn to_channel(app: &TestApp, channel: &str, topic: &str, content: &str) -> i64 {
    let form = [("type", "channel"), ("to", channel), ("topic", topic), ("content", content)];
    let (status, body) = json(post(app, &app.owner, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn fetched(app: &TestApp, id: i64) -> Value {
    let query = [("anchor", id.to_string()), ("num_before", "0".into()), ("num_after", "0".into())];
    let response = app.as_user(&app.owner, Method::GET, "/messages").query(&query).send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body["messages"][0].clone()
}

#[actix_web::test]
async fn messages_are_linkified_in_order_and_topics_get_their_links() {
    let app = spawn_app().await;
    let subscribers = json!([app.owner.user_id]).to_string();
    let form = [("name", "dev"), ("subscribers", subscribers.as_str())];
    let (status, body) = json(post(&app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    added(&app, TRAC).await;
    let github = added(&app, GITHUB).await;
    let mut watch = Watch::new(&app, &app.owner, r#"["message", "update_message"]"#).await;

    let content = "See #123, zulip/zulip#9 and (#10) but not issue#7, #8z, `#4`, [#5](https://b.com/#6) \
                   https://a.com/#6 or\n```\n#11\n```";
    let id = to_channel(&app, "dev", "#77 see https://zulip.com/x.", content).await;
    let rendered = "<p>See <a href=\"https://trac.example.com/ticket/123\">#123</a>, \
                    <a href=\"https://github.com/zulip/zulip/issues/9\">zulip/zulip#9</a> and \
                    (<a href=\"https://trac.example.com/ticket/10\">#10</a>) but not issue#7, #8z, <code>#4</code>, \
                    <a href=\"https://b.com/#6\">#5</a> <a href=\"https://a.com/#6\">https://a.com/#6</a> or</p>\n\
                    <div class=\"codehilite\"><pre><span></span><code>#11\n</code></pre></div>";
    let topic_links = json!([
        {"text": "#77", "url": "https://trac.example.com/ticket/77"},
        {"text": "https://zulip.com/x", "url": "https://zulip.com/x"},
    ]);
    let events = watch.events(&app).await;
    assert_eq!(events[0]["message"]["topic_links"], topic_links);
    let message = fetched(&app, id).await;
    assert_eq!((&message["content"], &message["topic_links"]), (&json!(rendered), &topic_links));

    // Rendered messages keep their HTML when the linkifiers change; topic links are
    // computed when messages are shown.
    let path = format!("/realm/filters/{github}");
    expect(send(&app, &app.owner, Method::DELETE, &path, &[]).await, 200, success()).await;
    assert_eq!(fetched(&app, id).await["content"], json!(rendered));
    let edit = [("topic", "zulip/zulip#3 and #4"), ("propagate_mode", "change_one")];
    let (status, body) = json(send(&app, &app.owner, Method::PATCH, &format!("/messages/{id}"), &edit).await).await;
    assert_eq!(status, 200, "{body}");
    let events = watch.events(&app).await;
    let links = json!([{"text": "#4", "url": "https://trac.example.com/ticket/4"}]);
    assert_eq!(events[0]["topic_links"], links);
    assert_eq!(fetched(&app, id).await["topic_links"], links);
    // A direct message has no topic, hence no topic links.
    let to = json!([app.owner.user_id]).to_string();
    let form = [("type", "direct"), ("to", to.as_str()), ("content", "#1")];
    let (_, body) = json(post(&app, &app.owner, "/messages", &form).await).await;
    let dm = fetched(&app, body["id"].as_i64().unwrap()).await;
    assert_eq!(
        (&dm["topic_links"], &dm["content"]),
        (&json!([]), &json!("<p><a href=\"https://trac.example.com/ticket/1\">#1</a></p>"))
    );
}

#[actix_web::test]
async fn render_previews_as_sending_would_and_stores_nothing() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "King Hamlet", 400).await;
    added(&app, TRAC).await;
    let render = |who: &Creds, form: Vec<(&'static str, String)>| {
        let request = app.as_user(who, Method::POST, "/messages/render").form(&form);
        async move { request.send().await.unwrap() }
    };
    let content = "**Hi** @**King Hamlet**, see #12 :octopus:".to_owned();
    let expected = format!(
        "<p><strong>Hi</strong> <span class=\"user-mention\" data-user-id=\"{}\">@King Hamlet</span>, see \
         <a href=\"https://trac.example.com/ticket/12\">#12</a> <span aria-label=\"octopus\" class=\"emoji \
         emoji-1f419\" role=\"img\" title=\"octopus\">:octopus:</span></p>",
        hamlet.user_id
    );
    let ok = |rendered: &str| json!({"result": "success", "msg": "", "rendered": rendered});
    expect(render(&hamlet, vec![("content", content.clone())]).await, 200, ok(&expected)).await;
    expect(render(&hamlet, vec![("content", String::new())]).await, 200, ok("")).await;
    expect(render(&hamlet, vec![]).await, 400, missing("content")).await;
    let long = "a".repeat(10_001);
    let too_long = error("content is too long (limit: 10000 characters)");
    expect(render(&hamlet, vec![("content", long)]).await, 400, too_long).await;
    // Nothing was sent.
    let query = [("anchor", "newest"), ("num_before", "10"), ("num_after", "0")];
    let response = app.as_user(&hamlet, Method::GET, "/messages").query(&query).send().await.unwrap();
    let (_, body) = json(response).await;
    let mentioning: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["content"].as_str().unwrap().contains("#12"))
        .collect();
    assert!(mentioning.is_empty(), "{body}");
}

/// Reverse linkification (FL 471, 478): `example_input`, `reverse_template` and
/// `alternative_url_templates` are stored, listed and sent; an update keeps what it does not
/// name and an empty text clears it; a reverse template must give its example back.
#[actix_web::test]
async fn reverse_templates_and_alternative_urls_are_kept_with_the_linkifier() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let mut watch = Watch::new(&app, &owner, r#"["realm_linkifiers"]"#).await;
    let form = [
        ("pattern", TRAC.0),
        ("url_template", TRAC.1),
        ("example_input", "#42"),
        ("reverse_template", "#{id}"),
        ("alternative_url_templates", r#"["https://old.example.com/t/{id}"]"#),
    ];
    let (status, body) = json(post(&app, &owner, "/realm/filters", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    let full = json!({"pattern": TRAC.0, "url_template": TRAC.1, "id": id, "example_input": "#42",
                      "reverse_template": "#{id}", "alternative_url_templates": ["https://old.example.com/t/{id}"]});
    assert_eq!(listed(&app, &owner).await, json!([full.clone()]));
    assert_eq!(watch.events(&app).await, event(json!([full.clone()])));

    let path = format!("/realm/filters/{id}");
    let form = [("pattern", TRAC.0), ("url_template", TRAC.1), ("reverse_template", "")];
    expect(send(&app, &owner, Method::PATCH, &path, &form).await, 200, success()).await;
    let mut kept = full.clone();
    kept["reverse_template"] = json!(null);
    assert_eq!(listed(&app, &owner).await, json!([kept]));

    let form = [("pattern", TRAC.0), ("url_template", TRAC.1), ("reverse_template", "# {id}")];
    expect(
        send(&app, &owner, Method::PATCH, &path, &form).await,
        400,
        error("Reverse template does not reproduce the example input."),
    )
    .await;
    let form = [("pattern", TRAC.0), ("url_template", TRAC.1), ("alternative_url_templates", "nope")];
    let (status, _) = json(send(&app, &owner, Method::PATCH, &path, &form).await).await;
    assert_eq!(status, 400);

    // They survive a restart.
    let dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let app = crate::helpers::spawn_app_at(&dir).await;
    let after = listed(&app, &owner).await;
    assert_eq!(after[0]["alternative_url_templates"], json!(["https://old.example.com/t/{id}"]));
    assert_eq!(after[0]["example_input"], json!("#42"));
    app.stop().await;
    drop(tmp);
}
