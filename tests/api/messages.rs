//! Messages over HTTP: sending to channels and direct messages, rendering, mention flags,
//! the `message` event and who receives it, fetching with anchors and narrows.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, post, register, spawn_app, Creds, TestApp, Watch};

async fn get(app: &TestApp, who: &Creds, path: &str, query: &[(&str, &str)]) -> Response {
    app.as_user(who, Method::GET, path).query(query).send().await.unwrap()
}

/// A channel created by the owner (who is subscribed) with `subscribers`.
async fn channel(app: &TestApp, name: &str, invite_only: bool, public_history: bool, subscribers: &[&Creds]) -> i64 {
    let mut ids: Vec<i64> = subscribers.iter().map(|c| c.user_id).collect();
    ids.push(app.owner.user_id);
    let ids = json!(ids).to_string();
    let (invite_only, public_history) = (invite_only.to_string(), public_history.to_string());
    let form = [
        ("name", name),
        ("subscribers", ids.as_str()),
        ("invite_only", invite_only.as_str()),
        ("history_public_to_subscribers", public_history.as_str()),
    ];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// Sends a message with `form` and returns its id.
async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn to_channel(app: &TestApp, who: &Creds, channel: &str, topic: &str, content: &str) -> i64 {
    sent(app, who, &[("type", "channel"), ("to", channel), ("topic", topic), ("content", content)]).await
}

async fn direct(app: &TestApp, who: &Creds, to: &str, content: &str) -> i64 {
    sent(app, who, &[("type", "direct"), ("to", to), ("content", content)]).await
}

/// `GET /messages` with `query`, expected to succeed.
async fn fetch(app: &TestApp, who: &Creds, query: &[(&str, &str)]) -> Value {
    let (status, body) = json(get(app, who, "/messages", query).await).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The ids of a `GET /messages` (all newest messages) with `narrow`.
async fn narrowed(app: &TestApp, who: &Creds, narrow: Value) -> Vec<i64> {
    let narrow = narrow.to_string();
    let body = fetch(app, who, &[("anchor", "newest"), ("num_before", "100"), ("narrow", &narrow)]).await;
    ids(&body)
}

fn ids(body: &Value) -> Vec<i64> {
    body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
}

/// One message as `who` fetches it (`GET /messages/{id}`), its `message` object.
async fn message(app: &TestApp, who: &Creds, id: i64) -> Value {
    let (status, body) = json(get(app, who, &format!("/messages/{id}"), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["message"].clone()
}

/// A user's API email (what `sender_email` and `display_recipient` show).
async fn api_email(app: &TestApp, who: &Creds) -> String {
    let (_, body) = json(get(app, who, "/users/me", &[]).await).await;
    body["email"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_channel_message_has_zulips_shapes_in_the_response_the_fetch_and_the_event() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "King Hamlet", 400).await;
    let stream_id = channel(&app, "golden", false, true, &[&hamlet]).await;
    let mut watch = Watch::with_form(&app, &hamlet, &[("event_types", r#"["message"]"#)]).await;
    let form = [
        ("type", "stream"),
        ("to", "golden"),
        ("topic", "golden topic"),
        ("content", "Hello **golden** world :octopus: @**King Hamlet**"),
    ];
    let (status, body) = json(post(&app, &app.owner, "/messages", &form).await).await;
    assert_eq!(status, 200);
    let id = body["id"].as_i64().unwrap();
    assert_eq!(body, json!({"result": "success", "msg": "", "id": id, "automatic_new_visibility_policy": 3}));
    // The sender follows the topic they started; a second message changes nothing.
    let (_, again) = json(post(&app, &app.owner, "/messages", &form).await).await;
    assert_eq!(again, json!({"result": "success", "msg": "", "id": id + 1}));

    let narrow = r#"[{"operator": "channel", "operand": "golden"}]"#;
    let query = [
        ("anchor", "newest"),
        ("num_before", "1"),
        ("num_after", "0"),
        ("narrow", narrow),
        ("client_gravatar", "false"),
    ];
    let body = fetch(&app, &app.owner, &query).await;
    let got = &body["messages"][0];
    let timestamp = got["timestamp"].as_i64().unwrap();
    let email = api_email(&app, &app.owner).await;
    let avatar = got["avatar_url"].as_str().unwrap().to_owned();
    assert_eq!(avatar, "/user_avatars/1/jdenticon/1.png?version=1");
    let content = "<p>Hello <strong>golden</strong> world <span aria-label=\"octopus\" class=\"emoji emoji-1f419\" \
                   role=\"img\" title=\"octopus\">:octopus:</span> <span class=\"user-mention\" data-user-id=\"{h}\">@King Hamlet</span></p>"
        .replace("{h}", &hamlet.user_id.to_string());
    let expected = json!({
        "result": "success", "msg": "",
        "messages": [{
            "id": id + 1, "sender_id": app.owner.user_id, "content": content, "recipient_id": 3 * stream_id,
            "timestamp": timestamp, "client": "Unspecified", "subject": "golden topic", "topic_links": [],
            "is_me_message": false, "reactions": [], "submessages": [], "flags": [],
            "sender_full_name": "Organization Owner", "sender_email": email, "sender_realm_str": "",
            "display_recipient": "golden", "type": "stream", "stream_id": stream_id, "avatar_url": avatar,
            "content_type": "text/html"
        }],
        "found_anchor": false, "found_oldest": false, "found_newest": true, "history_limited": false,
        "anchor": 10_000_000_000_000_000i64
    });
    crate::helpers::assert_same(&body, &expected);

    // The subscriber's event: raw Markdown (apply_markdown=false), their own flags.
    let events = watch.events(&app).await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["flags"], json!(["mentioned"]));
    assert_eq!(events[0]["message"]["content"], json!(form[3].1));
    assert_eq!(events[0]["message"]["content_type"], json!("text/x-markdown"));
    assert_eq!(events[0]["message"]["id"], json!(id));
    assert!(events[0].get("local_message_id").is_none());
}

#[actix_web::test]
async fn message_events_go_to_exactly_the_recipients_with_local_id_on_the_senders_queue() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    channel(&app, "denmark", false, true, &[&hamlet]).await;
    let sender_queue =
        Watch::with_form(&app, &app.owner, &[("event_types", r#"["message"]"#), ("apply_markdown", "true")]).await;
    let mut other_queue = Watch::new(&app, &app.owner, r#"["message"]"#).await;
    let mut hamlet_watch = Watch::new(&app, &hamlet, r#"["message"]"#).await;
    let mut othello_watch = Watch::new(&app, &othello, r#"["message"]"#).await;
    let mut othello_all_public =
        Watch::with_form(&app, &othello, &[("event_types", r#"["message"]"#), ("all_public_streams", "true")]).await;
    let mut sender_watch = sender_queue;
    let queue_id = sender_watch.queue_id.clone();
    let form = [
        ("type", "stream"),
        ("to", "denmark"),
        ("topic", "castle"),
        ("content", "hi @**all**"),
        ("queue_id", queue_id.as_str()),
        ("local_id", "7.01"),
        ("read_by_sender", "true"),
    ];
    let id = sent(&app, &app.owner, &form).await;

    let own = sender_watch.events(&app).await;
    assert_eq!(own.len(), 1);
    assert_eq!(own[0]["local_message_id"], json!("7.01"));
    assert_eq!(own[0]["flags"], json!(["read", "stream_wildcard_mentioned", "wildcard_mentioned"]));
    assert_eq!(own[0]["message"]["content_type"], json!("text/html"));
    assert_eq!(
        own[0]["message"]["content"],
        json!("<p>hi <span class=\"user-mention channel-wildcard-mention\" data-user-id=\"*\">@all</span></p>")
    );
    let other = other_queue.events(&app).await;
    assert_eq!(other.len(), 1);
    assert!(other[0].get("local_message_id").is_none());
    let to_hamlet = hamlet_watch.events(&app).await;
    assert_eq!(to_hamlet.len(), 1);
    assert_eq!(to_hamlet[0]["message"]["id"], json!(id));
    assert_eq!(to_hamlet[0]["flags"], json!(["stream_wildcard_mentioned", "wildcard_mentioned"]));
    assert_eq!(othello_watch.events(&app).await, Vec::<Value>::new());
    // A queue with all_public_streams gets public channel messages, without flags.
    let public = othello_all_public.events(&app).await;
    assert_eq!(public.len(), 1);
    assert_eq!(public[0]["message"]["id"], json!(id));
    assert_eq!(public[0]["flags"], json!([]));
    assert!(public[0].get("for_all_public_streams").is_none());

    // A direct message reaches its participants only.
    direct(&app, &app.owner, &json!([othello.user_id]).to_string(), "psst").await;
    assert_eq!(hamlet_watch.events(&app).await, Vec::<Value>::new());
    assert_eq!(othello_all_public.events(&app).await.len(), 1);
    let to_othello = othello_watch.events(&app).await;
    assert_eq!(to_othello.len(), 1);
    assert_eq!(to_othello[0]["flags"], json!([]));
    assert_eq!(to_othello[0]["message"]["type"], json!("private"));
    assert!(to_othello[0]["message"].get("stream_id").is_none());
}

#[actix_web::test]
async fn direct_messages_go_to_ids_emails_groups_and_oneself() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let hamlet_email = api_email(&app, &hamlet).await;
    let othello_email = api_email(&app, &othello).await;
    let owner_email = api_email(&app, &app.owner).await;

    let by_id = direct(&app, &app.owner, &json!([hamlet.user_id]).to_string(), "by id").await;
    let by_csv = sent(&app, &app.owner, &[("type", "private"), ("to", &hamlet_email), ("content", "by email")]).await;
    let group_to = json!([hamlet_email, othello_email]).to_string();
    let group = direct(&app, &app.owner, &group_to, "group").await;
    let own = direct(&app, &app.owner, &json!([app.owner.user_id]).to_string(), "note to self").await;

    // One-to-one: the recipient, then the sender (written email first), by email, as
    // Zulip's `hydrate_recipient_info` lists them.
    let m = message(&app, &hamlet, by_id).await;
    crate::helpers::assert_same(
        &m["display_recipient"],
        &json!([
            {"id": hamlet.user_id, "email": hamlet_email, "full_name": "Hamlet", "is_mirror_dummy": false},
            {"email": owner_email, "full_name": "Organization Owner", "id": app.owner.user_id, "is_mirror_dummy": false}
        ]),
    );
    let in_group = message(&app, &hamlet, group).await;
    let ids: Vec<&Value> = in_group["display_recipient"].as_array().unwrap().iter().map(|p| &p["id"]).collect();
    assert_eq!(ids, [&json!(app.owner.user_id), &json!(hamlet.user_id), &json!(othello.user_id)]);
    assert_eq!(m["type"], json!("private"));
    assert_eq!(m["subject"], json!(""));
    assert_eq!(m["recipient_id"], message(&app, &hamlet, by_csv).await["recipient_id"]);
    assert_eq!(message(&app, &othello, group).await["display_recipient"].as_array().unwrap().len(), 3);
    assert_eq!(message(&app, &app.owner, own).await["display_recipient"].as_array().unwrap().len(), 1);

    assert_eq!(narrowed(&app, &hamlet, json!([["is", "dm"]])).await, vec![by_id, by_csv, group]);
    assert_eq!(narrowed(&app, &othello, json!([["is", "private"]])).await, vec![group]);
    let with_hamlet = json!([{"operator": "dm", "operand": [hamlet.user_id]}]);
    assert_eq!(narrowed(&app, &app.owner, with_hamlet).await, vec![by_id, by_csv]);
    let with_both = json!([{"operator": "dm", "operand": format!("{hamlet_email},{othello_email}")}]);
    assert_eq!(narrowed(&app, &app.owner, with_both).await, vec![group]);
    assert_eq!(narrowed(&app, &app.owner, json!([["dm", [app.owner.user_id]]])).await, vec![own]);
    assert_eq!(narrowed(&app, &app.owner, json!([["dm-including", othello.user_id]])).await, vec![group]);
    // Othello cannot read the one-to-one messages.
    expect(get(&app, &othello, &format!("/messages/{by_id}"), &[]).await, 400, error("Invalid message(s)")).await;
}

#[actix_web::test]
async fn sending_errors_have_zulips_messages() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, true, &[]).await;
    channel(&app, "secret", true, false, &[]).await;
    let cases: Vec<(Vec<(&str, &str)>, Value)> = vec![
        (
            vec![("type", "channel"), ("to", "[]"), ("topic", "x"), ("content", "y")],
            error("Expected exactly one channel"),
        ),
        (
            vec![("type", "stream"), ("to", "denmark"), ("topic", "x")],
            json!({"result": "error", "msg": "Missing 'content' argument", "var_name": "content", "code": "REQUEST_VARIABLE_MISSING"}),
        ),
        (vec![("type", "stream"), ("to", "denmark"), ("content", "y")], error("Missing topic")),
        (
            vec![("type", "stream"), ("to", "denmark"), ("topic", "x"), ("content", "  \n ")],
            error("Message must not be empty"),
        ),
        (
            vec![("type", "stream"), ("to", "denmark"), ("topic", "x"), ("content", "a\0b")],
            error("Message must not contain null bytes"),
        ),
        (
            vec![("type", "stream"), ("to", "nowhere"), ("topic", "x"), ("content", "y")],
            json!({"result": "error", "msg": "Channel 'nowhere' does not exist", "stream": "nowhere", "code": "STREAM_DOES_NOT_EXIST"}),
        ),
        (
            vec![("type", "stream"), ("to", "9999"), ("topic", "x"), ("content", "y")],
            json!({"result": "error", "msg": "Channel with ID '9999' does not exist", "stream_id": 9999, "code": "STREAM_DOES_NOT_EXIST"}),
        ),
        (
            vec![("type", "stream"), ("to", "secret"), ("topic", "x"), ("content", "y")],
            error("Not authorized to send to channel 'secret'"),
        ),
        (
            vec![("type", "private"), ("to", "nobody@agora.test"), ("content", "y")],
            error("Invalid email 'nobody@agora.test'"),
        ),
        (vec![("type", "private"), ("to", "[9999]"), ("content", "y")], error("Invalid user ID 9999")),
        (
            vec![("type", "private"), ("to", "[3, \"a@agora.test\"]"), ("content", "y")],
            error("Recipient lists may contain emails or user IDs, but not both."),
        ),
    ];
    for (form, expected) in cases {
        let response = post(&app, &hamlet, "/messages", &form).await;
        expect(response, 400, expected).await;
    }
}

#[actix_web::test]
async fn topics_and_content_are_normalized() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, true, &[]).await;
    let long_topic = "t".repeat(70);
    let id = to_channel(&app, &app.owner, "denmark", &format!("  {long_topic} "), "x").await;
    assert_eq!(message(&app, &app.owner, id).await["subject"], json!(format!("{}...", "t".repeat(57))));
    // The legacy `subject` parameter (the Python client's) works too.
    let id = sent(&app, &app.owner, &[("type", "stream"), ("to", "\"denmark\""), ("subject", "old"), ("content", "x")])
        .await;
    assert_eq!(message(&app, &app.owner, id).await["subject"], json!("old"));
    let long = "y".repeat(10_050);
    let id = to_channel(&app, &app.owner, "denmark", "long", &long).await;
    let (_, body) = json(get(&app, &app.owner, &format!("/messages/{id}"), &[]).await).await;
    let raw = body["raw_content"].as_str().unwrap();
    assert_eq!(raw.chars().count(), 10_000);
    assert!(raw.ends_with("\n[message truncated]"));
    // The empty topic is shown as "general chat" unless the client allows it.
    let id = to_channel(&app, &app.owner, "denmark", "(no topic)", "x").await;
    assert_eq!(message(&app, &app.owner, id).await["subject"], json!("general chat"));
    let (_, body) =
        json(get(&app, &app.owner, &format!("/messages/{id}"), &[("allow_empty_topic_name", "true")]).await).await;
    assert_eq!(body["message"]["subject"], json!(""));
}

#[actix_web::test]
async fn zulip_markdown_renders_mentions_links_and_emoji_and_sets_mention_flags() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "King Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let stream_id = channel(&app, "denmark", false, true, &[&hamlet, &othello]).await;
    let h = hamlet.user_id;
    let cases = [
        ("@**King Hamlet**", format!("<p><span class=\"user-mention\" data-user-id=\"{h}\">@King Hamlet</span></p>")),
        (&*format!("@**King Hamlet|{h}**"), format!("<p><span class=\"user-mention\" data-user-id=\"{h}\">@King Hamlet</span></p>")),
        ("@_**King Hamlet**", format!("<p><span class=\"user-mention silent\" data-user-id=\"{h}\">King Hamlet</span></p>")),
        ("@**topic**", "<p><span class=\"topic-mention\">@topic</span></p>".to_owned()),
        ("#**denmark**", format!("<p><a class=\"stream\" data-stream-id=\"{stream_id}\" href=\"/#narrow/channel/{stream_id}-denmark\">#denmark</a></p>")),
        ("#**denmark>castle**", format!("<p><a class=\"stream-topic\" data-stream-id=\"{stream_id}\" href=\"/#narrow/channel/{stream_id}-denmark/topic/castle\">#denmark &gt; castle</a></p>")),
        (":smile: and :not_an_emoji:", "<p><span aria-label=\"smile\" class=\"emoji emoji-1f604\" role=\"img\" title=\"smile\">:smile:</span> and :not_an_emoji:</p>".to_owned()),
        ("see https://example.com/a.", "<p>see <a href=\"https://example.com/a\">https://example.com/a</a>.</p>".to_owned()),
        ("[docs](https://zulip.com)", "<p><a href=\"https://zulip.com\">docs</a></p>".to_owned()),
        ("> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>".to_owned()),
        ("* one\n* two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>".to_owned()),
        ("line one\nline two", "<p>line one<br>\nline two</p>".to_owned()),
        ("`@**King Hamlet**`", "<p><code>@**King Hamlet**</code></p>".to_owned()),
        ("```\nlet x = 1 < 2;\n```", "<div class=\"codehilite\"><pre><span></span><code>let x = 1 &lt; 2;\n</code></pre></div>".to_owned()),
        ("<b>no html</b>", "<p>&lt;b&gt;no html&lt;/b&gt;</p>".to_owned()),
    ];
    for (source, html) in cases {
        let id = to_channel(&app, &app.owner, "denmark", "castle", source).await;
        assert_eq!(message(&app, &app.owner, id).await["content"], json!(html), "{source}");
    }
    // Mention flags: the one named, not the silent or the unnamed.
    let named = to_channel(&app, &othello, "denmark", "castle", "@**King Hamlet** look").await;
    let silent = to_channel(&app, &othello, "denmark", "castle", "@_**King Hamlet** look").await;
    assert_eq!(message(&app, &hamlet, named).await["flags"], json!(["mentioned"]));
    assert_eq!(message(&app, &hamlet, silent).await["flags"], json!([]));
    assert_eq!(message(&app, &app.owner, named).await["flags"], json!([]));
    let mentioned = narrowed(&app, &hamlet, json!([["is", "mentioned"]])).await;
    assert_eq!(mentioned.last(), Some(&named));
    assert!(!mentioned.contains(&silent));
    // @**topic** flags the topic's participants only.
    let topic = to_channel(&app, &othello, "denmark", "castle", "@**topic** hello").await;
    assert_eq!(
        message(&app, &app.owner, topic).await["flags"],
        json!(["topic_wildcard_mentioned", "wildcard_mentioned"])
    );
    assert_eq!(message(&app, &hamlet, topic).await["flags"], json!([]));
}

#[actix_web::test]
async fn narrows_select_messages_with_every_operator() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let denmark = channel(&app, "denmark", false, true, &[&hamlet, &othello]).await;
    channel(&app, "venice", false, true, &[&hamlet]).await;
    let a = to_channel(&app, &app.owner, "denmark", "castle", "the ghost walks").await;
    let b = to_channel(&app, &othello, "denmark", "Castle", "see https://example.com").await;
    let c = to_channel(&app, &hamlet, "venice", "canal", "gondola ghost").await;
    let d = to_channel(&app, &othello, "denmark", "✔ done", "fixed").await;
    let e = direct(&app, &othello, &json!([hamlet.user_id]).to_string(), "a secret").await;
    let all = vec![a, b, c, d, e];
    let hamlet_email = api_email(&app, &hamlet).await;
    let othello_email = api_email(&app, &othello).await;

    assert_eq!(narrowed(&app, &hamlet, json!([])).await, all);
    assert_eq!(narrowed(&app, &hamlet, json!([["stream", "denmark"]])).await, vec![a, b, d]);
    assert_eq!(narrowed(&app, &hamlet, json!([{"operator": "channel", "operand": denmark}])).await, vec![a, b, d]);
    assert_eq!(narrowed(&app, &hamlet, json!([["channel", "denmark"], ["topic", "castle"]])).await, vec![a, b]);
    assert_eq!(narrowed(&app, &hamlet, json!([["sender", othello_email]])).await, vec![b, d, e]);
    assert_eq!(
        narrowed(&app, &hamlet, json!([{"operator": "sender", "operand": othello.user_id}])).await,
        vec![b, d, e]
    );
    assert_eq!(narrowed(&app, &hamlet, json!([["pm-with", othello_email]])).await, vec![e]);
    assert_eq!(narrowed(&app, &hamlet, json!([["is", "resolved"]])).await, vec![d]);
    assert_eq!(narrowed(&app, &hamlet, json!([["has", "link"]])).await, vec![b]);
    assert_eq!(narrowed(&app, &hamlet, json!([["has", "reaction"]])).await, Vec::<i64>::new());
    assert_eq!(narrowed(&app, &hamlet, json!([["search", "ghost"]])).await, vec![a, c]);
    let search = json!([["search", "Ghost"]]).to_string();
    let body = fetch(&app, &hamlet, &[("anchor", "newest"), ("num_before", "1"), ("narrow", &search)]).await;
    assert_eq!(body["messages"][0]["match_content"], json!("<p>gondola <span class=\"highlight\">ghost</span></p>"));
    assert_eq!(body["messages"][0]["match_subject"], json!("canal"));
    let msg_ids = json!([a, b]).to_string();
    expect(
        get(&app, &hamlet, "/messages/matches_narrow", &[("msg_ids", &msg_ids), ("narrow", &search)]).await,
        200,
        json!({"result": "success", "msg": "", "messages": {a.to_string(): {
            "match_content": "<p>the <span class=\"highlight\">ghost</span> walks</p>", "match_subject": "castle"}}}),
    )
    .await;
    assert_eq!(narrowed(&app, &hamlet, json!([["id", b]])).await, vec![b]);
    assert_eq!(narrowed(&app, &hamlet, json!([["near", b], ["channel", "venice"]])).await, vec![c]);
    let negated = json!([{"operator": "channel", "operand": "denmark", "negated": true}]);
    assert_eq!(narrowed(&app, &hamlet, negated).await, vec![c, e]);
    let not_from = json!([{"operator": "sender", "operand": hamlet_email, "negated": true}, ["is", "dm"]]);
    assert_eq!(narrowed(&app, &hamlet, not_from).await, vec![e]);
    // API clients do not mark what they send as read: everything is unread for Hamlet,
    // unless the sender says `read_by_sender`.
    assert_eq!(narrowed(&app, &hamlet, json!([["is", "unread"]])).await, all);
    let f = sent(
        &app,
        &hamlet,
        &[("type", "stream"), ("to", "venice"), ("topic", "t"), ("content", "x"), ("read_by_sender", "true")],
    )
    .await;
    assert_eq!(
        narrowed(&app, &hamlet, json!([{"operator": "is", "operand": "unread", "negated": true}])).await,
        vec![f]
    );
    assert_eq!(narrowed(&app, &hamlet, json!([["is", "starred"]])).await, Vec::<i64>::new());
    // The owner follows the topic they started (automatically), whatever its case.
    assert_eq!(narrowed(&app, &app.owner, json!([["is", "followed"]])).await, vec![a, b]);
    assert_eq!(narrowed(&app, &hamlet, json!([["is", "followed"]])).await, vec![c, f]);
    assert_eq!(narrowed(&app, &hamlet, json!([["is", "muted"]])).await, Vec::<i64>::new());
    // Othello is not subscribed to venice but may read its public history.
    assert_eq!(narrowed(&app, &othello, json!([["channel", "venice"]])).await, vec![c, f]);
    assert_eq!(message(&app, &othello, c).await["flags"], json!(["read", "historical"]));
    assert_eq!(narrowed(&app, &othello, json!([["channels", "public"]])).await, vec![a, b, c, d, f]);

    let bad = |msg: &str| json!({"result": "error", "msg": msg, "code": "BAD_NARROW"});
    for (narrow, msg) in [
        (json!([["channel", "nowhere"]]), "Invalid narrow operator: unknown channel"),
        (json!([["is", "nothing"]]), "Invalid narrow operator: unknown 'is' operand nothing"),
        (json!([["has", "nothing"]]), "Invalid narrow operator: unknown 'has' operand nothing"),
        (json!([["bogus", "x"]]), "Invalid narrow operator: unknown operator bogus"),
        (json!([["sender", "nobody@agora.test"]]), "Invalid narrow operator: unknown user"),
    ] {
        let narrow = narrow.to_string();
        let response =
            get(&app, &hamlet, "/messages", &[("anchor", "newest"), ("num_before", "5"), ("narrow", &narrow)]).await;
        expect(response, 400, bad(msg)).await;
    }
}

#[actix_web::test]
async fn anchors_and_limits_page_through_messages() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, true, &[&hamlet]).await;
    let mut all = Vec::new();
    for i in 0..5 {
        all.push(to_channel(&app, &app.owner, "denmark", "t", &format!("m{i}")).await);
    }
    let page = |anchor: &str, before: &str, after: &str| {
        [("anchor", anchor.to_owned()), ("num_before", before.to_owned()), ("num_after", after.to_owned())]
    };
    let flags = |body: &Value| {
        (
            body["found_anchor"].clone(),
            body["found_oldest"].clone(),
            body["found_newest"].clone(),
            body["anchor"].clone(),
        )
    };
    let query = |q: [(&'static str, String); 3]| q;
    let mid = all[2].to_string();
    let body =
        fetch(&app, &hamlet, &query(page(&mid, "1", "1")).iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>())
            .await;
    assert_eq!(ids(&body), vec![all[1], all[2], all[3]]);
    assert_eq!(flags(&body), (json!(true), json!(false), json!(false), json!(all[2])));
    let body = fetch(
        &app,
        &hamlet,
        &[("anchor", &mid), ("num_before", "0"), ("num_after", "10"), ("include_anchor", "false")],
    )
    .await;
    assert_eq!(ids(&body), vec![all[3], all[4]]);
    // Nothing was asked before the anchor, so the oldest is not known to be found.
    assert_eq!(flags(&body), (json!(false), json!(false), json!(true), json!(all[2])));
    let body = fetch(&app, &hamlet, &[("anchor", "oldest"), ("num_before", "0"), ("num_after", "2")]).await;
    assert_eq!(ids(&body), vec![all[0], all[1]]);
    assert_eq!(flags(&body), (json!(false), json!(true), json!(false), json!(0)));
    // Beyond the end: nothing after, everything before.
    let body = fetch(&app, &hamlet, &[("anchor", "100000"), ("num_before", "10"), ("num_after", "10")]).await;
    assert_eq!(ids(&body), all);
    assert_eq!(flags(&body), (json!(false), json!(true), json!(true), json!(100000)));
    // first_unread: Hamlet has read nothing; the owner (API client, read_by_sender false) neither.
    let body = fetch(&app, &hamlet, &[("anchor", "first_unread"), ("num_before", "0"), ("num_after", "1")]).await;
    assert_eq!(ids(&body), vec![all[0], all[1]]);
    assert_eq!(body["anchor"], json!(all[0]));
    // With nothing unread in the narrow, the anchor is past every message.
    let narrow = json!([["is", "starred"]]).to_string();
    let body = fetch(
        &app,
        &hamlet,
        &[("anchor", "first_unread"), ("num_before", "2"), ("num_after", "2"), ("narrow", &narrow)],
    )
    .await;
    assert_eq!(ids(&body), Vec::<i64>::new());
    assert_eq!(flags(&body), (json!(false), json!(true), json!(true), json!(10_000_000_000_000_000i64)));
    let body =
        fetch(&app, &hamlet, &[("use_first_unread_anchor", "true"), ("num_before", "0"), ("num_after", "0")]).await;
    assert_eq!(ids(&body), vec![all[0]]);
    // message_ids instead of a range.
    let wanted = json!([all[4], all[1]]).to_string();
    let body = fetch(&app, &hamlet, &[("message_ids", &wanted)]).await;
    assert_eq!(ids(&body), vec![all[1], all[4]]);

    expect(
        get(&app, &hamlet, "/messages", &[("anchor", "soon"), ("num_before", "1")]).await,
        400,
        error("Invalid anchor"),
    )
    .await;
    expect(
        get(&app, &hamlet, "/messages", &[("anchor", "newest"), ("num_before", "4000"), ("num_after", "1001")]).await,
        400,
        error("Too many messages requested (maximum 5000)."),
    )
    .await;
    expect(
        get(&app, &hamlet, "/messages", &[("anchor", "newest"), ("message_ids", "[1]")]).await,
        400,
        error("Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor"),
    )
    .await;
}

#[actix_web::test]
async fn private_channels_show_history_only_as_their_settings_allow() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    channel(&app, "protected", true, false, &[&hamlet]).await;
    channel(&app, "shared", true, true, &[&hamlet]).await;
    let p1 = to_channel(&app, &app.owner, "protected", "t", "before").await;
    let s1 = to_channel(&app, &app.owner, "shared", "t", "before").await;
    expect(
        post(&app, &othello, "/messages", &[("type", "stream"), ("to", "protected"), ("topic", "t"), ("content", "x")])
            .await,
        400,
        error("Not authorized to send to channel 'protected'"),
    )
    .await;
    assert_eq!(narrowed(&app, &othello, json!([["channel", "protected"]])).await, Vec::<i64>::new());
    expect(get(&app, &othello, &format!("/messages/{p1}"), &[]).await, 400, error("Invalid message(s)")).await;
    for name in ["protected", "shared"] {
        let subs = json!([{"name": name}]).to_string();
        let principals = json!([othello.user_id]).to_string();
        let form = [("subscriptions", subs.as_str()), ("principals", principals.as_str())];
        let (status, body) = json(post(&app, &app.owner, "/users/me/subscriptions", &form).await).await;
        assert_eq!(status, 200, "{body}");
    }
    let p2 = to_channel(&app, &hamlet, "protected", "t", "after").await;
    let s2 = to_channel(&app, &hamlet, "shared", "t", "after").await;
    assert_eq!(narrowed(&app, &othello, json!([["channel", "protected"]])).await, vec![p2]);
    assert_eq!(narrowed(&app, &othello, json!([["channel", "shared"]])).await, vec![s1, s2]);
    assert_eq!(message(&app, &othello, s1).await["flags"], json!(["read", "historical"]));
}

#[actix_web::test]
async fn max_message_id_is_reported_in_the_profile_and_at_registration() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let (_, me) = json(get(&app, &hamlet, "/users/me", &[]).await).await;
    assert_eq!(me["max_message_id"], json!(-1));
    let id = direct(&app, &app.owner, &json!([hamlet.user_id]).to_string(), "hi").await;
    let (_, me) = json(get(&app, &hamlet, "/users/me", &[]).await).await;
    assert_eq!(me["max_message_id"], json!(id));
    let state = register(&app, &hamlet, &[("fetch_event_types", r#"["message"]"#)]).await;
    assert_eq!(state["max_message_id"], json!(id));
}

#[actix_web::test]
async fn wildcard_mentions_in_big_channels_need_permission() {
    let app = spawn_app().await;
    let mut members = Vec::new();
    for i in 0..15 {
        members.push(app.create_user("", &format!("m{i}@agora.test"), &format!("Member {i}"), 400).await);
    }
    let refs: Vec<&Creds> = members.iter().collect();
    channel(&app, "crowd", false, true, &refs).await;
    let form = [("type", "stream"), ("to", "crowd"), ("topic", "t"), ("content", "@**all** hello")];
    expect(
        post(&app, &members[0], "/messages", &form).await,
        400,
        json!({"result": "error", "msg": "You do not have permission to use channel wildcard mentions in this channel.", "code": "STREAM_WILDCARD_MENTION_NOT_ALLOWED"}),
    )
    .await;
    // Silent wildcards notify no one; administrators may use them anywhere.
    sent(&app, &members[0], &[("type", "stream"), ("to", "crowd"), ("topic", "t"), ("content", "@_**all** hello")])
        .await;
    sent(&app, &app.owner, &form).await;
}

#[actix_web::test]
async fn python_client_requests_work_and_name_the_client() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, true, &[&hamlet]).await;
    let hamlet_email = api_email(&app, &hamlet).await;
    let python = |path: &str| {
        app.as_user(&app.owner, Method::POST, path).header("User-Agent", "ZulipPython/0.9.1 (Debian GNU/Linux; 12)")
    };
    // send_message({"type": "stream", "to": "denmark", "subject": ..., "content": ...})
    let form = [("type", "stream"), ("to", "denmark"), ("subject", "castle"), ("content", "**hi**")];
    let (_, body) = json(python("/messages").form(&form).send().await.unwrap()).await;
    let id = body["id"].as_i64().unwrap();
    // send_message({"type": "private", "to": [email], ...}): the list is JSON-encoded.
    let to = json!([hamlet_email]).to_string();
    let form = [("type", "private"), ("to", to.as_str()), ("content", "psst")];
    let (status, _) = json(python("/messages").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let m = message(&app, &hamlet, id).await;
    assert_eq!(m["client"], json!("ZulipPython"));
    // get_messages({"narrow": [{"operator": "stream", "operand": "denmark"}], "apply_markdown": False})
    let narrow = r#"[{"operator": "stream", "operand": "denmark"}]"#;
    let query = [
        ("anchor", "newest"),
        ("num_before", "10"),
        ("num_after", "0"),
        ("narrow", narrow),
        ("apply_markdown", "false"),
    ];
    let body = fetch(&app, &hamlet, &query).await;
    assert_eq!(ids(&body), vec![id]);
    assert_eq!(body["messages"][0]["content"], json!("**hi**"));
    assert_eq!(body["messages"][0]["content_type"], json!("text/x-markdown"));
}

#[actix_web::test]
async fn topic_policies_of_the_channel_and_the_organization_apply() {
    let app = spawn_app().await;
    for (name, policy) in [("strict", "disable_empty_topic"), ("chatty", "empty_topic_only"), ("open", "inherit")] {
        let subs = json!([{ "name": name }]).to_string();
        let form = [("subscriptions", subs.as_str()), ("topics_policy", policy)];
        let (status, body) = json(post(&app, &app.owner, "/users/me/subscriptions", &form).await).await;
        assert_eq!(status, 200, "{body}");
    }
    let send = |to: &'static str, topic: &'static str| {
        let form = [("type", "stream"), ("to", to), ("topic", topic), ("content", "x")];
        app.as_user(&app.owner, Method::POST, "/messages").form(&form).send()
    };
    expect(
        send("strict", "").await.unwrap(),
        400,
        error("Sending messages to the general chat is not allowed in this channel."),
    )
    .await;
    expect(
        send("chatty", "real topic").await.unwrap(),
        400,
        error("Only the general chat topic is allowed in this channel."),
    )
    .await;
    assert_eq!(json(send("chatty", "").await.unwrap()).await.0, 200);
    assert_eq!(json(send("open", "").await.unwrap()).await.0, 200);
    let (status, body) = json(
        app.as_user(&app.owner, Method::PATCH, "/realm")
            .form(&[("topics_policy", "disable_empty_topic")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    expect(send("open", "(no topic)").await.unwrap(), 400, error("Topics are required in this organization")).await;
    assert_eq!(json(send("open", "named").await.unwrap()).await.0, 200);
}

/// Reading one message by id follows Zulip's `has_message_access`: a user who left a
/// private channel can no longer open its messages; fetch limits cannot overflow.
#[actix_web::test]
async fn access_by_id_needs_the_channel_and_limits_hold() {
    let app = spawn_app().await;
    let alice = app.create_user("", "alice@agora.test", "Alice", 400).await;
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    channel(&app, "secret", true, true, &[&alice]).await;
    let id = to_channel(&app, &app.owner, "secret", "plans", "hush").await;
    assert_eq!(message(&app, &alice, id).await["id"], json!(id));
    let (status, body) = json(get(&app, &bob, &format!("/messages/{id}"), &[]).await).await;
    assert_eq!((status, body), (400, error("Invalid message(s)")));
    let form = [("subscriptions", r#"["secret"]"#)];
    let response = app.as_user(&alice, Method::DELETE, "/users/me/subscriptions").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let (status, body) = json(get(&app, &alice, &format!("/messages/{id}"), &[]).await).await;
    assert_eq!((status, body), (400, error("Invalid message(s)")));

    let huge = i64::MAX.to_string();
    let query = [("anchor", "newest"), ("num_before", huge.as_str()), ("num_after", "1")];
    let (status, body) = json(get(&app, &alice, "/messages", &query).await).await;
    assert_eq!((status, body), (400, error("Too many messages requested (maximum 5000).")));
    app.stop().await;
}

/// Stored script: a link to `javascript:` (plain or entity-encoded) is not made; the
/// message shows it as written, as Zulip does (`[foo](javascript://foo.com)`).
#[actix_web::test]
async fn links_to_script_urls_are_rendered_as_text() {
    let app = spawn_app().await;
    channel(&app, "denmark", false, true, &[]).await;
    let plain = to_channel(&app, &app.owner, "denmark", "xss", "[x](javascript:alert(1))").await;
    let encoded = to_channel(&app, &app.owner, "denmark", "xss", "[x](&#106;avascript:alert(1)) ![y](data:x)").await;
    let safe = to_channel(&app, &app.owner, "denmark", "xss", "[x](zulip.com)").await;
    let body = fetch(&app, &app.owner, &[("anchor", "newest"), ("num_before", "3"), ("apply_markdown", "true")]).await;
    let contents: Vec<(i64, &Value)> =
        body["messages"].as_array().unwrap().iter().map(|m| (m["id"].as_i64().unwrap(), &m["content"])).collect();
    assert_eq!(
        contents,
        [
            (plain, &json!("<p>[x](javascript:alert(1))</p>")),
            (encoded, &json!("<p>[x](&amp;#106;avascript:alert(1)) ![y](data:x)</p>")),
            (safe, &json!("<p><a href=\"http://zulip.com\">x</a></p>")),
        ]
    );
}

/// `anchor=date` (FL 445): the first message sent on or after `anchor_date` (a date is its
/// midnight UTC, a time without offset is UTC), else the newest; `anchor_date` is required.
#[actix_web::test]
async fn a_date_anchors_the_first_message_sent_then_or_later() {
    use agora_actors::realm::chat::testing::BackdateMessage;
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "denmark", false, true, &[&hamlet]).await;
    // 2024-01-01 00:00 UTC, 2024-01-02 12:00 UTC, 2024-01-03 00:00 UTC.
    let dates = [1_704_067_200, 1_704_196_800, 1_704_240_000];
    let mut all = Vec::new();
    for (i, date) in dates.iter().enumerate() {
        let id = to_channel(&app, &app.owner, "denmark", "t", &format!("m{i}")).await;
        let msg = BackdateMessage { message_id: id, date_sent: *date, edit_history: None };
        app.realm("").addr.send(msg).await.unwrap().unwrap();
        all.push(id);
    }
    let at = |date: &'static str| [("anchor", "date"), ("anchor_date", date), ("num_before", "1"), ("num_after", "1")];
    for (date, anchor) in [
        ("2024-01-02", all[1]),
        ("2024-01-02T12:00:00Z", all[1]),
        ("2024-01-02T12:00:01", all[2]),
        ("2024-01-02T13:00:00+02:00", all[1]),
        ("2023-12-31", all[0]),
    ] {
        let body = fetch(&app, &hamlet, &at(date)).await;
        assert_eq!(body["anchor"], json!(anchor), "{date}");
        assert_eq!(body["found_anchor"], json!(true), "{date}");
    }
    let body = fetch(&app, &hamlet, &at("2024-01-02")).await;
    assert_eq!(ids(&body), all);
    // Past every message: the newest, as `anchor=newest`.
    let body = fetch(&app, &hamlet, &at("2030-01-01")).await;
    assert_eq!(ids(&body), vec![all[2]]);
    assert_eq!(
        (body["anchor"].clone(), body["found_anchor"].clone(), body["found_newest"].clone()),
        (json!(10_000_000_000_000_000i64), json!(false), json!(true))
    );
    expect(
        get(&app, &hamlet, "/messages", &[("anchor", "date"), ("num_before", "1")]).await,
        400,
        crate::helpers::missing("anchor_date"),
    )
    .await;
    expect(get(&app, &hamlet, "/messages", &at("soon")).await, 400, error("Invalid anchor_date")).await;
}

/// `mentions:` (FL 446): messages that mention the user by name, not silently, nor through a
/// group or a wildcard; by id or email; among the messages the viewer may read.
#[actix_web::test]
async fn the_mentions_operator_finds_direct_mentions_of_a_user() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    channel(&app, "denmark", false, true, &[&hamlet, &othello]).await;
    let named = to_channel(&app, &app.owner, "denmark", "t", "hi @**Hamlet**").await;
    to_channel(&app, &app.owner, "denmark", "t", "hi @_**Hamlet**").await;
    to_channel(&app, &app.owner, "denmark", "t", "hi @**all**").await;
    to_channel(&app, &app.owner, "denmark", "t", "hi @**Othello**").await;
    let quoted = to_channel(&app, &othello, "denmark", "u", "> @**Hamlet** said so").await;
    let to_othello = json!([othello.user_id]).to_string();
    let private = direct(&app, &app.owner, &to_othello, "about @**Hamlet**").await;
    let by_id = json!([{"operator": "mentions", "operand": hamlet.user_id}]);
    assert_eq!(narrowed(&app, &othello, by_id.clone()).await, vec![named, quoted, private]);
    // Hamlet cannot read the direct message between the owner and Othello.
    assert_eq!(narrowed(&app, &hamlet, by_id).await, vec![named, quoted]);
    let by_email = json!([["mentions", "hamlet@agora.test"]]);
    assert_eq!(narrowed(&app, &hamlet, by_email).await, vec![named, quoted]);
    let negated = json!([{"operator": "mentions", "operand": hamlet.user_id, "negated": true}, ["channel", "denmark"]]);
    assert_eq!(narrowed(&app, &hamlet, negated).await.len(), 3);
    let unknown = json!([["mentions", "nobody@agora.test"]]).to_string();
    let response = get(&app, &hamlet, "/messages", &[("anchor", "newest"), ("narrow", &unknown)]).await;
    expect(
        response,
        400,
        json!({"result": "error", "msg": "Invalid narrow operator: unknown user", "code": "BAD_NARROW"}),
    )
    .await;
}

#[actix_web::test]
async fn channels_archived_finds_what_the_user_received_in_archived_channels() {
    // Feature level 489: `channels:archived`, and negated the channels that are not archived.
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let old = channel(&app, "old plans", false, true, &[&hamlet]).await;
    channel(&app, "current", false, true, &[&hamlet]).await;
    let archived = to_channel(&app, &app.owner, "old plans", "t", "before the archive").await;
    let kept = to_channel(&app, &app.owner, "current", "t", "still here").await;
    let dm = direct(&app, &app.owner, &hamlet.email, "hello").await;
    let response = crate::helpers::send(&app, &app.owner, Method::DELETE, &format!("/streams/{old}"), &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(narrowed(&app, &hamlet, json!([["channels", "archived"]])).await, vec![archived]);
    let others = json!([{"operator": "channels", "operand": "archived", "negated": true}]);
    let got = narrowed(&app, &hamlet, others).await;
    assert!(got.contains(&kept) && !got.contains(&archived) && !got.contains(&dm), "{got:?}");
}
