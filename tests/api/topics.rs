//! Personal channel and topic settings over HTTP: subscription properties, topic
//! visibility policies, legacy topic muting, the topics of a channel, their register data
//! sets and events. Messages are sent with `POST /messages`.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, register, send, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

/// Client capabilities of a client without `empty_topic_name`.
const OLD_CAPABILITIES: &str = r#"{"notification_settings_null":true,"user_settings_object":true}"#;

/// A channel created by the owner over `POST /channels/create`, with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, public_history: bool, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let (invite_only, public_history) = (invite_only.to_string(), public_history.to_string());
    let form = [
        ("name", name),
        ("subscribers", ids.as_str()),
        ("invite_only", invite_only.as_str()),
        ("history_public_to_subscribers", public_history.as_str()),
    ];
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// A channel message sent over `POST /messages`.
async fn message(app: &TestApp, sender: &Creds, channel: i64, topic: &str) -> i64 {
    let channel = channel.to_string();
    let form = [("type", "stream"), ("to", channel.as_str()), ("topic", topic), ("content", "hello")];
    let (status, body) = json(send(app, sender, Method::POST, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// The owner subscribes (or unsubscribes) `who` over the subscription endpoints.
async fn subscribe(app: &TestApp, who: &Creds, channel: i64, active: bool) {
    let (_, body) = json(send(app, &app.owner, Method::GET, &format!("/streams/{channel}"), &[]).await).await;
    let name = body["stream"]["name"].as_str().unwrap().to_owned();
    let principals = json!([who.user_id]).to_string();
    let response = if active {
        let subscriptions = json!([{"name": name}]).to_string();
        let form = [("subscriptions", subscriptions.as_str()), ("principals", principals.as_str())];
        send(app, &app.owner, Method::POST, "/users/me/subscriptions", &form).await
    } else {
        let subscriptions = json!([name]).to_string();
        let form = [("subscriptions", subscriptions.as_str()), ("principals", principals.as_str())];
        send(app, &app.owner, Method::DELETE, "/users/me/subscriptions", &form).await
    };
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
}

/// `who`'s subscription object for a channel, from their register data (notification
/// settings left null when they inherit).
async fn subscription(app: &TestApp, who: &Creds, channel: i64) -> Value {
    let fetch = [
        ("fetch_event_types", r#"["subscription"]"#),
        ("client_capabilities", r#"{"notification_settings_null":true}"#),
    ];
    let state = register(app, who, &fetch).await;
    let all = state["subscriptions"].as_array().unwrap().iter().chain(state["unsubscribed"].as_array().unwrap());
    all.into_iter().find(|s| s["stream_id"] == channel).cloned().unwrap()
}

async fn properties(app: &TestApp, who: &Creds, data: Value) -> Response {
    let data = data.to_string();
    send(app, who, Method::POST, "/users/me/subscriptions/properties", &[("subscription_data", &data)]).await
}

async fn user_topic(app: &TestApp, who: &Creds, channel: i64, topic: &str, policy: &str) -> Response {
    let channel = channel.to_string();
    let form = [("stream_id", channel.as_str()), ("topic", topic), ("visibility_policy", policy)];
    send(app, who, Method::POST, "/user_topics", &form).await
}

async fn mute(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::PATCH, "/users/me/subscriptions/muted_topics", form).await
}

async fn topics(app: &TestApp, who: &Creds, channel: i64, query: &str) -> Response {
    app.as_user(who, Method::GET, &format!("/users/me/{channel}/topics{query}")).send().await.unwrap()
}

fn update(channel: i64, property: &str, value: Value) -> Value {
    json!({"type": "subscription", "op": "update", "property": property, "value": value, "stream_id": channel})
}

/// The events' `last_updated`, checked to be a timestamp and replaced by 0.
fn without_timestamps(mut events: Vec<Value>) -> Vec<Value> {
    for event in &mut events {
        if let Some(ts) = event.get_mut("last_updated") {
            assert!(ts.as_i64().is_some_and(|t| t > 0), "{ts}");
            *ts = json!(0);
        }
        if let Some(Value::Array(muted)) = event.get_mut("muted_topics") {
            for entry in muted {
                assert!(entry[2].as_i64().is_some_and(|t| t > 0), "{entry}");
                entry[2] = json!(0);
            }
        }
    }
    events
}

#[actix_web::test]
async fn subscription_properties_change_and_notify_only_the_user() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice, &bob]).await;
    let mut alice_watch = Watch::new(&app, &alice, r#"["subscription"]"#).await;
    let mut bob_watch = Watch::new(&app, &bob, r#"["subscription"]"#).await;

    let data = json!([
        {"stream_id": id, "property": "color", "value": "#a1b2c3"},
        {"stream_id": id, "property": "is_muted", "value": true},
        {"stream_id": id, "property": "pin_to_top", "value": true},
        {"stream_id": id, "property": "desktop_notifications", "value": false},
        {"stream_id": id, "property": "wildcard_mentions_notify", "value": true},
    ]);
    let data = data.to_string();
    let response = send(
        &app,
        &alice,
        Method::POST,
        "/users/me/subscriptions/properties",
        &[("subscription_data", &data), ("extra", "1")],
    )
    .await;
    expect(response, 200, json!({"result": "success", "msg": "", "ignored_parameters_unsupported": ["extra"]})).await;
    assert_eq!(
        alice_watch.events(&app).await,
        vec![
            update(id, "color", json!("#a1b2c3")),
            update(id, "in_home_view", json!(false)),
            update(id, "is_muted", json!(true)),
            update(id, "pin_to_top", json!(true)),
            update(id, "desktop_notifications", json!(false)),
            update(id, "wildcard_mentions_notify", json!(true)),
        ]
    );
    let sub = subscription(&app, &alice, id).await;
    assert_eq!(
        (
            &sub["color"],
            &sub["is_muted"],
            &sub["pin_to_top"],
            &sub["desktop_notifications"],
            &sub["wildcard_mentions_notify"]
        ),
        (&json!("#a1b2c3"), &json!(true), &json!(true), &json!(false), &json!(true))
    );
    assert_eq!(sub["audible_notifications"], Value::Null);

    // in_home_view is the inverse of is_muted and sends the same pair of events.
    expect(
        properties(&app, &alice, json!([{"stream_id": id, "property": "in_home_view", "value": true}])).await,
        200,
        success(),
    )
    .await;
    assert_eq!(
        alice_watch.events(&app).await,
        vec![update(id, "in_home_view", json!(true)), update(id, "is_muted", json!(false))]
    );
    assert_eq!(subscription(&app, &alice, id).await["is_muted"], json!(false));
    assert_eq!(bob_watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(subscription(&app, &bob, id).await["color"], "#76ce90");
    app.stop().await;
}

#[actix_web::test]
async fn subscription_property_errors_have_zulips_messages_and_change_nothing() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let public = channel(&app, "Denmark", false, true, &[&alice]).await;
    let private = channel(&app, "Secret", true, true, &[&bob]).await;
    let mut watch = Watch::new(&app, &alice, r#"["subscription"]"#).await;

    let cases = [
        (
            json!([{"stream_id": public, "property": "bogus", "value": true}]),
            "Unknown subscription property: bogus".to_owned(),
        ),
        (json!([{"stream_id": 9999, "property": "is_muted", "value": true}]), "Invalid channel ID".to_owned()),
        (json!([{"stream_id": private, "property": "is_muted", "value": true}]), "Invalid channel ID".to_owned()),
        (
            json!([{"stream_id": public, "property": "is_muted", "value": "yes"}]),
            "is_muted is not a boolean".to_owned(),
        ),
        (
            json!([{"stream_id": public, "property": "color", "value": "blue"}]),
            "color is not a valid hex color code".to_owned(),
        ),
        (json!([{"stream_id": public, "property": "color", "value": false}]), "color is not a string".to_owned()),
        (
            json!([{"stream_id": public, "property": "color"}]),
            "subscription_data[0][\"value\"] field is missing: Field required".to_owned(),
        ),
        (
            json!([{"stream_id": public, "property": "color", "value": "#fff"}, {"stream_id": "x", "property": "color", "value": "#fff"}]),
            "subscription_data[1][\"stream_id\"] is not an integer".to_owned(),
        ),
        // Every value is checked before any change is applied or any channel looked up.
        (
            json!([{"stream_id": public, "property": "pin_to_top", "value": true}, {"stream_id": 9999, "property": "is_muted", "value": 1}]),
            "is_muted is not a boolean".to_owned(),
        ),
        (
            json!([{"stream_id": public, "property": "pin_to_top", "value": true}, {"stream_id": 9999, "property": "bogus", "value": 1}]),
            "Unknown subscription property: bogus".to_owned(),
        ),
        (json!({"stream_id": public}), "subscription_data is not a list".to_owned()),
    ];
    for (data, msg) in cases {
        expect(properties(&app, &alice, data).await, 400, error(&msg)).await;
    }
    // A public channel Bob can see but is not subscribed to.
    expect(
        properties(&app, &bob, json!([{"stream_id": public, "property": "is_muted", "value": true}])).await,
        400,
        error(&format!("Not subscribed to channel ID {public}")),
    )
    .await;
    let response = send(&app, &alice, Method::POST, "/users/me/subscriptions/properties", &[]).await;
    expect(response, 400, missing("subscription_data")).await;
    let response =
        send(&app, &alice, Method::POST, "/users/me/subscriptions/properties", &[("subscription_data", "[")]).await;
    expect(response, 400, error("subscription_data is not valid JSON")).await;

    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let sub = subscription(&app, &alice, public).await;
    assert_eq!((&sub["pin_to_top"], &sub["is_muted"]), (&json!(false), &json!(false)));

    // As in Zulip, changes apply one by one: a refused channel stops the request after the
    // earlier changes took effect.
    let data = json!([
        {"stream_id": public, "property": "pin_to_top", "value": true},
        {"stream_id": private, "property": "pin_to_top", "value": true},
        {"stream_id": public, "property": "is_muted", "value": true},
    ]);
    expect(properties(&app, &alice, data).await, 400, error("Invalid channel ID")).await;
    assert_eq!(watch.events(&app).await, vec![update(public, "pin_to_top", json!(true))]);
    let sub = subscription(&app, &alice, public).await;
    assert_eq!((&sub["pin_to_top"], &sub["is_muted"]), (&json!(true), &json!(false)));
    app.stop().await;
}

#[actix_web::test]
async fn one_property_by_patch() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    let mut watch = Watch::new(&app, &alice, r#"["subscription"]"#).await;
    let path = format!("/users/me/subscriptions/{id}");

    let response = send(&app, &alice, Method::PATCH, &path, &[("property", "is_muted"), ("value", "true")]).await;
    expect(response, 200, success()).await;
    let response = send(&app, &alice, Method::PATCH, &path, &[("property", "color"), ("value", "#abcdef")]).await;
    expect(response, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        vec![
            update(id, "in_home_view", json!(false)),
            update(id, "is_muted", json!(true)),
            update(id, "color", json!("#abcdef"))
        ]
    );
    let response = send(&app, &alice, Method::PATCH, &path, &[("property", "pin_to_top"), ("value", "1")]).await;
    expect(response, 400, error("pin_to_top is not a boolean")).await;
    let response = send(&app, &alice, Method::PATCH, &path, &[("property", "pin_to_top")]).await;
    expect(response, 400, missing("value")).await;
    let response = send(
        &app,
        &alice,
        Method::PATCH,
        "/users/me/subscriptions/9999",
        &[("property", "pin_to_top"), ("value", "true")],
    )
    .await;
    expect(response, 400, error("Invalid channel ID")).await;
    let response =
        send(&app, &alice, Method::PATCH, "/users/me/subscriptions/abc", &[("property", "pin_to_top")]).await;
    assert_eq!(response.status().as_u16(), 404);
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn user_topic_policies_send_user_topic_and_muted_topics_to_the_user_only() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice, &bob]).await;
    let mut modern = Watch::new(&app, &alice, r#"["user_topic"]"#).await;
    let mut legacy = Watch::new(&app, &alice, r#"["muted_topics"]"#).await;
    let mut both = Watch::new(&app, &alice, r#"["muted_topics", "user_topic"]"#).await;
    let mut other = Watch::new(&app, &bob, r#"["muted_topics", "user_topic"]"#).await;

    // A topic without messages; any policy.
    expect(user_topic(&app, &alice, id, "Lunch", "1").await, 200, success()).await;
    let muted = json!({"type": "user_topic", "stream_id": id, "topic_name": "Lunch", "last_updated": 0, "visibility_policy": 1});
    assert_eq!(without_timestamps(modern.events(&app).await), vec![muted.clone()]);
    assert_eq!(
        without_timestamps(legacy.events(&app).await),
        vec![json!({"type": "muted_topics", "muted_topics": [["Denmark", "Lunch", 0]]})]
    );
    assert_eq!(without_timestamps(both.events(&app).await), vec![muted]);

    // The same policy again (case-insensitively the same topic) changes nothing.
    expect(user_topic(&app, &alice, id, "LUNCH", "1").await, 200, success()).await;
    assert_eq!(modern.events(&app).await, Vec::<Value>::new());

    // Following the topic: the legacy list no longer holds it; the row keeps its spelling.
    expect(user_topic(&app, &alice, id, "lunch", "3").await, 200, success()).await;
    assert_eq!(
        without_timestamps(modern.events(&app).await),
        vec![
            json!({"type": "user_topic", "stream_id": id, "topic_name": "lunch", "last_updated": 0, "visibility_policy": 3})
        ]
    );
    assert_eq!(legacy.events(&app).await, vec![json!({"type": "muted_topics", "muted_topics": []})]);
    let state = register(&app, &alice, &[("fetch_event_types", r#"["user_topic"]"#)]).await;
    assert_eq!(state["user_topics"][0]["topic_name"], "Lunch");
    assert_eq!(state["user_topics"][0]["visibility_policy"], 3);

    // Clearing it, then clearing it again (nothing to do: no events).
    expect(user_topic(&app, &alice, id, "Lunch", "0").await, 200, success()).await;
    expect(user_topic(&app, &alice, id, "Lunch", "0").await, 200, success()).await;
    assert_eq!(
        without_timestamps(modern.events(&app).await),
        vec![
            json!({"type": "user_topic", "stream_id": id, "topic_name": "Lunch", "last_updated": 0, "visibility_policy": 0})
        ]
    );
    assert_eq!(other.events(&app).await, Vec::<Value>::new());
    let state = register(&app, &alice, &[("fetch_event_types", r#"["user_topic"]"#)]).await;
    assert_eq!(state["user_topics"], json!([]));
    app.stop().await;
}

#[actix_web::test]
async fn user_topic_validation_and_channel_access() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let guest = app.create_user("", "gus@agora.test", "Gus", 600).await;
    let public = channel(&app, "Denmark", false, true, &[]).await;
    let private = channel(&app, "Secret", true, true, &[]).await;
    let archived = channel(&app, "Old", false, true, &[&alice]).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/streams/{archived}"), &[]).await, 200, success()).await;
    let mut watch = Watch::new(&app, &alice, r#"["user_topic"]"#).await;

    let response =
        send(&app, &alice, Method::POST, "/user_topics", &[("topic", "t"), ("visibility_policy", "1")]).await;
    expect(response, 400, missing("stream_id")).await;
    let response =
        send(&app, &alice, Method::POST, "/user_topics", &[("stream_id", "1"), ("visibility_policy", "1")]).await;
    expect(response, 400, missing("topic")).await;
    let response = send(&app, &alice, Method::POST, "/user_topics", &[("stream_id", "1"), ("topic", "t")]).await;
    expect(response, 400, missing("visibility_policy")).await;
    let long = "x".repeat(61);
    expect(user_topic(&app, &alice, public, &long, "1").await, 400, error("topic is too long (limit: 60 characters)"))
        .await;
    expect(user_topic(&app, &alice, public, &"é".repeat(60), "1").await, 200, success()).await;
    expect(
        user_topic(&app, &alice, public, "t", "4").await,
        400,
        error("Invalid visibility_policy: Value error, Not in the list of possible values"),
    )
    .await;
    expect(user_topic(&app, &alice, public, "t", "muted").await, 400, error("visibility_policy is not valid JSON"))
        .await;
    expect(user_topic(&app, &alice, public, "t", "\"1\"").await, 400, error("visibility_policy is not an integer"))
        .await;
    let response = send(
        &app,
        &alice,
        Method::POST,
        "/user_topics",
        &[("stream_id", "x"), ("topic", "t"), ("visibility_policy", "1")],
    )
    .await;
    expect(response, 400, error("stream_id is not valid JSON")).await;

    // Setting a policy needs content access; clearing one needs only a channel the user
    // may know of (or holds a policy in): a private channel they cannot see is answered as
    // if it did not exist.
    for (who, channel) in [(&alice, private), (&alice, 9999), (&alice, archived), (&guest, public)] {
        expect(user_topic(&app, who, channel, "t", "1").await, 400, error("Invalid channel ID")).await;
    }
    expect(user_topic(&app, &alice, private, "t", "0").await, 400, error("Invalid channel ID")).await;
    expect(user_topic(&app, &alice, archived, "t", "0").await, 200, success()).await;
    // A subscribed guest may.
    subscribe(&app, &guest, public, true).await;
    expect(user_topic(&app, &guest, public, "t", "3").await, 200, success()).await;
    expect(user_topic(&app, &alice, 9999, "t", "0").await, 400, error("Invalid channel ID")).await;
    assert_eq!(
        without_timestamps(watch.events(&app).await),
        vec![
            json!({"type": "user_topic", "stream_id": public, "topic_name": "é".repeat(60), "last_updated": 0, "visibility_policy": 1})
        ]
    );
    // Someone who lost access to a channel can still clear the policies they set there.
    let club = channel(&app, "Club", true, true, &[&alice]).await;
    expect(user_topic(&app, &alice, club, "t", "1").await, 200, success()).await;
    subscribe(&app, &alice, club, false).await;
    expect(user_topic(&app, &alice, club, "t", "1").await, 400, error("Invalid channel ID")).await;
    expect(user_topic(&app, &alice, club, "t", "0").await, 200, success()).await;
    app.stop().await;
}

#[actix_web::test]
async fn the_empty_topic_display_name_means_the_empty_topic() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    let mut modern = Watch::new(&app, &alice, r#"["user_topic"]"#).await;
    let form = [("event_types", r#"["user_topic"]"#), ("client_capabilities", OLD_CAPABILITIES)];
    let mut old = Watch::with_form(&app, &alice, &form).await;

    expect(user_topic(&app, &alice, id, "general chat", "3").await, 200, success()).await;
    let event = |name: &str| json!({"type": "user_topic", "stream_id": id, "topic_name": name, "last_updated": 0, "visibility_policy": 3});
    assert_eq!(without_timestamps(modern.events(&app).await), vec![event("")]);
    assert_eq!(without_timestamps(old.events(&app).await), vec![event("general chat")]);
    // "" and "general chat" are the same topic.
    expect(user_topic(&app, &alice, id, "", "3").await, 200, success()).await;
    assert_eq!(modern.events(&app).await, Vec::<Value>::new());

    let capabilities = r#"{"notification_settings_null":true,"empty_topic_name":true}"#;
    let state =
        register(&app, &alice, &[("fetch_event_types", r#"["user_topic"]"#), ("client_capabilities", capabilities)])
            .await;
    assert_eq!(state["user_topics"][0]["topic_name"], "");
    let state = register(
        &app,
        &alice,
        &[("fetch_event_types", r#"["user_topic"]"#), ("client_capabilities", OLD_CAPABILITIES)],
    )
    .await;
    assert_eq!(state["user_topics"][0]["topic_name"], "general chat");
    app.stop().await;
}

#[actix_web::test]
async fn legacy_topic_muting_works_and_is_idempotent() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    let private = channel(&app, "Secret", true, true, &[&bob]).await;
    let id_text = id.to_string();
    let mut watch = Watch::new(&app, &alice, r#"["muted_topics"]"#).await;
    let mut modern = Watch::new(&app, &alice, r#"["user_topic"]"#).await;
    let mut other = Watch::new(&app, &bob, r#"["muted_topics", "user_topic"]"#).await;

    expect(mute(&app, &alice, &[("stream", "denmark"), ("topic", "Lunch"), ("op", "add")]).await, 200, success()).await;
    assert_eq!(
        without_timestamps(watch.events(&app).await),
        vec![json!({"type": "muted_topics", "muted_topics": [["Denmark", "Lunch", 0]]})]
    );
    assert_eq!(
        without_timestamps(modern.events(&app).await),
        vec![
            json!({"type": "user_topic", "stream_id": id, "topic_name": "Lunch", "last_updated": 0, "visibility_policy": 1})
        ]
    );
    // Muting a muted topic is not an error (feature level 169) and sends nothing.
    expect(mute(&app, &alice, &[("stream_id", &id_text), ("topic", "lunch"), ("op", "add")]).await, 200, success())
        .await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let state = register(&app, &alice, &[("fetch_event_types", r#"["muted_topics"]"#)]).await;
    assert_eq!(
        without_timestamps(vec![json!({"muted_topics": state["muted_topics"]})])[0]["muted_topics"],
        json!([["Denmark", "Lunch", 0]])
    );
    // A client that asked for user_topic gets no muted_topics data.
    let state = register(&app, &alice, &[("fetch_event_types", r#"["muted_topics", "user_topic"]"#)]).await;
    assert!(state.get("muted_topics").is_none());

    expect(mute(&app, &alice, &[("stream_id", &id_text), ("topic", "Lunch"), ("op", "remove")]).await, 200, success())
        .await;
    assert_eq!(watch.events(&app).await, vec![json!({"type": "muted_topics", "muted_topics": []})]);
    // Unmuting a topic that is not muted is not an error either.
    expect(mute(&app, &alice, &[("stream_id", &id_text), ("topic", "Lunch"), ("op", "remove")]).await, 200, success())
        .await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    let private_text = private.to_string();
    let errors: Vec<(Vec<(&str, &str)>, Value)> = vec![
        (vec![("topic", "t"), ("op", "add")], error("Missing 'stream_id' argument")),
        (
            vec![("stream", "Denmark"), ("stream_id", &id_text), ("topic", "t"), ("op", "add")],
            json!({"result": "error", "msg": "Unsupported parameter combination: stream_id, stream", "parameters": "stream_id, stream", "code": "BAD_REQUEST"}),
        ),
        (vec![("stream", "Denmark"), ("op", "add")], missing("topic")),
        (vec![("stream", "Denmark"), ("topic", "t")], missing("op")),
        (vec![("stream", "Denmark"), ("topic", "t"), ("op", "toggle")], error("Invalid op")),
        // `op` is checked first, then `topic`, then the channel arguments.
        (vec![("stream_id", "x")], missing("op")),
        (vec![("stream_id", "x"), ("op", "add")], missing("topic")),
        (vec![("stream_id", "x"), ("op", "add"), ("topic", "t")], error("stream_id is not valid JSON")),
        (vec![("stream", "Nope"), ("topic", "t"), ("op", "add")], error("Invalid channel name 'Nope'")),
        (vec![("stream", "Secret"), ("topic", "t"), ("op", "add")], error("Invalid channel name 'Secret'")),
        (vec![("stream_id", &private_text), ("topic", "t"), ("op", "add")], error("Invalid channel ID")),
        (vec![("stream", "Nope"), ("topic", "t"), ("op", "remove")], error("Topic is not muted")),
        (vec![("stream_id", "9999"), ("topic", "t"), ("op", "remove")], error("Topic is not muted")),
        // A private channel the user cannot see answers as if it did not exist.
        (vec![("stream", "Secret"), ("topic", "t"), ("op", "remove")], error("Topic is not muted")),
        (vec![("stream_id", &private_text), ("topic", "t"), ("op", "remove")], error("Topic is not muted")),
    ];
    for (form, body) in errors {
        expect(mute(&app, &alice, &form).await, 400, body).await;
    }
    let long = "x".repeat(61);
    let response = mute(&app, &alice, &[("stream", "Denmark"), ("topic", &long), ("op", "add")]).await;
    expect(response, 400, error("topic is too long (limit: 60 characters)")).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(other.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn topics_of_a_public_channel_newest_first_with_the_empty_topic_both_ways() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guest = app.create_user("", "gus@agora.test", "Gus", 600).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    expect(topics(&app, &alice, id, "").await, 200, json!({"result": "success", "msg": "", "topics": []})).await;

    let first = message(&app, &alice, id, "Lunch").await;
    let empty = message(&app, &alice, id, "").await;
    let _ = message(&app, &alice, id, "plans").await;
    let plans = message(&app, &alice, id, "Plans").await;
    assert!(first < empty && empty < plans);
    let lunch = message(&app, &alice, id, "lunch").await;

    // Bob is not subscribed: public history is open to him.
    let expected = |empty_name: &str| {
        json!({"result": "success", "msg": "", "topics": [
            {"name": "lunch", "max_id": lunch},
            {"name": "Plans", "max_id": plans},
            {"name": empty_name, "max_id": empty},
        ]})
    };
    expect(topics(&app, &bob, id, "").await, 200, expected("general chat")).await;
    expect(topics(&app, &bob, id, "?allow_empty_topic_name=false").await, 200, expected("general chat")).await;
    expect(topics(&app, &alice, id, "?allow_empty_topic_name=true").await, 200, expected("")).await;
    expect(
        topics(&app, &alice, id, "?allow_empty_topic_name=yes").await,
        400,
        error("allow_empty_topic_name is not valid JSON"),
    )
    .await;

    // A guest needs a subscription; a missing channel is an invalid id.
    expect(topics(&app, &guest, id, "").await, 400, error("Invalid channel ID")).await;
    expect(topics(&app, &alice, 9999, "").await, 400, error("Invalid channel ID")).await;
    let response = app.as_user(&alice, Method::GET, "/users/me/abc/topics").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 404);
    app.stop().await;
}

#[actix_web::test]
async fn topics_of_a_private_channel_follow_its_history_setting() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let admin = app.create_user("", "ada@agora.test", "Ada", 200).await;
    let protected = channel(&app, "Protected", true, false, &[&alice]).await;
    let open = channel(&app, "Open", true, true, &[&alice]).await;
    let before = message(&app, &alice, protected, "before").await;
    let _ = message(&app, &alice, open, "before").await;

    // Without a subscription a private channel's topics are hidden, even from administrators.
    for who in [&bob, &admin] {
        expect(topics(&app, who, protected, "").await, 400, error("Invalid channel ID")).await;
        expect(topics(&app, who, open, "").await, 400, error("Invalid channel ID")).await;
    }

    subscribe(&app, &bob, protected, true).await;
    subscribe(&app, &bob, open, true).await;
    let after = message(&app, &alice, protected, "after").await;
    let open_after = message(&app, &alice, open, "after").await;
    // Protected history: Bob sees only topics of messages sent since he subscribed.
    expect(
        topics(&app, &bob, protected, "").await,
        200,
        json!({"result": "success", "msg": "", "topics": [{"name": "after", "max_id": after}]}),
    )
    .await;
    expect(
        topics(&app, &alice, protected, "").await,
        200,
        json!({"result": "success", "msg": "", "topics": [{"name": "after", "max_id": after}, {"name": "before", "max_id": before}]}),
    )
    .await;
    // Public history: everything.
    let (status, body) = json(topics(&app, &bob, open, "").await).await;
    assert_eq!((status, body["topics"].as_array().unwrap().len()), (200, 2));
    assert_eq!(body["topics"][0], json!({"name": "after", "max_id": open_after}));

    // Once unsubscribed, Bob has no access; resubscribed, he keeps what he received but
    // not what was sent meanwhile.
    subscribe(&app, &bob, protected, false).await;
    let missed = message(&app, &alice, protected, "missed").await;
    expect(topics(&app, &bob, protected, "").await, 400, error("Invalid channel ID")).await;
    subscribe(&app, &bob, protected, true).await;
    assert!(missed > after);
    expect(
        topics(&app, &bob, protected, "").await,
        200,
        json!({"result": "success", "msg": "", "topics": [{"name": "after", "max_id": after}]}),
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn personal_settings_and_topics_survive_a_restart() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    let msg = message(&app, &alice, id, "Lunch").await;
    let data = json!([{"stream_id": id, "property": "in_home_view", "value": false}, {"stream_id": id, "property": "color", "value": "#123456"}]);
    expect(properties(&app, &alice, data).await, 200, success()).await;
    expect(user_topic(&app, &alice, id, "Lunch", "1").await, 200, success()).await;
    expect(user_topic(&app, &alice, id, "Dinner", "2").await, 200, success()).await;
    let fetch = [("fetch_event_types", r#"["user_topic"]"#)];
    let topics_before = register(&app, &alice, &fetch).await["user_topics"].clone();
    let muted_before =
        register(&app, &alice, &[("fetch_event_types", r#"["muted_topics"]"#)]).await["muted_topics"].clone();
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    // The first request starts the organization's actor.
    let topics_after = register(&app, &alice, &fetch).await["user_topics"].clone();
    let sub = subscription(&app, &alice, id).await;
    assert_eq!((&sub["is_muted"], &sub["color"]), (&json!(true), &json!("#123456")));
    assert_eq!(topics_after, topics_before);
    assert_eq!(topics_after.as_array().unwrap().len(), 2);
    let muted_after =
        register(&app, &alice, &[("fetch_event_types", r#"["muted_topics"]"#)]).await["muted_topics"].clone();
    assert_eq!(muted_after, muted_before);
    assert_eq!(muted_after[0][1], "Lunch");
    expect(
        topics(&app, &alice, id, "").await,
        200,
        json!({"result": "success", "msg": "", "topics": [{"name": "Lunch", "max_id": msg}]}),
    )
    .await;
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn register_places_muted_topics_and_user_topics_where_zulip_does() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let id = channel(&app, "Denmark", false, true, &[&alice]).await;
    expect(user_topic(&app, &alice, id, "Lunch", "1").await, 200, success()).await;
    let state = register(&app, &alice, &[]).await;
    let keys: Vec<&str> = state.as_object().unwrap().keys().map(String::as_str).collect();
    let at = |key: &str| keys.iter().position(|k| *k == key).unwrap_or_else(|| panic!("{key} missing"));
    assert!(at("custom_profile_field_types") < at("muted_topics") && at("muted_topics") < at("realm_user_groups"));
    assert!(at("user_settings") < at("user_topics"));
    assert_eq!((&state["muted_topics"][0][0], &state["muted_topics"][0][1]), (&json!("Denmark"), &json!("Lunch")));
    assert_eq!(state["user_topics"][0]["visibility_policy"], 1);
    app.stop().await;
}
