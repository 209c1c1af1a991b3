//! Channels and subscriptions: `/users/me/subscriptions`, `/channels/create`, `/streams*`,
//! `/get_stream_id`, `/default_streams`, the `stream`, `subscription` and `default_streams`
//! events and the register data sets.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    channel_event_notices_on, error, expect, json, register, send, spawn_app, success, Creds, TestApp, Watch,
};

/// System group ids of the root organization.
const ADMINISTRATORS: i64 = 2;
const MEMBERS: i64 = 5;
const EVERYONE: i64 = 6;
const NOBODY: i64 = 8;

async fn post(app: &TestApp, who: &Creds, path: &str, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::POST, path, form).await
}

async fn get(app: &TestApp, who: &Creds, path: &str) -> (u16, Value) {
    json(app.as_user(who, Method::GET, path).send().await.unwrap()).await
}

/// Alice and Bob (members) and Gus (guest): users 2, 3 and 4.
async fn users(app: &TestApp) -> (Creds, Creds, Creds) {
    let alice = app.create_user("", "alice@agora.test", "Alice Adams", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob Brown", 400).await;
    let guest = app.create_user("", "gus@agora.test", "Gus Guest", 600).await;
    (alice, bob, guest)
}

/// Subscribes `who` (or `principals`) to channel `name`, creating it with `extra`.
async fn subscribe(app: &TestApp, who: &Creds, name: &str, extra: &[(&str, &str)]) -> (u16, Value) {
    let subs = json!([{ "name": name }]).to_string();
    let mut form = vec![("subscriptions", subs.as_str())];
    form.extend_from_slice(extra);
    json(post(app, who, "/users/me/subscriptions", &form).await).await
}

/// The id of a channel by name, as the owner sees it.
async fn channel_id(app: &TestApp, name: &str) -> i64 {
    let (status, body) = get(app, &app.owner, &format!("/get_stream_id?stream={name}")).await;
    assert_eq!(status, 200, "{body}");
    body["stream_id"].as_i64().unwrap()
}

/// Creates a private channel `secret` (id 1) with Alice as its only subscriber.
async fn private_channel(app: &TestApp, alice: &Creds) -> i64 {
    let (status, body) = subscribe(app, alice, "secret", &[("invite_only", "true")]).await;
    assert_eq!(status, 200, "{body}");
    channel_id(app, "secret").await
}

/// The stream object Zulip sends for a fresh public channel of `creator`.
fn stream_object(id: i64, name: &str, description: &str, creator: i64, date: i64, subscribers: i64) -> Value {
    let rendered = if description.is_empty() { String::new() } else { format!("<p>{description}</p>") };
    json!({
        "is_archived": false,
        "can_add_subscribers_group": NOBODY,
        "can_administer_channel_group": {"direct_members": [creator], "direct_subgroups": []},
        "can_create_topic_group": EVERYONE,
        "can_delete_any_message_group": NOBODY,
        "can_delete_own_message_group": NOBODY,
        "can_move_messages_out_of_channel_group": NOBODY,
        "can_move_messages_within_channel_group": NOBODY,
        "can_send_message_group": EVERYONE,
        "can_remove_subscribers_group": ADMINISTRATORS,
        "can_resolve_topics_group": NOBODY,
        "can_subscribe_group": NOBODY,
        "creator_id": creator,
        "date_created": date,
        "description": description,
        "first_message_id": null,
        "folder_id": null,
        "is_recently_active": true,
        "history_public_to_subscribers": true,
        "invite_only": false,
        "is_web_public": false,
        "message_retention_days": null,
        "name": name,
        "rendered_description": rendered,
        "stream_id": id,
        "stream_post_policy": 1,
        "is_announcement_only": false,
        "stream_weekly_traffic": null,
        "subscriber_count": subscribers,
        "topics_policy": "inherit",
    })
}

#[actix_web::test]
async fn python_client_add_subscriptions_creates_the_channel() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    // `add_subscriptions([{"name": .., "description": ..}], principals=[2, 3])`.
    let response = post(
        &app,
        &app.owner,
        "/users/me/subscriptions",
        &[
            ("subscriptions", r#"[{"name": "golden-1", "description": "golden recording channel"}]"#),
            ("principals", &format!("[{}, {}]", alice.user_id, bob.user_id)),
        ],
    )
    .await;
    // As in the golden recording: `true` (fewer than 100 users were subscribed; being a
    // new channel, nobody gets a "subscribed you" message about it).
    let (a, b) = (alice.user_id.to_string(), bob.user_id.to_string());
    expect(
        response,
        200,
        json!({"result": "success", "msg": "",
            "subscribed": {a: ["golden-1"], b: ["golden-1"]}, "already_subscribed": {},
            "new_subscription_messages_sent": true}),
    )
    .await;
    // Again, for Bob by email and the owner: Bob is already subscribed.
    let response = post(
        &app,
        &app.owner,
        "/users/me/subscriptions",
        &[
            ("subscriptions", r#"[{"name": "golden-1"}]"#),
            ("principals", &format!(r#"["bob@agora.test", "{}"]"#, app.owner.email)),
        ],
    )
    .await;
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["already_subscribed"], json!({ bob.user_id.to_string(): ["golden-1"] }));
}

#[actix_web::test]
async fn python_client_get_subscriptions_and_the_subscription_object() {
    let app = spawn_app().await;
    channel_event_notices_on(&app).await;
    let (alice, _, _) = users(&app).await;
    let (status, _) = subscribe(&app, &alice, "Denmark", &[]).await;
    assert_eq!(status, 200);
    let (status, body) = get(&app, &alice, "/users/me/subscriptions").await;
    assert_eq!(status, 200);
    let date = body["subscriptions"][0]["date_created"].as_i64().unwrap();
    // The channel's first message is Notification Bot's: who created it, and how.
    let first_message_id = body["subscriptions"][0]["first_message_id"].as_i64().unwrap();
    let (status, notice) = get(&app, &alice, &format!("/messages/{first_message_id}?apply_markdown=false")).await;
    assert_eq!(status, 200, "{notice}");
    assert_eq!(notice["message"]["subject"], json!("channel events"));
    assert_eq!(notice["message"]["sender_email"], json!("notification-bot@zulip.com"));
    let created = format!(
        "**Public** channel created by @_**Alice Adams|{}**. **Description:**\n```` quote\n*No description.*\n````",
        alice.user_id
    );
    assert_eq!(notice["message"]["content"], json!(created));
    // Read for its creator, unread for others.
    assert_eq!(notice["message"]["flags"], json!(["read"]));
    let first = json!({
        "is_archived": false,
        "audible_notifications": null,
        "can_add_subscribers_group": NOBODY,
        "can_administer_channel_group": {"direct_members": [alice.user_id], "direct_subgroups": []},
        "can_create_topic_group": EVERYONE,
        "can_delete_any_message_group": NOBODY,
        "can_delete_own_message_group": NOBODY,
        "can_move_messages_out_of_channel_group": NOBODY,
        "can_move_messages_within_channel_group": NOBODY,
        "can_send_message_group": EVERYONE,
        "can_remove_subscribers_group": ADMINISTRATORS,
        "can_resolve_topics_group": NOBODY,
        "can_subscribe_group": NOBODY,
        "color": "#76ce90",
    });
    let second = json!({
        "creator_id": alice.user_id,
        "date_created": date,
        "description": "",
        "desktop_notifications": null,
        "email_notifications": null,
        "first_message_id": first_message_id,
        "folder_id": null,
        "is_recently_active": true,
        "history_public_to_subscribers": true,
        "in_home_view": true,
    });
    let third = json!({
        "invite_only": false,
        "is_announcement_only": false,
        "is_muted": false,
        "is_web_public": false,
        "message_retention_days": null,
        "name": "Denmark",
        "pin_to_top": false,
        "push_notifications": null,
        "rendered_description": "",
        "stream_id": 1,
        "stream_post_policy": 1,
        "stream_weekly_traffic": null,
        "subscriber_count": 1,
        "topics_policy": "inherit",
        "wildcard_mentions_notify": null,
    });
    let mut sub = serde_json::Map::new();
    for part in [first, second, third] {
        sub.extend(part.as_object().unwrap().clone());
    }
    let expected = json!({"result": "success", "msg": "", "subscriptions": [sub]});
    let response = app.as_user(&alice, Method::GET, "/users/me/subscriptions").send().await.unwrap();
    expect(response, 200, expected).await;
    // With subscribers.
    let (_, body) = get(&app, &alice, "/users/me/subscriptions?include_subscribers=true").await;
    assert_eq!(body["subscriptions"][0]["subscribers"], json!([alice.user_id]));
}

#[actix_web::test]
async fn colors_follow_the_palette_per_user() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["subscription"]"#).await;
    let subs = r#"[{"name": "one"}, {"name": "two"}, {"name": "three"}]"#;
    let response = post(&app, &alice, "/users/me/subscriptions", &[("subscriptions", subs)]).await;
    assert_eq!(response.status(), 200);
    // One peer event for the three channels Alice joined.
    assert_eq!(
        w_bob.events(&app).await,
        vec![json!({"type": "subscription", "op": "peer_add", "stream_ids": [1, 2, 3], "user_ids": [alice.user_id]})]
    );
    subscribe(&app, &bob, "three", &[]).await;
    let colors = |body: Value| -> Vec<(String, String)> {
        body["subscriptions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap().to_owned(), s["color"].as_str().unwrap().to_owned()))
            .collect()
    };
    let (_, body) = get(&app, &alice, "/users/me/subscriptions").await;
    // Sorted by name; colors in request order.
    assert_eq!(
        colors(body),
        vec![("one".into(), "#76ce90".into()), ("three".into(), "#a6c7e5".into()), ("two".into(), "#fae589".into())]
    );
    let (_, body) = get(&app, &bob, "/users/me/subscriptions").await;
    assert_eq!(colors(body), vec![("three".into(), "#76ce90".into())]);
}

#[actix_web::test]
async fn subscribe_validation_errors() {
    let app = spawn_app().await;
    let (alice, _, guest) = users(&app).await;
    let cases: Vec<(&str, &str)> = vec![
        (r#"[{"name": "  "}]"#, "Channel name can't be empty."),
        (
            r#"[{"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]"#,
            "Channel name too long (limit: 60 characters).",
        ),
        (r#"[{"name": "bad\u0000name"}]"#, "Invalid character in channel name, at position 4."),
        (r#"[{"description": "x"}]"#, "subscriptions[0][\"name\"] field is missing: Field required"),
        (r#"["general"]"#, "subscriptions[0] is not a dict"),
    ];
    for (subs, msg) in cases {
        expect(post(&app, &alice, "/users/me/subscriptions", &[("subscriptions", subs)]).await, 400, error(msg)).await;
    }
    let long = "d".repeat(1025);
    let subs = json!([{"name": "x", "description": long}]).to_string();
    expect(
        post(&app, &alice, "/users/me/subscriptions", &[("subscriptions", &subs)]).await,
        400,
        error("description is too long (limit: 1024 characters)"),
    )
    .await;
    let (status, body) = subscribe(&app, &guest, "guests", &[]).await;
    assert_eq!((status, body), (400, error("Not allowed for guest users")));
    let (status, body) = subscribe(&app, &alice, "x", &[("principals", "[999]")]).await;
    assert_eq!((status, body), (400, error("No such user")));
    let (status, body) = subscribe(&app, &alice, "x", &[("principals", r#"["nobody@agora.test"]"#)]).await;
    assert_eq!((status, body), (400, error("No such user")));
    let (status, body) = subscribe(&app, &alice, "x", &[("principals", r#"[2, "bob@agora.test"]"#)]).await;
    assert_eq!((status, body), (400, error("principals[\"list[str]\"][0] is not a string")));
    let former = app.create_user("", "former@agora.test", "Former", 400).await;
    let response = send(&app, &app.owner, Method::DELETE, &format!("/users/{}", former.user_id), &[]).await;
    assert_eq!(response.status(), 200);
    let (status, body) = subscribe(&app, &alice, "x", &[("principals", &format!("[{}]", former.user_id))]).await;
    assert_eq!((status, body), (400, error("User is deactivated")));
    let (status, body) = subscribe(&app, &alice, "x", &[("is_web_public", "true")]).await;
    assert_eq!((status, body), (400, error("Web-public channels are not enabled.")));
    // Default channels: administrators only, and never private.
    let (status, body) = subscribe(&app, &alice, "x", &[("is_default_stream", "true")]).await;
    assert_eq!((status, body), (400, error("Insufficient permission")));
    let (status, body) =
        subscribe(&app, &app.owner, "x", &[("is_default_stream", "true"), ("invite_only", "true")]).await;
    assert_eq!((status, body), (400, error("A default channel cannot be private.")));
    // Retention: owners only, and a positive number of days.
    let (status, body) = subscribe(&app, &app.owner, "x", &[("message_retention_days", "0")]).await;
    assert_eq!((status, body), (400, error("Bad value for 'message_retention_days': 0")));
    let (status, body) = subscribe(&app, &alice, "x", &[("message_retention_days", "30")]).await;
    assert_eq!(
        (status, body),
        (400, json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"}))
    );
    let (status, body) = subscribe(&app, &app.owner, "x", &[("topics_policy", "sometimes")]).await;
    assert_eq!((status, body), (400, error("Invalid topics_policy")));
    let (status, body) = subscribe(&app, &app.owner, "x", &[("folder_id", "99")]).await;
    assert_eq!((status, body), (400, error("Invalid channel folder ID")));
    let (status, body) = subscribe(&app, &app.owner, "x", &[("can_send_message_group", "999")]).await;
    assert_eq!((status, body), (400, error("Invalid user group")));
    // Nothing was created by the refused requests.
    let (_, body) = get(&app, &app.owner, "/streams?include_all=true").await;
    assert_eq!(body["streams"], json!([]));
}

#[actix_web::test]
async fn private_channels_need_access_to_subscribe() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    private_channel(&app, &alice).await;
    let (status, body) = subscribe(&app, &bob, "secret", &[]).await;
    assert_eq!((status, body), (400, error("Unable to access channel (secret).")));
    let (status, body) = subscribe(&app, &bob, "secret", &[("authorization_errors_fatal", "false")]).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"result": "success", "msg": "", "subscribed": {}, "already_subscribed": {},
                "unauthorized": ["secret"], "new_subscription_messages_sent": true})
        )
    );
    // Bob may not add others to a public channel he cannot administer... but may add them
    // to a public one as a member of the realm's can_add_subscribers_group (members).
    subscribe(&app, &alice, "public", &[]).await;
    let (status, body) = subscribe(&app, &bob, "public", &[("principals", &format!("[{}]", bob.user_id))]).await;
    assert_eq!(status, 200, "{body}");
    // Alice administers `secret` (its creator), so she may add Bob, who then learns of
    // the channel before his subscription.
    let mut w_bob = Watch::new(&app, &bob, r#"["stream", "subscription"]"#).await;
    let (status, body) = subscribe(&app, &alice, "secret", &[("principals", &format!("[{}]", bob.user_id))]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subscribed"], json!({ bob.user_id.to_string(): ["secret"] }));
    let events = w_bob.events(&app).await;
    assert_eq!(events.len(), 2);
    assert_eq!((&events[0]["type"], &events[0]["op"]), (&json!("stream"), &json!("create")));
    assert_eq!(events[0]["streams"][0]["invite_only"], true);
    assert_eq!((&events[1]["type"], &events[1]["op"]), (&json!("subscription"), &json!("add")));
    assert_eq!(events[1]["subscriptions"][0]["subscribers"], json!([alice.user_id, bob.user_id]));
    // Bob leaves: he is told of the removal, then loses sight of the channel; Alice sees
    // him go.
    let mut w_alice = Watch::new(&app, &alice, r#"["stream", "subscription"]"#).await;
    let response =
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["secret"]"#)]).await;
    assert_eq!(response.status(), 200);
    let events = w_bob.events(&app).await;
    assert_eq!(
        events[0],
        json!({"type": "subscription", "op": "remove", "subscriptions": [{"name": "secret", "stream_id": 1}]})
    );
    assert_eq!(
        (&events[1]["type"], &events[1]["op"], &events[1]["stream_ids"]),
        (&json!("stream"), &json!("delete"), &json!([1]))
    );
    assert_eq!(events.len(), 2);
    assert_eq!(
        w_alice.events(&app).await,
        vec![json!({"type": "subscription", "op": "peer_remove", "stream_ids": [1], "user_ids": [bob.user_id]})]
    );
    // An administrator outside the private channel may not change who may add to it.
    let response = send(
        &app,
        &app.owner,
        Method::PATCH,
        "/streams/1",
        &[("can_add_subscribers_group", &json!({"new": MEMBERS}).to_string())],
    )
    .await;
    expect(response, 400, error("Invalid channel ID")).await;
}

#[actix_web::test]
async fn can_add_subscribers_group_with_nested_subgroups() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    // inner = {bob}; outer = {inner}.
    let (_, inner) = json(
        post(
            &app,
            &app.owner,
            "/user_groups/create",
            &[("name", "inner"), ("description", "i"), ("members", &format!("[{}]", bob.user_id))],
        )
        .await,
    )
    .await;
    let inner = inner["group_id"].as_i64().unwrap();
    let (_, outer) = json(
        post(
            &app,
            &app.owner,
            "/user_groups/create",
            &[("name", "outer"), ("description", "o"), ("members", "[]"), ("subgroups", &format!("[{inner}]"))],
        )
        .await,
    )
    .await;
    let outer = outer["group_id"].as_i64().unwrap();
    let (status, body) = subscribe(
        &app,
        &alice,
        "secret",
        &[("invite_only", "true"), ("can_add_subscribers_group", &outer.to_string())],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // Bob, not subscribed, adds Carol through the nested group.
    let (status, body) = subscribe(&app, &bob, "secret", &[("principals", &format!("[{}]", carol.user_id))]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subscribed"], json!({ carol.user_id.to_string(): ["secret"] }));
    // Administering through nested subgroups: Bob may change a channel whose
    // can_administer_channel_group is `outer`; Carol may not.
    let (status, _) = subscribe(&app, &alice, "managed", &[("can_administer_channel_group", &outer.to_string())]).await;
    assert_eq!(status, 200);
    let managed = channel_id(&app, "managed").await;
    let path = format!("/streams/{managed}");
    expect(send(&app, &bob, Method::PATCH, &path, &[("description", "by bob")]).await, 200, success()).await;
    expect(
        send(&app, &carol, Method::PATCH, &path, &[("description", "by carol")]).await,
        400,
        error("You do not have permission to administer this channel."),
    )
    .await;
    // The group is now in use by the channels.
    let response = post(&app, &app.owner, &format!("/user_groups/{outer}/deactivate"), &[]).await;
    expect(
        response,
        400,
        json!({"result": "error", "msg": "Cannot deactivate user group in use.",
            "objections": [
                {"type": "channel", "channel_id": 1, "settings": ["can_add_subscribers_group"]},
                {"type": "channel", "channel_id": 2, "settings": ["can_administer_channel_group"]},
            ],
            "code": "CANNOT_DEACTIVATE_GROUP_IN_USE"}),
    )
    .await;
}

#[actix_web::test]
async fn channels_create_returns_the_id_and_refuses_a_taken_name() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    let subscribers = format!("[{}, {}]", alice.user_id, bob.user_id);
    let response = post(
        &app,
        &alice,
        "/channels/create",
        &[("name", "discussions"), ("description", "Talk"), ("subscribers", &subscribers)],
    )
    .await;
    expect(response, 200, json!({"result": "success", "msg": "", "id": 1})).await;
    let response = post(&app, &alice, "/channels/create", &[("name", "Discussions"), ("subscribers", "[]")]).await;
    expect(
        response,
        409,
        json!({"result": "error", "msg": "Channel 'discussions' already exists", "code": "CHANNEL_ALREADY_EXISTS"}),
    )
    .await;
    // No subscribers: created empty.
    let response = post(&app, &alice, "/channels/create", &[("name", "empty"), ("subscribers", "[]")]).await;
    expect(response, 200, json!({"result": "success", "msg": "", "id": 2})).await;
    let (_, body) = get(&app, &alice, "/streams/2/members").await;
    assert_eq!(body["subscribers"], json!([]));
    let (_, body) = get(&app, &alice, "/streams/1/members").await;
    assert_eq!(body["subscribers"], json!([alice.user_id, bob.user_id]));
    let (status, body) = json(post(&app, &alice, "/channels/create", &[("name", "x")]).await).await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"result": "error", "msg": "Missing 'subscribers' argument", "code": "REQUEST_VARIABLE_MISSING", "var_name": "subscribers"})
        )
    );
}

#[actix_web::test]
async fn subscribe_events_reach_exactly_the_right_users() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    let types = r#"["stream", "subscription"]"#;
    let mut w_alice = Watch::new(&app, &alice, types).await;
    let mut w_bob = Watch::new(&app, &bob, types).await;
    let mut w_guest = Watch::new(&app, &guest, types).await;
    let (status, _) = subscribe(&app, &alice, "Denmark", &[]).await;
    assert_eq!(status, 200);
    let events = w_alice.events(&app).await;
    let date = events[0]["streams"][0]["date_created"].as_i64().unwrap();
    // Announced at creation, before anyone is subscribed.
    let stream = stream_object(1, "Denmark", "", alice.user_id, date, 0);
    assert_eq!(events[0], json!({"type": "stream", "op": "create", "streams": [stream]}));
    assert_eq!(events[1]["op"], "add");
    assert_eq!(events[1]["subscriptions"][0]["name"], "Denmark");
    assert_eq!(events[1]["subscriptions"][0]["subscribers"], json!([alice.user_id]));
    assert_eq!(events.len(), 2);
    // Bob sees the public channel appear and Alice join it; the guest sees nothing.
    assert_eq!(
        w_bob.events(&app).await,
        vec![
            json!({"type": "stream", "op": "create", "streams": [stream]}),
            json!({"type": "subscription", "op": "peer_add", "stream_ids": [1], "user_ids": [alice.user_id]}),
        ]
    );
    assert_eq!(w_guest.events(&app).await, Vec::<Value>::new());
}

#[actix_web::test]
async fn a_private_channel_stays_unknown_to_outsiders() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    let types = r#"["stream", "subscription"]"#;
    let mut w_bob = Watch::new(&app, &bob, types).await;
    let mut w_guest = Watch::new(&app, &guest, types).await;
    let mut w_owner = Watch::new(&app, &app.owner, types).await;
    let id = private_channel(&app, &alice).await;
    // The owner (an administrator) learns of it; Bob and the guest do not.
    let owner_events = w_owner.events(&app).await;
    assert_eq!(owner_events[0]["op"], "create");
    assert_eq!(
        owner_events[1],
        json!({"type": "subscription", "op": "peer_add", "stream_ids": [id], "user_ids": [alice.user_id]})
    );
    for (who, watch) in [(&bob, &mut w_bob), (&guest, &mut w_guest)] {
        expect(
            app.as_user(who, Method::GET, &format!("/streams/{id}")).send().await.unwrap(),
            400,
            error("Invalid channel ID"),
        )
        .await;
        expect(
            app.as_user(who, Method::GET, &format!("/streams/{id}/members")).send().await.unwrap(),
            400,
            error("Invalid channel ID"),
        )
        .await;
        expect(
            app.as_user(who, Method::GET, "/get_stream_id?stream=secret").send().await.unwrap(),
            400,
            error("Invalid channel name 'secret'"),
        )
        .await;
        expect(
            app.as_user(who, Method::GET, &format!("/users/{}/subscriptions/{id}", alice.user_id))
                .send()
                .await
                .unwrap(),
            400,
            error("Invalid channel ID"),
        )
        .await;
        let (_, body) = get(&app, who, "/streams?include_web_public=true&include_can_access_content=true").await;
        assert_eq!(body["streams"], json!([]));
        let state = register(&app, who, &[("fetch_event_types", r#"["subscription", "stream"]"#)]).await;
        assert_eq!(state["never_subscribed"], json!([]));
        assert_eq!(state["unsubscribed"], json!([]));
        assert_eq!(state["streams"], json!([]));
        let response =
            send(&app, who, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["secret"]"#)]).await;
        expect(response, 400, error("Channel(s) (secret) do not exist")).await;
        // Changes to the channel reach them neither.
        let patch =
            send(&app, &alice, Method::PATCH, &format!("/streams/{id}"), &[("description", "still hidden")]).await;
        assert_eq!(patch.status(), 200);
        assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    }
}

#[actix_web::test]
async fn get_streams_filters() {
    let app = spawn_app().await;
    let (alice, bob, guest) = users(&app).await;
    subscribe(&app, &alice, "public", &[]).await;
    private_channel(&app, &alice).await;
    let names = |body: &Value| -> Vec<String> {
        body["streams"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
    };
    let (_, body) = get(&app, &alice, "/streams").await;
    assert_eq!(names(&body), ["public", "secret"]);
    let (_, body) = get(&app, &bob, "/streams").await;
    assert_eq!(names(&body), ["public"]);
    let (_, body) = get(&app, &alice, "/streams?include_public=false").await;
    assert_eq!(names(&body), ["public", "secret"]);
    let (_, body) = get(&app, &bob, "/streams?include_public=false").await;
    assert_eq!(names(&body), Vec::<String>::new());
    let (_, body) = get(&app, &guest, "/streams").await;
    assert_eq!(names(&body), Vec::<String>::new());
    let (_, body) = get(&app, &app.owner, "/streams?include_all=true&include_default=true").await;
    assert_eq!(names(&body), ["public", "secret"]);
    assert_eq!(body["streams"][0]["is_default"], false);
    let (status, body) = get(&app, &bob, "/streams?include_all=true").await;
    assert_eq!((status, body), (400, error("User not authorized for this query")));
    let (_, body) = get(&app, &alice, "/streams/1").await;
    assert_eq!(body["stream"]["name"], "public");
    expect(app.as_user(&alice, Method::GET, "/streams/99").send().await.unwrap(), 400, error("Invalid channel ID"))
        .await;
    let (_, body) = get(&app, &bob, &format!("/users/{}/subscriptions/1", alice.user_id)).await;
    assert_eq!(body, json!({"result": "success", "msg": "", "is_subscribed": true}));
    let (_, body) = get(&app, &bob, &format!("/users/{}/subscriptions/1", bob.user_id)).await;
    assert_eq!(body["is_subscribed"], false);
}

#[actix_web::test]
async fn python_client_remove_subscriptions() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &alice, "general", &[("principals", &format!("[{}, {}]", alice.user_id, bob.user_id))]).await;
    subscribe(&app, &alice, "other", &[]).await;
    let types = r#"["subscription"]"#;
    let mut w_alice = Watch::new(&app, &alice, types).await;
    let mut w_bob = Watch::new(&app, &bob, types).await;
    let response =
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["general", "other"]"#)])
            .await;
    expect(response, 200, json!({"result": "success", "msg": "", "removed": ["general"], "not_removed": ["other"]}))
        .await;
    assert_eq!(
        w_bob.events(&app).await,
        vec![json!({"type": "subscription", "op": "remove", "subscriptions": [{"name": "general", "stream_id": 1}]})]
    );
    assert_eq!(
        w_alice.events(&app).await,
        vec![json!({"type": "subscription", "op": "peer_remove", "stream_ids": [1], "user_ids": [bob.user_id]})]
    );
    let response =
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["nope", "nada"]"#)]).await;
    expect(response, 400, error("Channel(s) (nope, nada) do not exist")).await;
    // Removing others: members may not, administrators may.
    let principals = format!("[{}]", alice.user_id);
    let form = [("subscriptions", r#"["general"]"#), ("principals", principals.as_str())];
    expect(
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &form).await,
        400,
        error("Insufficient permission"),
    )
    .await;
    expect(
        send(&app, &app.owner, Method::DELETE, "/users/me/subscriptions", &form).await,
        200,
        json!({"result": "success", "msg": "", "removed": ["general"], "not_removed": []}),
    )
    .await;
    // Members of can_remove_subscribers_group may remove others too.
    subscribe(&app, &alice, "general", &[]).await;
    let setting = json!({"new": MEMBERS}).to_string();
    let response =
        send(&app, &alice, Method::PATCH, "/streams/1", &[("can_remove_subscribers_group", setting.as_str())]).await;
    expect(response, 200, success()).await;
    expect(
        send(&app, &bob, Method::DELETE, "/users/me/subscriptions", &form).await,
        200,
        json!({"result": "success", "msg": "", "removed": ["general"], "not_removed": []}),
    )
    .await;
    // Resubscribing keeps the personal color.
    let (_, body) = subscribe(&app, &alice, "general", &[]).await;
    assert_eq!(body["subscribed"], json!({ alice.user_id.to_string(): ["general"] }));
    let (_, body) = get(&app, &alice, "/users/me/subscriptions").await;
    assert_eq!(body["subscriptions"][0]["color"], "#76ce90");
}

#[actix_web::test]
async fn update_channel_properties_and_events() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &alice, "general", &[]).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["stream"]"#).await;
    // Bob is neither an administrator nor in can_administer_channel_group.
    expect(
        send(&app, &bob, Method::PATCH, "/streams/1", &[("new_name", "mine")]).await,
        400,
        error("You do not have permission to administer this channel."),
    )
    .await;
    expect(send(&app, &alice, Method::PATCH, "/streams/1", &[("description", "**Hi**\nthere")]).await, 200, success())
        .await;
    expect(send(&app, &alice, Method::PATCH, "/streams/1", &[("new_name", "lobby")]).await, 200, success()).await;
    let response = send(
        &app,
        &alice,
        Method::PATCH,
        "/streams/1",
        &[("can_send_message_group", &json!({"new": ADMINISTRATORS, "old": EVERYONE}).to_string())],
    )
    .await;
    expect(response, 200, success()).await;
    assert_eq!(
        w_bob.events(&app).await,
        vec![
            json!({"type": "stream", "op": "update", "property": "description", "value": "**Hi** there", "stream_id": 1,
                "name": "general", "rendered_description": "<p><strong>Hi</strong> there</p>"}),
            json!({"type": "stream", "op": "update", "property": "name", "value": "lobby", "stream_id": 1, "name": "general"}),
            json!({"type": "stream", "op": "update", "property": "can_send_message_group", "value": ADMINISTRATORS,
                "stream_id": 1, "name": "lobby"}),
            json!({"type": "stream", "op": "update", "property": "stream_post_policy", "value": 2, "stream_id": 1,
                "name": "lobby"}),
        ]
    );
    let (_, body) = get(&app, &bob, "/streams/1").await;
    assert_eq!(body["stream"]["is_announcement_only"], true);
    // A mismatched `old` is refused.
    let response = send(
        &app,
        &alice,
        Method::PATCH,
        "/streams/1",
        &[("can_send_message_group", &json!({"new": MEMBERS, "old": EVERYONE}).to_string())],
    )
    .await;
    expect(
        response,
        400,
        json!({"result": "error", "msg": "'old' value does not match the expected value.", "code": "EXPECTATION_MISMATCH"}),
    )
    .await;
    subscribe(&app, &alice, "taken", &[]).await;
    expect(
        send(&app, &alice, Method::PATCH, "/streams/1", &[("new_name", "Taken")]).await,
        400,
        error("Channel name is already in use."),
    )
    .await;
    expect(
        send(&app, &alice, Method::PATCH, "/streams/1", &[("message_retention_days", "30")]).await,
        400,
        json!({"result": "error", "msg": "Must be an organization owner", "code": "UNAUTHORIZED_PRINCIPAL"}),
    )
    .await;
    expect(
        send(&app, &app.owner, Method::PATCH, "/streams/1", &[("message_retention_days", "unlimited")]).await,
        200,
        success(),
    )
    .await;
    let (_, body) = get(&app, &bob, "/streams/1").await;
    assert_eq!(body["stream"]["message_retention_days"], -1);
}

#[actix_web::test]
async fn privacy_changes_create_and_delete_for_who_gains_or_loses_access() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &alice, "general", &[]).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["stream"]"#).await;
    let mut w_alice = Watch::new(&app, &alice, r#"["stream"]"#).await;
    expect(send(&app, &alice, Method::PATCH, "/streams/1", &[("is_private", "true")]).await, 200, success()).await;
    let events = w_bob.events(&app).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["op"], "delete");
    assert_eq!(events[0]["stream_ids"], json!([1]));
    assert_eq!(
        w_alice.events(&app).await,
        vec![
            json!({"type": "stream", "op": "update", "property": "invite_only", "value": true, "stream_id": 1,
                "name": "general", "history_public_to_subscribers": false, "is_web_public": false}),
            json!({"type": "stream", "op": "update", "property": "history_public_to_subscribers", "value": false,
                "stream_id": 1, "name": "general"}),
        ]
    );
    expect(send(&app, &alice, Method::PATCH, "/streams/1", &[("is_private", "false")]).await, 200, success()).await;
    let events = w_bob.events(&app).await;
    assert_eq!(events[0]["op"], "create");
    assert_eq!(events[0]["streams"][0]["invite_only"], false);
}

#[actix_web::test]
async fn archiving_a_channel() {
    let app = spawn_app().await;
    channel_event_notices_on(&app).await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &app.owner, "general", &[("is_default_stream", "true")]).await;
    let form = [("type", "stream"), ("to", "general"), ("topic", "plans"), ("content", "Before the archive.")];
    let (_, sent) = json(post(&app, &app.owner, "/messages", &form).await).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["stream", "default_streams"]"#).await;
    // A client without the `archived_channels` capability.
    let legacy = r#"{"notification_settings_null":true}"#;
    let mut w_legacy =
        Watch::with_form(&app, &alice, &[("event_types", r#"["stream"]"#), ("client_capabilities", legacy)]).await;
    expect(
        send(&app, &alice, Method::DELETE, "/streams/1", &[]).await,
        400,
        error("You do not have permission to administer this channel."),
    )
    .await;
    expect(send(&app, &app.owner, Method::DELETE, "/streams/1", &[]).await, 200, success()).await;
    assert_eq!(
        w_bob.events(&app).await,
        vec![
            json!({"type": "stream", "op": "update", "property": "is_archived", "value": true, "stream_id": 1,
                "name": "general"}),
            json!({"type": "default_streams", "default_streams": []}),
        ]
    );
    let legacy_events = w_legacy.events(&app).await;
    // Since feature level 343 the legacy `streams` carry only the ids (no `for_archive`).
    assert_eq!(
        legacy_events,
        vec![json!({"type": "stream", "op": "delete", "streams": [{"stream_id": 1}], "stream_ids": [1]})]
    );
    expect(
        send(&app, &app.owner, Method::DELETE, "/streams/1", &[]).await,
        400,
        error("Channel is already deactivated"),
    )
    .await;
    let (_, body) = get(&app, &bob, "/streams").await;
    assert_eq!(body["streams"], json!([]));
    let (_, body) = get(&app, &bob, "/streams?exclude_archived=false").await;
    assert_eq!(body["streams"][0]["is_archived"], true);
    let (status, body) = subscribe(&app, &bob, "general", &[]).await;
    assert_eq!((status, body), (400, error("Channel 'general' is archived.")));

    // Since feature level 480 an archived channel, its subscribers and its topics are readable.
    let (status, body) = get(&app, &bob, "/streams/1").await;
    assert_eq!(
        (status, &body["stream"]["name"], &body["stream"]["is_archived"]),
        (200, &json!("general"), &json!(true))
    );
    let (status, body) = get(&app, &bob, "/streams/1/members").await;
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "subscribers": [app.owner.user_id]})));
    let (status, body) = get(&app, &bob, "/users/me/1/topics").await;
    assert_eq!(status, 200);
    // The newest message is Notification Bot's "Channel #**general** has been archived.".
    let archived_notice = body["topics"][0]["max_id"].as_i64().unwrap();
    assert!(archived_notice > sent["id"].as_i64().unwrap());
    let topics =
        json!([{"name": "channel events", "max_id": archived_notice}, {"name": "plans", "max_id": sent["id"]}]);
    assert_eq!(body, json!({"result": "success", "msg": "", "topics": topics}));
}

#[actix_web::test]
async fn default_streams_endpoints_and_data_set() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &alice, "general", &[]).await;
    private_channel(&app, &alice).await;
    let mut w_bob = Watch::new(&app, &bob, r#"["default_streams"]"#).await;
    expect(
        post(&app, &alice, "/default_streams", &[("stream_id", "1")]).await,
        400,
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"}),
    )
    .await;
    expect(
        post(&app, &app.owner, "/default_streams", &[("stream_id", "2")]).await,
        400,
        error("Private channels cannot be made default."),
    )
    .await;
    expect(post(&app, &app.owner, "/default_streams", &[("stream_id", "1")]).await, 200, success()).await;
    assert_eq!(w_bob.events(&app).await, vec![json!({"type": "default_streams", "default_streams": [1]})]);
    let state = register(&app, &bob, &[("fetch_event_types", r#"["default_streams"]"#)]).await;
    assert_eq!(state["realm_default_streams"], json!([1]));
    let (_, body) = get(&app, &app.owner, "/streams?include_default=true").await;
    assert_eq!(body["streams"][0]["is_default"], true);
    // The list as channel objects; guests are not told it.
    let (status, body) = get(&app, &bob, "/default_streams").await;
    assert_eq!((status, body["default_streams"][0]["stream_id"].clone()), (200, json!(1)));
    assert_eq!(body["default_streams"].as_array().unwrap().len(), 1);
    let guest = app.create_user("", "gina@agora.test", "Gina", 600).await;
    let mut w_guest = Watch::new(&app, &guest, r#"["default_streams"]"#).await;
    let (_, body) = get(&app, &guest, "/default_streams").await;
    assert_eq!(body["default_streams"], json!([]));
    let state = register(&app, &guest, &[("fetch_event_types", r#"["default_streams"]"#)]).await;
    assert_eq!(state["realm_default_streams"], json!([]));
    expect(send(&app, &app.owner, Method::DELETE, "/default_streams", &[("stream_id", "1")]).await, 200, success())
        .await;
    assert_eq!(w_bob.events(&app).await, vec![json!({"type": "default_streams", "default_streams": []})]);
    assert_eq!(w_guest.events(&app).await, Vec::<Value>::new());
    // Removing it again changes nothing.
    expect(send(&app, &app.owner, Method::DELETE, "/default_streams", &[("stream_id", "1")]).await, 200, success())
        .await;
    assert_eq!(w_bob.events(&app).await, Vec::<Value>::new());
}

#[actix_web::test]
async fn register_subscription_data_sets() {
    let app = spawn_app().await;
    let (alice, bob, _) = users(&app).await;
    subscribe(&app, &alice, "joined", &[]).await;
    subscribe(&app, &alice, "left", &[]).await;
    subscribe(&app, &bob, "never", &[]).await;
    send(&app, &alice, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["left"]"#)]).await;
    let state = register(
        &app,
        &alice,
        &[("fetch_event_types", r#"["subscription", "stream"]"#), ("include_subscribers", "true")],
    )
    .await;
    let names = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(&state["subscriptions"]), ["joined"]);
    assert_eq!(names(&state["unsubscribed"]), ["left"]);
    assert_eq!(names(&state["never_subscribed"]), ["never"]);
    assert_eq!(names(&state["streams"]), ["joined", "left", "never"]);
    assert_eq!(state["subscriptions"][0]["subscribers"], json!([alice.user_id]));
    assert_eq!(state["never_subscribed"][0]["subscribers"], json!([bob.user_id]));
    let never = state["never_subscribed"][0].as_object().unwrap();
    assert!(!never.contains_key("color"));
    let state =
        register(&app, &alice, &[("fetch_event_types", r#"["subscription"]"#), ("include_subscribers", "partial")])
            .await;
    assert_eq!(state["subscriptions"][0]["partial_subscribers"], json!([alice.user_id]));
    // Without `notification_settings_null`, null settings are the user's own.
    let state = register(&app, &alice, &[("fetch_event_types", r#"["subscription", "user_settings"]"#)]).await;
    let (sub, settings) = (&state["subscriptions"][0], &state["user_settings"]);
    assert_eq!(sub["desktop_notifications"], settings["enable_stream_desktop_notifications"]);
    assert_eq!(sub["wildcard_mentions_notify"], settings["wildcard_mentions_notify"]);
    assert_eq!(sub["audible_notifications"], settings["enable_stream_audible_notifications"]);
    assert!(sub["push_notifications"].is_boolean());
    let capable = r#"{"notification_settings_null":true}"#;
    let state =
        register(&app, &alice, &[("fetch_event_types", r#"["subscription"]"#), ("client_capabilities", capable)]).await;
    assert_eq!(state["subscriptions"][0]["desktop_notifications"], Value::Null);
}

#[actix_web::test]
async fn channel_administration_by_role() {
    let app = spawn_app().await;
    let (alice, _, guest) = users(&app).await;
    let admin = app.create_user("", "ada@agora.test", "Ada Admin", 200).await;
    let moderator = app.create_user("", "mo@agora.test", "Mo Moderator", 300).await;
    subscribe(&app, &alice, "general", &[]).await;
    let refused = error("You do not have permission to administer this channel.");
    for who in [&moderator] {
        expect(send(&app, who, Method::PATCH, "/streams/1", &[("description", "x")]).await, 400, refused.clone()).await;
        expect(send(&app, who, Method::DELETE, "/streams/1", &[]).await, 400, refused.clone()).await;
    }
    // A guest does not even see the channel.
    expect(
        send(&app, &guest, Method::PATCH, "/streams/1", &[("description", "x")]).await,
        400,
        error("Invalid channel ID"),
    )
    .await;
    // Administrators act as members of can_administer_channel_group.
    expect(send(&app, &admin, Method::PATCH, "/streams/1", &[("description", "by admin")]).await, 200, success()).await;
    // Subscription status: the user is looked up first.
    expect(
        app.as_user(&alice, Method::GET, "/users/999/subscriptions/99").send().await.unwrap(),
        400,
        error("No such user"),
    )
    .await;
    // Deactivated users are not listed as subscribers.
    subscribe(&app, &alice, "general", &[("principals", &format!("[{}]", moderator.user_id))]).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/users/{}", moderator.user_id), &[]).await, 200, success())
        .await;
    let (_, body) = get(&app, &alice, "/streams/1/members").await;
    assert_eq!(body["subscribers"], json!([alice.user_id]));
    let (_, body) = get(&app, &alice, "/streams/1").await;
    assert_eq!(body["stream"]["subscriber_count"], 1);
}

/// A subscription entry's `color` is the new subscriptions' color; a bad one is refused.
#[actix_web::test]
async fn subscription_entries_may_choose_the_color() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let form = [("subscriptions", r##"[{"name": "ops", "color": "#ff0000"}]"##)];
    let response = app.as_user(&o, Method::POST, "/users/me/subscriptions").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let (_, body) = json(app.as_user(&o, Method::GET, "/users/me/subscriptions").send().await.unwrap()).await;
    assert_eq!(body["subscriptions"][0]["color"], "#ff0000");
    let form = [("subscriptions", r#"[{"name": "dev", "color": "red"}]"#)];
    let response = app.as_user(&o, Method::POST, "/users/me/subscriptions").form(&form).send().await.unwrap();
    expect(
        response,
        400,
        json!({"result": "error", "msg": "color is not a valid hex color code", "code": "BAD_REQUEST"}),
    )
    .await;
    // An archived channel cannot become a default one.
    expect(send(&app, &app.owner, Method::DELETE, "/streams/1", &[]).await, 200, success()).await;
    expect(post(&app, &app.owner, "/default_streams", &[("stream_id", "1")]).await, 400, error("Invalid channel ID"))
        .await;
    app.stop().await;
}

/// Stored script: a channel description's links to `javascript:` (plain or
/// entity-encoded) are not made; `rendered_description` shows them as written.
#[actix_web::test]
async fn description_links_to_script_urls_are_rendered_as_text() {
    let app = spawn_app().await;
    let description = "[x](javascript:alert(1)) [y](&#106;avascript:alert(1)) <javascript:alert(2)>";
    let subs = json!([{"name": "xss", "description": description}]).to_string();
    let (status, body) =
        json(post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", &subs)]).await).await;
    assert_eq!(status, 200, "{body}");
    let id = channel_id(&app, "xss").await;
    let rendered = "<p>[x](javascript:alert(1)) [y](&amp;#106;avascript:alert(1)) &lt;javascript:alert(2)&gt;</p>";
    let (_, body) = get(&app, &app.owner, &format!("/streams/{id}")).await;
    assert_eq!(body["stream"]["rendered_description"], rendered);
    // The same when the description is changed.
    let changed = "[z](JaVaScRiPt&colon;alert(3))";
    let path = format!("/streams/{id}");
    expect(send(&app, &app.owner, Method::PATCH, &path, &[("description", changed)]).await, 200, success()).await;
    let (_, body) = get(&app, &app.owner, &path).await;
    assert_eq!(body["stream"]["rendered_description"], "<p>[z](JaVaScRiPt&amp;colon;alert(3))</p>");
}
