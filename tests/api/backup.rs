//! `agora backup` and `agora restore`: an archive taken while messages are being sent
//! restores into a server that serves every message acknowledged before the backup began.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use reqwest::Method;
use tokio::sync::{mpsc, watch};

use crate::cli::{agora, printed};
use crate::helpers::{json, post, spawn_app, spawn_app_at, Creds, TestApp};
use crate::uploads::{fetch_file, uploaded};

/// Sends direct messages from `from` to `to` until told to stop, reporting each
/// acknowledged one (its id and content).
async fn sender(
    app: Client,
    from: Creds,
    to: Creds,
    tag: usize,
    acks: mpsc::UnboundedSender<(i64, String)>,
    mut stop: watch::Receiver<bool>,
) {
    let to = to.user_id.to_string();
    for i in 0.. {
        if *stop.borrow_and_update() {
            return;
        }
        let content = format!("message {tag}-{i}");
        let response = app
            .client
            .post(format!("{}/api/v1/messages", app.address))
            .header("Host", &from.host)
            .basic_auth(&from.email, Some(&from.api_key))
            .form(&[("type", "direct"), ("to", to.as_str()), ("content", content.as_str())])
            .send()
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_eq!(status, 200, "{body}");
        if acks.send((body["id"].as_i64().unwrap(), content)).is_err() {
            return;
        }
    }
}

/// What a sender task needs of the app (the app itself stays with the test).
#[derive(Clone)]
struct Client {
    client: reqwest::Client,
    address: String,
}

/// Every message `who` can see, by id, with its raw content.
async fn all_messages(app: &TestApp, who: &Creds) -> BTreeMap<i64, String> {
    let response = app
        .as_user(who, Method::GET, "/messages")
        .query(&[("anchor", "newest"), ("num_before", "5000"), ("num_after", "0"), ("apply_markdown", "false")])
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_i64().unwrap(), m["content"].as_str().unwrap().to_owned()))
        .collect()
}

#[actix_web::test]
async fn a_backup_under_load_restores_every_acknowledged_message() {
    let app = spawn_app().await;
    let bob = app.create_user("", "bob@agora.test", "Bob Builder", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol Chen", 400).await;
    // An uploaded file, and a half-written one that stays out of the archive.
    let url = uploaded(&app, &bob, "notes.txt", b"uploaded bytes").await;
    std::fs::write(app.data_dir.join("uploads/tmp/partial"), "half").unwrap();

    let (ack_tx, mut acks) = mpsc::unbounded_channel();
    let (stop_tx, stop) = watch::channel(false);
    let handle = Client { client: app.client.clone(), address: app.address.clone() };
    let mut senders = Vec::new();
    for (tag, (from, to)) in
        [(&bob, &carol), (&carol, &bob), (&bob, &carol), (&app.owner, &bob)].into_iter().enumerate()
    {
        let task = sender(handle.clone(), from.clone(), to.clone(), tag, ack_tx.clone(), stop.clone());
        senders.push(actix_web::rt::spawn(task));
    }
    drop(ack_tx);

    // Every message acknowledged before the backup begins.
    let mut acked_before = BTreeMap::new();
    while acked_before.len() < 40 {
        let (id, content) = acks.recv().await.unwrap();
        acked_before.insert(id, content);
    }
    let archive = app.data_dir.parent().unwrap().join(format!("backup-{}.tar.gz", std::process::id()));
    let _ = std::fs::remove_file(&archive);
    let out = agora(&app.data_dir, &["backup", "--to", archive.to_str().unwrap()]).await;
    let summary = printed(&out);
    // Messages kept being sent while the backup ran.
    let mut acked_after = 0;
    while acked_after < 20 {
        acks.recv().await.unwrap();
        acked_after += 1;
    }
    stop_tx.send(true).unwrap();
    for task in senders {
        task.await.unwrap();
    }
    assert_eq!(summary["archive"], archive.to_str().unwrap());
    assert_eq!((summary["upload_files"].as_u64(), summary["upload_bytes"].as_u64()), (Some(1), Some(14)));
    // Its path in the archive is its path id.
    let path_id = url.strip_prefix("/user_uploads/").unwrap().to_owned();
    assert!(summary["schema_version"].as_i64().unwrap() > 0);
    let owner = app.owner.clone();
    app.stop().await;

    let tmp = tempfile::tempdir().unwrap();
    let restored_dir = tmp.path().join("restored");
    let restored = printed(&restore(&archive, &restored_dir).await);
    assert_eq!(restored["data_dir"], restored_dir.to_str().unwrap());
    assert_eq!(restored["upload_files"], 1);
    assert_eq!(std::fs::read_to_string(restored_dir.join("uploads").join(&path_id)).unwrap(), "uploaded bytes");
    assert!(!restored_dir.join("uploads/tmp").exists());
    // A second restore into the same directory is refused: it is not empty.
    let again = restore(&archive, &restored_dir).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));

    let app = spawn_app_at(&restored_dir).await;
    let mut seen = all_messages(&app, &bob).await;
    seen.extend(all_messages(&app, &owner).await);
    for (id, content) in &acked_before {
        assert_eq!(seen.get(id), Some(content), "message {id} acknowledged before the backup is missing");
    }
    // The restored server serves the upload.
    let file = fetch_file(&app, Some(&bob), &url).await;
    assert_eq!(file.status(), 200);
    assert_eq!(file.text().await.unwrap(), "uploaded bytes");
    // The restored server takes new messages after the restored ones.
    let (status, body) = json(
        post(&app, &bob, "/messages", &[("type", "direct"), ("to", &carol.user_id.to_string()), ("content", "after")])
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["id"].as_i64().unwrap() > *seen.keys().last().unwrap());
    let _ = std::fs::remove_file(&archive);
    app.stop().await;
}

/// `agora restore ARCHIVE --data-dir DIR` (nothing else written into the directory).
async fn restore(archive: &Path, data_dir: &Path) -> Output {
    let args = vec![
        "restore".to_owned(),
        archive.display().to_string(),
        "--data-dir".to_owned(),
        data_dir.display().to_string(),
    ];
    actix_web::web::block(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agora")).args(&args).env_remove("RUST_LOG").output().unwrap()
    })
    .await
    .unwrap()
}
