//! Reactions, typing notifications, message deletion and edit history over HTTP: exact
//! bodies and errors, the events and exactly who receives them, permissions per role.
//! Messages are sent with `POST /messages`; the test support of
//! `agora_actors::realm::chat::testing` only dates them in the past or prepares an edit history.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use agora_actors::realm::chat::testing::BackdateMessage;

use crate::helpers::{error, expect, json, register, send, spawn_app, success, Creds, TestApp, Watch};

fn invalid_message() -> Value {
    error("Invalid message(s)")
}

/// An organization with members Alice, Bob and Carol, a guest and an administrator.
struct Org {
    app: TestApp,
    alice: Creds,
    bob: Creds,
    carol: Creds,
    guest: Creds,
    admin: Creds,
}

async fn org() -> Org {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let admin = app.create_user("", "admin@agora.test", "Admin", 200).await;
    Org { app, alice, bob, carol, guest, admin }
}

/// A channel created by the owner with `subscribers` (the owner is not subscribed).
async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) -> i64 {
    channel_with(app, name, subscribers, &[("invite_only", &invite_only.to_string())]).await
}

/// A channel created by the owner with `subscribers` and further creation parameters.
async fn channel_with(app: &TestApp, name: &str, subscribers: &[&Creds], extra: &[(&str, &str)]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let mut form = vec![("name", name), ("subscribers", ids.as_str())];
    form.extend_from_slice(extra);
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Sends "hello" through `POST /messages` (`to` as the API takes it) and returns its id.
async fn send_message(app: &TestApp, sender: &Creds, kind: &str, to: &str, topic: &str) -> i64 {
    let form = [("type", kind), ("to", to), ("topic", topic), ("content", "hello")];
    let (status, body) = json(send(app, sender, Method::POST, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// A channel message sent now.
async fn channel_message(app: &TestApp, sender: &Creds, channel: i64, topic: &str) -> i64 {
    send_message(app, sender, "stream", &channel.to_string(), topic).await
}

/// A direct message from `sender` to `to`, sent now.
async fn direct_message(app: &TestApp, sender: &Creds, to: &[&Creds]) -> i64 {
    let to = json!(to.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    send_message(app, sender, "direct", &to, "").await
}

/// A channel message sent at `date_sent` (in the past), with a prepared raw edit history.
async fn old_message(
    app: &TestApp,
    sender: &Creds,
    channel: i64,
    topic: &str,
    date_sent: i64,
    history: Option<&str>,
) -> i64 {
    let id = channel_message(app, sender, channel, topic).await;
    let msg = BackdateMessage { message_id: id, date_sent, edit_history: history.map(str::to_owned) };
    app.realm("").addr.send(msg).await.unwrap().unwrap();
    id
}

async fn react(app: &TestApp, who: &Creds, method: Method, message: i64, form: &[(&str, &str)]) -> Response {
    send(app, who, method, &format!("/messages/{message}/reactions"), form).await
}

fn reaction_event(op: &str, who: &Creds, message: i64, emoji: (&str, &str, &str)) -> Value {
    json!({
        "type": "reaction", "op": op, "user_id": who.user_id,
        "message_id": message, "emoji_name": emoji.0, "emoji_code": emoji.1, "reaction_type": emoji.2,
    })
}

const SMILE: (&str, &str, &str) = ("smile", "1f604", "unicode_emoji");

/// Watches of several users for one event type.
async fn watches(app: &TestApp, who: &[&Creds], types: &str) -> Vec<Watch> {
    let mut out = Vec::new();
    for creds in who {
        out.push(Watch::new(app, creds, types).await);
    }
    out
}

/// Asserts each watch got exactly `expected[i]`.
async fn assert_events(app: &TestApp, watches: &mut [Watch], expected: &[Vec<Value>]) {
    for (watch, expected) in watches.iter_mut().zip(expected) {
        assert_eq!(&watch.events(app).await, expected, "events of {}", watch.who.email);
    }
}

#[actix_web::test]
async fn reactions_reach_exactly_who_may_see_a_private_channel_message() {
    let Org { app, alice, bob, carol, .. } = org().await;
    let secret = channel(&app, "secret", true, &[&alice, &bob]).await;
    let id = channel_message(&app, &alice, secret, "plans").await;
    let mut w = watches(&app, &[&alice, &bob, &carol], r#"["reaction"]"#).await;

    expect(react(&app, &bob, Method::POST, id, &[("emoji_name", "smile")]).await, 200, success()).await;
    let added = reaction_event("add", &bob, id, SMILE);
    assert_events(&app, &mut w, &[vec![added.clone()], vec![added], vec![]]).await;

    expect(react(&app, &carol, Method::POST, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
    expect(react(&app, &carol, Method::DELETE, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;

    expect(react(&app, &bob, Method::DELETE, id, &[("emoji_code", "1f604")]).await, 200, success()).await;
    let removed = reaction_event("remove", &bob, id, SMILE);
    assert_events(&app, &mut w, &[vec![removed.clone()], vec![removed], vec![]]).await;
}

#[actix_web::test]
async fn reaction_errors_have_zulips_messages() {
    let Org { app, alice, bob, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice, &bob]).await;
    let id = channel_message(&app, &alice, verona, "t").await;
    let post = |form: &'static [(&'static str, &'static str)]| react(&app, &bob, Method::POST, id, form);

    expect(post(&[("emoji_name", "smile")]).await, 200, success()).await;
    let exists = json!({"result": "error", "msg": "Reaction already exists.", "code": "REACTION_ALREADY_EXISTS"});
    expect(post(&[("emoji_name", "smile")]).await, 400, exists).await;
    expect(post(&[("emoji_name", "not_an_emoji")]).await, 400, error("Emoji 'not_an_emoji' does not exist")).await;
    expect(post(&[("emoji_name", "smile"), ("emoji_code", "1f44d")]).await, 400, error("Invalid emoji name.")).await;
    expect(post(&[("emoji_name", "smile"), ("emoji_code", "zzzz")]).await, 400, error("Invalid emoji code.")).await;
    const BAD_TYPE: &[(&str, &str)] = &[("emoji_name", "smile"), ("emoji_code", "1f604"), ("reaction_type", "x")];
    expect(post(BAD_TYPE).await, 400, error("Invalid emoji type.")).await;
    let missing = json!({"result": "error", "msg": "Missing 'emoji_name' argument", "var_name": "emoji_name", "code": "REQUEST_VARIABLE_MISSING"});
    expect(post(&[]).await, 400, missing).await;
    expect(react(&app, &bob, Method::POST, 999_999, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
    expect(post(&[("emoji_name", "zulip")]).await, 200, success()).await;

    let delete = |form: &'static [(&'static str, &'static str)]| react(&app, &bob, Method::DELETE, id, form);
    let absent = json!({"result": "error", "msg": "Reaction doesn't exist.", "code": "REACTION_DOES_NOT_EXIST"});
    expect(delete(&[("emoji_name", "tada")]).await, 400, absent.clone()).await;
    expect(delete(&[("emoji_name", "zulip")]).await, 400, absent).await;
    let neither = error("At least one of the following arguments must be present: emoji_name, emoji_code");
    expect(delete(&[]).await, 400, neither).await;
    expect(delete(&[("emoji_name", "zulip"), ("reaction_type", "zulip_extra_emoji")]).await, 200, success()).await;
}

#[actix_web::test]
async fn a_second_reaction_with_the_same_code_votes_with_the_first_name() {
    let Org { app, alice, bob, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice, &bob]).await;
    let id = channel_message(&app, &alice, verona, "t").await;
    let mut w = watches(&app, &[&alice], r#"["reaction"]"#).await;
    expect(react(&app, &alice, Method::POST, id, &[("emoji_name", "+1")]).await, 200, success()).await;
    expect(react(&app, &bob, Method::POST, id, &[("emoji_name", "thumbs_up")]).await, 200, success()).await;
    let thumbs = ("+1", "1f44d", "unicode_emoji");
    let expected = vec![reaction_event("add", &alice, id, thumbs), reaction_event("add", &bob, id, thumbs)];
    assert_events(&app, &mut w, &[expected]).await;
}

#[actix_web::test]
async fn non_subscribers_may_react_to_public_channel_messages_but_guests_may_not() {
    let Org { app, alice, carol, guest, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice]).await;
    let id = channel_message(&app, &alice, verona, "t").await;
    let mut w = watches(&app, &[&alice, &carol, &guest], r#"["reaction"]"#).await;

    expect(react(&app, &guest, Method::POST, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
    expect(react(&app, &carol, Method::POST, id, &[("emoji_name", "smile")]).await, 200, success()).await;
    // Carol now has a historical row, so she hears about later reactions too.
    let carols = reaction_event("add", &carol, id, SMILE);
    assert_events(&app, &mut w, &[vec![carols.clone()], vec![carols], vec![]]).await;
    expect(react(&app, &alice, Method::POST, id, &[("emoji_name", "smile")]).await, 200, success()).await;
    let alices = reaction_event("add", &alice, id, SMILE);
    assert_events(&app, &mut w, &[vec![alices.clone()], vec![alices], vec![]]).await;
}

#[actix_web::test]
async fn direct_message_reactions_reach_the_participants_only() {
    let Org { app, alice, bob, carol, admin, .. } = org().await;
    let id = direct_message(&app, &alice, &[&bob]).await;
    let mut w = watches(&app, &[&alice, &bob, &carol], r#"["reaction"]"#).await;
    expect(react(&app, &carol, Method::POST, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
    expect(react(&app, &admin, Method::POST, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
    expect(react(&app, &bob, Method::POST, id, &[("emoji_name", "smile")]).await, 200, success()).await;
    let added = reaction_event("add", &bob, id, SMILE);
    assert_events(&app, &mut w, &[vec![added.clone()], vec![added], vec![]]).await;
}

async fn typing(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::POST, "/typing", form).await
}

fn person(who: &Creds) -> Value {
    json!({"user_id": who.user_id, "email": who.email})
}

async fn set(app: &TestApp, who: &Creds, name: &str, value: &str) {
    expect(send(app, who, Method::PATCH, "/settings", &[(name, value)]).await, 200, success()).await;
}

#[actix_web::test]
async fn direct_typing_reaches_the_conversation_and_respects_settings() {
    let Org { app, alice, bob, carol, .. } = org().await;
    let mut w = watches(&app, &[&alice, &bob, &carol], r#"["typing"]"#).await;
    let to = json!([bob.user_id]).to_string();
    expect(typing(&app, &alice, &[("op", "start"), ("to", &to)]).await, 200, success()).await;
    // As in Zulip, the sender is one of the recipients (their other clients learn of it).
    let event = json!({"type": "typing", "message_type": "direct", "op": "start", "sender": person(&alice),
                       "recipients": [person(&bob), person(&alice)]});
    assert_events(&app, &mut w, &[vec![event.clone()], vec![event], vec![]]).await;

    set(&app, &bob, "receives_typing_notifications", "false").await;
    expect(typing(&app, &alice, &[("type", "direct"), ("op", "stop"), ("to", &to)]).await, 200, success()).await;
    let event = json!({"type": "typing", "message_type": "direct", "op": "stop", "sender": person(&alice),
                       "recipients": [person(&bob), person(&alice)]});
    assert_events(&app, &mut w, &[vec![event], vec![], vec![]]).await;

    set(&app, &alice, "send_private_typing_notifications", "false").await;
    let disabled = error("User has disabled typing notifications for direct messages");
    expect(typing(&app, &alice, &[("op", "start"), ("to", &to)]).await, 400, disabled).await;
    assert_events(&app, &mut w, &[vec![], vec![], vec![]]).await;
}

#[actix_web::test]
async fn typing_errors_have_zulips_messages() {
    let Org { app, alice, carol, .. } = org().await;
    let secret = channel(&app, "secret", true, &[&alice]).await.to_string();
    expect(typing(&app, &alice, &[("op", "start")]).await, 400, error("Missing 'to' argument")).await;
    expect(typing(&app, &alice, &[("op", "start"), ("to", "[]")]).await, 400, error("Empty 'to' list")).await;
    expect(typing(&app, &alice, &[("op", "start"), ("to", "[999999]")]).await, 400, error("Invalid user ID 999999"))
        .await;
    expect(typing(&app, &alice, &[("op", "go"), ("to", "[1]")]).await, 400, error("Invalid op")).await;
    expect(typing(&app, &alice, &[("op", "start"), ("type", "x")]).await, 400, error("Invalid type")).await;
    let missing_op = json!({"result": "error", "msg": "Missing 'op' argument", "var_name": "op", "code": "REQUEST_VARIABLE_MISSING"});
    expect(typing(&app, &alice, &[("to", "[1]")]).await, 400, missing_op).await;
    let channel_form = |rest: &[(&'static str, &'static str)]| {
        let mut form = vec![("op", "start"), ("type", "channel")];
        form.extend_from_slice(rest);
        form
    };
    expect(typing(&app, &alice, &channel_form(&[("topic", "t")])).await, 400, error("Missing 'stream_id' argument"))
        .await;
    let form = [("op", "start"), ("type", "stream"), ("stream_id", secret.as_str())];
    expect(typing(&app, &alice, &form).await, 400, error("Missing topic")).await;
    let form = [("op", "start"), ("type", "stream"), ("stream_id", secret.as_str()), ("topic", "t")];
    expect(typing(&app, &carol, &form).await, 400, error("Invalid channel ID")).await;
    set(&app, &alice, "send_stream_typing_notifications", "false").await;
    let disabled = error("User has disabled typing notifications for channel messages");
    expect(typing(&app, &alice, &form).await, 400, disabled).await;
}

#[actix_web::test]
async fn channel_typing_reaches_subscribers_who_receive_it() {
    let Org { app, alice, bob, carol, guest, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice, &bob, &guest]).await;
    let mut w = watches(&app, &[&alice, &bob, &carol, &guest], r#"["typing"]"#).await;
    // A client without the `stream_typing_notifications` capability hears nothing.
    let mut old = Watch::with_form(&app, &bob, &[("event_types", r#"["typing"]"#)]).await;
    set(&app, &guest, "receives_typing_notifications", "false").await;
    let id = verona.to_string();
    let form = [("op", "start"), ("type", "channel"), ("stream_id", id.as_str()), ("topic", "lunch")];
    expect(typing(&app, &alice, &form).await, 200, success()).await;
    let event = json!({"type": "typing", "message_type": "stream", "op": "start", "sender": person(&alice),
                       "stream_id": verona, "topic": "lunch"});
    assert_events(&app, &mut w, &[vec![event.clone()], vec![event], vec![], vec![]]).await;
    assert_eq!(old.events(&app).await, Vec::<Value>::new());
}

async fn delete(app: &TestApp, who: &Creds, message: i64) -> Response {
    send(app, who, Method::DELETE, &format!("/messages/{message}"), &[]).await
}

fn no_permission() -> Value {
    error("You don't have permission to delete this message")
}

#[actix_web::test]
async fn deleting_a_channel_message_tells_who_could_see_it() {
    let Org { app, alice, bob, carol, .. } = org().await;
    let secret = channel(&app, "secret", true, &[&alice, &bob]).await;
    let id = channel_message(&app, &alice, secret, "plans").await;
    expect(react(&app, &bob, Method::POST, id, &[("emoji_name", "smile")]).await, 200, success()).await;
    let mut w = watches(&app, &[&alice, &bob, &carol], r#"["delete_message"]"#).await;
    let mut legacy = Watch::with_form(&app, &bob, &[("event_types", r#"["delete_message"]"#)]).await;

    expect(delete(&app, &carol, id).await, 400, invalid_message()).await;
    expect(delete(&app, &bob, id).await, 400, no_permission()).await;
    expect(delete(&app, &alice, id).await, 200, success()).await;
    let event = json!({"type": "delete_message", "message_ids": [id], "message_type": "stream", "stream_id": secret, "topic": "plans"});
    assert_events(&app, &mut w, &[vec![event.clone()], vec![event], vec![]]).await;
    let single = json!({"type": "delete_message", "message_type": "stream", "stream_id": secret, "topic": "plans", "message_id": id});
    let got = legacy.events(&app).await;
    assert_eq!(got.len(), 1);
    crate::helpers::assert_same(&got[0], &single);

    expect(delete(&app, &alice, id).await, 400, invalid_message()).await;
    expect(react(&app, &bob, Method::DELETE, id, &[("emoji_name", "smile")]).await, 400, invalid_message()).await;
}

/// The deleter hears of the deletion when they have content access to the channel, even
/// unsubscribed (FL 457).
#[actix_web::test]
async fn deleting_tells_a_deleter_with_content_access() {
    let Org { app, alice, bob, admin, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice, &bob]).await;
    let id = channel_message(&app, &alice, verona, "t").await;
    let mut w = watches(&app, &[&alice, &bob, &admin], r#"["delete_message"]"#).await;
    expect(delete(&app, &admin, id).await, 200, success()).await;
    let event = json!({"type": "delete_message", "message_ids": [id], "message_type": "stream", "stream_id": verona, "topic": "t"});
    assert_events(&app, &mut w, &[vec![event.clone()], vec![event.clone()], vec![event]]).await;
}

#[actix_web::test]
async fn deleting_a_direct_message_tells_its_participants() {
    let Org { app, alice, bob, carol, admin, .. } = org().await;
    let id = direct_message(&app, &alice, &[&bob]).await;
    let mut w = watches(&app, &[&alice, &bob, &carol], r#"["delete_message"]"#).await;
    expect(delete(&app, &admin, id).await, 400, invalid_message()).await;
    expect(delete(&app, &alice, id).await, 200, success()).await;
    let event = json!({"type": "delete_message", "message_ids": [id], "message_type": "private"});
    assert_events(&app, &mut w, &[vec![event.clone()], vec![event], vec![]]).await;
}

/// The id of a system group, from the owner's register data.
async fn system_group(app: &TestApp, name: &str) -> i64 {
    let state = register(app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let groups = state["realm_user_groups"].as_array().unwrap();
    groups.iter().find(|g| g["name"] == name).unwrap()["id"].as_i64().unwrap()
}

/// Changes organization settings as the owner (the response body is another area's).
async fn patch_realm(app: &TestApp, form: &[(&str, &str)]) {
    let (status, body) = json(send(app, &app.owner, Method::PATCH, "/realm", form).await).await;
    assert_eq!(status, 200, "{body}");
}

#[actix_web::test]
async fn deletion_permissions_follow_roles_groups_and_the_time_limit() {
    let Org { app, alice, bob, admin, .. } = org().await;
    let verona = channel(&app, "Verona", false, &[&alice, &bob]).await;
    let old = chrono_now() - 1000;

    // Senders may delete their own messages for 600 seconds (the default limit).
    let stale = old_message(&app, &alice, verona, "t", old, None).await;
    let limit = error("The time limit for deleting this message has passed");
    expect(delete(&app, &alice, stale).await, 400, limit).await;
    // Administrators may delete any message, whenever.
    expect(delete(&app, &admin, stale).await, 200, success()).await;

    let stale = old_message(&app, &alice, verona, "t", old, None).await;
    patch_realm(&app, &[("message_content_delete_limit_seconds", r#""unlimited""#)]).await;
    expect(delete(&app, &bob, stale).await, 400, no_permission()).await;
    expect(delete(&app, &alice, stale).await, 200, success()).await;

    // Moderators are not in the default `can_delete_any_message_group` (administrators).
    let moderator = app.create_user("", "mod@agora.test", "Mod", 300).await;
    let fresh = channel_message(&app, &alice, verona, "t").await;
    expect(delete(&app, &moderator, fresh).await, 400, no_permission()).await;
}

#[actix_web::test]
async fn channel_deletion_groups_extend_the_organizations() {
    let Org { app, alice, bob, .. } = org().await;
    let members = system_group(&app, "role:members").await.to_string();
    let any = channel_with(&app, "any", &[&alice, &bob], &[("can_delete_any_message_group", &members)]).await;
    let own = channel_with(&app, "own", &[&alice, &bob], &[("can_delete_own_message_group", &members)]).await;
    let old = chrono_now() - 1000;

    // The channel's `can_delete_any_message_group` lets Bob delete Alice's message.
    let id = old_message(&app, &alice, any, "t", old, None).await;
    expect(delete(&app, &bob, id).await, 200, success()).await;

    // The channel's `can_delete_own_message_group` lets senders delete their own messages
    // past the organization's time limit, and no one else's.
    let id = old_message(&app, &alice, own, "t", old, None).await;
    expect(delete(&app, &bob, id).await, 400, no_permission()).await;
    expect(delete(&app, &alice, id).await, 200, success()).await;
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

async fn history(app: &TestApp, who: &Creds, message: i64) -> Response {
    send(app, who, Method::GET, &format!("/messages/{message}/history"), &[]).await
}

#[actix_web::test]
async fn edit_history_reads_follow_access_and_the_organization_setting() {
    let Org { app, alice, bob, carol, .. } = org().await;
    let secret = channel(&app, "secret", true, &[&alice, &bob]).await;
    let plain = old_message(&app, &alice, secret, "new", 1_000, None).await;
    let original = json!({"content": "hello", "rendered_content": "<p>hello</p>", "timestamp": 1_000, "topic": "new", "user_id": alice.user_id});
    expect(
        history(&app, &bob, plain).await,
        200,
        json!({"result": "success", "msg": "", "message_history": [original]}),
    )
    .await;

    let edits = json!([{"timestamp": 2_000, "user_id": bob.user_id, "prev_topic": "old", "topic": "new"}]).to_string();
    let moved = old_message(&app, &alice, secret, "new", 1_000, Some(&edits)).await;
    let first = json!({"content": "hello", "rendered_content": "<p>hello</p>", "timestamp": 1_000, "topic": "old", "user_id": alice.user_id});
    let second = json!({"content": "hello", "rendered_content": "<p>hello</p>", "timestamp": 2_000, "topic": "new", "user_id": bob.user_id, "prev_topic": "old"});
    expect(
        history(&app, &alice, moved).await,
        200,
        json!({"result": "success", "msg": "", "message_history": [first, second]}),
    )
    .await;

    expect(history(&app, &carol, plain).await, 400, invalid_message()).await;
    patch_realm(&app, &[("message_edit_history_visibility_policy", "none")]).await;
    expect(history(&app, &alice, plain).await, 400, error("Message edit history is disabled in this organization"))
        .await;
}
