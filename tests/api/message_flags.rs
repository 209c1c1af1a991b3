//! Message flags and unread state over HTTP: `POST /messages/flags`, the `mark_*_as_read`
//! endpoints, their `update_message_flags` events and the register data sets
//! `unread_msgs`, `starred_messages` and `recent_private_conversations`, and
//! `POST /messages/flags/narrow`. Messages are sent with `POST /messages`.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, post, register, spawn_app, spawn_app_at, success, Creds, TestApp, Watch,
};

const FLAG_EVENTS: &str = r#"["update_message_flags"]"#;
const UNREAD: &str = r#"["message", "update_message_flags"]"#;

/// `POST /messages/flags`.
async fn flags(app: &TestApp, who: &Creds, op: &str, flag: &str, messages: &[i64]) -> Response {
    let messages = json!(messages).to_string();
    post(app, who, "/messages/flags", &[("messages", messages.as_str()), ("op", op), ("flag", flag)]).await
}

/// The success body of `POST /messages/flags`.
fn flags_ok(messages: &[i64], ignored: &[i64]) -> Value {
    json!({"result": "success", "msg": "", "messages": messages, "ignored_because_not_subscribed_channels": ignored})
}

/// An `update_message_flags` event for specific messages.
fn flag_event(op: &str, flag: &str, messages: &[i64]) -> Value {
    json!({"type": "update_message_flags", "op": op, "operation": op, "flag": flag, "messages": messages, "all": false})
}

/// A channel created by the owner with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let invite_only = invite_only.to_string();
    let form = [("name", name), ("subscribers", ids.as_str()), ("invite_only", invite_only.as_str())];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Sends `content` through `POST /messages` (`to` as the API takes it) and returns its id.
