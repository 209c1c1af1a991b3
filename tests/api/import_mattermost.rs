//! `agora import mattermost`: one team of a Mattermost bulk export, written here in
//! Mattermost's format (JSON lines and `data/`), imported into a running server, then read
//! back through the API as its people would.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::cli::agora;
use crate::helpers::{json, spawn_app, Creds, TestApp};
use crate::imported::{get, messages, zip_dir};

const SUB: &str = "hogwarts";
const HOST: &str = "hogwarts.agora.test";
/// Milliseconds: every post is some seconds after this.
const T: i64 = 1_700_000_000_000;
const ATTACHMENT: &str = "20240101/teams/t1/channels/c1/users/u1/f1/battle plan.txt";

fn user(name: &str, first: &str, last: &str, roles: &str, teams: Value) -> Value {
    json!({"type": "user", "user": {
        "username": name, "email": format!("{name}@hogwarts.test"), "auth_service": "", "nickname": "",
        "first_name": first, "last_name": last, "position": "", "roles": roles, "locale": "en",
        "teams": teams, "notify_props": {"desktop": "mention", "email": "true", "mention_keys": format!("{name},@{name}")}
    }})
}

fn member(roles: &str, channels: &[(&str, &str)]) -> Value {
    let channels: Vec<Value> = channels
        .iter()
        .map(|(name, roles)| json!({"name": name, "roles": roles, "notify_props": {"desktop": "default", "mobile": "default", "mark_unread": "all"}, "favorite": *name == "quidditch"}))
        .collect();
    json!({"name": "gryffindor", "roles": roles, "channels": channels})
}

fn post(channel: &str, user: &str, message: &str, seconds: i64) -> Value {
    json!({"type": "post", "post": {"team": "gryffindor", "channel": channel, "user": user, "message": message,
        "create_at": T + seconds * 1000, "reactions": null, "replies": null, "attachments": null, "flagged_by": null}})
}

fn reply(user: &str, message: &str, seconds: i64) -> Value {
    json!({"user": user, "message": message, "create_at": T + seconds * 1000, "reactions": null, "attachments": null})
}

fn direct(members: &[&str], user: &str, message: &str, seconds: i64) -> Value {
    json!({"type": "direct_post", "direct_post": {"channel_members": members, "user": user, "message": message,
        "create_at": T + seconds * 1000, "flagged_by": null, "reactions": null, "replies": null, "attachments": null}})
}

