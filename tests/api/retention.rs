//! The message retention policy (Zulip's `archive_messages`; level 452: with
//! `delete_message` events): expired channel and direct messages go, each channel by its
//! own period or the organization's.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{json, send, spawn_app, Creds, TestApp, Watch};

async fn send_message(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(send(app, who, Method::POST, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn channel(app: &TestApp, name: &str, form: &[(&str, &str)]) -> i64 {
    let mut all = vec![("name", name), ("subscribers", "[]")];
    all.extend_from_slice(form);
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &all).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Applies the policy as the server would `days` days from now; how many messages went.
async fn retention_in(app: &TestApp, days: i64) -> usize {
    let realm = app.realms.find("").await.unwrap().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let msg = agora_actors::realm::retention::ApplyRetention { now: now + days * 86_400 };
    realm.addr.send(msg).await.unwrap().unwrap()
}

/// The direct messages `who` can fetch.
async fn direct_ids(app: &TestApp, who: &Creds) -> Vec<i64> {
    let narrow = json!([{"operator": "is", "operand": "dm"}]).to_string();
    let form = [("anchor", "oldest"), ("num_before", "0"), ("num_after", "100"), ("narrow", narrow.as_str())];
    let (status, body) = json(app.as_user(who, Method::GET, "/messages").query(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
}

#[actix_web::test]
async fn expired_messages_go_by_each_channels_period() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let inherits = channel(&app, "inherits", &[]).await;
    let forever = channel(&app, "forever", &[("message_retention_days", r#""unlimited""#)]).await;
    let week = channel(&app, "week", &[("message_retention_days", "7")]).await;
    let (a, b, c) = (inherits.to_string(), forever.to_string(), week.to_string());
    let old_inherits =
        send_message(&app, &o, &[("type", "stream"), ("to", &a), ("topic", "T"), ("content", "1")]).await;
    let kept = send_message(&app, &o, &[("type", "stream"), ("to", &b), ("topic", "t"), ("content", "2")]).await;
    let old_week = send_message(&app, &o, &[("type", "stream"), ("to", &c), ("topic", "t"), ("content", "3")]).await;
    let to = json!([member.user_id]).to_string();
    let dm = send_message(&app, &o, &[("type", "direct"), ("to", &to), ("content", "4")]).await;

    // The organization keeps everything by default.
    assert_eq!(retention_in(&app, 365).await, 1, "only the week-long channel's message");
    let form = [("message_retention_days", "30")];
    let (status, body) = json(send(&app, &o, Method::PATCH, "/realm", &form).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(retention_in(&app, 29).await, 0, "not yet");
    let mut watch = Watch::new(&app, &o, r#"["delete_message", "stream"]"#).await;
    // The channel's message and every direct message (Welcome Bot's among them).
    let mut direct = direct_ids(&app, &o).await;
    direct.extend(direct_ids(&app, &member).await);
    direct.sort();
    direct.dedup();
    assert!(direct.contains(&dm), "{direct:?}");
    assert_eq!(retention_in(&app, 31).await, 1 + direct.len());
    assert_eq!(direct_ids(&app, &member).await, Vec::<i64>::new());
    let events = watch.events(&app).await;
    let deletions: Vec<_> = events.iter().filter(|e| e["type"] == "delete_message").cloned().collect();
    assert_eq!(
        deletions[0],
        json!({"type": "delete_message", "message_ids": [old_inherits], "stream_id": inherits, "topic": "t",
               "message_type": "stream"})
    );
    assert!(deletions[1..].iter().all(|e| e["message_type"] == "private"), "{deletions:?}");
    assert!(deletions.iter().any(|e| e["message_ids"] == json!([dm])), "{deletions:?}");
    assert!(events.contains(&json!({"type": "stream", "op": "update", "property": "first_message_id", "value": null,
                                    "stream_id": inherits, "name": "inherits"})));
    for (id, status) in [(kept, 200), (old_inherits, 400), (old_week, 400), (dm, 400)] {
        let response = send(&app, &o, Method::GET, &format!("/messages/{id}"), &[]).await;
        assert_eq!(response.status(), status, "message {id}");
    }
    app.stop().await;
}