/// The message is read for its sender, as for the web app.
async fn send(app: &TestApp, sender: &Creds, kind: &str, to: &str, topic: &str, content: &str) -> i64 {
    let form = [("type", kind), ("to", to), ("topic", topic), ("content", content), ("read_by_sender", "true")];
    let (status, body) = json(post(app, sender, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// A channel message with `content` (mentions set their flags).
async fn says(app: &TestApp, sender: &Creds, channel: i64, topic: &str, content: &str) -> i64 {
    send(app, sender, "stream", &channel.to_string(), topic, content).await
}

/// A channel message (unread for every subscriber but the sender).
async fn message(app: &TestApp, sender: &Creds, channel: i64, topic: &str) -> i64 {
    says(app, sender, channel, topic, "hello").await
}

/// A direct message from `sender` to `to` (to themselves when `to` is empty).
async fn direct(app: &TestApp, sender: &Creds, to: &[&Creds]) -> i64 {
    let to = if to.is_empty() { vec![sender.user_id] } else { to.iter().map(|c| c.user_id).collect() };
    send(app, sender, "direct", &json!(to).to_string(), "", "hello").await
}

/// `who`'s register data for `fetch_event_types`.
async fn data(app: &TestApp, who: &Creds, types: &str) -> Value {
    register(
        app,
        who,
        &[
            ("fetch_event_types", types),
            ("client_capabilities", r#"{"notification_settings_null":true,"empty_topic_name":true}"#),
        ],
    )
    .await
}

async fn unread(app: &TestApp, who: &Creds) -> Value {
    data(app, who, UNREAD).await["unread_msgs"].clone()
}

async fn starred(app: &TestApp, who: &Creds) -> Value {
    data(app, who, r#"["starred_messages"]"#).await["starred_messages"].clone()
}

fn no_unreads() -> Value {
    json!({"pms": [], "streams": [], "huddles": [], "mentions": [], "count": 0, "old_unreads_missing": false})
}

#[actix_web::test]
async fn flag_errors_have_zulips_messages_and_change_nothing() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let secret = channel(&app, "secret", true, &[&bob]).await;
    let hidden = message(&app, &bob, secret, "plans").await;
    let dm = direct(&app, &bob, &[&app.owner]).await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    let form = |skip: &str| {
        [("messages", "[1]"), ("op", "add"), ("flag", "read")]
            .into_iter()
            .filter(|(k, _)| *k != skip)
            .collect::<Vec<_>>()
    };
    for name in ["flag", "messages", "op"] {
        expect(post(&app, &alice, "/messages/flags", &form(name)).await, 400, missing(name)).await;
    }
    let bad_list = [("messages", "[\"x\"]"), ("op", "add"), ("flag", "read")];
    let (status, _) = json(post(&app, &alice, "/messages/flags", &bad_list).await).await;
    assert_eq!(status, 400);
    expect(flags(&app, &alice, "add", "bogus", &[dm]).await, 400, error("Invalid flag: 'bogus'")).await;
    expect(flags(&app, &alice, "add", "is_private", &[dm]).await, 400, error("Invalid flag: 'is_private'")).await;
    for name in ["mentioned", "historical", "has_alert_word", "force_expand"] {
        let msg = format!("Flag not editable: '{name}'");
        expect(flags(&app, &alice, "add", name, &[dm]).await, 400, error(&msg)).await;
    }
    let msg = "Invalid message flag operation: 'toggle'";
    expect(flags(&app, &alice, "toggle", "starred", &[dm]).await, 400, error(msg)).await;
    // Someone else's direct message, a private channel's message, a message that does not exist.
    for id in [dm, hidden, 999_999] {
        expect(flags(&app, &alice, "add", "starred", &[id]).await, 400, error("Invalid message(s)")).await;
    }
    for id in [dm, 999_999] {
        expect(flags(&app, &alice, "remove", "read", &[id]).await, 400, error("Invalid message(s)")).await;
    }
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    // Marking unread skips the messages of channels the user is not subscribed to.
    expect(flags(&app, &alice, "remove", "read", &[hidden]).await, 200, flags_ok(&[hidden], &[secret])).await;
    let mut skipped = flag_event("remove", "read", &[]);
    skipped["message_details"] = json!({});
    assert_eq!(watch.events(&app).await, vec![skipped]);
    assert_eq!(starred(&app, &alice).await, json!([]));
    // As in Zulip, flags a message without a row already has (read, not starred) need no
    // access: the request succeeds and changes nothing.
    expect(flags(&app, &alice, "add", "read", &[dm]).await, 200, flags_ok(&[dm], &[])).await;
    expect(flags(&app, &alice, "remove", "starred", &[hidden]).await, 200, flags_ok(&[hidden], &[])).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[]), flag_event("remove", "starred", &[])]);
    app.stop().await;
}

#[actix_web::test]
async fn starring_sends_the_changed_messages_to_the_user_alone() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let (m1, m2) = (message(&app, &bob, general, "a").await, message(&app, &bob, general, "b").await);
    let mut alice_watch = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let mut bob_watch = Watch::new(&app, &bob, FLAG_EVENTS).await;

    expect(flags(&app, &alice, "add", "starred", &[m1]).await, 200, flags_ok(&[m1], &[])).await;
    assert_eq!(alice_watch.events(&app).await, vec![flag_event("add", "starred", &[m1])]);
    // Only messages whose flag changes are listed; the response echoes the request.
    expect(flags(&app, &alice, "add", "starred", &[m2, m1]).await, 200, flags_ok(&[m2, m1], &[])).await;
    assert_eq!(alice_watch.events(&app).await, vec![flag_event("add", "starred", &[m2])]);
    assert_eq!(starred(&app, &alice).await, json!([m1, m2]));
    expect(flags(&app, &alice, "remove", "starred", &[m1]).await, 200, flags_ok(&[m1], &[])).await;
    assert_eq!(alice_watch.events(&app).await, vec![flag_event("remove", "starred", &[m1])]);
    assert_eq!(starred(&app, &alice).await, json!([m2]));
    expect(flags(&app, &alice, "add", "collapsed", &[m1]).await, 200, flags_ok(&[m1], &[])).await;
    assert_eq!(alice_watch.events(&app).await, vec![flag_event("add", "collapsed", &[m1])]);
    assert_eq!(bob_watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(starred(&app, &bob).await, json!([]));
    app.stop().await;
}

#[actix_web::test]
async fn starring_an_unreceived_public_message_creates_a_read_historical_row() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let general = channel(&app, "general", false, &[&bob]).await;
    let id = message(&app, &bob, general, "old").await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    // Guests may not see public channels they are not subscribed to.
    expect(flags(&app, &guest, "add", "starred", &[id]).await, 400, error("Invalid message(s)")).await;
    expect(flags(&app, &alice, "add", "starred", &[id]).await, 200, flags_ok(&[id], &[])).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "starred", &[id])]);
    assert_eq!(starred(&app, &alice).await, json!([id]));
    // The historical row is read, and marking a message of an unsubscribed channel unread
    // is skipped.
    assert_eq!(unread(&app, &alice).await, no_unreads());
    expect(flags(&app, &alice, "remove", "read", &[id]).await, 200, flags_ok(&[id], &[general])).await;
    let mut event = flag_event("remove", "read", &[]);
    event["message_details"] = json!({});
    assert_eq!(watch.events(&app).await, vec![event]);
    assert_eq!(unread(&app, &alice).await, no_unreads());
    app.stop().await;
}

