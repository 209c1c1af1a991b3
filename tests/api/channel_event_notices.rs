//! Notification Bot's notices about a channel in its "channel events" topic (Zulip's
//! `maybe_send_channel_events_notice`, level 434): renames, description, access and posting
//! permissions, retention, the general chat setting, archiving and unarchiving; and
//! unarchiving itself (`PATCH /streams/{id}` with `is_archived=false`, level 388).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    admins_and_members_groups, channel_event_notices_on, error, expect, json, send, spawn_app, success, Creds, TestApp,
    Watch,
};

/// The contents and flags (as `who` sees them) of a channel's "channel events" topic.
async fn notices(app: &TestApp, who: &Creds, channel: i64) -> Vec<(String, Vec<Value>)> {
    let narrow =
        json!([{"operator": "channel", "operand": channel}, {"operator": "topic", "operand": "channel events"}]);
    let narrow = narrow.to_string();
    let form = [
        ("anchor", "oldest"),
        ("num_before", "0"),
        ("num_after", "100"),
        ("narrow", narrow.as_str()),
        ("apply_markdown", "false"),
    ];
    let (status, body) = json(app.as_user(who, Method::GET, "/messages").query(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let messages = body["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m["sender_email"] == "notification-bot@zulip.com"), "{body}");
    messages
        .iter()
        .map(|m| (m["content"].as_str().unwrap().to_owned(), m["flags"].as_array().unwrap().clone()))
        .collect()
}

/// `@_**Full Name|id**` of a user.
async fn mention(app: &TestApp, who: &Creds) -> String {
    let (_, body) = json(send(app, who, Method::GET, "/users/me", &[]).await).await;
    format!("@_**{}|{}**", body["full_name"].as_str().unwrap(), who.user_id)
}

async fn create(app: &TestApp, name: &str, description: &str, subscribers: &[&Creds]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let form = [("name", name), ("description", description), ("subscribers", ids.as_str())];
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

fn contents(notices: &[(String, Vec<Value>)]) -> Vec<&str> {
    notices.iter().map(|(c, _)| c.as_str()).collect()
}

#[actix_web::test]
async fn channel_changes_are_told_in_channel_events() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    channel_event_notices_on(&app).await;
    let id = create(&app, "plans", "Old plans", &[&o, &member]).await;
    let who = mention(&app, &o).await;
    let path = format!("/streams/{id}");
    let created = format!("**Public** channel created by {who}. **Description:**\n```` quote\nOld plans\n````");
    assert_eq!(contents(&notices(&app, &o, id).await), vec![created.as_str()]);

    // One request changing several things: one notice each, in Zulip's order.
    let form = [
        ("is_private", "true"),
        ("topics_policy", "disable_empty_topic"),
        ("description", ""),
        ("new_name", "designs"),
    ];
    expect(send(&app, &o, Method::PATCH, &path, &form).await, 200, success()).await;
    let (admins, _) = admins_and_members_groups(&app).await;
    let anonymous = json!({"new": {"direct_members": [member.user_id], "direct_subgroups": [admins]}}).to_string();
    let form = [("can_send_message_group", anonymous.as_str()), ("message_retention_days", "30")];
    expect(send(&app, &o, Method::PATCH, &path, &form).await, 200, success()).await;
    let form = [("message_retention_days", r#""unlimited""#), ("is_private", "false")];
    expect(send(&app, &o, Method::PATCH, &path, &form).await, 200, success()).await;
    let same = error("Channel already has that name.");
    expect(send(&app, &o, Method::PATCH, &path, &[("new_name", " designs ")]).await, 400, same).await;
    // A request that changes nothing says nothing.
    expect(send(&app, &o, Method::PATCH, &path, &[("description", "")]).await, 200, success()).await;
    let told = notices(&app, &member, id).await;
    let expected = [
        created.clone(),
        format!("{who} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, protected history**."),
        format!("{who} changed the \"Allow posting to the *general chat* topic?\" setting from **Automatic** to **No *general chat* topic**."),
        format!("{who} changed the description for this channel.\n\n* **Old description:**\n```` quote\nOld plans\n````\n* **New description:**\n```` quote\n*No description.*\n````"),
        format!("{who} renamed channel **plans** to **designs**."),
        format!("{who} has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: Forever\n* **New retention period**: 30 days\n\nMessages in this channel will now be automatically deleted 30 days after they are sent."),
        format!("{who} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: @_*role:everyone*\n* **New**: @_*role:administrators*, @_**Member|{}**", member.user_id),
        format!("{who} changed the [access permissions](/help/channel-permissions) for this channel from **Private, protected history** to **Public**."),
        format!("{who} has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: 30 days\n* **New retention period**: Forever\n\nMessages in this channel will now be retained forever."),
    ];
    assert_eq!(contents(&told), expected.iter().map(String::as_str).collect::<Vec<_>>());
    // Notices are unread for the subscribers (the created one aside: it was before them).
    assert!(told[1..].iter().all(|(_, flags)| !flags.contains(&json!("read"))), "{told:?}");
    app.stop().await;
}

#[actix_web::test]
async fn archiving_and_unarchiving_a_channel() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    channel_event_notices_on(&app).await;
    let id = create(&app, "projects", "", &[&o, &member]).await;
    let path = format!("/streams/{id}");
    let not_archived = error("Channel is not currently deactivated");
    expect(send(&app, &o, Method::PATCH, &path, &[("is_archived", "false")]).await, 400, not_archived.clone()).await;
    expect(send(&app, &o, Method::DELETE, &path, &[]).await, 200, success()).await;
    let told = notices(&app, &member, id).await;
    let (archived, flags) = told.last().unwrap();
    assert_eq!(archived, "Channel #**projects** has been archived.");
    assert!(flags.contains(&json!("read")), "nobody gets the archiving notice unread: {flags:?}");

    let mut knows = Watch::new(&app, &o, r#"["stream"]"#).await;
    let older_caps = r#"{"notification_settings_null": true}"#;
    let mut older =
        Watch::with_form(&app, &o, &[("event_types", r#"["stream"]"#), ("client_capabilities", older_caps)]).await;
    // Only a member who may administer the channel unarchives it.
    let refused = error("You do not have permission to administer this channel.");
    expect(send(&app, &member, Method::PATCH, &path, &[("is_archived", "false")]).await, 400, refused).await;
    // `is_archived=true` does not archive (only `DELETE` does): nothing changes.
    expect(send(&app, &o, Method::PATCH, &path, &[("is_archived", "true")]).await, 200, success()).await;
    expect(send(&app, &o, Method::PATCH, &path, &[("is_archived", "false")]).await, 200, success()).await;
    assert_eq!(
        knows.events(&app).await,
        vec![
            json!({"type": "stream", "op": "update", "property": "is_archived", "value": false, "stream_id": id, "name": "projects"})
        ]
    );
    let events = older.events(&app).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((&events[0]["op"], &events[0]["streams"][0]["stream_id"]), (&json!("create"), &json!(id)));
    assert_eq!(events[0]["streams"][0]["is_archived"], json!(false));
    let told = notices(&app, &member, id).await;
    assert_eq!(told.last().unwrap().0, "Channel #**projects** has been unarchived.");
    // It takes messages again.
    let form = [("type", "stream"), ("to", "projects"), ("topic", "back"), ("content", "hi")];
    let (status, body) = json(send(&app, &member, Method::POST, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    expect(send(&app, &o, Method::PATCH, &path, &[("is_archived", "false")]).await, 400, not_archived).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_private_channel_nobody_is_in_stays_archived() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let form = [("name", "empty"), ("subscribers", "[]"), ("invite_only", "true")];
    let (status, body) = json(send(&app, &o, Method::POST, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let path = format!("/streams/{}", body["id"]);
    expect(send(&app, &o, Method::DELETE, &path, &[]).await, 200, success()).await;
    let refused = error("Channel is private and have no subscribers");
    expect(send(&app, &o, Method::PATCH, &path, &[("is_archived", "false")]).await, 400, refused).await;
    app.stop().await;
}
