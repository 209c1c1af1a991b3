//! What the system bots say, as real messages with their events and unread state:
//! "subscribed you" direct messages, the new-channel announcement, move and resolve
//! notices; what `POST /users` gives a new member; the system bots as `cross_realm_bots`.

use reqwest::Method;
use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::*;
use crate::invites::make_channel;

const BOT: &str = "notification-bot@zulip.com";

/// The reply of `PATCH /messages/{id}`.
fn edited() -> Value {
    json!({"result": "success", "msg": "", "detached_uploads": []})
}

fn s(v: &str) -> String {
    v.to_owned()
}

#[actix_web::test]
async fn subscribing_others_tells_them_and_new_channels_are_announced() {
    let app = spawn_app().await;
    channel_event_notices_on(&app).await;
    let owner = app.owner.clone();
    let alice = app.create_user("", "alice@example.com", "Alice", 400).await;
    let bob = app.create_user("", "bob@example.com", "Bob", 400).await;
    let announcements = make_channel(&app, &owner, "announce-here", false).await;
    let general = make_channel(&app, &owner, "general", false).await;
    make_channel(&app, &owner, "random", false).await;
    let setting = announcements.to_string();
    let patched =
        send(&app, &owner, Method::PATCH, "/realm", &[("new_stream_announcements_stream_id", &setting)]).await;
    assert_eq!(patched.status(), 200);
    let bad = send(&app, &owner, Method::PATCH, "/realm", &[("new_stream_announcements_stream_id", "9999")]).await;
    expect(bad, 400, error("Invalid channel ID")).await;
    let mut w_alice = Watch::new(&app, &alice, r#"["message"]"#).await;

    // Two existing channels for Alice, one for Bob: one message each, the list form for two.
    let principals = json!([alice.user_id]).to_string();
    let subs = r#"[{"name": "general"}, {"name": "random"}]"#;
    let (status, body) = json(
        post(&app, &owner, "/users/me/subscriptions", &[("subscriptions", subs), ("principals", &principals)]).await,
    )
    .await;
    assert_eq!((status, body["new_subscription_messages_sent"].clone()), (200, json!(true)));
    let list =
        s("@_**Organization Owner|1** subscribed you to the following channels:\n\n* #**general**\n* #**random**");
    assert_eq!(inbox(&app, &alice).await, vec![(s(BOT), s(""), s(""), list.clone(), vec![])]);
    let events = w_alice.events(&app).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["message"]["content"], json!(list));
    assert_eq!(events[0]["message"]["sender_realm_str"], json!("zulipinternal"));
    assert_eq!(events[0]["message"]["sender_full_name"], json!("Notification Bot"));
    assert_eq!(events[0]["flags"], json!([]));

    let principals = json!([bob.user_id, owner.user_id]).to_string();
    let form = [("subscriptions", r#"[{"name": "general"}]"#), ("principals", principals.as_str())];
    expect(
        post(&app, &owner, "/users/me/subscriptions", &form).await,
        200,
        json!({"result": "success", "msg": "", "subscribed": {bob.user_id.to_string(): ["general"]},
               "already_subscribed": {owner.user_id.to_string(): ["general"]}, "new_subscription_messages_sent": true}),
    )
    .await;
    let one = s("@_**Organization Owner|1** subscribed you to #**general**.");
    assert_eq!(inbox(&app, &bob).await, vec![(s(BOT), s(""), s(""), one, vec![])]);
    // Without the messages: nothing said, and no field in the reply.
    let principals = json!([bob.user_id]).to_string();
    let form = [
        ("subscriptions", r#"[{"name": "random"}]"#),
        ("principals", principals.as_str()),
        ("send_new_subscription_messages", "false"),
    ];
    expect(
        post(&app, &owner, "/users/me/subscriptions", &form).await,
        200,
        json!({"result": "success", "msg": "", "subscribed": {bob.user_id.to_string(): ["random"]}, "already_subscribed": {}}),
    )
    .await;
    assert_eq!(inbox(&app, &bob).await.len(), 1);

    // A new channel with `announce`: announced (read for its creator), no message to its
    // subscribers about it.
    let principals = json!([alice.user_id, owner.user_id]).to_string();
    let form = [("subscriptions", r#"[{"name": "fresh"}]"#), ("principals", principals.as_str()), ("announce", "true")];
    let (status, _) = json(post(&app, &owner, "/users/me/subscriptions", &form).await).await;
    assert_eq!(status, 200);
    let announced = s("@_**Organization Owner|1** created a new channel #**fresh**.");
    let mine = inbox(&app, &owner).await;
    assert_eq!(mine[mine.len() - 2], (s(BOT), s("announce-here"), s("new channels"), announced, vec![s("read")]));
    // And the channel's first message says who created it.
    let created = s("**Public** channel created by @_**Organization Owner|1**. **Description:**\n```` quote\n*No description.*\n````");
    let notice = (s(BOT), s("fresh"), s("channel events"), created, vec![]);
    assert_eq!(
        mine.last().unwrap(),
        &(notice.0.clone(), notice.1.clone(), notice.2.clone(), notice.3.clone(), vec![s("read")])
    );
    assert_eq!(inbox(&app, &alice).await, vec![inbox(&app, &alice).await[0].clone(), notice]);
    // POST /channels/create announces too.
    let form = [("name", "fresher"), ("subscribers", "[]"), ("announce", "true")];
    let (status, _) = json(post(&app, &owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200);
    let created = s("@_**Organization Owner|1** created a new channel #**fresher**.");
    assert_eq!(inbox(&app, &owner).await.last().unwrap().3, created);
    let _ = general;
    app.stop().await;
}

#[actix_web::test]
async fn moving_and_resolving_a_topic_is_told_in_both_topics() {
    let app = spawn_app().await;
    channel_event_notices_on(&app).await;
    let owner = app.owner.clone();
    let alice = app.create_user("", "alice@example.com", "Alice", 400).await;
    make_channel(&app, &owner, "general", false).await;
    let principals = json!([alice.user_id]).to_string();
    let form = [
        ("subscriptions", r#"[{"name": "general"}]"#),
        ("principals", principals.as_str()),
        ("send_new_subscription_messages", "false"),
    ];
    assert_eq!(post(&app, &owner, "/users/me/subscriptions", &form).await.status(), 200);
    let mut ids = Vec::new();
    for content in ["one", "two"] {
        let form = [("type", "stream"), ("to", "general"), ("topic", "lunch"), ("content", content)];
        let (_, body) = json(post(&app, &alice, "/messages", &form).await).await;
        ids.push(body["id"].as_i64().unwrap());
    }
    let path = format!("/messages/{}", ids[0]);
    let form = [("topic", "dinner"), ("propagate_mode", "change_all"), ("send_notification_to_old_thread", "true")];
    expect(send(&app, &owner, Method::PATCH, &path, &form).await, 200, edited()).await;
    let got: Vec<_> = inbox(&app, &alice).await.into_iter().filter(|m| m.0 == BOT).collect();
    assert_eq!(
        got,
        vec![
            (
                s(BOT),
                s("general"),
                s("dinner"),
                s("This topic was moved here from #**general>lunch** by @_**Organization Owner|1**."),
                vec![]
            ),
            (
                s(BOT),
                s("general"),
                s("lunch"),
                s("This topic was moved to #**general>dinner** by @_**Organization Owner|1**."),
                vec![]
            ),
        ]
    );
    // The editor has them read (as the notice of the channel's creation, before them).
    let mine: Vec<_> = inbox(&app, &owner).await.into_iter().filter(|m| m.0 == BOT).map(|m| (m.2, m.4)).collect();
    assert_eq!(
        mine,
        vec![(s("channel events"), vec![s("read")]), (s("dinner"), vec![s("read")]), (s("lunch"), vec![s("read")])]
    );

    // One message into a topic that has others: the link form; no old-thread notice by default.
    let form = [("type", "stream"), ("to", "general"), ("topic", "tea"), ("content", "three")];
    let (_, body) = json(post(&app, &alice, "/messages", &form).await).await;
    let path = format!("/messages/{}", body["id"].as_i64().unwrap());
    expect(send(&app, &owner, Method::PATCH, &path, &[("topic", "dinner")]).await, 200, edited()).await;
    let (_, last) = json(
        send(&app, &alice, Method::GET, "/messages?anchor=newest&num_before=1&num_after=0&apply_markdown=false", &[])
            .await,
    )
    .await;
    let content = last["messages"][0]["content"].as_str().unwrap().to_owned();
    let channel = last["messages"][0]["stream_id"].as_i64().unwrap();
    let moved = body["id"].as_i64().unwrap();
    assert_eq!(
        content,
        format!("[A message](http://agora.test/#narrow/channel/{channel}-general/topic/dinner/near/{moved}) was moved here from #**general>tea** by @_**Organization Owner|1**.")
    );

    // Resolving: one notice in the resolved topic, read for everyone but followers. Alice
    // followed "lunch" by starting it, and her setting moved with the topic to "dinner":
    // she gets it unread, as in Zulip.
    let path = format!("/messages/{}", ids[0]);
    let form = [("topic", "✔ dinner"), ("propagate_mode", "change_all")];
    expect(send(&app, &owner, Method::PATCH, &path, &form).await, 200, edited()).await;
    let newest = inbox(&app, &alice).await.pop().unwrap();
    assert_eq!(
        newest,
        (
            s(BOT),
            s("general"),
            s("✔ dinner"),
            s("@_**Organization Owner|1** has marked this topic as resolved."),
            vec![]
        )
    );
    app.stop().await;
}

#[actix_web::test]
async fn members_created_from_the_command_line_and_by_administrators_are_onboarded() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let general = make_channel(&app, &owner, "general", false).await;
    expect(post(&app, &owner, "/default_streams", &[("stream_id", &general.to_string())]).await, 200, success()).await;
    let setting = general.to_string();
    let patched = send(&app, &owner, Method::PATCH, "/realm", &[("signup_announcements_stream_id", &setting)]).await;
    assert_eq!(patched.status(), 200);
    let mut w_owner = Watch::new(&app, &owner, r#"["subscription", "message"]"#).await;

    // Through the admin socket, as `agora create-user` does.
    let admin = crate::users::create_user_admin(&app).await;
    let events = w_owner.events(&app).await;
    let peer_add =
        |id: i64| json!({"type": "subscription", "op": "peer_add", "stream_ids": [general], "user_ids": [id]});
    assert_eq!(events[0], peer_add(admin.user_id));
    let joined = format!("@_**Admin|{}** joined this organization.", admin.user_id);
    assert_eq!(events[1]["message"]["content"], json!(joined));
    assert_eq!(events.len(), 2, "{events:?}");

    // Through `POST /users`.
    let form = [("email", "carol@example.com"), ("password", "correct horse battery staple"), ("full_name", "Carol")];
    let (status, body) = json(post(&app, &admin, "/users", &form).await).await;
    assert_eq!(status, 200, "{body}");
    let carol = body["user_id"].as_i64().unwrap();
    let events = w_owner.events(&app).await;
    assert_eq!(events[0], peer_add(carol));
    assert_eq!(events[1]["message"]["content"], json!(format!("@_**Carol|{carol}** joined this organization.")));
    let carol = Creds {
        email: "carol@example.com".into(),
        password: String::new(),
        api_key: body["api_key"].as_str().unwrap_or_default().into(),
        user_id: carol,
        host: HOST.into(),
    };
    let _ = carol;
    // The administrator's Welcome Bot message has the organization guide.
    let theirs = inbox(&app, &admin).await;
    let welcome = theirs.iter().find(|m| m.0 == "welcome-bot@zulip.com").unwrap();
    assert!(
        welcome.3.contains("We also have a guide for [moving your organization to Zulip](/help/moving-to-zulip)."),
        "{welcome:?}"
    );
    assert_eq!(welcome.4, vec![s("starred")]);
    app.stop().await;
}

#[actix_web::test]
async fn the_system_bots_are_cross_realm_bots_not_members() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let body = register(&app, &owner, &[("fetch_event_types", r#"["realm_user"]"#)]).await;
    let bots = body["cross_realm_bots"].as_array().unwrap();
    let names: Vec<&Value> = bots.iter().map(|b| &b["full_name"]).collect();
    assert_eq!(names, [&json!("Email Gateway"), &json!("Notification Bot"), &json!("Welcome Bot")]);
    let bot = &bots[1];
    let id = bot["user_id"].as_i64().unwrap();
    let date_joined = bot["date_joined"].clone();
    let avatar = bot["avatar_url"].clone();
    assert_same(
        bot,
        &json!({"email": "notification-bot@zulip.com", "user_id": id, "avatar_version": 1, "is_admin": false,
                "is_owner": false, "is_guest": false, "role": 400, "is_bot": true, "full_name": "Notification Bot",
                "timezone": "", "is_active": true, "date_joined": date_joined, "delivery_email": "notification-bot@zulip.com", "is_imported_stub": false,
                "avatar_url": avatar, "bot_type": 1, "is_system_bot": true, "bot_owner_id": null}),
    );
    // Not among the organization's users.
    let members: Vec<&Value> = body["realm_users"].as_array().unwrap().iter().map(|u| &u["email"]).collect();
    assert_eq!(members, [&json!(owner.email)]);
    let (_, users) = json(send(&app, &owner, Method::GET, "/users", &[]).await).await;
    assert_eq!(users["members"].as_array().unwrap().len(), 1);
    // ... but found by id, and one may write to them.
    let (status, one) = json(send(&app, &owner, Method::GET, &format!("/users/{id}"), &[]).await).await;
    assert_eq!((status, one["user"]["is_system_bot"].clone()), (200, json!(true)), "{one}");
    let to = json!([bots[2]["user_id"]]).to_string();
    let (status, sent) =
        json(post(&app, &owner, "/messages", &[("type", "direct"), ("to", &to), ("content", "hi")]).await).await;
    assert_eq!(status, 200, "{sent}");
    app.stop().await;
}

#[actix_web::test]
async fn a_bots_owner_hears_of_its_messages_to_missing_or_empty_channels() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let by_name = create_bot(&app, &hamlet, "byname", &[]).await;
    let by_id = create_bot(&app, &hamlet, "byid", &[]).await;
    let lonely = create_bot(&app, &hamlet, "lonely", &[]).await;
    make_channel(&app, &hamlet, "quiet", false).await;
    let (status, body) = json(
        send(&app, &hamlet, Method::DELETE, "/users/me/subscriptions", &[("subscriptions", r#"["quiet"]"#)]).await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let to = |to: &'static str| [("type", "stream"), ("to", to), ("topic", "t"), ("content", "hi")];
    let alerts = |inbox: Vec<(String, String, String, String, Vec<String>)>| -> Vec<String> {
        inbox.into_iter().filter(|m| m.0 == BOT && m.1.is_empty()).map(|m| m.3).collect()
    };

    let nowhere = json!({"result": "error", "msg": "Channel 'nowhere' does not exist", "stream": "nowhere", "code": "STREAM_DOES_NOT_EXIST"});
    expect(post(&app, &by_name, "/messages", &to(" nowhere ")).await, 400, nowhere.clone()).await;
    // Once a minute at most per bot.
    expect(post(&app, &by_name, "/messages", &to("nowhere")).await, 400, nowhere.clone()).await;
    let (status, body) = json(post(&app, &by_id, "/messages", &to("9999")).await).await;
    assert_eq!((status, &body["msg"]), (400, &json!("Channel with ID '9999' does not exist")));
    // To an existing channel without subscribers: sent, and the owner is told.
    let (status, body) = json(post(&app, &lonely, "/messages", &to("quiet")).await).await;
    assert_eq!(status, 200, "{body}");
    // Humans hear nothing of their own mistakes but the error.
    expect(post(&app, &hamlet, "/messages", &to("nowhere")).await, 400, nowhere).await;

    assert_eq!(
        alerts(inbox(&app, &hamlet).await),
        vec![
            format!(
                "Your bot `{}` tried to send a message to channel #**nowhere**, but that channel does not exist. \
                 Click [here](#channels/new) to create it.",
                by_name.email
            ),
            format!(
                "Your bot `{}` tried to send a message to channel ID 9999, but there is no channel with that ID.",
                by_id.email
            ),
            format!(
                "Your bot `{}` tried to send a message to channel #**quiet**. The channel exists but does not have any subscribers.",
                lonely.email
            ),
        ]
    );
}

#[actix_web::test]
async fn administrators_test_welcome_bots_custom_message_on_themselves() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let path = "/realm/test_welcome_bot_custom_message";
    let admin_only =
        json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
    // The role first, then the parameter.
    expect(post(&app, &hamlet, path, &[]).await, 400, admin_only).await;
    expect(post(&app, &owner, path, &[]).await, 400, missing("welcome_message_custom_text")).await;
    let too_long = "x".repeat(8001);
    let refused = error("welcome_message_custom_text is too long (limit: 8000 characters)");
    expect(post(&app, &owner, path, &[("welcome_message_custom_text", &too_long)]).await, 400, refused).await;
    let empty = error("Message must not be empty");
    expect(post(&app, &owner, path, &[("welcome_message_custom_text", "")]).await, 400, empty).await;

    let mut watch = Watch::new(&app, &owner, r#"["message"]"#).await;
    let text = "Welcome Bot custom message for testing";
    let (status, body) = json(post(&app, &owner, path, &[("welcome_message_custom_text", text)]).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["message_id"].as_i64().unwrap();
    assert_eq!(body, json!({"result": "success", "msg": "", "message_id": id}));
    // Only the custom part, quoted under the administrators' mention, unread and unstarred.
    let content = format!("A note from @_*role:administrators*:\n```quote\n{text}\n```");
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0]["message"]["id"].as_i64(), events[0]["flags"].clone()), (Some(id), json!([])));
    let newest = inbox(&app, &owner).await.pop().unwrap();
    assert_eq!(newest, (s("welcome-bot@zulip.com"), s(""), s(""), content, vec![]));
    // The organization's own setting is left as it was.
    let state = register(&app, &owner, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(state["realm_welcome_message_custom_text"], json!(""));
    app.stop().await;
}
