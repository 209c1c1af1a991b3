//! The administration commands (`agora list-realms`, `list-users`, `change-role`,
//! `deactivate-user`, `reactivate-user`, `reset-password`, `reset-api-key`,
//! `set-realm-settings`, `create-invite-link`, `revoke-invite-link`, `stats`): with a
//! server running they go through its realm actors (memory and events follow at once),
//! without one they change the database the next server starts from.

use std::path::Path;
use std::process::Output;

use reqwest::Method;
use serde_json::{json, Value};

use crate::cli::{agora, printed};
use crate::helpers::{json, spawn_app, spawn_app_at, Creds, TestApp, Watch};

/// The reason a command failed with exit code 1 (nothing on stdout).
fn failed(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr.clone()).unwrap()
}

async fn me(app: &TestApp, who: &Creds) -> (u16, Value) {
    json(app.as_user(who, Method::GET, "/users/me").send().await.unwrap()).await
}

async fn login(app: &TestApp, email: &str, password: &str) -> u16 {
    let form = [("username", email), ("password", password)];
    app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap().status().as_u16()
}

async fn run(dir: &Path, args: &[&str]) -> Value {
    printed(&agora(dir, args).await)
}

#[actix_web::test]
async fn commands_on_a_running_server_go_through_the_realm_actor() {
    let app = spawn_app().await;
    let dir = app.data_dir.clone();
    let mut bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    let mut watch = Watch::new(&app, &app.owner, r#"["realm_user", "realm"]"#).await;

    let realms = run(&dir, &["list-realms"]).await;
    let realm = &realms["realms"][0];
    assert_eq!(realms["realms"].as_array().unwrap().len(), 1);
    assert_eq!(
        (&realm["subdomain"], &realm["name"], &realm["active_humans"], &realm["running"], &realm["deactivated"]),
        (&json!(""), &json!("Agora"), &json!(2), &json!(true), &json!(false))
    );

    let users = run(&dir, &["list-users", "--subdomain", ""]).await;
    let listed: Vec<(i64, &str, &str)> = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["user_id"].as_i64().unwrap(), u["email"].as_str().unwrap(), u["role"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [(1, app.owner.email.as_str(), "owner"), (bob.user_id, "bob@agora.test", "member")]);

    // A role: the server's memory and every client know at once.
    let out = run(&dir, &["change-role", "--subdomain", "", "--user", "BOB@agora.test", "--role", "moderator"]).await;
    assert_eq!(out, json!({"user_id": bob.user_id, "old_role": "member", "role": "moderator"}));
    assert_eq!(me(&app, &bob).await.1["role"], 300);
    let events = watch.events(&app).await;
    assert_eq!(
        events[0],
        json!({"type": "realm_user", "op": "update", "person": {"user_id": bob.user_id, "role": 300}})
    );

    // A new API key: the old one stops working.
    let out = run(&dir, &["reset-api-key", "--subdomain", "", "--user", &bob.user_id.to_string()]).await;
    let old = bob.clone();
    bob.api_key = out["api_key"].as_str().unwrap().to_owned();
    assert_eq!(out, json!({"user_id": bob.user_id, "api_key": bob.api_key}));
    assert_eq!(me(&app, &old).await.0, 401);
    assert_eq!(me(&app, &bob).await.0, 200);

    // A password, generated and printed, or given.
    let out = run(&dir, &["reset-password", "--subdomain", "", "--user", "bob@agora.test"]).await;
    let password = out["password"].as_str().unwrap();
    assert_eq!((out["user_id"].as_i64(), password.len()), (Some(bob.user_id), 20));
    assert_eq!(login(&app, "bob@agora.test", password).await, 200);
    let out =
        run(&dir, &["reset-password", "--subdomain", "", "--user", "bob@agora.test", "--password", "n3w-s3cret"]).await;
    assert_eq!(out, json!({"user_id": bob.user_id}));
    assert_eq!(login(&app, "bob@agora.test", "n3w-s3cret").await, 200);
    assert_eq!(login(&app, "bob@agora.test", password).await, 401);

    // Deactivation: the key stops at once, everyone hears of it; then back.
    let out = run(&dir, &["deactivate-user", "--subdomain", "", "--user", "bob@agora.test"]).await;
    assert_eq!(out, json!({"user_id": bob.user_id, "is_active": false}));
    let (status, body) = me(&app, &bob).await;
    assert_eq!((status, &body["msg"]), (401, &json!("Account is deactivated")));
    let reason = failed(&agora(&dir, &["deactivate-user", "--subdomain", "", "--user", "bob@agora.test"]).await);
    assert!(reason.contains("User is already deactivated"), "{reason}");
    let out = run(&dir, &["reactivate-user", "--subdomain", "", "--user", "bob@agora.test"]).await;
    assert_eq!(out, json!({"user_id": bob.user_id, "is_active": true}));
    assert_eq!(me(&app, &bob).await.0, 200);
    let events = watch.events(&app).await;
    let active: Vec<&Value> = events.iter().map(|e| &e["person"]["is_active"]).collect();
    assert_eq!(active, [&json!(false), &json!(true)]);

    // Organization settings, as PATCH /realm changes them.
    let out = run(
        &dir,
        &["set-realm-settings", "--subdomain", "", "--set", "name=Agora Inc", "--set", "invite_required=false"],
    )
    .await;
    assert_eq!(out, json!({"realm_id": 1, "changed": {"name": "updated", "invite_required": false}}));
    let (_, settings) = json(app.request(Method::GET, "/server_settings").send().await.unwrap()).await;
    assert_eq!(settings["realm_name"], "Agora Inc");
    let events = watch.events(&app).await;
    assert_eq!(events[0], json!({"type": "realm", "op": "update", "property": "name", "value": "Agora Inc"}));

    let stats = run(&dir, &["stats"]).await;
    assert_eq!(stats["server_running"], true);
    let realm = &stats["realms"][0];
    assert_eq!(
        (
            &realm["subdomain"],
            &realm["active_users"],
            &realm["event_queues"],
            &realm["waiting_polls"],
            &realm["mailbox"]
        ),
        (&json!(""), &json!(2), &json!(1), &json!(0), &json!(0))
    );
    // Bob, the owner and the system bots.
    assert!(stats["database"]["tables"]["users"].as_i64().unwrap() >= 2);
    assert!(stats["database"]["tables"]["messages"].is_i64());
    assert!(stats["database"]["bytes"].as_u64().unwrap() > 0);
    assert_eq!(stats["uploads"], json!({"files": 0, "bytes": 0}));

    // Refusals: exit 1 with the reason.
    for (args, reason) in [
        (&["list-users", "--subdomain", "nowhere"][..], "No organization with subdomain \"nowhere\""),
        (&["deactivate-user", "--subdomain", "", "--user", "1"], "Cannot deactivate the only organization owner"),
        (
            &["change-role", "--subdomain", "", "--user", "ghost@agora.test", "--role", "member"],
            "No such user: ghost@agora.test",
        ),
        (&["set-realm-settings", "--subdomain", "", "--set", "colour=blue"], "Unknown organization setting: colour"),
        (&["create-invite-link", "--subdomain", "", "--channel", "nowhere"], "Invalid channel: nowhere"),
        (&["revoke-invite-link", "--subdomain", "", "--id", "999"], "No such invitation"),
    ] {
        let reason_got = failed(&agora(&dir, args).await);
        assert!(reason_got.contains(reason), "{args:?}: {reason_got}");
    }
    // A reusable invitation link, made in an owner's name, listed by the API, then revoked.
    let mut invites = Watch::new(&app, &app.owner, r#"["invites_changed"]"#).await;
    let out = run(&dir, &["create-invite-link", "--subdomain", "", "--role", "guest", "--never-expires"]).await;
    let (id, link) = (out["invite_id"].as_i64().unwrap(), out["link"].as_str().unwrap().to_owned());
    assert_eq!(out, json!({"invite_id": id, "link": link, "expires_in_minutes": null}));
    assert!(link.starts_with("http://agora.test/join/"), "{link}");
    let (_, listed) = json(app.as_user(&app.owner, Method::GET, "/invites").send().await.unwrap()).await;
    let listed = &listed["invites"][0];
    assert_eq!((&listed["id"], &listed["link_url"], &listed["invited_as"]), (&json!(id), &json!(link), &json!(600)));
    assert_eq!(listed["invited_by_user_id"], app.owner.user_id);
    let out = run(&dir, &["create-invite-link", "--subdomain", "", "--expires-in-minutes", "60"]).await;
    assert_eq!(out["expires_in_minutes"], 60);
    let out = run(&dir, &["revoke-invite-link", "--subdomain", "", "--id", &id.to_string()]).await;
    assert_eq!(out, json!({"invite_id": id, "revoked": true}));
    let again = failed(&agora(&dir, &["revoke-invite-link", "--subdomain", "", "--id", &id.to_string()]).await);
    assert!(again.contains("Invitation has already been revoked"), "{again}");
    assert_eq!(invites.events(&app).await, vec![json!({"type": "invites_changed"}); 3]);

    // Malformed arguments: exit 2, as every usage error.
    let out = agora(&dir, &["set-realm-settings", "--subdomain", "", "--set", "name"]).await;
    assert_eq!(out.status.code(), Some(2));
    app.stop().await;
}

#[actix_web::test]
async fn commands_without_a_server_change_what_the_next_one_serves() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol Chen", 400).await;
    let owner = app.owner.clone();
    // A queue saved at shutdown.
    Watch::new(&app, &owner, r#"["message"]"#).await;
    let tmp = app.stop().await.unwrap();
    let dir = tmp.path().to_owned();

    let realms = run(&dir, &["list-realms"]).await;
    assert_eq!((&realms["realms"][0]["running"], &realms["realms"][0]["active_humans"]), (&json!(false), &json!(3)));
    let users = run(&dir, &["list-users", "--subdomain", ""]).await;
    assert_eq!(users["users"].as_array().unwrap().len(), 3);
    run(&dir, &["change-role", "--subdomain", "", "--user", "bob@agora.test", "--role", "administrator"]).await;
    run(&dir, &["deactivate-user", "--subdomain", "", "--user", "carol@agora.test"]).await;
    let key = run(&dir, &["reset-api-key", "--subdomain", "", "--user", "bob@agora.test"]).await;
    let password = run(&dir, &["reset-password", "--subdomain", "", "--user", "bob@agora.test"]).await;
    run(&dir, &["set-realm-settings", "--subdomain", "", "--set", "name=Offline Edit"]).await;
    let link = run(&dir, &["create-invite-link", "--subdomain", "", "--role", "moderator"]).await;
    let stats = run(&dir, &["stats"]).await;
    assert_eq!(
        (&stats["server_running"], &stats["realms"], &stats["saved_event_queues"]),
        (&json!(false), &json!([]), &json!([{"realm_id": 1, "queues": 1}]))
    );
    let reason = failed(&agora(&dir, &["reactivate-user", "--subdomain", "", "--user", "bob@agora.test"]).await);
    assert!(reason.contains("User is already active"), "{reason}");

    let app = spawn_app_at(&dir).await;
    let bob = Creds { api_key: key["api_key"].as_str().unwrap().to_owned(), ..bob };
    let (status, me_bob) = me(&app, &bob).await;
    assert_eq!((status, &me_bob["role"]), (200, &json!(200)));
    assert_eq!(me(&app, &carol).await.0, 401);
    assert_eq!(login(&app, "bob@agora.test", password["password"].as_str().unwrap()).await, 200);
    let (_, settings) = json(app.request(Method::GET, "/server_settings").send().await.unwrap()).await;
    assert_eq!(settings["realm_name"], "Offline Edit");
    let (_, invites) = json(app.as_user(&owner, Method::GET, "/invites").send().await.unwrap()).await;
    assert_eq!(invites["invites"][0]["id"], link["invite_id"]);
    // The command printed the link with its own settings' host (the default here).
    let key = |l: &Value| l.as_str().unwrap().rsplit("/join/").next().unwrap().to_owned();
    assert_eq!(key(&invites["invites"][0]["link_url"]), key(&link["link"]));
    app.stop().await;
    drop(tmp);
}