#[actix_web::test]
async fn marking_unread_sends_message_details() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let owner = app.owner.clone();
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let mention = says(&app, &bob, general, "Lunch", "@**Alice** hi").await;
    let dm = direct(&app, &bob, &[&alice]).await;
    let group = direct(&app, &bob, &[&alice, &owner]).await;
    let own = direct(&app, &alice, &[]).await;
    let all = [own, group, dm, mention];
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let mut bob_watch = Watch::new(&app, &bob, FLAG_EVENTS).await;

    expect(flags(&app, &alice, "add", "read", &all).await, 200, flags_ok(&all, &[])).await;
    // The sender's own message is already read.
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[group, dm, mention])]);
    assert_eq!(unread(&app, &alice).await, no_unreads());

    expect(flags(&app, &alice, "remove", "read", &all).await, 200, flags_ok(&all, &[])).await;
    let mut event = flag_event("remove", "read", &all);
    let mut ids = [alice.user_id, owner.user_id, bob.user_id];
    ids.sort_unstable();
    let others: Vec<i64> = ids.into_iter().filter(|id| *id != alice.user_id).collect();
    event["message_details"] = json!({
        dm.to_string(): {"type": "private", "user_ids": [bob.user_id]},
        own.to_string(): {"type": "private", "user_ids": []},
        mention.to_string(): {"type": "stream", "stream_id": general, "topic": "Lunch", "unmuted_stream_msg": true, "mentioned": true},
        group.to_string(): {"type": "private", "user_ids": others},
    });
    let events = watch.events(&app).await;
    assert_eq!(events, vec![event.clone()]);
    // Zulip's order: one-on-one conversations, channel messages, group conversations.
    let keys: Vec<&String> = events[0]["message_details"].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec![&dm.to_string(), &own.to_string(), &mention.to_string(), &group.to_string()]);
    let key = ids.iter().map(|id| id.to_string()).collect::<Vec<_>>().join(",");
    assert_eq!(
        unread(&app, &alice).await,
        json!({
            "pms": [
                {"other_user_id": alice.user_id, "sender_id": alice.user_id, "unread_message_ids": [own]},
                {"other_user_id": bob.user_id, "sender_id": bob.user_id, "unread_message_ids": [dm]},
            ],
            "streams": [{"stream_id": general, "topic": "Lunch", "unread_message_ids": [mention]}],
            "huddles": [{"user_ids_string": key, "unread_message_ids": [group]}],
            "mentions": [mention],
            "count": 4,
            "old_unreads_missing": false,
        })
    );
    assert_eq!(bob_watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn unread_msgs_aggregates_topics_mutes_and_mentions_as_zulip() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let quiet = channel(&app, "quiet", false, &[&alice, &bob]).await;
    let lunch = message(&app, &bob, general, "Lunch").await;
    let lunch_lower = message(&app, &bob, general, "lunch").await;
    let muted_wildcard = says(&app, &bob, general, "noise", "@**all** hi").await;
    let muted_mention = says(&app, &bob, general, "noise", "@**Alice** hi").await;
    let empty = message(&app, &bob, general, "").await;
    let in_quiet = message(&app, &bob, quiet, "x").await;
    let followed = message(&app, &bob, quiet, "watched").await;
    let wildcard = says(&app, &bob, general, "Lunch", "@**all** hi").await;
    let policy = |channel: i64, topic: &'static str, policy: &'static str| {
        let channel = channel.to_string();
        let alice = alice.clone();
        let app = &app;
        async move {
            let form = [("stream_id", channel.as_str()), ("topic", topic), ("visibility_policy", policy)];
            assert_eq!(post(app, &alice, "/user_topics", &form).await.status().as_u16(), 200);
        }
    };
    policy(general, "noise", "1").await;
    policy(quiet, "watched", "3").await;
    let muting = json!([{"stream_id": quiet, "property": "is_muted", "value": true}]).to_string();
    let response = post(&app, &alice, "/users/me/subscriptions/properties", &[("subscription_data", &muting)]).await;
    assert_eq!(response.status().as_u16(), 200);

    let expected = json!({
        "pms": [],
        "streams": [
            {"stream_id": general, "topic": "", "unread_message_ids": [empty]},
            {"stream_id": general, "topic": "Lunch", "unread_message_ids": [lunch, lunch_lower, wildcard]},
            {"stream_id": general, "topic": "noise", "unread_message_ids": [muted_wildcard, muted_mention]},
            {"stream_id": quiet, "topic": "watched", "unread_message_ids": [followed]},
            {"stream_id": quiet, "topic": "x", "unread_message_ids": [in_quiet]},
        ],
        "huddles": [],
        "mentions": [muted_mention, wildcard],
        "count": 5,
        "old_unreads_missing": false,
    });
    assert_eq!(unread(&app, &alice).await, expected);
    // Clients without `empty_topic_name` see the empty topic by its display name.
    let old = register(&app, &alice, &[("fetch_event_types", UNREAD)]).await;
    assert_eq!(old["unread_msgs"]["streams"][0]["topic"], json!("general chat"));
    // Both `message` and `update_message_flags` are needed.
    let partial = data(&app, &alice, r#"["update_message_flags"]"#).await;
    assert!(partial.get("unread_msgs").is_none(), "{partial}");
    app.stop().await;
}

#[actix_web::test]
async fn mark_all_as_read_completes_with_one_event() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    message(&app, &bob, general, "a").await;
    let dm = direct(&app, &alice, &[&bob]).await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let mut bob_watch = Watch::new(&app, &bob, FLAG_EVENTS).await;

    expect(
        post(&app, &alice, "/mark_all_as_read", &[]).await,
        200,
        json!({"result": "success", "msg": "", "complete": true}),
    )
    .await;
    let all = json!({"type": "update_message_flags", "op": "add", "operation": "add", "flag": "read", "messages": [], "all": true});
    assert_eq!(watch.events(&app).await, vec![all]);
    assert_eq!(unread(&app, &alice).await, no_unreads());
    assert_eq!(bob_watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(
        unread(&app, &bob).await["pms"],
        json!([{"other_user_id": alice.user_id, "sender_id": alice.user_id, "unread_message_ids": [dm]}])
    );
    app.stop().await;
}

#[actix_web::test]
async fn mark_stream_and_topic_as_read() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let other = channel(&app, "other", false, &[&alice, &bob]).await;
    let secret = channel(&app, "secret", true, &[&bob]).await;
    let a1 = message(&app, &bob, general, "Apples").await;
    let b1 = message(&app, &bob, general, "bananas").await;
    let a2 = message(&app, &bob, general, "apples").await;
    let o1 = message(&app, &bob, other, "x").await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let mut bob_watch = Watch::new(&app, &bob, FLAG_EVENTS).await;
    let (g, s) = (general.to_string(), secret.to_string());

    expect(post(&app, &alice, "/mark_stream_as_read", &[]).await, 400, missing("stream_id")).await;
    expect(post(&app, &alice, "/mark_topic_as_read", &[("topic_name", "x")]).await, 400, missing("stream_id")).await;
    expect(post(&app, &alice, "/mark_topic_as_read", &[("stream_id", &g)]).await, 400, missing("topic_name")).await;
    for id in [s.as_str(), "999999"] {
        expect(
            post(&app, &alice, "/mark_stream_as_read", &[("stream_id", id)]).await,
            400,
            error("Invalid channel ID"),
        )
        .await;
        let form = [("stream_id", id), ("topic_name", "x")];
        expect(post(&app, &alice, "/mark_topic_as_read", &form).await, 400, error("Invalid channel ID")).await;
    }
    let form = [("stream_id", g.as_str()), ("topic_name", "cherries")];
    expect(post(&app, &alice, "/mark_topic_as_read", &form).await, 400, error("No such topic 'cherries'")).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    // Topics match case-insensitively.
    let form = [("stream_id", g.as_str()), ("topic_name", "APPLES")];
    expect(post(&app, &alice, "/mark_topic_as_read", &form).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[a1, a2])]);
    // Nothing left to mark: no event.
    expect(post(&app, &alice, "/mark_topic_as_read", &form).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    let streams = json!([
        {"stream_id": general, "topic": "bananas", "unread_message_ids": [b1]},
        {"stream_id": other, "topic": "x", "unread_message_ids": [o1]},
    ]);
    assert_eq!(unread(&app, &alice).await["streams"], streams);

    expect(post(&app, &alice, "/mark_stream_as_read", &[("stream_id", &g)]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[b1])]);
    assert_eq!(
        unread(&app, &alice).await["streams"],
        json!([{"stream_id": other, "topic": "x", "unread_message_ids": [o1]}])
    );
    assert_eq!(bob_watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

#[actix_web::test]
async fn recent_private_conversations_most_recent_first() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    direct(&app, &bob, &[&alice]).await;
    let group = direct(&app, &carol, &[&alice, &bob]).await;
    let own = direct(&app, &alice, &[]).await;
    message(&app, &bob, general, "not a conversation").await;
    let latest_bob = direct(&app, &alice, &[&bob]).await;
    direct(&app, &bob, &[&carol]).await;

    let mut pair = [bob.user_id, carol.user_id];
    pair.sort_unstable();
    let expected = json!([
        {"max_message_id": latest_bob, "user_ids": [bob.user_id]},
        {"max_message_id": own, "user_ids": []},
        {"max_message_id": group, "user_ids": pair},
    ]);
    let body = data(&app, &alice, r#"["recent_private_conversations"]"#).await;
    assert_eq!(body["recent_private_conversations"], expected);
    assert!(body.get("starred_messages").is_none() && body.get("unread_msgs").is_none(), "{body}");
    app.stop().await;
}

#[actix_web::test]
async fn flags_survive_a_restart() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let (m1, m2) = (message(&app, &bob, general, "a").await, message(&app, &bob, general, "a").await);
    expect(flags(&app, &alice, "add", "starred", &[m2]).await, 200, flags_ok(&[m2], &[])).await;
    expect(flags(&app, &alice, "add", "read", &[m1]).await, 200, flags_ok(&[m1], &[])).await;
    let before = data(&app, &alice, r#"["message", "update_message_flags", "starred_messages"]"#).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let after = data(&app, &alice, r#"["message", "update_message_flags", "starred_messages"]"#).await;
    assert_eq!(after["starred_messages"], json!([m2]));
    assert_eq!(
        after["unread_msgs"]["streams"],
        json!([{"stream_id": general, "topic": "a", "unread_message_ids": [m2]}])
    );
    assert_eq!(
        (&before["starred_messages"], &before["unread_msgs"]),
        (&after["starred_messages"], &after["unread_msgs"])
    );
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn old_clients_see_the_empty_topic_named_in_mark_unread_details() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let id = message(&app, &bob, general, "").await;
    expect(flags(&app, &alice, "add", "read", &[id]).await, 200, flags_ok(&[id], &[])).await;
    let mut modern = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let form = [("event_types", FLAG_EVENTS), ("client_capabilities", r#"{"notification_settings_null":true}"#)];
    let mut old = Watch::with_form(&app, &alice, &form).await;

    expect(flags(&app, &alice, "remove", "read", &[id]).await, 200, flags_ok(&[id], &[])).await;
    let details = |topic: &str| {
        let mut event = flag_event("remove", "read", &[id]);
        event["message_details"] = json!({
            id.to_string(): {"type": "stream", "stream_id": general, "topic": topic, "unmuted_stream_msg": true},
        });
        event
    };
    assert_eq!(modern.events(&app).await, vec![details("")]);
    assert_eq!(old.events(&app).await, vec![details("general chat")]);
    app.stop().await;
}

#[actix_web::test]
async fn an_empty_topic_name_marks_the_whole_channel_read() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let a = message(&app, &bob, general, "a").await;
    let b = message(&app, &bob, general, "b").await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    // As in Zulip, which treats an empty `topic_name` as no topic.
    let g = general.to_string();
    let form = [("stream_id", g.as_str()), ("topic_name", "")];
    expect(post(&app, &alice, "/mark_topic_as_read", &form).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[a, b])]);
    assert_eq!(unread(&app, &alice).await, no_unreads());
    app.stop().await;
}

