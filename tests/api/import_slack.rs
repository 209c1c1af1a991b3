//! `agora import slack`: a workspace export written here in Slack's format (its files and
//! field names), imported into a running server, then read back through the API as its
//! people would.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::cli::agora;
use crate::helpers::{json, spawn_app, Creds, TestApp};
use crate::imported::{creds, get, messages, zip_dir};

const SUB: &str = "slacky";
const HOST: &str = "slacky.agora.test";
/// 2020-09-13 12:26:40 UTC: the first day's messages are a few seconds after it.
const T: i64 = 1_600_000_000;

fn write(dir: &Path, name: &str, value: &Value) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// Slack's timestamp of a message `seconds` after [`T`].
fn ts(seconds: i64) -> String {
    format!("{}.000100", T + seconds)
}

fn msg(user: &str, at: i64, text: &str) -> Value {
    json!({"type": "message", "user": user, "text": text, "ts": ts(at), "team": "T0ACME",
           "client_msg_id": format!("c{at}"), "blocks": []})
}

fn user(id: &str, name: &str, real_name: &str, email: Option<&str>) -> Value {
    let mut profile = json!({"real_name": real_name, "real_name_normalized": real_name, "display_name": name,
        "avatar_hash": "g0123456789a", "first_name": real_name.split(' ').next().unwrap(), "phone": "", "skype": "",
        "image_72": format!("https://avatars.slack-edge.com/{id}_72.png")});
    if let Some(email) = email {
        profile["email"] = json!(email);
    }
    json!({"id": id, "team_id": "T0ACME", "name": name, "deleted": false, "color": "9f69e7", "real_name": real_name,
           "tz": "Europe/Amsterdam", "tz_label": "Central European Summer Time", "tz_offset": 7200, "profile": profile,
           "is_admin": false, "is_owner": false, "is_primary_owner": false, "is_restricted": false,
           "is_ultra_restricted": false, "is_bot": false, "is_app_user": false, "updated": 1_599_000_000})
}

fn channel(id: &str, name: &str, members: &[&str], purpose: &str, topic: &str) -> Value {
    json!({"id": id, "name": name, "created": "1500000000", "creator": "U001", "is_archived": false,
           "is_general": false, "members": members, "pins": [],
           "topic": {"value": topic, "creator": "U001", "last_set": "1500000001"},
           "purpose": {"value": purpose, "creator": "U001", "last_set": "1500000001"}})
}

/// The markup of every kind, one message each (in #general, before anything else).
const MARKUP: [&str; 8] = [
    "Hello <@U002>, and <@U003|carol> too",
    "see <#C002|random> and <https://example.com/a_b|the site> or <https://example.org>",
    "mail <mailto:ann@acme.test|ann@acme.test> <!here>",
    "*bold* _italic_ ~strike~ *mid*word",
    "`*code* &lt;b&gt;` &amp; &lt;3",
    "before:```let _x_ = 1;\nif a &lt; b {}```",
    "&gt; a quote\nand a reply",
    "<!channel> and <!everyone>",
];

