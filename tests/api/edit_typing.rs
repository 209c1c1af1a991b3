//! Typing while editing a message (`POST /messages/{message_id}/typing`) over HTTP: Zulip's
//! checks in its order, and the `typing_edit_message` events of channel and direct
//! messages, to whom they go.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::invites::make_channel;

async fn typing(app: &TestApp, who: &Creds, message: i64, op: Option<&str>) -> reqwest::Response {
    let form: Vec<(&str, &str)> = op.map(|op| ("op", op)).into_iter().collect();
    post(app, who, &format!("/messages/{message}/typing"), &form).await
}

async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn setting(app: &TestApp, who: &Creds, name: &str, value: &str) {
    let (status, body) = json(send(app, who, Method::PATCH, "/settings", &[(name, value)]).await).await;
    assert_eq!(status, 200, "{body}");
}

const TYPES: &str = r#"["typing_edit_message"]"#;

#[actix_web::test]
async fn editing_a_channel_message_tells_its_subscribers() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let denmark = make_channel(&app, &owner, "denmark", false).await;
    for who in [&hamlet, &othello] {
        let subs = json!([{"name": "denmark"}]).to_string();
        assert_eq!(post(&app, who, "/users/me/subscriptions", &[("subscriptions", &subs)]).await.status(), 200);
    }
    let id =
        sent(&app, &hamlet, &[("type", "stream"), ("to", "denmark"), ("topic", "castle"), ("content", "hi")]).await;
    let mut theirs = Watch::new(&app, &othello, TYPES).await;
    let mut mine = Watch::new(&app, &hamlet, TYPES).await;

    expect(typing(&app, &hamlet, id, None).await, 400, missing("op")).await;
    expect(typing(&app, &hamlet, id, Some("go")).await, 400, error("Invalid op")).await;
    expect(typing(&app, &hamlet, 9999, Some("start")).await, 400, error("Invalid message(s)")).await;
    let not_yours = error("You don't have permission to edit this message");
    expect(typing(&app, &othello, id, Some("start")).await, 400, not_yours).await;

    expect(typing(&app, &hamlet, id, Some("start")).await, 200, success()).await;
    let event = json!({"type": "typing_edit_message", "op": "start", "sender_id": hamlet.user_id, "message_id": id,
                       "recipient": {"type": "channel", "channel_id": denmark, "topic": "castle"}});
    assert_eq!(theirs.events(&app).await, vec![event.clone()]);
    assert_eq!(mine.events(&app).await, vec![event]);

    // Who does not receive typing notifications is not told.
    setting(&app, &othello, "receives_typing_notifications", "false").await;
    expect(typing(&app, &hamlet, id, Some("stop")).await, 200, success()).await;
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    assert_eq!(mine.events(&app).await[0]["op"], "stop");
    // Nor may one who does not send them.
    setting(&app, &hamlet, "send_stream_typing_notifications", "false").await;
    let disabled = error("User has disabled typing notifications for channel messages");
    expect(typing(&app, &hamlet, id, Some("start")).await, 400, disabled).await;
    // Editing turned off, no typing either (checked before the setting).
    let off = send(&app, &owner, Method::PATCH, "/realm", &[("allow_message_editing", "false")]).await;
    assert_eq!(off.status(), 200);
    let refused = error("Your organization has turned off message editing");
    expect(typing(&app, &hamlet, id, Some("start")).await, 400, refused).await;
    app.stop().await;
}

#[actix_web::test]
async fn editing_a_direct_message_tells_its_participants() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let to = format!("[{}]", othello.user_id);
    let id = sent(&app, &hamlet, &[("type", "direct"), ("to", &to), ("content", "psst")]).await;
    let mut theirs = Watch::new(&app, &othello, TYPES).await;
    expect(typing(&app, &hamlet, id, Some("start")).await, 200, success()).await;
    // The sender first, then the other participant.
    let event = json!({"type": "typing_edit_message", "op": "start", "sender_id": hamlet.user_id, "message_id": id,
                       "recipient": {"type": "direct", "user_ids": [hamlet.user_id, othello.user_id]}});
    assert_eq!(theirs.events(&app).await, vec![event]);
    // Those who do not receive typing notifications are left out of the list too.
    setting(&app, &othello, "receives_typing_notifications", "false").await;
    let mut mine = Watch::new(&app, &hamlet, TYPES).await;
    expect(typing(&app, &hamlet, id, Some("stop")).await, 200, success()).await;
    let event = json!({"type": "typing_edit_message", "op": "stop", "sender_id": hamlet.user_id, "message_id": id,
                       "recipient": {"type": "direct", "user_ids": [hamlet.user_id]}});
    assert_eq!(mine.events(&app).await, vec![event]);
    assert_eq!(theirs.events(&app).await, Vec::<Value>::new());
    setting(&app, &hamlet, "send_private_typing_notifications", "false").await;
    let disabled = error("User has disabled typing notifications for direct messages");
    expect(typing(&app, &hamlet, id, Some("start")).await, 400, disabled).await;
    app.stop().await;
}
