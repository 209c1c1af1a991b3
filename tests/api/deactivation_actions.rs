//! `DELETE /users/{user_id}` with `actions` (Zulip 12, level 459): a deactivated user's
//! profile and the messages they sent, deleted with Zulip's events, bots first.

use reqwest::Method;
use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::{error, expect, json, send, spawn_app, success, Creds, TestApp, Watch};

/// A new channel `name` with `principals`, created by the owner; its id.
async fn channel(app: &TestApp, name: &str, private: bool, principals: &[i64]) -> i64 {
    let ids = json!(principals).to_string();
    let private = private.to_string();
    let form = [("name", name), ("subscribers", ids.as_str()), ("invite_only", private.as_str())];
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn send_message(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(send(app, who, Method::POST, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// The ids of the messages the owner can still fetch, ascending.
async fn remaining(app: &TestApp) -> Vec<i64> {
    let form = [("anchor", "oldest"), ("num_before", "0"), ("num_after", "100"), ("narrow", "[]")];
    let (status, body) =
        json(app.as_user(&app.owner, Method::GET, "/messages").query(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
}

#[actix_web::test]
async fn deactivating_with_actions_deletes_the_profile_and_chosen_messages() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let spammer = app.create_user("", "spammer@agora.test", "Spammer", 400).await;
    let form = [("full_name", "Spam Helper"), ("short_name", "spamhelper")];
    let (status, bot) = json(send(&app, &spammer, Method::POST, "/bots", &form).await).await;
    assert_eq!(status, 200, "{bot}");
    let bot_id = bot["user_id"].as_i64().unwrap();
    let open = channel(&app, "open", false, &[o.user_id, spammer.user_id]).await;
    let secret = channel(&app, "secret", true, &[o.user_id, spammer.user_id]).await;
    let to_open = open.to_string();
    let to_secret = secret.to_string();
    let kept_mine =
        send_message(&app, &o, &[("type", "stream"), ("to", &to_open), ("topic", "Ads"), ("content", "mine")]).await;
    let ad1 =
        send_message(&app, &spammer, &[("type", "stream"), ("to", &to_open), ("topic", "Ads"), ("content", "buy")])
            .await;
    let ad2 =
        send_message(&app, &spammer, &[("type", "stream"), ("to", &to_open), ("topic", "ads"), ("content", "now")])
            .await;
    let private =
        send_message(&app, &spammer, &[("type", "stream"), ("to", &to_secret), ("topic", "x"), ("content", "hi")])
            .await;
    let to_owner = json!([o.user_id]).to_string();
    let dm = send_message(&app, &spammer, &[("type", "direct"), ("to", &to_owner), ("content", "psst")]).await;

    let path = format!("/users/{}", spammer.user_id);
    let bad = send(&app, &o, Method::DELETE, &path, &[("actions", r#"{"delete_profile": "yes"}"#)]);
    expect(bad.await, 400, error(r#"actions["delete_profile"] is not a boolean"#)).await;
    let bad = send(&app, &o, Method::DELETE, &path, &[("actions", "[]")]);
    expect(bad.await, 400, error("actions is not a dict")).await;
    // Only administrators deactivate others.
    let owner_path = format!("/users/{}", o.user_id);
    let refused = send(&app, &spammer, Method::DELETE, &owner_path, &[("actions", "{}")]).await;
    expect(refused, 400, error("Insufficient permission")).await;

    let mut watch = Watch::new(&app, &o, r#"["realm_user", "delete_message", "stream"]"#).await;
    let actions = r#"{"delete_profile": true, "delete_public_channel_messages": true, "delete_direct_messages": true, "unknown": 1}"#;
    expect(send(&app, &o, Method::DELETE, &path, &[("actions", actions)]).await, 200, success()).await;
    let events = watch.events(&app).await;
    let names: Vec<&Value> =
        events.iter().filter(|e| e["person"].get("full_name").is_some()).map(|e| &e["person"]).collect();
    // The bot's profile first, then the user's.
    assert_eq!(
        names,
        vec![
            &json!({"user_id": bot_id, "full_name": "Deleted user"}),
            &json!({"user_id": spammer.user_id, "full_name": "Deleted user"})
        ]
    );
    let deletions: Vec<&Value> = events.iter().filter(|e| e["type"] == "delete_message").collect();
    assert_eq!(
        deletions,
        vec![
            &json!({"type": "delete_message", "message_ids": [ad1, ad2], "stream_id": open, "topic": "ads", "message_type": "stream"}),
            &json!({"type": "delete_message", "message_ids": [dm], "message_type": "private"}),
        ]
    );
    // The private channel's message stays (not asked for), and so does everyone else's.
    let left = remaining(&app).await;
    assert!(left.contains(&kept_mine) && left.contains(&private), "{left:?}");
    assert!(![ad1, ad2, dm].iter().any(|id| left.contains(id)), "{left:?}");
    let (_, user) = json(send(&app, &o, Method::GET, &path, &[]).await).await;
    assert_eq!((&user["user"]["full_name"], &user["user"]["is_active"]), (&json!("Deleted user"), &json!(false)));
    app.stop().await;
}

#[actix_web::test]
async fn a_channels_first_message_follows_a_deleted_users_messages() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let spammer = app.create_user("", "spammer@agora.test", "Spammer", 400).await;
    let secret = channel(&app, "secret", true, &[o.user_id, spammer.user_id]).await;
    let to = secret.to_string();
    let first =
        send_message(&app, &spammer, &[("type", "stream"), ("to", &to), ("topic", "x"), ("content", "1")]).await;
    let second = send_message(&app, &o, &[("type", "stream"), ("to", &to), ("topic", "x"), ("content", "2")]).await;
    let mut watch = Watch::new(&app, &o, r#"["delete_message", "stream"]"#).await;
    let actions = r#"{"delete_private_channel_messages": true}"#;
    let path = format!("/users/{}", spammer.user_id);
    expect(send(&app, &o, Method::DELETE, &path, &[("actions", actions)]).await, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        vec![
            json!({"type": "stream", "op": "update", "property": "first_message_id", "value": second, "stream_id": secret, "name": "secret"}),
            json!({"type": "delete_message", "message_ids": [first], "stream_id": secret, "topic": "x", "message_type": "stream"}),
        ]
    );
    let (_, body) = json(send(&app, &o, Method::GET, &format!("/streams/{secret}"), &[]).await).await;
    assert_eq!(body["stream"]["first_message_id"], json!(second));
    app.stop().await;
}

#[actix_web::test]
async fn the_bots_messages_go_first_then_the_users_in_batches() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let spammer = app.create_user("", "spammer@agora.test", "Spammer", 400).await;
    let bot = create_bot(&app, &spammer, "spamhelper", &[]).await;
    let open = channel(&app, "open", false, &[o.user_id, spammer.user_id, bot.user_id]).await;
    let to = open.to_string();
    let from_bot = send_message(&app, &bot, &[("type", "stream"), ("to", &to), ("topic", "b"), ("content", "x")]).await;
    let mut sent = Vec::new();
    for i in 0..120 {
        let topic = if i % 2 == 0 { "even" } else { "odd" };
        sent.push(
            send_message(&app, &spammer, &[("type", "stream"), ("to", &to), ("topic", topic), ("content", "x")]).await,
        );
    }
    let kept = send_message(&app, &o, &[("type", "stream"), ("to", &to), ("topic", "even"), ("content", "mine")]).await;
    // Without actions, nothing but the deactivation.
    let bystander = app.create_user("", "bystander@agora.test", "Bystander", 400).await;
    let mut watch = Watch::new(&app, &o, r#"["delete_message"]"#).await;
    let path = format!("/users/{}", bystander.user_id);
    expect(send(&app, &o, Method::DELETE, &path, &[("actions", "{}")]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());

    let actions = r#"{"delete_public_channel_messages": true}"#;
    let path = format!("/users/{}", spammer.user_id);
    expect(send(&app, &o, Method::DELETE, &path, &[("actions", actions)]).await, 200, success()).await;
    let events = watch.events(&app).await;
    let ids = |e: &Value| e["message_ids"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>();
    // The bot's message first; then the user's newest 100 (one event per topic), then the rest.
    assert_eq!((ids(&events[0]), &events[0]["topic"]), (vec![from_bot], &json!("b")));
    let topics: Vec<&Value> = events[1..].iter().map(|e| &e["topic"]).collect();
    assert_eq!(topics, vec![&json!("even"), &json!("odd"), &json!("even"), &json!("odd")]);
    assert_eq!(ids(&events[1]).len() + ids(&events[2]).len(), 100);
    let mut deleted: Vec<i64> = events[1..].iter().flat_map(ids).collect();
    deleted.sort();
    assert_eq!(deleted, sent);
    let left = remaining(&app).await;
    assert!(left.contains(&kept) && !left.contains(&from_bot), "{left:?}");
    app.stop().await;
}