/// A workspace: six people (an owner, an administrator, a member, a guest, a deleted
/// member, a bot) and Slackbot; public channels (#general, #random, an archived one), a
/// private one, a DM and a group DM; two days of messages with threads, reactions, an edit,
/// bot messages (a known bot and an integration), a file, a `/me`, a skipped join and markup
/// of every kind.
pub fn write_export(dir: &Path) {
    let mut users = vec![
        user("U001", "ann", "Ann Owner", Some("ann@acme.test")),
        user("U002", "bob", "Bob Admin", Some("bob@acme.test")),
        user("U003", "carol", "Carol Member", Some("carol@acme.test")),
        user("U004", "dave", "Dave Guest", Some("dave@acme.test")),
        user("U005", "erin", "", Some("erin@acme.test")),
        user("U006", "helperbot", "Helper Bot", None),
        json!({"id": "USLACKBOT", "team_id": "T0ACME", "name": "slackbot", "deleted": false, "real_name": "slackbot",
               "tz": null, "profile": {"real_name": "slackbot", "first_name": "slackbot", "fields": null},
               "is_bot": false, "is_app_user": false}),
    ];
    users[0]["is_primary_owner"] = json!(true);
    users[0]["is_owner"] = json!(true);
    users[0]["is_admin"] = json!(true);
    users[1]["is_admin"] = json!(true);
    users[1]["tz"] = json!("America/New_York");
    users[3]["is_restricted"] = json!(true);
    users[4]["deleted"] = json!(true);
    users[4].as_object_mut().unwrap().remove("real_name");
    users[5]["is_bot"] = json!(true);
    users[5]["profile"]["bot_id"] = json!("B006");
    write(dir, "users.json", &json!(users));

    let mut general = channel("C001", "general", &["U001", "U002", "U003", "U004", "U005"], "For everyone", "hi");
    general["is_general"] = json!(true);
    let random = channel("C002", "random", &["U001", "U002"], "", "Random things");
    let mut old = channel("C003", "old-plans", &["U001"], "Plans of old", "");
    old["is_archived"] = json!(true);
    write(dir, "channels.json", &json!([general, random, old]));
    write(dir, "groups.json", &json!([channel("G001", "secret", &["U001", "U003"], "Top secret", "")]));
    write(dir, "dms.json", &json!([{"id": "D001", "created": 1_500_000_000, "members": ["U001", "U002"]}]));
    write(
        dir,
        "mpims.json",
        &json!([{"id": "G002", "name": "mpdm-ann--bob--carol-1", "created": 1_500_000_000, "creator": "U003",
                 "is_archived": false, "members": ["U001", "U002", "U003"],
                 "topic": {"value": "Group messaging", "creator": "U003", "last_set": 0},
                 "purpose": {"value": "Group messaging with: @ann @bob @carol", "creator": "U003", "last_set": 0}}]),
    );
    write(dir, "integration_logs.json", &json!({"logs": []}));

    let mut day1: Vec<Value> = MARKUP.iter().enumerate().map(|(i, text)| msg("U001", i as i64, text)).collect();
    day1.push(json!({"type": "message", "subtype": "channel_join", "user": "U003", "ts": ts(9),
                     "text": "<@U003> has joined the channel"}));
    let mut parent = msg("U002", 20, "Lunch plans?");
    parent["thread_ts"] = json!(ts(20));
    parent["reply_count"] = json!(1);
    parent["replies"] = json!([{"user": "U003", "ts": ts(30)}]);
    let mut reply = msg("U003", 30, "Pizza!");
    reply["thread_ts"] = json!(ts(20));
    reply["parent_user_id"] = json!("U002");
    reply["reactions"] = json!([
        {"name": "+1", "users": ["U001", "U002"], "count": 2},
        {"name": "clap::skin-tone-2", "users": ["U001"], "count": 1},
        {"name": "partyparrot", "users": ["U001"], "count": 1}
    ]);
    reply["edited"] = json!({"user": "U003", "ts": ts(40)});
    let known_bot = json!({"type": "message", "subtype": "bot_message", "bot_id": "B006", "username": "helperbot",
                           "text": "Build *passed*", "ts": ts(50)});
    let integration = json!({"type": "message", "subtype": "bot_message", "bot_id": "B999", "username": "Jenkins",
                             "text": "Deployed", "ts": ts(60)});
    let mut shared = msg("U001", 70, "Look!");
    shared["files"] = json!([{"id": "F001", "name": "apple.png", "title": "Apple", "mimetype": "image/png",
        "size": 3000, "mode": "hosted", "user": "U001",
        "url_private": "https://files.slack.com/files-pri/T0ACME-F001/apple.png",
        "url_private_download": "https://files.slack.com/files-pri/T0ACME-F001/download/apple.png"}]);
    let mut me = msg("U002", 80, "waves");
    me["subtype"] = json!("me_message");
    let mut second = msg("U001", 90, "Lunch plans?");
    second["thread_ts"] = json!(ts(90));
    let slackbot = msg("USLACKBOT", 95, "Reminder: stand up");
    day1.extend([parent, reply, known_bot, integration, shared, me, second, slackbot]);
    write(dir, "general/2020-09-13.json", &json!(day1));
    write(dir, "random/2020-09-13.json", &json!([msg("U002", 15, "random xylophone")]));
    write(dir, "secret/2020-09-13.json", &json!([msg("U003", 25, "secret plans")]));
    write(dir, "D001/2020-09-13.json", &json!([msg("U001", 35, "hi Bob")]));
    write(dir, "mpdm-ann--bob--carol-1/2020-09-13.json", &json!([msg("U003", 45, "hi all")]));
    let mut long =
        msg("U001", 86_400, "<@U003> please review the very long proposal about our quarterly planning meeting");
    long["thread_ts"] = json!(ts(86_400));
    write(dir, "general/2020-09-14.json", &json!([long, msg("U002", 86_410, "day two")]));
    write(dir, "D001/2020-09-14.json", &json!([msg("U002", 86_405, "hi Ann")]));
}