#[actix_web::test]
async fn unsubscribed_channels_leave_unread_msgs() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    message(&app, &bob, general, "a").await;
    let dm = direct(&app, &bob, &[&alice]).await;
    let subscriptions = json!(["general"]).to_string();
    let response = app
        .as_user(&alice, Method::DELETE, "/users/me/subscriptions")
        .form(&[("subscriptions", subscriptions.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);

    let unread = unread(&app, &alice).await;
    assert_eq!(unread["streams"], json!([]));
    assert_eq!(
        unread["pms"],
        json!([{"other_user_id": bob.user_id, "sender_id": bob.user_id, "unread_message_ids": [dm]}])
    );
    assert_eq!(unread["count"], json!(1));
    app.stop().await;
}

#[actix_web::test]
async fn data_sets_sit_where_zulip_puts_them() {
    let app = spawn_app().await;
    let types = r#"["realm_user", "subscription", "starred_messages", "message", "update_message_flags", "recent_private_conversations", "user_topic"]"#;
    let body = data(&app, &app.owner, types).await;
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    let position = |key: &str| keys.iter().position(|k| *k == key).unwrap_or_else(|| panic!("{key} missing: {keys:?}"));
    let order = [
        "never_subscribed",
        "starred_messages",
        "user_topics",
        "unread_msgs",
        "realm_users",
        "realm_non_active_users",
        "recent_private_conversations",
    ];
    let positions: Vec<usize> = order.iter().map(|k| position(k)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    // The organization's first owner has Welcome Bot's message (id 1), starred and unread.
    // The system bots follow the owner: Email Gateway, Notification Bot, Welcome Bot.
    let welcome_bot = 4;
    assert_eq!(body["recent_private_conversations"], json!([{"max_message_id": 1, "user_ids": [welcome_bot]}]));
    assert_eq!(body["starred_messages"], json!([1]));
    let pms = json!([{"other_user_id": welcome_bot, "sender_id": welcome_bot, "unread_message_ids": [1]}]);
    assert_eq!(
        body["unread_msgs"],
        json!({"pms": pms, "streams": [], "huddles": [], "mentions": [], "count": 1, "old_unreads_missing": false})
    );
    app.stop().await;
}

#[actix_web::test]
async fn flag_events_collapse_until_the_client_polls() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let (m1, m2) = (message(&app, &bob, general, "a").await, message(&app, &bob, general, "a").await);
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    for id in [m1, m2] {
        expect(flags(&app, &alice, "add", "starred", &[id]).await, 200, flags_ok(&[id], &[])).await;
    }
    for id in [m1, m2] {
        expect(flags(&app, &alice, "add", "read", &[id]).await, 200, flags_ok(&[id], &[])).await;
    }
    assert_eq!(
        watch.events(&app).await,
        vec![flag_event("add", "starred", &[m1, m2]), flag_event("add", "read", &[m1, m2])]
    );
    app.stop().await;
}

#[actix_web::test]
async fn guests_mark_only_their_channels_read() {
    let app = spawn_app().await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&bob]).await;
    let mine = channel(&app, "guests", false, &[&guest, &bob]).await;
    let id = message(&app, &bob, mine, "hi").await;
    let mut watch = Watch::new(&app, &guest, FLAG_EVENTS).await;

    let g = general.to_string();
    expect(post(&app, &guest, "/mark_stream_as_read", &[("stream_id", &g)]).await, 400, error("Invalid channel ID"))
        .await;
    let m = mine.to_string();
    expect(post(&app, &guest, "/mark_stream_as_read", &[("stream_id", &m)]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &[id])]);
    app.stop().await;
}

