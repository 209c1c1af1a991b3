//! Editing and moving messages over HTTP (`PATCH /messages/{message_id}`): errors,
//! permissions, propagation, the `update_message` events and who receives them, and the
//! edit history afterwards.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use agora_actors::realm::chat::testing::BackdateMessage;

use crate::helpers::{error, expect, json, spawn_app, Creds, TestApp, Watch};

fn edited() -> Value {
    json!({"result": "success", "msg": "", "detached_uploads": []})
}

async fn call(app: &TestApp, who: &Creds, method: Method, path: &str, form: &[(&str, &str)]) -> Response {
    app.as_user(who, method, path).form(form).send().await.unwrap()
}

async fn edit(app: &TestApp, who: &Creds, id: i64, form: &[(&str, &str)]) -> Response {
    call(app, who, Method::PATCH, &format!("/messages/{id}"), form).await
}

/// A channel created by the owner with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let form =
        [("name", name), ("subscribers", ids.as_str()), ("invite_only", if invite_only { "true" } else { "false" })];
    let (status, body) = json(call(app, &app.owner, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Sends a channel message and returns its id.
async fn post(app: &TestApp, who: &Creds, channel: i64, topic: &str, content: &str) -> i64 {
    let to = channel.to_string();
    let form = [("type", "stream"), ("to", to.as_str()), ("topic", topic), ("content", content)];
    let (status, body) = json(call(app, who, Method::POST, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// A message as its viewer fetches it.
async fn message(app: &TestApp, who: &Creds, id: i64) -> Value {
    let (status, body) = json(call(app, who, Method::GET, &format!("/messages/{id}"), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["message"].clone()
}

/// The events since the last call, without their (time-dependent) `edit_timestamp`.
async fn events(app: &TestApp, watch: &mut Watch) -> Vec<Value> {
    let mut out = watch.events(app).await;
    for event in &mut out {
        event.as_object_mut().unwrap().remove("edit_timestamp");
    }
    out
}

struct Org {
    app: TestApp,
    alice: Creds,
    bob: Creds,
    carol: Creds,
}

async fn org() -> Org {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    Org { app, alice, bob, carol }
}

#[actix_web::test]
async fn content_edits_rerender_recompute_mentions_and_reach_who_has_the_message() {
    let Org { app, alice, bob, carol } = org().await;
    let secret = channel(&app, "secret", true, &[&alice, &bob]).await;
    let id = post(&app, &alice, secret, "plans", "hello").await;
    let (mut wa, mut wb, mut wc) = (
        Watch::new(&app, &alice, r#"["update_message"]"#).await,
        Watch::new(&app, &bob, r#"["update_message"]"#).await,
        Watch::new(&app, &carol, r#"["update_message"]"#).await,
    );

    expect(edit(&app, &alice, id, &[("content", "hello @**Bob**")]).await, 200, edited()).await;

    let fetched = message(&app, &bob, id).await;
    assert_eq!(
        fetched["content"],
        json!(format!("<p>hello <span class=\"user-mention\" data-user-id=\"{}\">@Bob</span></p>", bob.user_id))
    );
    assert_eq!(fetched["flags"], json!(["mentioned"]));
    let bob_events = events(&app, &mut wb).await;
    assert_eq!(
        bob_events,
        vec![json!({
            "type": "update_message", "user_id": alice.user_id, "message_id": id, "rendering_only": false,
            "stream_name": "secret", "stream_id": secret, "orig_content": "hello",
            "orig_rendered_content": "<p>hello</p>", "content": "hello @**Bob**",
            "rendered_content": fetched["content"], "is_me_message": false, "message_ids": [id],
            "flags": ["mentioned"],
        })]
    );
    let alice_events = events(&app, &mut wa).await;
    assert_eq!(alice_events.len(), 1);
    assert_eq!(alice_events[0]["message_ids"], json!([id]));
    assert!(events(&app, &mut wc).await.is_empty());

    // Removing the mention clears the flag.
    expect(edit(&app, &alice, id, &[("content", "hello again")]).await, 200, edited()).await;
    assert_eq!(message(&app, &bob, id).await["flags"], json!([]));
}

#[actix_web::test]
async fn edits_are_refused_with_zulips_messages() {
    let Org { app, alice, bob, carol } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let id = post(&app, &alice, general, "t", "hello").await;

    expect(edit(&app, &alice, id, &[]).await, 400, error("Nothing to change")).await;
    // The current topic is no change.
    expect(edit(&app, &alice, id, &[("topic", "t")]).await, 400, error("Nothing to change")).await;
    expect(
        edit(&app, &bob, id, &[("content", "mine")]).await,
        400,
        error("You don't have permission to edit this message"),
    )
    .await;
    let other = general.to_string();
    expect(
        edit(&app, &alice, id, &[("content", "x"), ("stream_id", other.as_str())]).await,
        400,
        error("Cannot change message content while changing channel"),
    )
    .await;
    expect(
        edit(&app, &alice, id, &[("content", "x"), ("propagate_mode", "change_all")]).await,
        400,
        error("Invalid propagate_mode without topic edit"),
    )
    .await;
    expect(
        edit(&app, &alice, id, &[("topic", "u"), ("propagate_mode", "nope")]).await,
        400,
        error("Invalid propagate_mode"),
    )
    .await;
    expect(edit(&app, &alice, 999_999, &[("content", "x")]).await, 400, error("Invalid message(s)")).await;

    let to = json!([bob.user_id]).to_string();
    let form = [("type", "direct"), ("to", to.as_str()), ("content", "psst")];
    let (_, body) = json(call(&app, &alice, Method::POST, "/messages", &form).await).await;
    let dm = body["id"].as_i64().unwrap();
    expect(edit(&app, &alice, dm, &[("topic", "x")]).await, 400, error("Direct messages cannot have topics.")).await;
    expect(
        edit(&app, &alice, dm, &[("stream_id", other.as_str())]).await,
        400,
        error("Direct messages cannot be moved to channels."),
    )
    .await;
    expect(edit(&app, &carol, dm, &[("content", "x")]).await, 400, error("Invalid message(s)")).await;

    // The organization turns editing off.
    let (status, _) =
        json(call(&app, &app.owner, Method::PATCH, "/realm", &[("allow_message_editing", "false")]).await).await;
    assert_eq!(status, 200);
    expect(
        edit(&app, &alice, id, &[("content", "x")]).await,
        400,
        error("Your organization has turned off message editing"),
    )
    .await;
}

#[actix_web::test]
async fn topic_moves_follow_the_propagate_mode_and_show_in_history() {
    let Org { app, alice, bob, .. } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let ids = [
        post(&app, &alice, general, "old", "one").await,
        post(&app, &bob, general, "old", "two").await,
        post(&app, &alice, general, "old", "three").await,
    ];
    let mut wb = Watch::new(&app, &bob, r#"["update_message"]"#).await;

    // (Without Notification Bot's notices, which would join the topics moved below.)
    let quiet = ("send_notification_to_new_thread", "false");
    expect(
        edit(&app, &alice, ids[1], &[("topic", "later"), ("propagate_mode", "change_later"), quiet]).await,
        200,
        edited(),
    )
    .await;
    let got = events(&app, &mut wb).await;
    assert_eq!(
        got,
        vec![json!({
            "type": "update_message", "user_id": alice.user_id, "message_id": ids[1], "rendering_only": false,
            "stream_name": "general", "stream_id": general, "propagate_mode": "change_later",
            "orig_subject": "old", "subject": "later", "topic_links": [], "message_ids": [ids[1], ids[2]], "flags": [],
        })]
    );
    assert_eq!(message(&app, &bob, ids[0]).await["subject"], json!("old"));
    assert_eq!(message(&app, &bob, ids[2]).await["subject"], json!("later"));

    expect(edit(&app, &alice, ids[0], &[("topic", "one only"), quiet]).await, 200, edited()).await;
    assert_eq!(events(&app, &mut wb).await[0]["message_ids"], json!([ids[0]]));

    expect(edit(&app, &bob, ids[1], &[("subject", "all"), ("propagate_mode", "change_all")]).await, 200, edited())
        .await;
    assert_eq!(events(&app, &mut wb).await[0]["message_ids"], json!([ids[1], ids[2]]));

    let path = format!("/messages/{}/history", ids[2]);
    let (status, body) = json(call(&app, &bob, Method::GET, &path, &[]).await).await;
    assert_eq!(status, 200, "{body}");
    let topics: Vec<Value> = body["message_history"].as_array().unwrap().iter().map(|e| e["topic"].clone()).collect();
    assert_eq!(topics, vec![json!("old"), json!("later"), json!("all")]);
    assert_eq!(body["message_history"][2]["prev_topic"], json!("later"));
}

#[actix_web::test]
async fn resolving_a_topic_is_a_topic_move_members_may_make() {
    let Org { app, alice, bob, .. } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let id = post(&app, &alice, general, "lunch", "hi").await;
    // Resolving is a topic move too; with the default settings members may do it.
    expect(edit(&app, &bob, id, &[("topic", "✔ lunch")]).await, 200, edited()).await;
    assert_eq!(message(&app, &bob, id).await["subject"], json!("✔ lunch"));
}

#[actix_web::test]
async fn channel_moves_change_who_has_the_message() {
    let Org { app, alice, bob, carol } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let secret = channel(&app, "secret", true, &[&alice, &carol]).await;
    let id = post(&app, &alice, general, "t", "hello").await;
    let (mut wb, mut wc) = (
        Watch::new(&app, &bob, r#"["update_message", "delete_message"]"#).await,
        Watch::new(&app, &carol, r#"["update_message", "delete_message"]"#).await,
    );
    let target = secret.to_string();

    expect(edit(&app, &alice, id, &[("stream_id", target.as_str())]).await, 200, edited()).await;

    assert_eq!(
        events(&app, &mut wb).await,
        vec![json!({
            "type": "delete_message", "message_ids": [id], "message_type": "stream", "stream_id": general, "topic": "t",
        })]
    );
    assert_eq!(
        events(&app, &mut wc).await,
        vec![json!({
            "type": "update_message", "user_id": alice.user_id, "message_id": id, "rendering_only": false,
            "stream_name": "general", "stream_id": general, "propagate_mode": "change_one", "new_stream_id": secret,
            "orig_subject": "t", "message_ids": [id], "flags": ["read"],
        })]
    );
    let fetched = message(&app, &carol, id).await;
    assert_eq!(fetched["stream_id"], json!(secret));
    expect(call(&app, &bob, Method::GET, &format!("/messages/{id}"), &[]).await, 400, error("Invalid message(s)"))
        .await;
}

/// Changes organization settings as the owner.
async fn patch_realm(app: &TestApp, form: &[(&str, &str)]) {
    let (status, body) = json(call(app, &app.owner, Method::PATCH, "/realm", form).await).await;
    assert_eq!(status, 200, "{body}");
}

/// A channel message sent (over the API) and then dated `age` seconds ago.
async fn old_message(app: &TestApp, sender: &Creds, channel: i64, age: i64) -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let id = post(app, sender, channel, "t", "hello").await;
    let msg = BackdateMessage { message_id: id, date_sent: now - age, edit_history: None };
    app.realm("").addr.send(msg).await.unwrap().unwrap();
    id
}

#[actix_web::test]
async fn content_edits_end_at_the_organizations_time_limit() {
    let Org { app, alice, bob, .. } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    // 600 seconds by default, with Zulip's 20 seconds of grace.
    let recent = old_message(&app, &alice, general, 610).await;
    expect(edit(&app, &alice, recent, &[("content", "fixed")]).await, 200, edited()).await;
    let stale = old_message(&app, &alice, general, 1000).await;
    let limit = error("The time limit for editing this message has passed");
    expect(edit(&app, &alice, stale, &[("content", "fixed")]).await, 400, limit).await;
    patch_realm(&app, &[("message_content_edit_limit_seconds", r#""unlimited""#)]).await;
    expect(edit(&app, &alice, stale, &[("content", "fixed")]).await, 200, edited()).await;
}

#[actix_web::test]
async fn moves_follow_the_default_groups_and_time_limits() {
    let Org { app, alice, bob, .. } = org().await;
    let moderator = app.create_user("", "mod@agora.test", "Mod", 300).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let general = channel(&app, "general", false, &[&alice, &bob, &moderator, &guest]).await;
    let other = channel(&app, "other", false, &[&alice, &bob, &moderator, &guest]).await.to_string();
    let eight_days = 8 * 24 * 3600; // past the default 7-day move limits

    // Topic and channel moves by members end at the limits; moderators are exempt.
    let stale = old_message(&app, &alice, general, eight_days).await;
    let topic_limit = error("The time limit for editing this message's topic has passed.");
    expect(edit(&app, &bob, stale, &[("topic", "u")]).await, 400, topic_limit).await;
    let channel_limit = error("The time limit for editing this message's channel has passed");
    expect(edit(&app, &bob, stale, &[("stream_id", other.as_str())]).await, 400, channel_limit).await;
    expect(edit(&app, &moderator, stale, &[("topic", "u")]).await, 200, edited()).await;

    // Guests are not in the default `can_move_messages_between_channels_group` (members)
    // but are in `can_move_messages_between_topics_group` and `can_resolve_topics_group`
    // (everyone).
    let fresh = post(&app, &alice, general, "lunch", "hi").await;
    let no_move = error("You don't have permission to move this message");
    expect(edit(&app, &guest, fresh, &[("stream_id", other.as_str())]).await, 400, no_move).await;
    expect(edit(&app, &guest, fresh, &[("topic", "✔ lunch")]).await, 200, edited()).await;
    expect(edit(&app, &bob, fresh, &[("stream_id", other.as_str())]).await, 200, edited()).await;
}

#[actix_web::test]
async fn moving_to_a_public_channel_keeps_readers_informed() {
    let Org { app, alice, bob, carol } = org().await;
    let secret = channel(&app, "secret", true, &[&alice, &bob]).await;
    let public = channel(&app, "public", false, &[&alice, &carol]).await;
    let id = post(&app, &alice, secret, "t", "hello").await;
    let types = r#"["update_message", "delete_message"]"#;
    let (mut wb, mut wc) = (Watch::new(&app, &bob, types).await, Watch::new(&app, &carol, types).await);
    let target = public.to_string();

    expect(edit(&app, &alice, id, &[("stream_id", target.as_str()), ("topic", "moved")]).await, 200, edited()).await;

    // Bob may still read it in the public channel (without a row now); Carol gains a read row.
    let update = |flags: Value| {
        json!({
            "type": "update_message", "user_id": alice.user_id, "message_id": id, "rendering_only": false,
            "stream_name": "secret", "stream_id": secret, "propagate_mode": "change_one", "new_stream_id": public,
            "orig_subject": "t", "subject": "moved", "topic_links": [], "message_ids": [id], "flags": flags,
        })
    };
    assert_eq!(events(&app, &mut wb).await, vec![update(json!([]))]);
    assert_eq!(events(&app, &mut wc).await, vec![update(json!(["read"]))]);
    assert_eq!(message(&app, &bob, id).await["flags"], json!(["read", "historical"]));
    assert_eq!(message(&app, &carol, id).await["subject"], json!("moved"));
}

#[actix_web::test]
async fn moving_a_whole_topic_past_the_limit_says_how_much_may_move() {
    let Org { app, alice, bob, .. } = org().await;
    let general = channel(&app, "general", false, &[&alice, &bob]).await;
    let stale = old_message(&app, &alice, general, 8 * 24 * 3600).await;
    let fresh = post(&app, &alice, general, "t", "new").await;

    let (status, body) = json(edit(&app, &bob, fresh, &[("topic", "u"), ("propagate_mode", "change_all")]).await).await;
    assert_eq!(status, 400);
    assert_eq!(body["code"], json!("MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"));
    assert_eq!(body["msg"], json!("You only have permission to move the 1/2 most recent messages in this topic."));
    assert_eq!(body["first_message_id_allowed_to_move"], json!(fresh));
    assert_eq!(body["total_messages_in_topic"], json!(2));
    assert_eq!(body["total_messages_allowed_to_move"], json!(1));

    // Moving only the later messages is allowed.
    expect(edit(&app, &bob, fresh, &[("topic", "u"), ("propagate_mode", "change_later")]).await, 200, edited()).await;
    assert_eq!(message(&app, &bob, stale).await["subject"], json!("t"));
}
