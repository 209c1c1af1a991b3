//! Reminders over HTTP (`GET`, `POST /reminders`, `DELETE /reminders/{id}`): Notification
//! Bot's text as Zulip writes it (channel and direct messages, with a note), the errors,
//! the `reminders` events and data set, and the reminder sent when due, even late, about
//! the message as it is then.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::inbox;
use crate::helpers::*;
use crate::invites::make_channel;
use crate::scheduled::{deliver_at, now};

/// The id of a message `who` sends with `form`.
async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// `POST /reminders`; the id.
async fn remind(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/reminders", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["reminder_id"].as_i64().unwrap()
}

async fn listed(app: &TestApp, who: &Creds) -> Value {
    let (status, body) = json(send(app, who, Method::GET, "/reminders", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["reminders"].clone()
}

async fn full_name(app: &TestApp, who: &Creds) -> String {
    let (_, body) = json(send(app, who, Method::GET, "/users/me", &[]).await).await;
    body["full_name"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn reminders_are_created_listed_and_deleted_with_their_text_events_and_data_set() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let name = full_name(&app, &iago).await;
    let general = make_channel(&app, &iago, "general", false).await;
    let to = general.to_string();
    let message =
        sent(&app, &iago, &[("type", "stream"), ("to", &to), ("topic", "plans"), ("content", "Test message")]).await;
    let mut watch = Watch::new(&app, &iago, r#"["reminders"]"#).await;
    let (id_s, at) = (message.to_string(), now() + 86400);
    let at_s = at.to_string();
    let id = remind(&app, &iago, &[("message_id", &id_s), ("scheduled_delivery_timestamp", &at_s)]).await;
    let content = format!(
        "You requested a reminder for the following message.\n\n@_**{name}|{}** [said](http://agora.test/#narrow/channel/{general}-general/topic/plans/near/{message}) in [#general > plans](#narrow/channel/{general}-general/topic/plans/with/{message}):\n```quote\nTest message\n```",
        iago.user_id
    );
    let events = watch.events(&app).await;
    let rendered = events[0]["reminders"][0]["rendered_content"].clone();
    assert!(rendered.as_str().unwrap().starts_with("<p>You requested a reminder for the following message.</p>"));
    let dict = json!({"reminder_id": id, "to": [iago.user_id], "type": "private", "content": content,
                      "rendered_content": rendered, "scheduled_delivery_timestamp": at, "failed": false,
                      "reminder_target_message_id": message});
    assert_eq!(events, vec![json!({"type": "reminders", "op": "add", "reminders": [dict]})]);
    assert_eq!(listed(&app, &iago).await, json!([dict]));
    let body = register(&app, &iago, &[("fetch_event_types", r#"["reminders", "scheduled_messages"]"#)]).await;
    assert_eq!((&body["reminders"], &body["scheduled_messages"]), (&json!([dict]), &json!([])));

    // A direct message, with a note.
    let bobs = json!([bob.user_id]).to_string();
    let dm = sent(&app, &iago, &[("type", "direct"), ("to", &bobs), ("content", "psst")]).await;
    let dm_s = dm.to_string();
    let with_note =
        remind(&app, &iago, &[("message_id", &dm_s), ("scheduled_delivery_timestamp", &at_s), ("note", "call bob\n")])
            .await;
    let listing = listed(&app, &iago).await;
    assert_eq!(listing[1]["reminder_id"], json!(with_note));
    let expected = format!(
        "You requested a reminder for the following direct message. Note:\n > call bob\n\n@_**{name}|{}** [said](http://agora.test/#narrow/dm/{},{}/near/{dm}) to @_**Bob|{}**:\n```quote\npsst\n```",
        iago.user_id, iago.user_id, bob.user_id, bob.user_id
    );
    assert_eq!(listing[1]["content"], json!(expected));
    watch.events(&app).await;

    let path = format!("/reminders/{id}");
    expect(send(&app, &bob, Method::DELETE, &path, &[]).await, 404, error("Reminder does not exist")).await;
    expect(send(&app, &iago, Method::DELETE, &path, &[]).await, 200, success()).await;
    assert_eq!(watch.events(&app).await, vec![json!({"type": "reminders", "op": "remove", "reminder_id": id})]);
    expect(send(&app, &iago, Method::DELETE, &path, &[]).await, 404, error("Reminder does not exist")).await;
    // A reminder is not a scheduled message, nor the other way round.
    let path = format!("/scheduled_messages/{with_note}");
    expect(send(&app, &iago, Method::DELETE, &path, &[]).await, 404, error("Scheduled message does not exist")).await;
    assert_eq!(listed(&app, &iago).await.as_array().unwrap().len(), 1);
    app.stop().await;
}

#[actix_web::test]
async fn reminders_refuse_what_zulip_refuses() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let secret = make_channel(&app, &iago, "secret", true).await;
    let to = secret.to_string();
    let message = sent(&app, &iago, &[("type", "stream"), ("to", &to), ("topic", "t"), ("content", "hidden")]).await;
    let (id, future, past) = (message.to_string(), (now() + 3600).to_string(), (now() - 1).to_string());
    let long = "n".repeat(1001);
    type Case<'a> = (&'a Creds, Vec<(&'a str, &'a str)>, Value);
    let cases: Vec<Case> = vec![
        (&iago, vec![("scheduled_delivery_timestamp", &future)], missing("message_id")),
        (&iago, vec![("message_id", &id)], missing("scheduled_delivery_timestamp")),
        (
            &iago,
            vec![("message_id", &id), ("scheduled_delivery_timestamp", &past)],
            error("Scheduled delivery time must be in the future."),
        ),
        (
            &iago,
            vec![("message_id", "123456789"), ("scheduled_delivery_timestamp", &future)],
            error("Invalid message(s)"),
        ),
        (&bob, vec![("message_id", &id), ("scheduled_delivery_timestamp", &future)], error("Invalid message(s)")),
        (
            &iago,
            vec![("message_id", &id), ("scheduled_delivery_timestamp", &future), ("note", &long)],
            error("Maximum reminder note length: 1000 characters"),
        ),
    ];
    for (who, form, body) in cases {
        expect(post(&app, who, "/reminders", &form).await, 400, body).await;
    }
    assert_eq!(listed(&app, &iago).await, json!([]));
    app.stop().await;
}

#[actix_web::test]
async fn a_due_reminder_comes_from_notification_bot_about_the_message_as_it_is_then() {
    let app = spawn_app().await;
    let iago = app.owner.clone();
    let own = json!([iago.user_id]).to_string();
    let message = sent(&app, &iago, &[("type", "direct"), ("to", &own), ("content", "buy milk")]).await;
    let at = now() + 3600;
    let (id_s, at_s) = (message.to_string(), at.to_string());
    let id = remind(&app, &iago, &[("message_id", &id_s), ("scheduled_delivery_timestamp", &at_s)]).await;
    let path = format!("/messages/{message}");
    assert_eq!(send(&app, &iago, Method::PATCH, &path, &[("content", "buy oat milk")]).await.status(), 200);
    let mut watch = Watch::new(&app, &iago, r#"["message", "reminders"]"#).await;

    // Reminders go out however late (Zulip's late cutoff is for scheduled messages only).
    deliver_at(&app, at + 3600).await;
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 2, "{events:?}");
    let expected = format!(
        "You requested a reminder for the following direct message.\n\nYou [sent](http://agora.test/#narrow/dm/{}/near/{message}) a note to yourself:\n```quote\nbuy oat milk\n```",
        iago.user_id
    );
    assert_eq!(events[0]["type"], json!("message"));
    assert_eq!(events[0]["message"]["sender_email"], json!("notification-bot@zulip.com"));
    assert_eq!(events[0]["message"]["content"], json!(expected));
    assert_eq!(events[0]["flags"], json!([]));
    assert_eq!(events[1], json!({"type": "reminders", "op": "remove", "reminder_id": id}));
    assert_eq!(listed(&app, &iago).await, json!([]));
    deliver_at(&app, at + 3700).await;
    let reminders: Vec<_> =
        inbox(&app, &iago).await.into_iter().filter(|m| m.0 == "notification-bot@zulip.com").collect();
    assert_eq!(reminders.len(), 1);
    app.stop().await;
}