/// `POST /messages/flags/narrow` with `anchor`, `num_before`, `num_after` (anchor included).
async fn flags_narrow(app: &TestApp, who: &Creds, narrow: Value, range: (&str, i64, i64), op: &str) -> Response {
    let (anchor, before, after) = (range.0, range.1.to_string(), range.2.to_string());
    let narrow = narrow.to_string();
    let form = [
        ("anchor", anchor),
        ("num_before", before.as_str()),
        ("num_after", after.as_str()),
        ("narrow", narrow.as_str()),
        ("op", op),
        ("flag", "read"),
    ];
    post(app, who, "/messages/flags/narrow", &form).await
}

/// The success body of `POST /messages/flags/narrow`.
fn narrow_ok(processed: &[i64], updated: usize, found: (bool, bool), ignored: &[i64]) -> Value {
    json!({
        "result": "success",
        "msg": "",
        "processed_count": processed.len(),
        "updated_count": updated,
        "first_processed_id": processed.first(),
        "last_processed_id": processed.last(),
        "found_oldest": found.0,
        "found_newest": found.1,
        "ignored_because_not_subscribed_channels": ignored,
    })
}

fn topic_narrow(channel: i64, topic: &str) -> Value {
    json!([{"operator": "channel", "operand": channel}, {"operator": "topic", "operand": topic}])
}

