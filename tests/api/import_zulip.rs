//! `agora import zulip`: an organization from a Zulip export, written here in Zulip's
//! format (its table and field names), imported into a running server, then read back
//! through the API as its people would.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::cli::agora;
use crate::helpers::{json, spawn_app, Creds, TestApp};
use crate::imported::{creds, get, messages};

const SUB: &str = "acme";
const HOST: &str = "acme.agora.test";

fn user(id: i64, email: &str, name: &str, role: i64) -> Value {
    json!({
        "id": id, "realm": 2, "email": email, "delivery_email": email, "full_name": name, "role": role,
        "is_active": true, "is_bot": false, "bot_type": null, "bot_owner": null, "is_mirror_dummy": false,
        "avatar_source": "G", "avatar_version": 1, "timezone": "Europe/Copenhagen", "date_joined": 1_600_000_000.5,
        "last_login": null, "last_reminder": null, "default_sending_stream": null,
        "default_events_register_stream": null, "last_active_message_id": null, "groups": [],
        "user_permissions": [], "enter_sends": true, "email_address_visibility": 1, "twenty_four_hour_time": true,
        "tos_version": "-1", "long_term_idle": false
    })
}

fn message(id: i64, sender: i64, recipient: i64, subject: &str, content: &str, rendered: &str, at: f64) -> Value {
    json!({
        "id": id, "sender": sender, "recipient": recipient, "realm": 2, "type": 1, "subject": subject,
        "content": content, "rendered_content": rendered, "rendered_content_version": 1, "date_sent": at,
        "sending_client": 1, "last_edit_time": null, "edit_history": null, "has_attachment": false,
        "has_image": false, "has_link": false, "is_channel_message": recipient >= 110
    })
}

fn write(dir: &Path, name: &str, value: &Value) {
    put(dir, name, &serde_json::to_vec_pretty(value).unwrap());
}

