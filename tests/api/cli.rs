//! The `agora` command line: help, and the administrative commands with and without a
//! running server.

use std::path::Path;
use std::process::Output;

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{json, spawn_app, spawn_app_at, Creds, HOST};

/// Runs `agora` with `args` on a blocking thread (the test's own thread serves the admin
/// socket).
pub async fn agora(data_dir: &Path, args: &[&str]) -> Output {
    // Cheap hashing for the passwords the command hashes itself.
    let config = data_dir.join("test-agora.toml");
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::write(&config, "[password_hash]\nmemory_kib = 8\niterations = 1\nparallelism = 1\n").unwrap();
    let mut full: Vec<String> =
        vec!["--data-dir".into(), data_dir.display().to_string(), "--config".into(), config.display().to_string()];
    full.extend(args.iter().map(|s| s.to_string()));
    actix_web::web::block(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agora")).args(&full).env_remove("RUST_LOG").output().unwrap()
    })
    .await
    .unwrap()
}

pub fn printed(out: &Output) -> Value {
    assert!(out.status.success(), "agora failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    serde_json::from_str(&stdout).unwrap()
}

fn creds_from(v: &Value, email: &str, password: &str, sub: &str) -> Creds {
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["realm_id", "user_id", "api_key"]);
    Creds {
        email: email.into(),
        password: password.into(),
        api_key: v["api_key"].as_str().unwrap().into(),
        user_id: v["user_id"].as_i64().unwrap(),
        host: if sub.is_empty() { HOST.into() } else { format!("{sub}.{HOST}") },
    }
}

#[actix_web::test]
async fn help_documents_every_command() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora")).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for word in [
        "serve",
        "create-realm",
        "create-user",
        "backup",
        "restore",
        "list-realms",
        "list-users",
        "change-role",
        "deactivate-user",
        "reactivate-user",
        "reset-password",
        "reset-api-key",
        "set-realm-settings",
        "create-invite-link",
        "revoke-invite-link",
        "stats",
        "--data-dir",
        "--bind",
        "--external-host",
        "--config",
        "--metrics-bind",
        "--synchronous",
        "--log-format",
    ] {
        assert!(help.contains(word), "--help lacks {word}:\n{help}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora")).args(["create-user", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for word in ["--subdomain", "--email", "--password", "--full-name", "--role", "--can-create-users"] {
        assert!(help.contains(word), "create-user --help lacks {word}:\n{help}");
    }
}

#[actix_web::test]
async fn agora_alone_says_how_to_run_it_and_tells_its_version() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let usage = String::from_utf8(out.stderr).unwrap();
    assert!(usage.contains("agora serve") && usage.contains("agora --help"), "{usage}");
    assert!(usage.lines().count() < 10, "short: {usage}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora")).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("agora {}\n", env!("CARGO_PKG_VERSION")));
}