/// The export's lines: two teams, their channels, people with their memberships and roles,
/// posts out of time order with replies (listed out of order, later than other lines' posts,
/// at the same time as their root or as a later line's post), reactions and an attachment,
/// direct conversations, a custom emoji, and line types an older reader does not know.
fn export_lines() -> Vec<Value> {
    let mut welcome = post("town-square", "ron", "Welcome @harry and @ginny! Practice is @all.", 300);
    welcome["post"]["reactions"] = json!([
        {"user": "ginny", "create_at": T + 310_000, "emoji_name": "thumbsup"},
        {"user": "harry", "create_at": T + 320_000, "emoji_name": "peerdium"},
        {"user": "draco", "create_at": T + 330_000, "emoji_name": "heart"}
    ]);
    welcome["post"]["replies"] = json!([reply("ginny", "See you there", 450), reply("harry", "Thanks @ron.", 400)]);
    welcome["post"]["attachments"] = json!([{"path": ATTACHMENT}]);
    let mut xylophone = post("town-square", "harry", "The xylophone is tuned", 100);
    xylophone["post"]["replies"] = json!([reply("ginny", "Tuned by whom?", 100)]);
    let mut army = post("dumbledores-army", "harry", "Meet in the Room of Requirement", 200);
    army["post"]["replies"] = json!([reply("luna", "I will bring my spectrespecs", 350)]);
    let mut joined = post("town-square", "ginny", "ginny joined the channel.", 60);
    joined["post"]["type"] = json!("system_join_channel");
    let mut potions = post("potions", "draco", "Slytherin only", 150);
    potions["post"]["team"] = json!("slytherin");
    let mut saved = direct(&["harry", "ron"], "ron", "hey harry", 500);
    saved["direct_post"]["flagged_by"] = json!(["harry"]);
    vec![
        json!({"type": "version", "version": 1, "info": {"generator": "mmctl", "version": "9.11.0", "created": "2024-06-01"}}),
        json!({"type": "scheme", "scheme": {"name": "strict", "display_name": "Strict", "scope": "team"}}),
        json!({"type": "role", "role": {"name": "custom_role", "display_name": "Custom", "permissions": []}}),
        json!({"type": "emoji", "emoji": {"name": "peerdium", "image": "data/emoji/h15ni7kf1bnj7jeua4qhmctsdo/image"}}),
        json!({"type": "team", "team": {"name": "gryffindor", "display_name": "Gryffindor House", "type": "O", "description": "Brave hearts", "allow_open_invite": true}}),
        json!({"type": "team", "team": {"name": "slytherin", "display_name": "Slytherin", "type": "I", "description": ""}}),
        json!({"type": "channel", "channel": {"team": "gryffindor", "name": "town-square", "display_name": "Town Square", "type": "O", "header": "", "purpose": "Everyone"}}),
        json!({"type": "channel", "channel": {"team": "gryffindor", "name": "dumbledores-army", "display_name": "Dumbledores Army", "type": "P", "header": "Secret practice", "purpose": ""}}),
        json!({"type": "channel", "channel": {"team": "gryffindor", "name": "quidditch", "display_name": "Quidditch", "type": "O", "header": "", "purpose": ""}}),
        json!({"type": "channel", "channel": {"team": "slytherin", "name": "potions", "display_name": "Potions", "type": "O", "header": "", "purpose": ""}}),
        user(
            "harry",
            "Harry",
            "Potter",
            "system_admin system_user",
            json!([member(
                "team_user",
                &[
                    ("town-square", "channel_user"),
                    ("dumbledores-army", "channel_admin channel_user"),
                    ("quidditch", "channel_user")
                ]
            )]),
        ),
        user(
            "ron",
            "Ron",
            "Weasley",
            "system_user",
            json!([member(
                "team_admin team_user",
                &[("town-square", "channel_user"), ("dumbledores-army", "channel_user"), ("quidditch", "channel_user")]
            )]),
        ),
        user(
            "ginny",
            "Ginny",
            "Weasley",
            "system_user",
            json!([member("team_user", &[("town-square", "channel_user"), ("quidditch", "channel_user")])]),
        ),
        user(
            "luna",
            "Luna",
            "Lovegood",
            "system_guest",
            json!([member("team_guest", &[("dumbledores-army", "channel_guest")])]),
        ),
        user(
            "draco",
            "Draco",
            "Malfoy",
            "system_user",
            json!([{"name": "slytherin", "roles": "team_user", "channels": [{"name": "potions", "roles": "channel_user"}]}]),
        ),
        user("hagrid", "", "", "system_user", Value::Null),
        json!({"type": "bot", "bot": {"username": "helper", "owner": "harry", "display_name": "Helper"}}),
        welcome,
        xylophone,
        army,
        potions,
        post("town-square", "hagrid", "I should not have said that", 50),
        joined,
        json!({"type": "direct_channel", "direct_channel": {"members": ["harry", "ron"], "favorited_by": null, "header": ""}}),
        json!({"type": "direct_channel", "direct_channel": {"participants": [{"username": "harry"}, {"username": "ron"}, {"username": "ginny"}], "header": ""}}),
        saved,
        direct(&["harry", "ron", "ginny"], "ginny", "group chat", 450),
        direct(&["harry", "draco"], "draco", "not for Gryffindor", 460),
    ]
}

fn write_lines(dir: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("export.jsonl"), text).unwrap();
}

fn write_export(dir: &Path) {
    write_lines(dir, &export_lines());
    let file = dir.join("data").join(ATTACHMENT);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, "the battle plan\n").unwrap();
    let emoji = dir.join("data/emoji/h15ni7kf1bnj7jeua4qhmctsdo/image");
    std::fs::create_dir_all(emoji.parent().unwrap()).unwrap();
    std::fs::write(emoji, crate::realm_emoji::png(32, 32)).unwrap();
}

async fn import(app: &TestApp, input: &Path, team: &str) -> std::process::Output {
    let input = input.display().to_string();
    agora(&app.data_dir, &["import", "mattermost", &input, "--subdomain", SUB, "--team", team]).await
}

async fn creds(app: &TestApp, name: &str) -> Creds {
    crate::imported::creds(app, SUB, &format!("{name}@hogwarts.test")).await
}