fn put(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A Zulip 11 export of organization 2: people, a bot, a deactivated account, channels
/// (public, private, archived, in a folder), groups, profile fields, emoji, a linkifier,
/// messages in channels and direct conversations with flags, reactions and an edit, and an
/// upload linked from a message.
pub fn write_export(dir: &Path) {
    let (iago, hamlet, gone, bot) = (11, 12, 13, 14);
    let mut users = vec![
        user(iago, "iago@zulip.test", "Iago", 100),
        user(hamlet, "hamlet@zulip.test", "King Hamlet", 400),
        user(gone, "gone@zulip.test", "Gone User", 400),
        user(bot, "helper-bot@zulip.test", "Helper Bot", 400),
    ];
    users[1]["avatar_source"] = json!("U");
    users[2]["is_active"] = json!(false);
    users[3]["is_bot"] = json!(true);
    users[3]["bot_type"] = json!(1);
    users[3]["bot_owner"] = json!(hamlet);
    let system = [
        "role:internet",
        "role:owners",
        "role:administrators",
        "role:moderators",
        "role:fullmembers",
        "role:members",
        "role:everyone",
        "role:nobody",
    ];
    let mut named: Vec<Value> = system
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"id": i as i64 + 1, "usergroup_ptr": i as i64 + 1, "name": name, "description": "", "is_system_group": true, "deactivated": false, "date_created": 1_600_000_000.0, "creator": null}))
        .collect();
    named.push(json!({
        "id": 40, "usergroup_ptr": 40, "name": "support", "description": "The support team", "is_system_group": false,
        "deactivated": false, "date_created": 1_600_000_100.0, "creator": iago, "can_mention_group": 41,
        "can_add_members_group": 3, "can_join_group": 8, "can_leave_group": 7, "can_manage_group": 3, "can_remove_members_group": 8
    }));
    let realm = json!({
        "import_source": "zulip",
        "zerver_realm": [{
            "id": 2, "name": "Zulip Dev", "string_id": "zulip", "description": "The **dev** team",
            "date_created": 1_500_000_000.0, "deactivated": false, "invite_required": false,
            "waiting_period_threshold": 0, "message_edit_history_visibility_policy": 2,
            "new_stream_announcements_stream": 10, "signup_announcements_stream": null,
            "zulip_update_announcements_stream": null, "moderation_request_channel": null,
            "can_create_public_channel_group": 41, "can_invite_users_group": 3, "plan_type": 1, "org_type": 0
        }],
        "zerver_realmuserdefault": [{"id": 1, "realm": 2, "enter_sends": true, "email_address_visibility": 1}],
        "zerver_userprofile": users,
        "zerver_userprofile_mirrordummy": [],
        "zerver_userprofile_crossrealm": [{"id": 1, "email": "welcome-bot@zulip.com", "recipient_id": 99}],
        "zerver_service": [],
        "zerver_stream": [
            {"id": 10, "realm": 2, "name": "Denmark", "description": "A **public** channel", "invite_only": false,
             "history_public_to_subscribers": true, "is_web_public": false, "deactivated": false, "folder": 1,
             "date_created": 1_500_000_100.0, "creator": iago, "message_retention_days": null,
             "can_send_message_group": 7, "can_remove_subscribers_group": 3},
            {"id": 20, "realm": 2, "name": "secret", "description": "", "invite_only": true,
             "history_public_to_subscribers": false, "is_web_public": false, "deactivated": false, "folder": null,
             "date_created": 1_500_000_200.0, "creator": iago, "message_retention_days": null},
            {"id": 30, "realm": 2, "name": "old plans", "description": "", "invite_only": false,
             "history_public_to_subscribers": true, "is_web_public": false, "deactivated": true, "folder": null,
             "date_created": 1_500_000_300.0, "creator": null, "message_retention_days": null}
        ],
        "zerver_channelfolder": [{"id": 1, "realm": 2, "name": "Engineering", "description": "", "order": 0,
             "date_created": 1_500_000_050.0, "creator": iago, "is_archived": false}],
        "zerver_recipient": [
            {"id": 100, "type": 1, "type_id": iago}, {"id": 101, "type": 1, "type_id": hamlet},
            {"id": 102, "type": 1, "type_id": gone}, {"id": 103, "type": 1, "type_id": bot},
            {"id": 99, "type": 1, "type_id": 1},
            {"id": 110, "type": 2, "type_id": 10}, {"id": 120, "type": 2, "type_id": 20}, {"id": 130, "type": 2, "type_id": 30},
            {"id": 150, "type": 3, "type_id": 5}
        ],
        "zerver_huddle": [{"id": 5, "huddle_hash": "x", "recipient": 150, "group_size": 3}],
        "zerver_subscription": [
            {"id": 1, "user_profile": iago, "recipient": 100, "active": true},
            {"id": 2, "user_profile": hamlet, "recipient": 101, "active": true},
            {"id": 3, "user_profile": iago, "recipient": 110, "active": true, "color": "#76ce90", "pin_to_top": true},
            {"id": 4, "user_profile": hamlet, "recipient": 110, "active": true, "color": "#fae589", "desktop_notifications": true},
            {"id": 5, "user_profile": iago, "recipient": 120, "active": true, "color": "#a6c7e5", "is_muted": true},
            {"id": 6, "user_profile": hamlet, "recipient": 130, "active": false, "color": "#c2c2c2"},
            {"id": 7, "user_profile": iago, "recipient": 150, "active": true},
            {"id": 8, "user_profile": hamlet, "recipient": 150, "active": true},
            {"id": 9, "user_profile": gone, "recipient": 150, "active": true}
        ],
        "zerver_usergroup": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}, {"id": 5}, {"id": 6}, {"id": 7}, {"id": 8}, {"id": 40}, {"id": 41}],
        "zerver_namedusergroup": named,
        "zerver_usergroupmembership": [
            {"id": 1, "user_group": 2, "user_profile": iago}, {"id": 2, "user_group": 40, "user_profile": hamlet},
            {"id": 3, "user_group": 41, "user_profile": hamlet}
        ],
        "zerver_groupgroupmembership": [
            {"id": 1, "supergroup": 40, "subgroup": 3}, {"id": 2, "supergroup": 41, "subgroup": 2}
        ],
        "zerver_customprofilefield": [
            {"id": 1, "realm": 2, "name": "Phone", "hint": "Your phone", "order": 2, "field_type": 1, "field_data": "",
             "display_in_profile_summary": false, "required": false, "editable_by_user": true},
            {"id": 2, "realm": 2, "name": "Mentor", "hint": "", "order": 1, "field_type": 6, "field_data": "",
             "display_in_profile_summary": true, "required": false, "editable_by_user": true}
        ],
        "zerver_customprofilefieldvalue": [
            {"id": 1, "user_profile": hamlet, "field": 1, "value": "+45 1234", "rendered_value": "<p>+45 1234</p>"},
            {"id": 2, "user_profile": hamlet, "field": 2, "value": format!("[{iago}]"), "rendered_value": null}
        ],
        "zerver_defaultstream": [{"id": 1, "realm": 2, "stream": 10}],
        "zerver_realmemoji": [{"id": 7, "realm": 2, "author": iago, "name": "green_tick", "file_name": "7.png", "is_animated": false, "deactivated": false}],
        "zerver_realmfilter": [{"id": 1, "realm": 2, "pattern": "#(?P<id>[0-9]+)", "url_template": "https://github.com/zulip/zulip/issues/{id}", "order": 0}],
        "zerver_reaction": [
            {"id": 1, "message": 1001, "user_profile": hamlet, "emoji_name": "+1", "emoji_code": "1f44d", "reaction_type": "unicode_emoji"},
            {"id": 2, "message": 1001, "user_profile": iago, "emoji_name": "green_tick", "emoji_code": "7", "reaction_type": "realm_emoji"}
        ],
        "zerver_usertopic": [{"id": 1, "user_profile": hamlet, "stream": 10, "recipient": 110, "topic_name": "boring", "last_updated": 1_600_000_000.0, "visibility_policy": 1}],
        "zerver_client": [{"id": 1, "name": "ZulipMobile"}],
        "zerver_realmplayground": [{"id": 3, "realm": 2, "name": "Python playground", "pygments_language": "Python", "url_template": "https://python.example.com?code={code}"}],
        "zerver_realmdomain": [], "zerver_realmauthenticationmethod": [],
        "zerver_userpresence": [], "zerver_useractivity": [], "zerver_useractivityinterval": [],
        "zerver_realmauditlog": [{"id": 1, "realm": 2, "event_type": 215, "event_time": 1_500_000_000.0, "extra_data": {}}]
    });
    write(dir, "realm.json", &realm);
    write(
        dir,
        "migration_status.json",
        &json!({"migrations_by_app": {"zerver": ["[X] 0001_initial"]}, "zulip_version": "11.1"}),
    );
    let path_id = "2/ab/Kp0c9f0uXbq2lH3VvB7Tq1aZ/spec.txt";
    write(
        dir,
        "attachment.json",
        &json!({"zerver_attachment": [{
        "id": 5, "file_name": "spec.txt", "path_id": path_id, "owner": iago, "realm": 2, "create_time": 1_600_000_000.0,
        "size": 12, "content_type": "text/plain", "is_realm_public": true, "is_web_public": false,
        "messages": [1001], "scheduled_messages": []}]}),
    );
    write(
        dir,
        "uploads/records.json",
        &json!([{"realm_id": 2, "user_profile_id": iago, "s3_path": path_id, "path": path_id, "size": 12}]),
    );
    put(dir, &format!("uploads/{path_id}"), b"the spec v1\n");
    write(
        dir,
        "avatars/records.json",
        &json!([{"realm_id": 2, "user_profile_id": hamlet, "avatar_version": 2, "path": "2/abcdef.original", "s3_path": "2/abcdef.original"}]),
    );
    put(dir, "avatars/2/abcdef.original", &crate::realm_emoji::png(64, 64));
    write(
        dir,
        "emoji/records.json",
        &json!([{"realm_id": 2, "author": iago, "path": "2/emoji/images/7.png", "s3_path": "2/emoji/images/7.png", "file_name": "7.png", "name": "green_tick", "deactivated": false}]),
    );
    put(dir, "emoji/2/emoji/images/7.png", &crate::realm_emoji::png(32, 32));

    let mention = format!(
        r#"<p><span class="user-mention" data-user-id="{hamlet}">@King Hamlet</span> hello, see <a href="/user_uploads/{path_id}">spec</a></p>"#
    );
    let mut edited = message(1005, hamlet, 110, "greetings", "fixed words", "<p>fixed words</p>", 1_600_000_500.0);
    edited["last_edit_time"] = json!(1_600_000_600.0);
    edited["edit_history"] = json!(json!([{"user_id": hamlet, "timestamp": 1_600_000_600, "prev_content": "fixd words", "prev_rendered_content": "<p>fixd words</p>"}]).to_string());
    write(
        dir,
        "messages-000001.json",
        &json!({
            "zerver_message": [
                message(1001, iago, 110, "greetings", &format!("@**King Hamlet|{hamlet}** hello, see [spec](/user_uploads/{path_id})"), &mention, 1_600_000_100.0),
                message(1002, iago, 101, "", "a direct word", "<p>a direct word</p>", 1_600_000_200.0),
                message(1003, hamlet, 150, "", "to the three of us", "<p>to the three of us</p>", 1_600_000_300.0),
                message(1004, iago, 120, "plans", "top secret", "<p>top secret</p>", 1_600_000_400.0),
                edited
            ],
            "zerver_usermessage": [
                {"id": 1, "user_profile": iago, "message": 1001, "flags_mask": 1},
                {"id": 2, "user_profile": hamlet, "message": 1001, "flags_mask": 8 | 2},
                {"id": 3, "user_profile": iago, "message": 1002, "flags_mask": 1 | 2048},
                {"id": 4, "user_profile": hamlet, "message": 1002, "flags_mask": 2048},
                {"id": 5, "user_profile": iago, "message": 1003, "flags_mask": 2048},
                {"id": 6, "user_profile": hamlet, "message": 1003, "flags_mask": 1 | 2048},
                {"id": 7, "user_profile": gone, "message": 1003, "flags_mask": 2048},
                {"id": 8, "user_profile": iago, "message": 1004, "flags_mask": 1},
                {"id": 9, "user_profile": iago, "message": 1005, "flags_mask": 0},
                {"id": 10, "user_profile": hamlet, "message": 1005, "flags_mask": 1}
            ]
        }),
    );
    write(
        dir,
        "messages-000002.json",
        &json!({
            "zerver_message": [message(1006, hamlet, 110, "greetings", "the xylophone is tuned", "<p>the xylophone is tuned</p>", 1_600_000_700.0)],
            "zerver_usermessage": [
                {"id": 11, "user_profile": iago, "message": 1006, "flags_mask": 0},
                {"id": 12, "user_profile": hamlet, "message": 1006, "flags_mask": 1}
            ]
        }),
    );
}