/// Runs `agora import slack` against the server's data directory.
async fn import(app: &TestApp, input: &Path, subdomain: &str) -> std::process::Output {
    let input = input.display().to_string();
    agora(&app.data_dir, &["import", "slack", &input, "--subdomain", subdomain, "--external-host", "agora.test"]).await
}

/// The HTML of each [`MARKUP`] message, with the new ids of Bob, Carol and #random.
fn markup_html(bob: i64, carol: i64, random: i64) -> [String; 8] {
    let all = r#"<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>"#;
    [
        format!(
            r#"<p>Hello <span class="user-mention" data-user-id="{bob}">@Bob Admin</span>, and <span class="user-mention" data-user-id="{carol}">@Carol Member</span> too</p>"#
        ),
        format!(
            r#"<p>see <a class="stream" data-stream-id="{random}" href="/#narrow/channel/{random}-random">#random</a> and <a href="https://example.com/a_b">the site</a> or <a href="https://example.org">https://example.org</a></p>"#
        ),
        format!("<p>mail ann@acme.test {all}</p>"),
        "<p><strong>bold</strong> <em>italic</em> <del>strike</del> <em>mid</em>word</p>".into(),
        "<p><code>*code* &lt;b&gt;</code> &amp; &lt;3</p>".into(),
        "<p>before:</p>\n<div class=\"codehilite\"><pre><span></span><code>let _x_ = 1;\nif a &lt; b {}\n</code></pre></div>"
            .into(),
        "<blockquote>\n<p>a quote<br>\nand a reply</p>\n</blockquote>".into(),
        format!("<p>{all} and {all}</p>"),
    ]
}