#[actix_web::test]
async fn flags_narrow_errors_have_zulips_messages_and_change_nothing() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    message(&app, &bob, general, "a").await;
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    let full = [
        ("anchor", "newest"),
        ("num_before", "5"),
        ("num_after", "0"),
        ("narrow", "[]"),
        ("op", "add"),
        ("flag", "read"),
    ];
    let without = |skip: &str| full.into_iter().filter(|(k, _)| *k != skip).collect::<Vec<_>>();
    for name in ["anchor", "num_before", "num_after", "narrow", "op", "flag"] {
        expect(post(&app, &alice, "/messages/flags/narrow", &without(name)).await, 400, missing(name)).await;
    }
    let with = |key: &str, value: &'static str| {
        full.into_iter().map(|(k, v)| if k == key { (k, value) } else { (k, v) }).collect::<Vec<_>>()
    };
    let cases = [
        (with("anchor", "soon"), "Invalid anchor"),
        (with("flag", "bogus"), "Invalid flag: 'bogus'"),
        (with("flag", "mentioned"), "Flag not editable: 'mentioned'"),
        (with("op", "toggle"), "Invalid message flag operation: 'toggle'"),
        (with("num_before", "-1"), "num_before is too small"),
    ];
    for (form, msg) in cases {
        expect(post(&app, &alice, "/messages/flags/narrow", &form).await, 400, error(msg)).await;
    }
    let mut middle = with("num_after", "5");
    middle.push(("include_anchor", "false"));
    let msg = "The anchor can only be excluded at an end of the range";
    expect(post(&app, &alice, "/messages/flags/narrow", &middle).await, 400, error(msg)).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(unread(&app, &alice).await["count"], json!(1));
    app.stop().await;
}

