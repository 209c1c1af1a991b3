//! Deleting a topic (`POST /streams/{stream_id}/delete_topic`) and a channel's email address
//! (`GET /streams/{stream_id}/email_address`) over HTTP: who may, Zulip's errors, the
//! `delete_message` events in batches of 100 newest first, the channel's new first message,
//! the cleared topic policies, and the empty address of a server without an email gateway.

use std::time::Duration;

use agora_actors::ids::UserId;
use agora_actors::realm::chat::changes::delete_topic::DeleteTopic;
use reqwest::Method;
use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::*;
use crate::invites::make_channel;

/// Subscribes `who` to `channel` (by name).
async fn join(app: &TestApp, who: &Creds, channel: &str) {
    let subs = json!([{ "name": channel }]).to_string();
    let (status, body) = json(post(app, who, "/users/me/subscriptions", &[("subscriptions", &subs)]).await).await;
    assert_eq!(status, 200, "{body}");
}

/// `who` writes `content` to `channel` > `topic`; its id.
async fn say(app: &TestApp, who: &Creds, channel: &str, topic: &str, content: &str) -> i64 {
    let form = [("type", "stream"), ("to", channel), ("topic", topic), ("content", content)];
    let (status, body) = json(post(app, who, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// The ids of the messages in `channel` > `topic` that `who` can see.
async fn topic_ids(app: &TestApp, who: &Creds, channel: &str, topic: &str) -> Vec<i64> {
    let narrow = json!([{"operator": "channel", "operand": channel}, {"operator": "topic", "operand": topic}]);
    let query = [("anchor", "newest"), ("num_before", "1000"), ("num_after", "0"), ("narrow", &narrow.to_string())];
    let (status, body) = json(app.as_user(who, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
}

fn complete(done: bool) -> Value {
    json!({"result": "success", "msg": "", "complete": done})
}

#[actix_web::test]
async fn administrators_delete_a_topic_in_batches_and_everyone_is_told() {
    let app = spawn_app().await;
    channel_event_notices_on(&app).await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let denmark = make_channel(&app, &owner, "denmark", false).await;
    join(&app, &hamlet, "denmark").await;
    let path = format!("/streams/{denmark}/delete_topic");
    let first = say(&app, &owner, "denmark", "Lunch", "first").await;
    let mut lunch = vec![first];
    for i in 0..100 {
        lunch.push(say(&app, &hamlet, "denmark", if i % 2 == 0 { "lunch" } else { "LUNCH" }, "hungry").await);
    }
    let work = say(&app, &hamlet, "denmark", "work", "busy").await;
    let mute = [("stream_id", denmark.to_string()), ("topic", "Lunch".into()), ("visibility_policy", "1".into())];
    let mute: Vec<(&str, &str)> = mute.iter().map(|(k, v)| (*k, v.as_str())).collect();
    expect(post(&app, &hamlet, "/user_topics", &mute).await, 200, success()).await;

    // Administrators only, before any parameter; then `topic_name`, then the channel.
    let admin_only =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    expect(post(&app, &hamlet, &path, &[]).await, 400, admin_only).await;
    expect(post(&app, &owner, &path, &[]).await, 400, missing("topic_name")).await;
    let nowhere = post(&app, &owner, "/streams/9999/delete_topic", &[("topic_name", "lunch")]).await;
    expect(nowhere, 400, error("Invalid channel ID")).await;

    // Out of time before the first batch: nothing is deleted, and the client is to ask again.
    let msg = DeleteTopic {
        acting: UserId(owner.user_id),
        stream_id: denmark,
        topic_name: "lunch".into(),
        time_limit: Duration::ZERO,
    };
    assert_eq!(app.realm("").addr.send(msg).await.unwrap(), Ok(false));
    assert_eq!(topic_ids(&app, &hamlet, "denmark", "lunch").await.len(), 101);

    let types = r#"["delete_message", "stream", "user_topic", "muted_topics"]"#;
    let mut watch = Watch::new(&app, &hamlet, types).await;
    expect(post(&app, &owner, &path, &[("topic_name", "LUNCH")]).await, 200, complete(true)).await;
    let events = watch.events(&app).await;
    // The newest hundred first, then the rest.
    let deletion = |ids: &[i64], topic: &str| {
        json!({"type": "delete_message", "message_ids": ids, "stream_id": denmark, "topic": topic,
               "message_type": "stream"})
    };
    assert_eq!(events[0], deletion(&lunch[1..], "lunch"));
    assert_eq!(events[1], deletion(&[first], "lunch"));
    // The topic's policies go with it (as the request named the topic; `muted_topics` goes
    // only to queues without `user_topic`).
    assert_eq!(events[2]["type"], "user_topic");
    assert_eq!(
        (events[2]["topic_name"].clone(), events[2]["visibility_policy"].clone(), events[2]["stream_id"].clone()),
        (json!("LUNCH"), json!(0), json!(denmark))
    );
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(topic_ids(&app, &hamlet, "denmark", "lunch").await.is_empty());
    assert_eq!(topic_ids(&app, &hamlet, "denmark", "work").await, vec![work]);
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["user_topic"]"#)]).await;
    // (Hamlet follows the topics he writes to.)
    let topics: Vec<Value> = state["user_topics"].as_array().unwrap().iter().map(|t| t["topic_name"].clone()).collect();
    assert_eq!(topics, vec![json!("work")]);

    // The topic holding the channel's first message (Notification Bot's notice of its
    // creation): the channel's new first message is told first.
    let notices = topic_ids(&app, &hamlet, "denmark", "channel events").await;
    assert_eq!(notices.len(), 1);
    let form = [("topic_name", "channel events")];
    expect(post(&app, &owner, &path, &form).await, 200, complete(true)).await;
    let first_now = json!({"type": "stream", "op": "update", "property": "first_message_id", "value": work,
                           "stream_id": denmark, "name": "denmark"});
    assert_eq!(watch.events(&app).await, vec![first_now, deletion(&notices, "channel events")]);

    // Again: nothing left, still complete; "general chat" names the empty topic.
    expect(post(&app, &owner, &path, &[("topic_name", "lunch")]).await, 200, complete(true)).await;
    let empty = say(&app, &hamlet, "denmark", "", "no topic").await;
    expect(post(&app, &owner, &path, &[("topic_name", "general chat")]).await, 200, complete(true)).await;
    let gone = app.as_user(&hamlet, Method::GET, &format!("/messages/{empty}")).send().await.unwrap();
    expect(gone, 400, error("Invalid message(s)")).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_channels_email_address_is_empty_without_an_email_gateway() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let denmark = make_channel(&app, &owner, "denmark", false).await;
    let secret = make_channel(&app, &owner, "secret", true).await;
    let own_bot = create_bot(&app, &hamlet, "helper", &[]).await;
    let their_bot = create_bot(&app, &owner, "other", &[]).await;
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["realm_user"]"#)]).await;
    let gateway =
        state["cross_realm_bots"].as_array().unwrap().iter().find(|b| b["email"] == "emailgateway@zulip.com").unwrap()
            ["user_id"]
            .as_i64()
            .unwrap();
    let get = |channel: i64, sender: Option<String>| {
        let mut path = format!("/streams/{channel}/email_address");
        if let Some(sender) = sender {
            path.push_str(&format!("?sender_id={sender}"));
        }
        app.as_user(&hamlet, Method::GET, &path).send()
    };
    let empty = json!({"result": "success", "msg": "", "email": ""});
    expect(get(denmark, None).await.unwrap(), 200, empty.clone()).await;
    for sender in [gateway, hamlet.user_id, own_bot.user_id] {
        expect(get(denmark, Some(sender.to_string())).await.unwrap(), 200, empty.clone()).await;
    }
    // The channel first, then the sender.
    expect(get(secret, Some("x".into())).await.unwrap(), 400, error("sender_id is not valid JSON")).await;
    expect(get(secret, None).await.unwrap(), 400, error("Invalid channel ID")).await;
    expect(get(9999, None).await.unwrap(), 400, error("Invalid channel ID")).await;
    let cases = [(their_bot.user_id, "Insufficient permission"), (owner.user_id, "No such bot"), (9999, "No such bot")];
    for (sender, msg) in cases {
        expect(get(denmark, Some(sender.to_string())).await.unwrap(), 400, error(msg)).await;
    }
    // Zulip's server fails on a negative id (its parameter check has no message for it);
    // Agora refuses it.
    expect(get(denmark, Some("-1".into())).await.unwrap(), 400, error("Invalid sender_id")).await;
    // Archived channels have no address.
    expect(send(&app, &owner, Method::DELETE, &format!("/streams/{denmark}"), &[]).await, 200, success()).await;
    expect(get(denmark, None).await.unwrap(), 400, error("Invalid channel ID")).await;
    app.stop().await;
}