fn mention(id: i64, name: &str) -> String {
    format!(r#"<span class="user-mention" data-user-id="{id}">@{name}</span>"#)
}

/// Checks the imported organization through the API.
async fn check_organization(app: &TestApp) {
    let harry = creds(app, "harry").await;
    let ron = creds(app, "ron").await;
    let ginny = creds(app, "ginny").await;
    let luna = creds(app, "luna").await;
    let settings = json(app.request_to(HOST, Method::GET, "/server_settings").send().await.unwrap()).await.1;
    assert_eq!(settings["realm_name"], "Gryffindor House");

    // People: the team's members with their roles, and Hagrid, who wrote in the team's
    // channel but left it, deactivated; not Draco, of the other team.
    let users = get(app, &harry, "/users").await["members"].as_array().unwrap().clone();
    // Members are imported stubs until they log in (FL 433); bots are not.
    assert!(users.iter().all(|u| u["is_imported_stub"] == json!(u["is_bot"] == false)), "{users:?}");
    let mut people: Vec<(String, String, i64, bool)> = users
        .iter()
        .filter(|u| u["is_bot"] == false)
        .map(|u| {
            let email = u["delivery_email"].as_str().or(u["email"].as_str()).unwrap().to_owned();
            (email, u["full_name"].as_str().unwrap().to_owned(), u["role"].as_i64().unwrap(), u["is_active"] == true)
        })
        .collect();
    people.sort();
    let person =
        |n: &str, full: &str, role: i64, active: bool| (format!("{n}@hogwarts.test"), full.to_owned(), role, active);
    assert_eq!(
        people,
        [
            person("ginny", "Ginny Weasley", 400, true),
            person("hagrid", "hagrid", 400, false),
            person("harry", "Harry Potter", 100, true),
            person("luna", "Luna Lovegood", 600, true),
            person("ron", "Ron Weasley", 200, true),
        ]
    );

    // Channels: only the team's, named by their display names, with their privacy,
    // description and members.
    let streams = get(app, &harry, "/streams?include_all=true").await["streams"].as_array().unwrap().clone();
    let mut channels: Vec<(&str, bool, &str)> = streams
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["invite_only"].as_bool().unwrap(), s["description"].as_str().unwrap()))
        .collect();
    channels.sort();
    assert_eq!(
        channels,
        [("Dumbledores Army", true, "Secret practice"), ("Quidditch", false, ""), ("Town Square", false, "Everyone")]
    );
    let army = streams.iter().find(|s| s["name"] == "Dumbledores Army").unwrap()["stream_id"].as_i64().unwrap();
    let mut army_members = get(app, &harry, &format!("/streams/{army}/members")).await["subscribers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect::<Vec<_>>();
    army_members.sort();
    let mut expected = vec![harry.user_id, ron.user_id, luna.user_id];
    expected.sort();
    assert_eq!(army_members, expected);
    let subs = get(app, &ron, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    let pinned: Vec<(&str, bool)> =
        subs.iter().map(|s| (s["name"].as_str().unwrap(), s["pin_to_top"].as_bool().unwrap())).collect();
    assert_eq!(pinned.len(), 3, "{pinned:?}");
    assert!(pinned.contains(&("Quidditch", true)) && pinned.contains(&("Town Square", false)), "{pinned:?}");
    let luna_subs = get(app, &luna, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    assert_eq!(luna_subs.iter().map(|s| s["name"].as_str().unwrap()).collect::<Vec<_>>(), ["Dumbledores Army"]);

    // Messages: every one, replies included, in time order (ties in the file's order, a
    // root before its replies), ids growing with time, with mentions naming the new ids;
    // Mattermost's notices and the other team's posts left out.
    let feed = messages(app, &harry, "[]").await;
    let summary: Vec<(String, i64, String)> = feed
        .iter()
        .map(|m| {
            let to = if m["type"] == "stream" {
                format!("{} > {}", m["display_recipient"].as_str().unwrap(), m["subject"].as_str().unwrap())
            } else {
                format!("dm of {}", m["display_recipient"].as_array().unwrap().len())
            };
            (to, m["timestamp"].as_i64().unwrap() - T / 1000, m["sender_email"].as_str().unwrap().to_owned())
        })
        .collect();
    let at = |to: &str, seconds: i64, from: &Creds| {
        let to = if to.starts_with("dm") { to.to_owned() } else { format!("{to} > imported from mattermost") };
        (to, seconds, from.email.clone())
    };
    let hagrid_email = feed[0]["sender_email"].as_str().unwrap().to_owned();
    assert_eq!(
        summary,
        [
            ("Town Square > imported from mattermost".to_owned(), 50, hagrid_email),
            at("Town Square", 100, &harry),
            at("Town Square", 100, &ginny),
            at("Dumbledores Army", 200, &harry),
            at("Town Square", 300, &ron),
            at("Dumbledores Army", 350, &luna),
            at("Town Square", 400, &harry),
            at("Town Square", 450, &ginny),
            at("dm of 3", 450, &ginny),
            at("dm of 2", 500, &ron),
        ]
    );
    let times: Vec<i64> = feed.iter().map(|m| m["timestamp"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let ids: Vec<i64> = feed.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let contents: Vec<&str> = feed.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(
        [contents[1], contents[2], contents[7], contents[8]],
        ["<p>The xylophone is tuned</p>", "<p>Tuned by whom?</p>", "<p>See you there</p>", "<p>group chat</p>"]
    );
    let welcome = feed[4]["content"].as_str().unwrap();
    let (text, link) = welcome.split_once("\n").unwrap();
    assert_eq!(
        text,
        format!(
            "<p>Welcome {} and {}! Practice is {}.</p>",
            mention(harry.user_id, "Harry Potter"),
            mention(ginny.user_id, "Ginny Weasley"),
            r#"<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>"#
        )
    );
    assert!(
        link.starts_with(r#"<p><a href="/user_uploads/"#)
            && link.ends_with(r#"/battle-plan.txt">battle plan.txt</a></p>"#),
        "{link}"
    );
    assert_eq!(feed[6]["content"], format!("<p>Thanks {}.</p>", mention(ron.user_id, "Ron Weasley")));
    assert_eq!(feed[9]["content"], "<p>hey harry</p>");
    // Flags: all history read; mentions, everyone's mention and saved posts kept.
    assert_eq!(feed[9]["flags"], json!(["read", "starred"]));
    let ginny_feed = messages(app, &ginny, r#"[{"operator": "channel", "operand": "Town Square"}]"#).await;
    let ginny_welcome = ginny_feed.iter().find(|m| m["id"] == feed[4]["id"]).unwrap();
    assert_eq!(ginny_welcome["flags"], json!(["read", "mentioned", "stream_wildcard_mentioned", "wildcard_mentioned"]));
    // Reactions: a Unicode emoji by Mattermost's name, a custom one; not the other team's.
    let mut reactions: Vec<(&str, &str, i64)> = feed[4]["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r["emoji_name"].as_str().unwrap(), r["reaction_type"].as_str().unwrap(), r["user_id"].as_i64().unwrap())
        })
        .collect();
    reactions.sort();
    assert_eq!(reactions, [("+1", "unicode_emoji", ginny.user_id), ("peerdium", "realm_emoji", harry.user_id)]);

    // Luna, a guest, sees her channel only; direct conversations are their people's.
    let luna_feed = messages(app, &luna, "[]").await;
    assert_eq!(luna_feed.len(), 2);
    let ron_dms = messages(app, &ron, r#"[{"operator": "is", "operand": "dm"}]"#).await;
    let dms: Vec<&str> = ron_dms.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(dms, ["<p>group chat</p>", "<p>hey harry</p>"]);

    // Search, unread counts, the upload and the custom emoji.
    let found = messages(app, &ginny, r#"[{"operator": "search", "operand": "xylophone"}]"#).await;
    assert_eq!(found.len(), 1);
    let register = json(
        app.as_user(&ginny, Method::POST, "/register")
            .form(&[("fetch_event_types", r#"["message","update_message_flags","realm_emoji"]"#)])
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    assert_eq!(register["unread_msgs"]["count"], 0, "{}", register["unread_msgs"]);
    let emoji: Vec<&Value> = register["realm_emoji"].as_object().unwrap().values().collect();
    assert_eq!(emoji.len(), 1);
    assert_eq!(emoji[0]["name"], "peerdium");
    let download = |path: String, who: &Creds| {
        app.client
            .get(format!("{}{path}", app.address))
            .header("Host", HOST)
            .basic_auth(&who.email, Some(&who.api_key))
            .send()
    };
    let image = download(emoji[0]["source_url"].as_str().unwrap().to_owned(), &ginny).await.unwrap();
    assert_eq!(image.status(), 200);
    assert_eq!(image.bytes().await.unwrap().to_vec(), crate::realm_emoji::png(32, 32));
    let href = link.split("href=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let file = download(href.clone(), &ginny).await.unwrap();
    assert_eq!(file.status(), 200, "{href}");
    assert_eq!(file.text().await.unwrap(), "the battle plan\n");
}

#[actix_web::test]
async fn a_mattermost_team_becomes_an_organization_on_a_running_server() {
    let app = spawn_app().await;
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let out = import(&app, export.path(), "gryffindor").await;
    let summary = crate::cli::printed(&out);
    assert_eq!(
        (
            summary["users"].as_i64(),
            summary["channels"].as_i64(),
            summary["messages"].as_i64(),
            summary["reactions"].as_i64(),
            summary["uploads"].as_i64(),
            summary["missing_files"].as_i64()
        ),
        (Some(5), Some(3), Some(10), Some(2), Some(1), Some(0)),
        "{summary}"
    );
    check_organization(&app).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_zip_of_the_export_imports_the_same() {
    let app = spawn_app().await;
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let packed = tempfile::tempdir().unwrap();
    let archive = packed.path().join("export.zip");
    zip_dir(export.path(), &archive, "");
    let summary = crate::cli::printed(&import(&app, &archive, "gryffindor").await);
    assert_eq!((summary["messages"].as_i64(), summary["uploads"].as_i64()), (Some(10), Some(1)), "{summary}");
    check_organization(&app).await;
    app.stop().await;
}

#[actix_web::test]
async fn a_bad_export_says_what_is_wrong_and_where_and_leaves_nothing() {
    let app = spawn_app().await;
    let realms_before = crate::cli::printed(&agora(&app.data_dir, &["list-realms"]).await);
    let lines = export_lines();
    let line_of = |text: &str| lines.iter().position(|l| l.to_string().contains(text)).unwrap();
    type Spoil = Box<dyn Fn(&mut Vec<Value>) -> Option<String>>;
    let (army, hagrid) = (line_of("Room of Requirement"), line_of("I should not"));
    let cases: Vec<(&str, &str, Spoil, String)> = vec![
        (
            "a line that is not JSON",
            "gryffindor",
            Box::new(|_| Some("{\"type\": \"team\", team: {}}".into())),
            "export.jsonl: line 7: not valid JSON (key must be a string at column 18)".into(),
        ),
        (
            "a post by nobody",
            "gryffindor",
            Box::new(move |l| {
                l[hagrid]["post"]["user"] = json!("voldemort");
                None
            }),
            format!("export.jsonl: line {}: \"voldemort\" is not a user of the export", hagrid + 1),
        ),
        (
            "a post in another team's channel",
            "gryffindor",
            Box::new(move |l| {
                l[army]["post"]["channel"] = json!("potions");
                None
            }),
            format!(
                "export.jsonl: line {}: a post in channel \"potions\" of team \"slytherin\", not of team \"gryffindor\"",
                army + 1
            ),
        ),
        (
            "a team that is not there",
            "hufflepuff",
            Box::new(|_| None),
            "export.jsonl: no team \"hufflepuff\" (--team): the export's teams are \"gryffindor\", \"slytherin\"".into(),
        ),
        (
            "no version line",
            "gryffindor",
            Box::new(|l| {
                l.remove(0);
                None
            }),
            "export.jsonl: line 1: a \"scheme\" line before the \"version\" line: is this a Mattermost bulk export?"
                .into(),
        ),
    ];
    for (what, team, spoil, said) in cases {
        let export = tempfile::tempdir().unwrap();
        write_export(export.path());
        let mut lines = export_lines();
        let replaced = spoil(&mut lines);
        let mut text: Vec<String> = lines.iter().map(Value::to_string).collect();
        if let Some(line) = replaced {
            text[6] = line;
        }
        std::fs::write(export.path().join("export.jsonl"), text.join("\n") + "\n").unwrap();
        let out = import(&app, export.path(), team).await;
        assert!(!out.status.success(), "{what}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&said), "{what}: {stderr}");
        assert_eq!(crate::cli::printed(&agora(&app.data_dir, &["list-realms"]).await), realms_before, "{what}");
        let uploads = app.data_dir.join("uploads");
        let left: Vec<_> = std::fs::read_dir(&uploads)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.iter().all(|n| n == "tmp" || n == "user_avatars"), "{what}: {left:?}");
    }
    // Not an export at all.
    let empty = tempfile::tempdir().unwrap();
    let out = import(&app, empty.path(), "gryffindor").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no .jsonl file nor export.json: this is not a Mattermost bulk export"), "{stderr}");
    app.stop().await;
}