#[actix_web::test]
async fn commands_work_without_a_server_and_their_results_persist() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let root = printed(
        &agora(
            &dir,
            &[
                "create-realm",
                "--subdomain",
                "",
                "--name",
                "Main",
                "--owner-email",
                "me@agora.test",
                "--owner-password",
                "pw-me",
            ],
        )
        .await,
    );
    let root = creds_from(&root, "me@agora.test", "pw-me", "");
    let acme = printed(
        &agora(
            &dir,
            &[
                "create-realm",
                "--subdomain",
                "acme",
                "--name",
                "Acme",
                "--owner-email",
                "boss@acme.test",
                "--owner-password",
                "pw-boss",
                "--owner-name",
                "The Boss",
            ],
        )
        .await,
    );
    let acme = creds_from(&acme, "boss@acme.test", "pw-boss", "acme");
    let bob = printed(
        &agora(
            &dir,
            &[
                "create-user",
                "--subdomain",
                "acme",
                "--email",
                "bob@acme.test",
                "--password",
                "pw-bob",
                "--full-name",
                "Bob Builder",
                "--role",
                "moderator",
                "--can-create-users",
            ],
        )
        .await,
    );
    let bob = creds_from(&bob, "bob@acme.test", "pw-bob", "acme");

    // Refusals exit 1 with the reason on stderr and nothing on stdout.
    let dup = agora(
        &dir,
        &[
            "create-user",
            "--subdomain",
            "acme",
            "--email",
            "BOB@acme.test",
            "--password",
            "x",
            "--full-name",
            "Bob Again",
        ],
    )
    .await;
    assert_eq!(dup.status.code(), Some(1));
    assert!(dup.stdout.is_empty());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("Email is already in use."));
    let nowhere = agora(
        &dir,
        &[
            "create-user",
            "--subdomain",
            "nowhere",
            "--email",
            "x@y.test",
            "--password",
            "x",
            "--full-name",
            "Nobody Here",
        ],
    )
    .await;
    assert_eq!(nowhere.status.code(), Some(1));
    let bad_role = agora(
        &dir,
        &[
            "create-user",
            "--subdomain",
            "acme",
            "--email",
            "x@y.test",
            "--password",
            "x",
            "--full-name",
            "X Y",
            "--role",
            "king",
        ],
    )
    .await;
    assert_eq!(bad_role.status.code(), Some(2));

    // A server started afterwards serves them all; no default organization is added.
    let app = spawn_app_at(&dir).await;
    assert!(!dir.join("zuliprc").exists());
    for who in [&root, &acme, &bob] {
        let (status, me) = json(app.as_user(who, Method::GET, "/users/me").send().await.unwrap()).await;
        assert_eq!((status, me["user_id"].as_i64()), (200, Some(who.user_id)), "{}", who.email);
    }
    let (_, me) = json(app.as_user(&bob, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((me["role"].as_i64(), me["full_name"].as_str()), (Some(300), Some("Bob Builder")));
    let (_, me) = json(app.as_user(&acme, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!(me["full_name"], "The Boss");
    let response = app
        .request_to("acme.agora.test", Method::POST, "/fetch_api_key")
        .form(&[("username", "bob@acme.test"), ("password", "pw-bob")])
        .send()
        .await
        .unwrap();
    assert_eq!(json(response).await.1["api_key"], bob.api_key.as_str());
    app.stop().await;
}

#[actix_web::test]
async fn commands_go_through_a_running_server() {
    let app = spawn_app().await;
    assert!(app.data_dir.join("agora.sock").exists());
    let carol = printed(
        &agora(
            &app.data_dir,
            &[
                "create-user",
                "--subdomain",
                "",
                "--email",
                "carol@agora.test",
                "--password",
                "pw-carol",
                "--full-name",
                "Carol Chen",
            ],
        )
        .await,
    );
    let carol = creds_from(&carol, "carol@agora.test", "pw-carol", "");
    // The server knows the new user at once: the command went through its realm actor.
    let (status, me) = json(app.as_user(&carol, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((status, me["full_name"].as_str()), (200, Some("Carol Chen")));

    let globex = printed(
        &agora(
            &app.data_dir,
            &[
                "create-realm",
                "--subdomain",
                "globex",
                "--name",
                "Globex",
                "--owner-email",
                "hank@globex.test",
                "--owner-password",
                "pw-hank",
            ],
        )
        .await,
    );
    let globex = creds_from(&globex, "hank@globex.test", "pw-hank", "globex");
    let (status, me) = json(app.as_user(&globex, Method::GET, "/users/me").send().await.unwrap()).await;
    assert_eq!((status, me["role"].as_i64()), (200, Some(100)));

    let taken = agora(
        &app.data_dir,
        &[
            "create-realm",
            "--subdomain",
            "globex",
            "--name",
            "G2",
            "--owner-email",
            "x@g.test",
            "--owner-password",
            "x",
        ],
    )
    .await;
    assert_eq!(taken.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&taken.stderr).contains("Subdomain already in use"));
    let dir = app.data_dir.clone();
    let _tmp = app.stop().await;
    // The socket is removed at shutdown.
    assert!(!dir.join("agora.sock").exists());
}
