//! Widgets (`POST /submessage`, `/poll` and `/todo` messages, `submessages`, `submessage`
//! events), read receipts and message reports, over HTTP.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, missing, post, send, spawn_app, success, Creds, TestApp, Watch};

/// A public channel of the owner with `members`; its id.
async fn channel(app: &TestApp, name: &str, invite_only: bool, members: &[&Creds]) -> i64 {
    let mut ids: Vec<i64> = members.iter().map(|c| c.user_id).collect();
    ids.push(app.owner.user_id);
    let ids = json!(ids).to_string();
    let invite_only = invite_only.to_string();
    let form = [("name", name), ("subscribers", ids.as_str()), ("invite_only", invite_only.as_str())];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn fetched(app: &TestApp, who: &Creds, id: i64) -> Value {
    let path = format!("/messages/{id}");
    let (status, body) = json(app.as_user(who, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["message"].clone()
}

async fn submessage(app: &TestApp, who: &Creds, id: i64, content: &str) -> reqwest::Response {
    let id = id.to_string();
    post(app, who, "/submessage", &[("message_id", id.as_str()), ("msg_type", "widget"), ("content", content)]).await
}

#[actix_web::test]
async fn polls_get_their_widget_when_sent_and_take_votes() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let eve = app.create_user("", "eve@agora.test", "Eve", 400).await;
    channel(&app, "lunch", false, &[&bob]).await;
    let mut watch = Watch::new(&app, &bob, r#"["message","submessage"]"#).await;
    let id = sent(
        &app,
        &o,
        &[("type", "stream"), ("to", "lunch"), ("topic", "t"), ("content", "/poll Lunch?\n- pizza\n- tacos")],
    )
    .await;
    let widget = r#"{"widget_type": "poll", "extra_data": {"question": "Lunch?", "options": ["pizza", "tacos"]}}"#;
    let first = json!({"id": 1, "message_id": id, "sender_id": o.user_id, "msg_type": "widget", "content": widget});
    let events = watch.events(&app).await;
    assert_eq!(events[0]["message"]["submessages"], json!([first]));
    assert_eq!(fetched(&app, &bob, id).await["submessages"], json!([first]));
    // A vote from a reader: stored, and a `submessage` event to everyone who received it.
    let vote = r#"{"type":"vote","key":"canned,0","vote":1}"#;
    expect(submessage(&app, &bob, id, vote).await, 200, success()).await;
    assert_eq!(
        watch.events(&app).await,
        [json!({"type": "submessage", "msg_type": "widget", "message_id": id, "submessage_id": 2,
                "sender_id": bob.user_id, "content": vote})]
    );
    let second = json!({"id": 2, "message_id": id, "sender_id": bob.user_id, "msg_type": "widget", "content": vote});
    assert_eq!(fetched(&app, &o, id).await["submessages"], json!([first, second]));
    let page = app.as_user(&bob, Method::GET, "/messages").query(&[
        ("anchor", "newest"),
        ("num_before", "5"),
        ("num_after", "0"),
    ]);
    let (_, body) = json(page.send().await.unwrap()).await;
    assert_eq!(body["messages"].as_array().unwrap().last().unwrap()["submessages"], json!([first, second]));
    // Zulip's checks of poll data.
    expect(
        submessage(&app, &bob, id, r#"{"type":"question","question":"Dinner?"}"#).await,
        400,
        error("You can't edit a question unless you are the author."),
    )
    .await;
    expect(submessage(&app, &o, id, r#"{"type":"question","question":"Dinner?"}"#).await, 200, success()).await;
    expect(
        submessage(&app, &bob, id, r#"{"type":"vote","key":"x","vote":3}"#).await,
        400,
        error("Invalid poll data[\"vote\"]"),
    )
    .await;
    expect(submessage(&app, &bob, id, "{not json").await, 400, error("Invalid json for submessage")).await;
    // Only who can read the message; widgets cannot be edited.
    expect(submessage(&app, &eve, id, vote).await, 200, success()).await;
    let private = channel(&app, "secret", true, &[]).await;
    let hidden =
        sent(&app, &o, &[("type", "stream"), ("to", &private.to_string()), ("topic", "t"), ("content", "/poll x")])
            .await;
    expect(submessage(&app, &bob, hidden, vote).await, 400, error("Invalid message(s)")).await;
    let edit = send(&app, &o, Method::PATCH, &format!("/messages/{id}"), &[("content", "changed")]).await;
    expect(edit, 400, error("Widgets cannot be edited.")).await;
    expect(
        post(&app, &bob, "/submessage", &[("msg_type", "widget"), ("content", "{}")]).await,
        400,
        missing("message_id"),
    )
    .await;
}

#[actix_web::test]
async fn the_sender_attaches_the_first_submessage_and_todo_lists_have_their_rules() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    channel(&app, "home", false, &[&bob]).await;
    let plain = sent(&app, &o, &[("type", "stream"), ("to", "home"), ("topic", "t"), ("content", "hello")]).await;
    expect(submessage(&app, &bob, plain, "{}").await, 400, error("You cannot attach a submessage to this message."))
        .await;
    let todo = sent(
        &app,
        &o,
        &[("type", "stream"), ("to", "home"), ("topic", "t"), ("content", "/todo Chores\n- dishes: today")],
    )
    .await;
    let content = r#"{"widget_type": "todo", "extra_data": {"task_list_title": "Chores", "tasks": [{"task": "dishes", "desc": "today"}]}}"#;
    assert_eq!(fetched(&app, &bob, todo).await["submessages"][0]["content"], json!(content));
    let task = r#"{"type":"new_task","key":1,"task":"laundry","desc":"","completed":false}"#;
    expect(submessage(&app, &bob, todo, task).await, 200, success()).await;
    expect(submessage(&app, &bob, todo, r#"{"type":"strike","key":"1,2"}"#).await, 200, success()).await;
    expect(
        submessage(&app, &bob, todo, r#"{"type":"new_task_list_title","title":"Mine"}"#).await,
        400,
        error("You can't edit the task list title unless you are the author."),
    )
    .await;
    expect(
        submessage(&app, &bob, todo, r#"{"type":"strike","key":"1","extra":1}"#).await,
        400,
        error("Unexpected arguments: extra"),
    )
    .await;
}

#[actix_web::test]
async fn read_receipts_follow_zulips_rules() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let cat = app.create_user("", "cat@agora.test", "Cat", 400).await;
    let dan = app.create_user("", "dan@agora.test", "Dan", 400).await;
    let eve = app.create_user("", "eve@agora.test", "Eve", 400).await;
    channel(&app, "room", false, &[&bob, &cat, &dan, &eve]).await;
    let id = sent(&app, &bob, &[("type", "stream"), ("to", "room"), ("topic", "t"), ("content", "hi")]).await;
    let receipts = |who: Creds| {
        let app = &app;
        async move {
            json(app.as_user(&who, Method::GET, &format!("/messages/{id}/read_receipts")).send().await.unwrap()).await
        }
    };
    assert_eq!(receipts(o.clone()).await, (200, json!({"result": "success", "msg": "", "user_ids": []})));
    let messages = json!([id]).to_string();
    for who in [&o, &cat, &dan, &eve] {
        let form = [("messages", messages.as_str()), ("op", "add"), ("flag", "read")];
        assert_eq!(json(post(&app, who, "/messages/flags", &form).await).await.0, 200);
    }
    // The sender (who read it by sending) is left out; the requester is in it.
    assert_eq!(receipts(cat.clone()).await.1["user_ids"], json!([o.user_id, cat.user_id, dan.user_id, eve.user_id]));
    // Dan keeps his reads to himself; Eve muted Cat; Cat muted the owner.
    assert_eq!(
        json(send(&app, &dan, Method::PATCH, "/settings", &[("send_read_receipts", "false")]).await).await.0,
        200
    );
    assert_eq!(json(post(&app, &eve, &format!("/users/me/muted_users/{}", cat.user_id), &[]).await).await.0, 200);
    assert_eq!(json(post(&app, &cat, &format!("/users/me/muted_users/{}", o.user_id), &[]).await).await.0, 200);
    assert_eq!(receipts(cat.clone()).await.1["user_ids"], json!([cat.user_id]));
    assert_eq!(receipts(bob.clone()).await.1["user_ids"], json!([o.user_id, cat.user_id, eve.user_id]));
    // Only who may read the message may ask; the organization may turn them off.
    let hidden =
        sent(&app, &o, &[("type", "direct"), ("to", &format!("[{}]", cat.user_id)), ("content", "psst")]).await;
    let other = app.as_user(&bob, Method::GET, &format!("/messages/{hidden}/read_receipts")).send().await.unwrap();
    expect(other, 400, error("Invalid message(s)")).await;
    assert_eq!(json(send(&app, &o, Method::PATCH, "/realm", &[("enable_read_receipts", "false")]).await).await.0, 200);
    let off = app.as_user(&bob, Method::GET, &format!("/messages/{id}/read_receipts")).send().await.unwrap();
    expect(off, 400, error("Read receipts are disabled in this organization.")).await;
}

async fn report(app: &TestApp, who: &Creds, id: i64, form: &[(&str, &str)]) -> reqwest::Response {
    post(app, who, &format!("/messages/{id}/report"), form).await
}

/// The newest message of the moderation channel `channel`.
async fn newest_in(app: &TestApp, channel: i64) -> Value {
    let narrow = json!([{"operator": "channel", "operand": channel}]).to_string();
    let query = [
        ("anchor", "newest"),
        ("num_before", "1"),
        ("num_after", "0"),
        ("narrow", narrow.as_str()),
        ("apply_markdown", "false"),
    ];
    let (_, body) = json(app.as_user(&app.owner, Method::GET, "/messages").query(&query).send().await.unwrap()).await;
    body["messages"][0].clone()
}

fn time(message: &Value) -> String {
    let t = chrono::DateTime::from_timestamp(message["timestamp"].as_i64().unwrap(), 0).unwrap();
    format!("<time:{}>", t.to_rfc3339())
}

#[actix_web::test]
async fn reports_go_to_the_moderation_request_channel_in_zulips_words() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let cat = app.create_user("", "cat@agora.test", "Cat", 400).await;
    channel(&app, "food", false, &[&bob, &cat]).await;
    let id = sent(
        &app,
        &bob,
        &[("type", "stream"), ("to", "food"), ("topic", "takes"), ("content", "look:\n```\ncode\n```")],
    )
    .await;
    let harassment = [("report_type", "harassment"), ("description", "rude")];
    expect(
        report(&app, &cat, id, &harassment).await,
        400,
        error("Message reporting is not enabled in this organization."),
    )
    .await;
    let moderation = channel(&app, "moderation", true, &[]).await;
    let setting = moderation.to_string();
    let patch = send(&app, &o, Method::PATCH, "/realm", &[("moderation_request_channel_id", setting.as_str())]).await;
    assert_eq!(json(patch).await.0, 200);
    expect(report(&app, &cat, id, &[("report_type", "other")]).await, 400, error("An explanation is required.")).await;
    expect(report(&app, &cat, id, &[("report_type", "rude")]).await, 400, error("Invalid report_type")).await;
    let long = "x".repeat(1001);
    expect(
        report(&app, &cat, id, &[("report_type", "spam"), ("description", &long)]).await,
        400,
        error("description is too long (limit: 1000 characters)"),
    )
    .await;
    expect(report(&app, &cat, id + 100, &harassment).await, 400, error("Invalid message(s)")).await;
    expect(report(&app, &cat, id, &[]).await, 400, missing("report_type")).await;

    expect(report(&app, &cat, id, &harassment).await, 200, success()).await;
    let reported = fetched(&app, &bob, id).await;
    let posted = newest_in(&app, moderation).await;
    assert_eq!(posted["sender_email"], json!("notification-bot@zulip.com"));
    assert_eq!(posted["subject"], json!("Bob moderation"));
    let expected = format!(
        "@_**Cat|{c}** reported a message sent by @_**Bob|{b}** at {t}.\n```quote\n**Harassment**. rude\n```\n\n\
         ```` spoiler Original message at #**food>takes@{id}**\nlook:\n```\ncode\n```\n````",
        c = cat.user_id,
        b = bob.user_id,
        t = time(&reported)
    );
    assert_eq!(posted["content"], json!(expected));

    // Direct messages: one-to-one (one's own names the recipient) and groups.
    let dm = sent(&app, &bob, &[("type", "direct"), ("to", &format!("[{}]", cat.user_id)), ("content", "hey")]).await;
    expect(report(&app, &bob, dm, &[("report_type", "spam")]).await, 200, success()).await;
    let dm_message = fetched(&app, &bob, dm).await;
    let expected = format!(
        "@_**Bob|{b}** reported a direct message sent by @_**Bob|{b}** to @_**Cat|{c}** at {t}.\n```quote\n**Spam**. \n```\n\n\
         ``` spoiler [Original message](http://agora.test/#narrow/dm/{c}-dm/near/{dm})\nhey\n```",
        b = bob.user_id, c = cat.user_id, t = time(&dm_message)
    );
    assert_eq!(newest_in(&app, moderation).await["content"], json!(expected));
    let to = format!("[{},{}]", cat.user_id, o.user_id);
    let group = sent(&app, &bob, &[("type", "direct"), ("to", &to), ("content", "all")]).await;
    expect(report(&app, &cat, group, &[("report_type", "norms"), ("description", "meh")]).await, 200, success()).await;
    let group_message = fetched(&app, &bob, group).await;
    let mut ids = [o.user_id, bob.user_id, cat.user_id];
    ids.sort();
    let slug = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let expected = format!(
        "@_**Cat|{c}** reported a direct message sent by @_**Bob|{b}** to @_**Cat|{c}** and @_**Organization Owner|{o}** at {t}.\n\
         ```quote\n**Violates community norms**. meh\n```\n\n``` spoiler [Original message](http://agora.test/#narrow/dm/{slug}-group/near/{group})\nall\n```",
        b = bob.user_id, c = cat.user_id, o = o.user_id, t = time(&group_message)
    );
    assert_eq!(newest_in(&app, moderation).await["content"], json!(expected));
}