async fn register(app: &TestApp, who: &Creds, types: &str) -> Value {
    let response =
        app.as_user(who, Method::POST, "/register").form(&[("fetch_event_types", types)]).send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn contents(feed: &[Value]) -> Vec<&str> {
    feed.iter().map(|m| m["content"].as_str().unwrap()).collect()
}

#[actix_web::test]
async fn a_slack_export_becomes_an_organization_on_a_running_server() {
    let app = spawn_app().await;
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let out = import(&app, export.path(), SUB).await;
    let summary = crate::cli::printed(&out);
    assert_eq!(
        (summary["users"].as_i64(), summary["channels"].as_i64(), summary["messages"].as_i64()),
        (Some(8), Some(4), Some(23)),
        "{summary}"
    );
    assert_eq!((summary["reactions"].as_i64(), summary["uploads"].as_i64()), (Some(3), Some(0)), "{summary}");
    let settings = json(app.request_to(HOST, Method::GET, "/server_settings").send().await.unwrap()).await.1;
    assert_eq!(settings["realm_name"], "Imported from Slack");

    // People: roles, deactivation, bots, time zones, made-up addresses for bots.
    let ann = creds(&app, SUB, "ann@acme.test").await;
    let bob = creds(&app, SUB, "bob@acme.test").await;
    let carol = creds(&app, SUB, "carol@acme.test").await;
    let dave = creds(&app, SUB, "dave@acme.test").await;
    let users = get(&app, &ann, "/users").await["members"].as_array().unwrap().clone();
    // Members are imported stubs until they log in (FL 433); bots are not.
    assert!(users.iter().all(|u| u["is_imported_stub"] == json!(u["is_bot"] == false)), "{users:?}");
    let people: Vec<(&str, &str, i64, bool, bool, &str)> = users
        .iter()
        .map(|u| {
            (
                u["delivery_email"].as_str().unwrap(),
                u["full_name"].as_str().unwrap(),
                u["role"].as_i64().unwrap(),
                u["is_active"].as_bool().unwrap(),
                u["is_bot"].as_bool().unwrap(),
                u["timezone"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        people,
        [
            ("ann@acme.test", "Ann Owner", 100, true, false, "Europe/Amsterdam"),
            ("bob@acme.test", "Bob Admin", 200, true, false, "America/New_York"),
            ("carol@acme.test", "Carol Member", 400, true, false, "Europe/Amsterdam"),
            ("dave@acme.test", "Dave Guest", 600, true, false, "Europe/Amsterdam"),
            ("erin@acme.test", "erin", 400, false, false, "Europe/Amsterdam"),
            ("helper-bot@t0acme.slack.com", "Helper Bot", 400, true, true, "Europe/Amsterdam"),
            ("imported-slackbot-bot@t0acme.slack.com", "slackbot", 400, true, true, ""),
            ("jenkins-bot@t0acme.slack.com", "Jenkins", 400, true, true, ""),
        ]
    );
    for bot in users.iter().filter(|u| u["is_bot"] == true) {
        assert_eq!((bot["bot_type"].as_i64(), &bot["bot_owner_id"]), (Some(1), &Value::Null), "{bot}");
    }

    // Channels: privacy, descriptions (the purpose, else the topic), members, archive,
    // defaults.
    let subs = get(&app, &ann, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    let mut names: Vec<&str> = subs.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["general", "random", "secret"]);
    let sub = |name: &str| subs.iter().find(|s| s["name"] == name).unwrap().clone();
    let described: Vec<(String, bool, String)> = ["general", "random", "secret"]
        .iter()
        .map(|n| {
            let s = sub(n);
            (n.to_string(), s["invite_only"].as_bool().unwrap(), s["rendered_description"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(
        described,
        [
            ("general".into(), false, "<p>For everyone</p>".into()),
            ("random".into(), false, "<p>Random things</p>".into()),
            ("secret".into(), true, "<p>Top secret</p>".into()),
        ]
    );
    let secret_id = sub("secret")["stream_id"].as_i64().unwrap();
    let members = get(&app, &ann, &format!("/streams/{secret_id}/members")).await["subscribers"].clone();
    assert_eq!(members, json!([ann.user_id, carol.user_id]));
    let carol_subs = get(&app, &carol, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    let mut carol_names: Vec<&str> = carol_subs.iter().map(|s| s["name"].as_str().unwrap()).collect();
    carol_names.sort();
    assert_eq!(carol_names, ["general", "secret"]);
    let all = get(&app, &ann, "/streams?include_all=true&exclude_archived=false").await["streams"]
        .as_array()
        .unwrap()
        .clone();
    let archived: Vec<&str> =
        all.iter().filter(|s| s["is_archived"] == true).map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(archived, ["old-plans"]);
    let state = register(&app, &ann, r#"["default_streams","message","update_message_flags","realm"]"#).await;
    let id_of = |name: &str| sub(name)["stream_id"].as_i64().unwrap();
    let mut defaults: Vec<i64> =
        state["realm_default_streams"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap_or(-1)).collect();
    defaults.sort();
    assert_eq!(defaults, [id_of("general"), id_of("random")], "{}", state["realm_default_streams"]);
    assert_eq!(state["realm_new_stream_announcements_stream_id"], sub("general")["stream_id"]);
    assert_eq!(state["realm_description"], "Organization imported from Slack!");
    // Imported history is read: nobody starts with hundreds of unread messages.
    assert_eq!(state["unread_msgs"]["count"], 0, "{}", state["unread_msgs"]);
    let bob_state = register(&app, &bob, r#"["message","update_message_flags"]"#).await;
    assert_eq!(bob_state["unread_msgs"]["count"], 0, "{}", bob_state["unread_msgs"]);

    // Every message Ann may see, in the order they were sent across conversations.
    let feed = messages(&app, &ann, "[]").await;
    let times: Vec<i64> = feed.iter().map(|m| m["timestamp"].as_i64().unwrap() - T).collect();
    assert_eq!(times, [0, 1, 2, 3, 4, 5, 6, 7, 15, 20, 25, 30, 35, 45, 50, 60, 70, 80, 90, 95, 86_400, 86_405, 86_410]);
    let ids: Vec<i64> = feed.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(!contents(&feed).iter().any(|c| c.contains("has joined")), "the join is skipped");

    // Markup of every kind, as Zulip Markdown rendered here, mentions with the new ids.
    let random_id = sub("random")["stream_id"].as_i64().unwrap();
    let general = messages(
        &app,
        &ann,
        r#"[{"operator": "channel", "operand": "general"}, {"operator": "topic", "operand": "imported from Slack"}]"#,
    )
    .await;
    let expected = markup_html(bob.user_id, carol.user_id, random_id);
    assert_eq!(contents(&general[..8]), expected.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        contents(&general[8..]),
        [
            "<p>Build <strong>passed</strong></p>",
            "<p>Deployed</p>",
            "<p>Look!<br>\n<a href=\"https://files.slack.com/files-pri/T0ACME-F001/apple.png\">Apple</a></p>",
            "<p>/me waves</p>",
            "<p>Reminder: stand up</p>",
            "<p>day two</p>",
        ]
    );
    let senders: Vec<&str> = general[8..11].iter().map(|m| m["sender_full_name"].as_str().unwrap()).collect();
    assert_eq!(senders, ["Helper Bot", "Jenkins", "Ann Owner"]);
    // Mentioned people are flagged so.
    let bob_first = &messages(&app, &bob, r#"[{"operator": "channel", "operand": "general"}]"#).await[0];
    assert_eq!(bob_first["flags"], json!(["read", "mentioned"]));
    let carol_first = &messages(&app, &carol, r#"[{"operator": "channel", "operand": "general"}]"#).await[0];
    assert_eq!(carol_first["flags"], json!(["read", "mentioned"]));
    assert_eq!(general[0]["flags"], json!(["read"]));

    // Threads are topics named by their date and first message; an edit and reactions.
    let topics = get(&app, &ann, &format!("/users/me/{}/topics", sub("general")["stream_id"])).await["topics"]
        .as_array()
        .unwrap()
        .clone();
    let mut topic_names: Vec<&str> = topics.iter().map(|t| t["name"].as_str().unwrap()).collect();
    topic_names.sort();
    let long = "2020-09-14 @**Carol Member** please review the very long pr…";
    assert_eq!(long.chars().count(), 60);
    assert_eq!(topic_names, ["2020-09-13 Lunch plans?", "2020-09-13 Lunch plans? (2)", long, "imported from Slack"]);
    let thread = messages(
        &app,
        &ann,
        r#"[{"operator": "channel", "operand": "general"}, {"operator": "topic", "operand": "2020-09-13 Lunch plans?"}]"#,
    )
    .await;
    assert_eq!(contents(&thread), ["<p>Lunch plans?</p>", "<p>Pizza!</p>"]);
    let pizza = &thread[1];
    assert_eq!(pizza["last_edit_timestamp"], T + 40);
    let mut reactions: Vec<(&str, &str, i64)> = pizza["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["emoji_name"].as_str().unwrap(), r["emoji_code"].as_str().unwrap(), r["user_id"].as_i64().unwrap()))
        .collect();
    reactions.sort();
    let mut want = vec![("+1", "1f44d", ann.user_id), ("+1", "1f44d", bob.user_id), ("clap", "1f44f", ann.user_id)];
    want.sort();
    assert_eq!(reactions, want);
    assert!(thread[0]["reactions"].as_array().unwrap().is_empty());

    // DMs and group DMs, each to its people only.
    let dms = messages(&app, &ann, r#"[{"operator": "is", "operand": "dm"}]"#).await;
    let dm_view: Vec<(&str, usize)> = dms
        .iter()
        .map(|m| (m["content"].as_str().unwrap(), m["display_recipient"].as_array().unwrap().len()))
        .collect();
    assert_eq!(dm_view, [("<p>hi Bob</p>", 2), ("<p>hi all</p>", 3), ("<p>hi Ann</p>", 2)]);
    let carol_dms = messages(&app, &carol, r#"[{"operator": "is", "operand": "dm"}]"#).await;
    assert_eq!(contents(&carol_dms), ["<p>hi all</p>"]);
    // A guest sees #general's messages only.
    let dave_feed = messages(&app, &dave, "[]").await;
    assert_eq!(dave_feed.len(), 18, "{:?}", contents(&dave_feed));
    assert!(dave_feed.iter().all(|m| m["display_recipient"] == "general"));
    // Search finds imported words.
    let found = messages(&app, &ann, r#"[{"operator": "search", "operand": "xylophone"}]"#).await;
    assert_eq!(contents(&found), ["<p>random xylophone</p>"]);
    app.stop().await;
}

#[actix_web::test]
async fn a_zip_of_the_export_imports_the_same() {
    let app = spawn_app().await;
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let zips = tempfile::tempdir().unwrap();
    for (top, subdomain) in [("", SUB), ("Acme Slack export Sep 13 2020 - Sep 14 2020/", "again")] {
        let archive = zips.path().join(format!("{subdomain}.zip"));
        zip_dir(export.path(), &archive, top);
        let summary = crate::cli::printed(&import(&app, &archive, subdomain).await);
        assert_eq!(
            (
                summary["users"].as_i64(),
                summary["channels"].as_i64(),
                summary["messages"].as_i64(),
                summary["reactions"].as_i64()
            ),
            (Some(8), Some(4), Some(23), Some(3)),
            "{top}: {summary}"
        );
    }
    let ann = creds(&app, SUB, "ann@acme.test").await;
    let feed = messages(&app, &ann, "[]").await;
    assert_eq!(feed.len(), 23);
    assert_eq!(feed[0]["subject"], "imported from Slack");
    assert!(feed[0]["content"].as_str().unwrap().contains("@Bob Admin</span>"), "{}", feed[0]);
    let found = messages(&app, &ann, r#"[{"operator": "search", "operand": "xylophone"}]"#).await;
    assert_eq!(found.len(), 1);
    // The unpacked copies are gone.
    let left: Vec<_> = std::fs::read_dir(&app.data_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("import-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    app.stop().await;
}

fn edit(dir: &Path, name: &str, from: &str, to: &str) {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{name} has no {from}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[actix_web::test]
async fn a_bad_export_says_what_is_wrong_and_where_and_leaves_nothing() {
    let app = spawn_app().await;
    let realms_before = crate::cli::printed(&agora(&app.data_dir, &["list-realms"]).await);
    type Spoil = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "a list that is not JSON",
            Box::new(|d: &Path| std::fs::write(d.join("channels.json"), "[{\"id\": \"C001\",\n  \"name\": ").unwrap()),
            "channels.json: line 2, column 10: the file ends early (is it cut short?)",
        ),
        (
            "a day that is not JSON",
            Box::new(|d: &Path| std::fs::write(d.join("general/2020-09-14.json"), "[{\"ts\": }]").unwrap()),
            "general/2020-09-14.json: line 1, column 9: not valid JSON",
        ),
        (
            "a message of someone unknown",
            Box::new(|d: &Path| {
                edit(
                    d,
                    "general/2020-09-13.json",
                    "\"user\": \"U001\",\n    \"text\": \"see",
                    "\"user\": \"U999\",\n    \"text\": \"see",
                )
            }),
            "general/2020-09-13.json: message 2 (ts 1600000001.000100): its user U999 is not in users.json",
        ),
        (
            "a message without a time",
            Box::new(|d: &Path| {
                edit(d, "general/2020-09-14.json", "\"ts\": \"1600086410.000100\"", "\"ts\": \"soon\"")
            }),
            "general/2020-09-14.json: message 2 (ts soon): its ts is not a Slack timestamp",
        ),
        (
            "a member of no one",
            Box::new(|d: &Path| {
                edit(
                    d,
                    "channels.json",
                    "\"U002\"\n    ],\n    \"pins\": [],\n    \"topic\": {\n      \"value\": \"Random",
                    "\"U777\"\n    ],\n    \"pins\": [],\n    \"topic\": {\n      \"value\": \"Random",
                )
            }),
            "channels.json: channel random (C002): its member U777 is not in users.json",
        ),
        (
            "no users.json",
            Box::new(|d: &Path| std::fs::remove_file(d.join("users.json")).unwrap()),
            "users.json: missing: a Slack export has users.json and channels.json",
        ),
        (
            "not an export at all",
            Box::new(|d: &Path| {
                std::fs::remove_file(d.join("users.json")).unwrap();
                std::fs::remove_file(d.join("channels.json")).unwrap();
            }),
            "no users.json and channels.json: this is not a Slack export",
        ),
    ];
    for (what, spoil, said) in cases {
        let export = tempfile::tempdir().unwrap();
        write_export(export.path());
        spoil(export.path());
        let out = import(&app, export.path(), SUB).await;
        assert!(!out.status.success(), "{what}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{what}: {stderr}");
        assert_eq!(crate::cli::printed(&agora(&app.data_dir, &["list-realms"]).await), realms_before, "{what}");
    }
    // The same export, unspoilt, imports (the cases failed for their spoiling alone).
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    crate::cli::printed(&import(&app, export.path(), SUB).await);
    app.stop().await;
}