#[actix_web::test]
async fn flags_narrow_marks_a_topic_read_for_the_user_alone() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob, &carol]).await;
    let m1 = message(&app, &bob, general, "a").await;
    let other = message(&app, &bob, general, "b").await;
    let m2 = message(&app, &bob, general, "a").await;
    let m3 = message(&app, &bob, general, "a").await;
    let mut alice_watch = Watch::new(&app, &alice, FLAG_EVENTS).await;
    let mut carol_watch = Watch::new(&app, &carol, FLAG_EVENTS).await;

    let response = flags_narrow(&app, &alice, topic_narrow(general, "a"), ("oldest", 0, 100), "add").await;
    expect(response, 200, narrow_ok(&[m1, m2, m3], 3, (true, true), &[])).await;
    assert_eq!(alice_watch.events(&app).await, vec![flag_event("add", "read", &[m1, m2, m3])]);
    let left = json!([{"stream_id": general, "topic": "b", "unread_message_ids": [other]}]);
    assert_eq!(unread(&app, &alice).await["streams"], left);
    // Nothing left to change: processed but not updated.
    let response = flags_narrow(&app, &alice, topic_narrow(general, "a"), ("newest", 10, 0), "add").await;
    expect(response, 200, narrow_ok(&[m1, m2, m3], 0, (true, true), &[])).await;
    assert_eq!(carol_watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(unread(&app, &carol).await["count"], json!(4));
    app.stop().await;
}