/// Runs `agora import zulip` against the server's data directory.
async fn import(app: &TestApp, input: &Path, subdomain: &str) -> std::process::Output {
    let input = input.display().to_string();
    agora(&app.data_dir, &["import", "zulip", &input, "--subdomain", subdomain, "--external-host", "agora.test"]).await
}

#[actix_web::test]
async fn a_zulip_export_becomes_an_organization_on_a_running_server() {
    let app = spawn_app().await;
    // The server is asked for the subdomain before it exists (and remembers that it does not).
    let before = app.request_to(HOST, Method::GET, "/server_settings").send().await.unwrap();
    assert_eq!(before.status(), 404);
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let out = import(&app, export.path(), SUB).await;
    let summary = crate::cli::printed(&out);
    assert_eq!(
        (
            summary["users"].as_i64(),
            summary["channels"].as_i64(),
            summary["messages"].as_i64(),
            summary["reactions"].as_i64(),
            summary["uploads"].as_i64()
        ),
        (Some(4), Some(3), Some(6), Some(2), Some(1)),
        "{summary}"
    );
    let settings = json(app.request_to(HOST, Method::GET, "/server_settings").send().await.unwrap()).await.1;
    assert_eq!(settings["realm_name"], "Zulip Dev");

    let iago = creds(&app, SUB, "iago@zulip.test").await;
    let hamlet = creds(&app, SUB, "hamlet@zulip.test").await;
    let me = get(&app, &hamlet, "/users/me").await;
    assert_eq!(
        (me["full_name"].as_str(), me["role"].as_i64(), me["timezone"].as_str()),
        (Some("King Hamlet"), Some(400), Some("Europe/Copenhagen"))
    );
    assert!(me["avatar_url"].as_str().unwrap().contains("/user_avatars/"), "{me}");
    let users =
        get(&app, &iago, "/users?include_custom_profile_fields=true").await["members"].as_array().unwrap().clone();
    let by_email =
        |e: &str| users.iter().find(|u| u["email"] == e).cloned().unwrap_or_else(|| panic!("{e} in {users:?}"));
    assert_eq!(by_email("iago@zulip.test")["role"], 100);
    assert_eq!(by_email("gone@zulip.test")["is_active"], false);
    let bot = by_email("helper-bot@zulip.test");
    assert_eq!((bot["is_bot"].as_bool(), bot["bot_owner_id"].as_i64()), (Some(true), Some(hamlet.user_id)));
    // Profile fields in their order, with a person picker naming the new id.
    let fields = get(&app, &iago, "/realm/profile_fields").await["custom_fields"].as_array().unwrap().clone();
    let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Mentor", "Phone"]);
    let profile = by_email("hamlet@zulip.test")["profile_data"].clone();
    let mentor = fields[0]["id"].to_string();
    assert_eq!(profile[&mentor]["value"], json!(format!("[{}]", iago.user_id)), "{profile} {fields:?}");

    // Channels: names, privacy, archive, folder, subscriptions with their colours.
    let subs = get(&app, &iago, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    let denmark = subs.iter().find(|s| s["name"] == "Denmark").unwrap().clone();
    assert_eq!((denmark["color"].as_str(), denmark["pin_to_top"].as_bool()), (Some("#76ce90"), Some(true)));
    assert_eq!(denmark["rendered_description"], "<p>A <strong>public</strong> channel</p>");
    assert!(denmark["folder_id"].is_i64());
    let secret = subs.iter().find(|s| s["name"] == "secret").unwrap();
    assert_eq!((secret["invite_only"].as_bool(), secret["is_muted"].as_bool()), (Some(true), Some(true)));
    let hamlet_subs = get(&app, &hamlet, "/users/me/subscriptions").await["subscriptions"].as_array().unwrap().clone();
    assert_eq!(hamlet_subs.iter().map(|s| s["name"].as_str().unwrap()).collect::<Vec<_>>(), ["Denmark"]);
    let archived = get(&app, &iago, "/streams?include_all=true&exclude_archived=false").await["streams"]
        .as_array()
        .unwrap()
        .clone();
    assert!(archived.iter().any(|s| s["name"] == "old plans" && s["is_archived"] == true), "{archived:?}");

    // Messages: HTML with the new ids, flags, reactions, edits, direct conversations.
    let feed = messages(&app, &hamlet, "[]").await;
    let contents: Vec<&str> = feed.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(contents.len(), 5, "hamlet sees all but the private channel's message: {contents:?}");
    let first = &feed[0];
    assert!(first["content"].as_str().unwrap().contains(&format!("data-user-id=\"{}\"", hamlet.user_id)), "{first}");
    assert!(first["content"].as_str().unwrap().contains("/user_uploads/"), "{first}");
    assert_eq!(first["flags"], json!(["starred", "mentioned"]));
    assert_eq!(first["client"], "ZulipMobile");
    let mut reactions: Vec<(&str, &str)> = first["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["emoji_name"].as_str().unwrap(), r["reaction_type"].as_str().unwrap()))
        .collect();
    reactions.sort();
    assert_eq!(reactions, [("+1", "unicode_emoji"), ("green_tick", "realm_emoji")]);
    let edited = feed.iter().find(|m| m["content"] == "<p>fixed words</p>").unwrap();
    assert_eq!(edited["last_edit_timestamp"], 1_600_000_600);
    let dms = messages(&app, &hamlet, r#"[{"operator": "is", "operand": "dm"}]"#).await;
    let dm_recipients: Vec<usize> = dms.iter().map(|m| m["display_recipient"].as_array().unwrap().len()).collect();
    assert_eq!(dm_recipients, [2, 3]);
    // Search finds imported words; unread counts are as they were.
    let found = messages(&app, &iago, r#"[{"operator": "search", "operand": "xylophone"}]"#).await;
    assert_eq!(found.len(), 1);
    let register = json(
        app.as_user(&iago, Method::POST, "/register")
            .form(&[("fetch_event_types", r#"["message","update_message_flags"]"#)])
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    assert_eq!(register["unread_msgs"]["count"], 3, "{}", register["unread_msgs"]);
    // The upload is there for a member.
    let link =
        first["content"].as_str().unwrap().split("href=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let file = app
        .client
        .get(format!("{}{link}", app.address))
        .header("Host", HOST)
        .basic_auth(&hamlet.email, Some(&hamlet.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200, "{link}");
    assert_eq!(file.text().await.unwrap(), "the spec v1\n");
    // Muted topic, linkifier, playground, emoji, default channel, group with its subgroup.
    let topics = json(
        app.as_user(&hamlet, Method::POST, "/register")
            .form(&[
                (
                    "fetch_event_types",
                    r#"["user_topic","realm_linkifiers","realm_playgrounds","realm_emoji","default_streams","realm_user_groups"]"#,
                ),
                ("client_capabilities", r#"{"notification_settings_null": false, "linkifier_url_template": true}"#),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    assert_eq!(topics["user_topics"][0]["topic_name"], "boring", "{}", topics["msg"]);
    assert_eq!(topics["realm_linkifiers"][0]["pattern"], "#(?P<id>[0-9]+)", "{topics}");
    let playground = &topics["realm_playgrounds"][0];
    assert_eq!(
        (playground["name"].as_str(), playground["pygments_language"].as_str(), playground["url_template"].as_str()),
        (Some("Python playground"), Some("Python"), Some("https://python.example.com?code={code}"))
    );
    assert!(topics["realm_emoji"].as_object().unwrap().values().any(|e| e["name"] == "green_tick"));
    assert_eq!(topics["realm_default_streams"].as_array().unwrap().len(), 1);
    let support =
        topics["realm_user_groups"].as_array().unwrap().iter().find(|g| g["name"] == "support").unwrap().clone();
    assert_eq!(support["members"], json!([hamlet.user_id]));
    assert_eq!(support["direct_subgroup_ids"].as_array().unwrap().len(), 1);
    app.stop().await;
}

#[actix_web::test]
async fn a_bad_export_says_what_is_wrong_and_leaves_nothing() {
    let app = spawn_app().await;
    let realms_before = crate::cli::printed(&agora(&app.data_dir, &["list-realms"]).await);
    type Spoil = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Spoil, &str)> = vec![
        (
            "not JSON",
            Box::new(|d: &Path| std::fs::write(d.join("realm.json"), "{\"zerver_realm\": [").unwrap()),
            "realm.json: line 1, column 18: the file ends early (is it cut short?)",
        ),
        (
            "an unknown sender",
            Box::new(|d: &Path| {
                let path = d.join("messages-000002.json");
                let text = std::fs::read_to_string(&path).unwrap().replace("\"sender\": 12", "\"sender\": 77");
                std::fs::write(path, text).unwrap();
            }),
            "message 1006: its sender 77 is not a user",
        ),
        (
            "an old Zulip",
            Box::new(|d: &Path| write(d, "migration_status.json", &json!({"zulip_version": "8.4"}))),
            "migration_status.json: the export was made by Zulip \"8.4\"; Agora reads exports of Zulip 10 to 12",
        ),
        (
            "no export at all",
            Box::new(|d: &Path| std::fs::remove_file(d.join("realm.json")).unwrap()),
            "no realm.json: this is not a Zulip export (made by `manage.py export`)",
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
        let uploads = app.data_dir.join("uploads");
        let left: Vec<_> = std::fs::read_dir(&uploads)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.iter().all(|n| n == "tmp" || n == "user_avatars"), "{what}: {left:?}");
    }
    // A subdomain in use.
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let out = import(&app, export.path(), "").await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("the subdomain \"\" is in use by another organization"));
    app.stop().await;
}

/// Packs an export directory as `manage.py export` does: one top directory in a .tar.gz.
fn pack(dir: &Path, into: &Path) {
    let file = std::fs::File::create(into).unwrap();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::fast()));
    tar.append_dir_all("zulip-export-k3j9x0ab", dir).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

#[actix_web::test]
async fn an_archive_imports_on_a_stopped_server_and_stays_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    let archive = export.path().join("export.tar.gz");
    let packed = tempfile::tempdir().unwrap();
    pack(export.path(), &packed.path().join("zulip.tar.gz"));
    std::fs::rename(packed.path().join("zulip.tar.gz"), &archive).unwrap();

    // A truncated archive is refused, and leaves nothing.
    let bytes = std::fs::read(&archive).unwrap();
    let cut = packed.path().join("cut.tar.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = agora(data.path(), &["import", "zulip", cut.to_str().unwrap(), "--subdomain", SUB]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cut.tar.gz: ") && stderr.contains("the archive ends early (is it cut short?)"),
        "{stderr}"
    );
    assert_eq!(crate::cli::printed(&agora(data.path(), &["list-realms"]).await), json!({"realms": []}));
    let left: Vec<_> = std::fs::read_dir(data.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("import-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let out = agora(
        data.path(),
        &["import", "zulip", archive.to_str().unwrap(), "--subdomain", SUB, "--send-password-resets"],
    )
    .await;
    let summary = crate::cli::printed(&out);
    assert_eq!((summary["messages"].as_i64(), summary["reset_mails"].as_i64()), (Some(6), Some(2)), "{summary}");
    // Without a terminal, progress is told in plain lines.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("import: unpacking...") && stderr.contains("import: messages: 6"), "{stderr}");
    // The reset mails wait in the outbox (no SMTP server is set up).
    for round in 0..2 {
        let app = crate::helpers::spawn_app_at(data.path()).await;
        let iago = creds(&app, SUB, "iago@zulip.test").await;
        let feed = messages(&app, &iago, "[]").await;
        assert_eq!(feed.len(), 6, "round {round}");
        let found = messages(&app, &iago, r#"[{"operator": "search", "operand": "xylophone"}]"#).await;
        assert_eq!(found.len(), 1, "round {round}");
        app.stop().await;
    }
    let outbox = data.path().join("outbox");
    let mails = std::fs::read_dir(&outbox).map(|d| d.count()).unwrap_or(0);
    assert_eq!(mails, 2, "one reset mail for each active person");
}

/// What a person sees of an organization, with ids (which an import changes) left out:
/// the people, the channels, every message with its reactions and flags, the unread counts.
async fn seen_by(app: &TestApp, who: &Creds) -> Value {
    let strip_ids =
        regex::Regex::new(r#"(data-user-id="|data-stream-id="|/user_uploads/|#narrow/channel/)\d+"#).unwrap();
    let members =
        get(app, who, "/users?include_custom_profile_fields=true").await["members"].as_array().unwrap().clone();
    let email_of =
        |id: &Value| members.iter().find(|u| u["user_id"] == *id).map(|u| u["email"].clone()).unwrap_or(Value::Null);
    let mut users: Vec<Value> = members
        .iter()
        .map(|u| {
            // A person picker names people by id: by address here.
            let profile: Vec<Value> = u["profile_data"]
                .as_object()
                .map(|p| {
                    p.values()
                        .map(|v| match serde_json::from_str::<Vec<Value>>(v["value"].as_str().unwrap_or("")) {
                            Ok(ids) => json!(ids.iter().map(&email_of).collect::<Vec<_>>()),
                            Err(_) => v.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!([u["email"], u["full_name"], u["role"], u["is_active"], u["is_bot"], u["timezone"], profile])
        })
        .collect();
    users.sort_by_key(|u| u.to_string());
    let mut streams: Vec<Value> = get(app, who, "/streams?exclude_archived=false").await["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json!([s["name"], s["description"], s["invite_only"], s["is_archived"], s["history_public_to_subscribers"]])
        })
        .collect();
    streams.sort_by_key(|s| s.to_string());
    let messages: Vec<Value> = messages(app, who, "[]")
        .await
        .iter()
        .map(|m| {
            let mut reactions: Vec<String> = m["reactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["emoji_name"].as_str().unwrap().to_owned())
                .collect();
            reactions.sort();
            let content = strip_ids.replace_all(m["content"].as_str().unwrap(), "${1}N").into_owned();
            json!([
                m["sender_email"],
                m["subject"],
                content,
                m["timestamp"],
                m["flags"],
                reactions,
                m["client"],
                m["last_edit_timestamp"]
            ])
        })
        .collect();
    let register = json(
        app.as_user(who, Method::POST, "/register")
            .form(&[("fetch_event_types", r#"["message","update_message_flags"]"#)])
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    json!({"users": users, "streams": streams, "messages": messages, "unread": register["unread_msgs"]["count"]})
}

#[actix_web::test]
async fn an_organization_exported_and_imported_again_is_the_same() {
    let app = spawn_app().await;
    let export = tempfile::tempdir().unwrap();
    write_export(export.path());
    crate::cli::printed(&import(&app, export.path(), SUB).await);
    let archive = export.path().join("agora-export.tar.gz");
    let out = agora(&app.data_dir, &["export", "--subdomain", SUB, "--to", archive.to_str().unwrap()]).await;
    let written = crate::cli::printed(&out);
    assert_eq!(
        (
            written["users"].as_i64(),
            written["channels"].as_i64(),
            written["messages"].as_i64(),
            written["uploads"].as_i64()
        ),
        (Some(4), Some(3), Some(6), Some(1)),
        "{written}"
    );
    zulip_can_read(&archive);
    // An existing file is never overwritten.
    let again = agora(&app.data_dir, &["export", "--subdomain", SUB, "--to", archive.to_str().unwrap()]).await;
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));

    let out = agora(
        &app.data_dir,
        &["import", "zulip", archive.to_str().unwrap(), "--subdomain", "copy", "--external-host", "agora.test"],
    )
    .await;
    crate::cli::printed(&out);
    for email in ["iago@zulip.test", "hamlet@zulip.test"] {
        let original = creds(&app, SUB, email).await;
        let out = agora(&app.data_dir, &["reset-api-key", "--subdomain", "copy", "--user", email]).await;
        let printed = crate::cli::printed(&out);
        let copy = Creds {
            api_key: printed["api_key"].as_str().unwrap().to_owned(),
            user_id: printed["user_id"].as_i64().unwrap(),
            host: "copy.agora.test".into(),
            ..original.clone()
        };
        assert_eq!(seen_by(&app, &copy).await, seen_by(&app, &original).await, "{email}");
    }
    app.stop().await;
}

/// Checks an archive against what Zulip's `manage.py import` reads without a default
/// (`zerver/lib/import_realm.py`): the top-level tables, the keys it takes from each row,
/// float datetimes, `flags_mask`, the upload records every attachment names.
fn zulip_can_read(archive: &Path) {
    let unpacked = tempfile::tempdir().unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(archive).unwrap()))
        .unpack(unpacked.path())
        .unwrap();
    let tops: Vec<_> = std::fs::read_dir(unpacked.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(tops.len(), 1, "one top directory: {tops:?}");
    let dir = &tops[0];
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("zulip-export-"));
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))).unwrap()
    };
    let realm = read("realm.json");
    for key in [
        "zerver_realm",
        "zerver_userprofile",
        "zerver_userprofile_mirrordummy",
        "zerver_userprofile_crossrealm",
        "zerver_stream",
        "zerver_huddle",
        "zerver_recipient",
        "zerver_subscription",
        "zerver_client",
        "zerver_defaultstream",
        "zerver_realmemoji",
        "zerver_realmdomain",
        "zerver_realmfilter",
        "zerver_realmplayground",
        "zerver_realmauthenticationmethod",
        "zerver_userpresence",
        "zerver_useractivity",
        "zerver_useractivityinterval",
        "zerver_customprofilefield",
        "zerver_customprofilefieldvalue",
        "zerver_reaction",
        "zerver_usergroup",
        "zerver_namedusergroup",
        "zerver_usergroupmembership",
        "zerver_groupgroupmembership",
    ] {
        assert!(realm[key].is_array(), "realm.json lacks {key}");
    }
    assert_eq!(realm["import_source"], "zulip");
    let row = &realm["zerver_realm"][0];
    for key in [
        "id",
        "date_created",
        "deactivated",
        "moderation_request_channel",
        "new_stream_announcements_stream",
        "signup_announcements_stream",
        "zulip_update_announcements_stream",
        "can_create_public_channel_group",
        "can_invite_users_group",
    ] {
        assert!(row.get(key).is_some(), "zerver_realm lacks {key}");
    }
    assert!(row["date_created"].is_f64());
    assert!(row["can_create_public_channel_group"].is_i64(), "group settings name groups by id");
    for user in realm["zerver_userprofile"].as_array().unwrap() {
        for key in [
            "id",
            "email",
            "delivery_email",
            "realm",
            "bot_owner",
            "default_sending_stream",
            "default_events_register_stream",
            "last_active_message_id",
            "date_joined",
            "last_login",
            "last_reminder",
            "groups",
            "user_permissions",
            "role",
            "full_name",
        ] {
            assert!(user.get(key).is_some(), "zerver_userprofile lacks {key}: {user}");
        }
        assert!(user.get("api_key").is_none() && user.get("password").is_none(), "no secrets in an export");
    }
    for stream in realm["zerver_stream"].as_array().unwrap() {
        for key in ["id", "name", "realm", "creator", "date_created", "description", "folder", "can_send_message_group"]
        {
            assert!(stream.get(key).is_some(), "zerver_stream lacks {key}");
        }
    }
    let every_group: Vec<&Value> = realm["zerver_usergroup"].as_array().unwrap().iter().map(|g| &g["id"]).collect();
    for group in realm["zerver_namedusergroup"].as_array().unwrap() {
        for key in [
            "can_add_members_group",
            "can_join_group",
            "can_leave_group",
            "can_manage_group",
            "can_mention_group",
            "can_remove_members_group",
        ] {
            assert!(every_group.contains(&&group[key]), "{key} of {} names a group of zerver_usergroup", group["name"]);
        }
    }
    let messages = read("messages-000001.json");
    for m in messages["zerver_message"].as_array().unwrap() {
        for key in [
            "id",
            "sender",
            "recipient",
            "sending_client",
            "realm",
            "date_sent",
            "last_edit_time",
            "has_attachment",
            "content",
            "rendered_content",
            "subject",
        ] {
            assert!(m.get(key).is_some(), "zerver_message lacks {key}");
        }
        assert!(m["date_sent"].is_f64());
    }
    assert!(messages["zerver_usermessage"]
        .as_array()
        .unwrap()
        .iter()
        .all(|u| u["flags_mask"].is_i64() && u.get("flags").is_none()));
    let recipients = realm["zerver_recipient"].as_array().unwrap();
    let dm = messages["zerver_message"].as_array().unwrap().iter().find(|m| m["content"] == "a direct word").unwrap();
    let to = recipients.iter().find(|r| r["id"] == dm["recipient"]).unwrap();
    assert_eq!(to["type"], 1, "a direct message goes to its recipient's personal recipient");
    let group =
        messages["zerver_message"].as_array().unwrap().iter().find(|m| m["content"] == "to the three of us").unwrap();
    assert_eq!(recipients.iter().find(|r| r["id"] == group["recipient"]).unwrap()["type"], 3);
    let uploads = read("uploads/records.json");
    for a in read("attachment.json")["zerver_attachment"].as_array().unwrap() {
        assert!(a["messages"].is_array() && a["scheduled_messages"].is_array());
        let record = uploads
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["s3_path"] == a["path_id"])
            .expect("every attachment has its upload record");
        assert!(dir.join("uploads").join(record["path"].as_str().unwrap()).is_file());
    }
    for name in ["avatars/records.json", "emoji/records.json", "realm_icons/records.json"] {
        assert!(read(name).is_array(), "{name}");
    }
    assert_eq!(read("migration_status.json")["zulip_version"], "11.0");
}
