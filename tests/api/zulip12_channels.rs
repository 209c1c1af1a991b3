//! Zulip 12's changes of feature levels 426-465 to channels, organization settings, calls and
//! the register data (the channel group of issue 29): who may start topics
//! (`can_create_topic_group`), channel event notices (`send_channel_events_messages`), the
//! register keys added and removed, the channel email address rule, and the call providers
//! a server without them answers for.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    admins_and_members_groups, error, expect, json, missing, register, send, spawn_app, success, Creds, TestApp, Watch,
};

/// A channel created by the owner over `POST /channels/create`, with more `form` fields.
async fn channel(app: &TestApp, name: &str, subscribers: &[&Creds], form: &[(&str, &str)]) -> i64 {
    let ids = json!(subscribers.iter().map(|c| c.user_id).collect::<Vec<_>>()).to_string();
    let mut all = vec![("name", name), ("subscribers", ids.as_str())];
    all.extend_from_slice(form);
    let (status, body) = json(send(app, &app.owner, Method::POST, "/channels/create", &all).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// `POST /messages` to a channel topic as `who`: the status and body.
async fn send_to(app: &TestApp, who: &Creds, channel: i64, topic: &str) -> (u16, Value) {
    let to = channel.to_string();
    let form = [("type", "stream"), ("to", to.as_str()), ("topic", topic), ("content", "hello")];
    json(send(app, who, Method::POST, "/messages", &form).await).await
}

/// The messages of a channel, oldest first, as the owner sees them.
async fn channel_messages(app: &TestApp, channel: i64) -> Vec<Value> {
    let narrow = json!([{"operator": "channel", "operand": channel}]).to_string();
    let form = [("anchor", "oldest"), ("num_before", "0"), ("num_after", "100"), ("narrow", narrow.as_str())];
    let (status, body) =
        json(app.as_user(&app.owner, Method::GET, "/messages").query(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn register_has_zulip_12s_realm_keys() {
    let app = spawn_app().await;
    let state = register(&app, &app.owner, &[]).await;
    assert!(state.get("realm_is_zephyr_mirror_realm").is_none(), "gone since FL 426");
    assert_eq!(state["realm_owner_full_content_access"], json!(false));
    assert_eq!(
        state["server_report_message_types"],
        json!([
            {"key": "spam", "name": "Spam"},
            {"key": "harassment", "name": "Harassment"},
            {"key": "inappropriate", "name": "Inappropriate content"},
            {"key": "norms", "name": "Violates community norms"},
            {"key": "other", "name": "Other reason"},
        ])
    );
    let stream = &state["server_supported_permission_settings"]["stream"];
    assert_eq!(stream["can_administer_channel_group"]["default_group_name"], json!("channel_creator"));
    assert_eq!(
        stream["can_create_topic_group"],
        json!({
            "require_system_group": false, "allow_internet_group": false, "allow_nobody_group": true,
            "allow_everyone_group": true, "default_group_name": "role:everyone", "default_for_system_groups": null,
            "allowed_system_groups": [],
        })
    );
    assert_eq!(state["user_settings"]["web_inbox_show_channel_folders"], json!(true));
    assert_eq!(state["realm_user_settings_defaults"]["web_inbox_show_channel_folders"], json!(true));
    // Off in a new organization, as in Zulip 12 (the notices' own tests turn them on).
    assert_eq!(state["realm_send_channel_events_messages"], json!(false));
    app.stop().await;
}

#[actix_web::test]
async fn personal_settings_of_levels_431_and_454() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let mut watch = Watch::new(&app, &o, r#"["user_settings"]"#).await;
    let form = [("web_inbox_show_channel_folders", "false"), ("web_home_view", "recent")];
    expect(send(&app, &o, Method::PATCH, "/settings", &form).await, 200, success()).await;
    let update = |property: &str, value: Value| json!({"type": "user_settings", "op": "update", "property": property, "value": value});
    assert_eq!(
        watch.events(&app).await,
        vec![update("web_home_view", json!("recent")), update("web_inbox_show_channel_folders", json!(false))]
    );
    // `recent_topics` is no longer a home view's name (FL 454).
    let refused = [("web_home_view", "recent_topics")];
    let msg = "Invalid web_home_view: Value error, Not in the list of possible values";
    expect(send(&app, &o, Method::PATCH, "/settings", &refused).await, 400, error(msg)).await;
    let defaults = [("web_inbox_show_channel_folders", "false")];
    expect(send(&app, &o, Method::PATCH, "/realm/user_settings_defaults", &defaults).await, 200, success()).await;
    let state = register(&app, &o, &[]).await;
    assert_eq!(state["user_settings"]["web_home_view"], json!("recent"));
    assert_eq!(state["realm_user_settings_defaults"]["web_inbox_show_channel_folders"], json!(false));
    app.stop().await;
}

#[actix_web::test]
async fn channel_event_notices_follow_send_channel_events_messages() {
    let app = spawn_app().await;
    let owner = app.create_realm("fresh", "owner@fresh.test").await;
    // Off in a new organization, as in Zulip 12.
    let state = register(&app, &owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(state["realm_send_channel_events_messages"], json!(false));
    let create = |name: &'static str| {
        // Not announced: the notice in the new channel comes all the same.
        let form = [("name", name), ("subscribers", "[]")];
        let owner = owner.clone();
        let app = &app;
        async move {
            let (status, body) = json(send(app, &owner, Method::POST, "/channels/create", &form).await).await;
            assert_eq!(status, 200, "{body}");
            body["id"].as_i64().unwrap()
        }
    };
    let quiet = create("quiet").await;
    let first = |id: i64| {
        let owner = owner.clone();
        let app = &app;
        async move {
            let (_, body) = json(send(app, &owner, Method::GET, &format!("/streams/{id}"), &[]).await).await;
            body["stream"]["first_message_id"].clone()
        }
    };
    assert_eq!(first(quiet).await, Value::Null, "no notice in the new channel");

    let mut watch = Watch::new(&app, &owner, r#"["realm"]"#).await;
    let on = [("send_channel_events_messages", "true")];
    let (status, body) = json(send(&app, &owner, Method::PATCH, "/realm", &on).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "realm", "op": "update", "property": "send_channel_events_messages", "value": true})]
    );
    let told = create("told").await;
    assert!(first(told).await.is_i64(), "Notification Bot posted the channel's first message");
    app.stop().await;
}

#[actix_web::test]
async fn can_create_topic_group_limits_new_topics_to_its_members() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let (admins, _) = admins_and_members_groups(&app).await;
    let admins_only = admins.to_string();
    let id = channel(&app, "curated", &[&app.owner, &member], &[("can_create_topic_group", &admins_only)]).await;
    let (_, body) = json(send(&app, &member, Method::GET, &format!("/streams/{id}"), &[]).await).await;
    assert_eq!(body["stream"]["can_create_topic_group"], json!(admins));

    // The owner starts a topic; the member may write to it, but not start another.
    assert_eq!(send_to(&app, &app.owner, id, "agenda").await.0, 200);
    assert_eq!(send_to(&app, &member, id, "AGENDA").await.0, 200, "topics match without case");
    let refused = error("You do not have permission to create new topics in this channel.");
    assert_eq!(send_to(&app, &member, id, "new idea").await, (400, refused.clone()));

    // Nor move a message into a new topic; resolving one is no new topic.
    let messages = channel_messages(&app, id).await;
    let mine = messages.iter().find(|m| m["sender_id"] == member.user_id).unwrap()["id"].as_i64().unwrap();
    let path = format!("/messages/{mine}");
    let moved = send(&app, &member, Method::PATCH, &path, &[("topic", "elsewhere"), ("propagate_mode", "change_one")]);
    expect(moved.await, 400, refused.clone()).await;
    let resolve = send(&app, &member, Method::PATCH, &path, &[("topic", "✔ AGENDA"), ("propagate_mode", "change_one")]);
    let (status, body) = json(resolve.await).await;
    assert_eq!(status, 200, "{body}");

    // Everyone again: anyone starts topics.
    let state = register(&app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let groups = state["realm_user_groups"].as_array().unwrap();
    let everyone_id = groups.iter().find(|g| g["name"] == "role:everyone").unwrap()["id"].as_i64().unwrap();
    let setting = json!({"new": everyone_id}).to_string();
    let form = [("can_create_topic_group", setting.as_str())];
    expect(send(&app, &app.owner, Method::PATCH, &format!("/streams/{id}"), &form).await, 200, success()).await;
    assert_eq!(send_to(&app, &member, id, "new idea").await.0, 200);
    app.stop().await;
}

#[actix_web::test]
async fn private_channels_with_protected_history_let_everyone_start_topics() {
    let app = spawn_app().await;
    let (admins, _) = admins_and_members_groups(&app).await;
    let id =
        channel(&app, "vault", &[&app.owner], &[("invite_only", "true"), ("history_public_to_subscribers", "true")])
            .await;
    let combination = error("Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group");
    let path = format!("/streams/{id}");
    let setting = json!({"new": admins}).to_string();
    let both = [("history_public_to_subscribers", "false"), ("can_create_topic_group", setting.as_str())];
    expect(send(&app, &app.owner, Method::PATCH, &path, &both).await, 400, combination.clone()).await;
    let only_setting = [("can_create_topic_group", setting.as_str())];
    expect(send(&app, &app.owner, Method::PATCH, &path, &only_setting).await, 200, success()).await;
    let protect = [("history_public_to_subscribers", "false")];
    expect(send(&app, &app.owner, Method::PATCH, &path, &protect).await, 400, combination.clone()).await;
    // Nor can such a channel be created.
    let admins_only = admins.to_string();
    let form = [
        ("name", "sealed"),
        ("subscribers", "[]"),
        ("invite_only", "true"),
        ("history_public_to_subscribers", "false"),
        ("can_create_topic_group", admins_only.as_str()),
    ];
    expect(send(&app, &app.owner, Method::POST, "/channels/create", &form).await, 400, combination).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_channels_email_address_needs_permission_to_post() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let (admins, _) = admins_and_members_groups(&app).await;
    let admins_only = admins.to_string();
    let id = channel(&app, "announcements", &[&app.owner, &member], &[("can_send_message_group", &admins_only)]).await;
    let path = format!("/streams/{id}/email_address");
    let refused = error("You do not have permission to post in this channel.");
    expect(send(&app, &member, Method::GET, &path, &[]).await, 400, refused).await;
    let (status, body) = json(send(&app, &app.owner, Method::GET, &path, &[]).await).await;
    assert_eq!((status, body), (200, json!({"result": "success", "msg": "", "email": ""})));
    app.stop().await;
}

#[actix_web::test]
async fn deactivating_a_user_removes_them_from_archived_channels_too() {
    let app = spawn_app().await;
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let open = channel(&app, "open", &[&app.owner, &member], &[]).await;
    let old = channel(&app, "old", &[&app.owner, &member], &[]).await;
    expect(send(&app, &app.owner, Method::DELETE, &format!("/streams/{old}"), &[]).await, 200, success()).await;
    let caps = r#"{"notification_settings_null": true, "archived_channels": true}"#;
    let mut watch =
        Watch::with_form(&app, &app.owner, &[("event_types", r#"["subscription"]"#), ("client_capabilities", caps)])
            .await;
    let path = format!("/users/{}", member.user_id);
    expect(send(&app, &app.owner, Method::DELETE, &path, &[]).await, 200, success()).await;
    let mut ids = vec![open, old];
    ids.sort();
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "subscription", "op": "peer_remove", "stream_ids": ids, "user_ids": [member.user_id]})]
    );
    app.stop().await;
}

#[actix_web::test]
async fn constructor_groups_and_nextcloud_talk_answer_as_unconfigured() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let constructor = send(&app, &o, Method::POST, "/calls/constructorgroups/create", &[("is_video_call", "true")]);
    expect(constructor.await, 400, error("Constructor Groups is not configured.")).await;
    let bad = send(&app, &o, Method::POST, "/calls/constructorgroups/create", &[("is_video_call", "yes")]);
    assert_eq!(bad.await.status(), 400);
    let nextcloud = send(&app, &o, Method::POST, "/calls/nextcloud_talk/create", &[("room_name", "general chat")]);
    expect(nextcloud.await, 400, error("Nextcloud Talk is not configured.")).await;
    let unnamed = send(&app, &o, Method::POST, "/calls/nextcloud_talk/create", &[]);
    expect(unnamed.await, 400, missing("room_name")).await;
    app.stop().await;
}
