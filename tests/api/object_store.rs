//! Files on an S3-compatible object store (`[uploads] backend = "s3"`), against a real S3
//! server on loopback (moto's `moto_server`, from PyPI; `.ci/run` installs it): uploads,
//! large files, thumbnails and avatars land in the bucket and nothing in the data directory, are
//! served with the same access rules, and go from the bucket with their attachment. Skipped,
//! with a line saying so, where `moto_server` is not installed.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agora::settings::UploadStore;
use agora_actors::uploads::s3::{S3Options, S3Storage};
use agora_actors::uploads::Storage;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{json, send, spawn_app_with, TestApp};
use crate::realm_emoji::png;
use crate::uploads::{fetch_file, uploaded};

/// A `moto_server` on a free loopback port with one bucket, stopped (by its process id)
/// when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Moto {
    /// `None` when `moto_server` is not installed.
    async fn start(bucket: &str) -> Option<Moto> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let moto = Moto { child, endpoint: format!("http://127.0.0.1:{port}") };
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                // moto does not check signatures: a plain PUT makes the bucket.
                let made = reqwest::Client::new().put(format!("{}/{bucket}", moto.endpoint)).send().await;
                assert_eq!(made.map(|r| r.status().as_u16()).ok(), Some(200), "the test bucket");
                return Some(moto);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("moto_server did not start on port {port}");
    }

    fn options(&self, bucket: &str) -> S3Options {
        S3Options {
            endpoint: self.endpoint.clone(),
            region: "us-east-1".into(),
            bucket: bucket.into(),
            access_key_id: "agora-test".into(),
            secret_access_key: "agora-test-secret".into(),
            path_style: true,
        }
    }

    /// An object as the store has it (read with signed requests of its own), if any.
    fn object(&self, bucket: &str, key: &str) -> Option<Vec<u8>> {
        let spool = tempfile::tempdir().unwrap();
        let store = S3Storage::attach(&self.options(bucket), spool.path()).unwrap();
        store.read(key).unwrap()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under a directory, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().flat_map(|e| if e.path().is_dir() { files_under(&e.path()) } else { vec![e.path()] }).collect()
}

async fn served(app: &TestApp, who: &crate::helpers::Creds, url: &str) -> reqwest::Response {
    for _ in 0..300 {
        let response = fetch_file(app, Some(who), url).await;
        if response.status() == 200 {
            return response;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    panic!("{url} was never served");
}

#[actix_web::test]
async fn uploads_live_in_the_bucket_and_are_served_with_the_same_rules() {
    let Some(moto) = Moto::start("agora").await else {
        eprintln!("skipped: moto_server is not installed (pip install 'moto[server]')");
        return;
    };
    let options = moto.options("agora");
    let app = spawn_app_with(|s| s.upload_store = UploadStore::S3(options)).await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;

    // A file: in the bucket under its path id, served to its uploader, not to others yet.
    let url = uploaded(&app, &owner, "notes one.txt", b"hello object store").await;
    let path_id = url.trim_start_matches("/user_uploads/").to_owned();
    assert_eq!(moto.object("agora", &path_id), Some(b"hello object store".to_vec()));
    let response = fetch_file(&app, Some(&owner), &url).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.unwrap().as_ref(), b"hello object store");
    assert_eq!(fetch_file(&app, Some(&hamlet), &url).await.status(), 404, "not shared with Hamlet");

    // A file past 8 MiB goes up in parts, and comes back whole.
    let big: Vec<u8> = (0..9 * 1024 * 1024 + 7).map(|i| (i % 251) as u8).collect();
    let big_url = uploaded(&app, &owner, "big.bin", &big).await;
    let big_id = big_url.trim_start_matches("/user_uploads/").to_owned();
    assert!(moto.object("agora", &big_id) == Some(big.clone()), "the bucket has it whole");
    let response = fetch_file(&app, Some(&owner), &big_url).await;
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.unwrap().as_ref() == big.as_slice(), "served whole");

    // An image gets its thumbnail in the bucket too.
    let image = uploaded(&app, &owner, "photo.png", &png(300, 200)).await;
    let image_id = image.trim_start_matches("/user_uploads/").to_owned();
    let thumbnail = format!("/user_uploads/thumbnail/{image_id}/840x560.webp");
    let response = served(&app, &owner, &thumbnail).await;
    assert_eq!(response.headers()["content-type"], "image/webp");
    assert!(moto.object("agora", &format!("thumbnail/{image_id}/840x560.webp")).is_some());

    // An avatar, served to anyone.
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(png(64, 64)).file_name("me.png").mime_str("image/png").unwrap());
    let (status, body) =
        json(app.as_user(&hamlet, Method::POST, "/users/me/avatar").multipart(form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let avatar = fetch_file(&app, None, body["avatar_url"].as_str().unwrap()).await;
    assert_eq!((avatar.status().as_u16(), avatar.headers()["content-type"].to_str().unwrap()), (200, "image/png"));

    // Nothing of it is on the server's disk.
    let local = files_under(&app.data_dir.join("uploads"));
    assert!(local.iter().all(|p| p.starts_with(app.data_dir.join("uploads/tmp"))), "{local:?}");

    // Deleting the attachment deletes the object and its thumbnails.
    let (_, list) = json(send(&app, &owner, Method::GET, "/attachments", &[]).await).await;
    let id_of = |path: &str| {
        list["attachments"].as_array().unwrap().iter().find(|a| a["path_id"] == json!(path)).unwrap()["id"].clone()
    };
    for (path, extra) in
        [(path_id.clone(), None), (image_id.clone(), Some(format!("thumbnail/{image_id}/840x560.webp")))]
    {
        let response = send(&app, &owner, Method::DELETE, &format!("/attachments/{}", id_of(&path)), &[]).await;
        assert_eq!(response.status(), 200);
        assert_eq!(moto.object("agora", &path), None, "{path}");
        if let Some(extra) = extra {
            assert_eq!(moto.object("agora", &extra), None, "{extra}");
        }
    }
    assert_eq!(fetch_file(&app, Some(&owner), &url).await.status(), 404);
    app.stop().await;
}

#[actix_web::test]
async fn a_bucket_that_does_not_answer_stops_the_server_at_start() {
    let Some(moto) = Moto::start("agora").await else {
        eprintln!("skipped: moto_server is not installed (pip install 'moto[server]')");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.upload_store = UploadStore::S3(moto.options("no-such-bucket"));
    let error = agora::startup::Application::build(settings).await.err().expect("a wrong bucket is refused");
    let message = error.to_string();
    assert!(message.contains("no-such-bucket"), "{message}");
}