#[actix_web::test]
async fn flags_narrow_ranges_follow_the_anchor() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(message(&app, &bob, general, "a").await);
    }
    let narrow = json!([{"operator": "channel", "operand": general}]);
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    // Two before the third message and the message itself: neither end reached.
    let anchor = ids[2].to_string();
    let response = flags_narrow(&app, &alice, narrow.clone(), (&anchor, 2, 0), "add").await;
    expect(response, 200, narrow_ok(&ids[..3], 3, (false, false), &[])).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &ids[..3])]);
    // An excluded anchor at the end of the range.
    let anchor = ids[1].to_string();
    let narrow_text = narrow.to_string();
    let form = [
        ("anchor", anchor.as_str()),
        ("include_anchor", "false"),
        ("num_before", "0"),
        ("num_after", "2"),
        ("narrow", narrow_text.as_str()),
        ("op", "remove"),
        ("flag", "read"),
    ];
    let response = post(&app, &alice, "/messages/flags/narrow", &form).await;
    expect(response, 200, narrow_ok(&ids[2..4], 1, (false, false), &[])).await;
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["messages"], json!([ids[2]]));
    // first_unread starts at the oldest unread message of the narrow.
    let response = flags_narrow(&app, &alice, narrow.clone(), ("first_unread", 0, 1), "add").await;
    expect(response, 200, narrow_ok(&ids[2..4], 2, (false, false), &[])).await;
    assert_eq!(watch.events(&app).await, vec![flag_event("add", "read", &ids[2..4])]);
    // Nothing matches: no ids.
    let empty = topic_narrow(general, "nothing");
    expect(flags_narrow(&app, &alice, empty, ("newest", 5, 0), "add").await, 200, narrow_ok(&[], 0, (true, true), &[]))
        .await;
    app.stop().await;
}

#[actix_web::test]
async fn flags_narrow_skips_unsubscribed_channels_when_marking_unread() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let general = channel(&app, "general", false, &[&bob]).await;
    let (m1, m2) = (message(&app, &bob, general, "a").await, message(&app, &bob, general, "a").await);
    let narrow = json!([{"operator": "channel", "operand": general}]);
    let mut watch = Watch::new(&app, &alice, FLAG_EVENTS).await;

    // The channel's history is public: its messages are in the range but stay read.
    let response = flags_narrow(&app, &alice, narrow, ("newest", 10, 0), "remove").await;
    expect(response, 200, narrow_ok(&[m1, m2], 0, (true, true), &[general])).await;
    let mut event = flag_event("remove", "read", &[]);
    event["message_details"] = json!({});
    assert_eq!(watch.events(&app).await, vec![event]);
    assert_eq!(unread(&app, &alice).await, no_unreads());
    app.stop().await;
}
