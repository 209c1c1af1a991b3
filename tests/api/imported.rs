//! What the import tests share: an imported account's credentials, reads that must
//! succeed, a feed, and zipping an export as Slack and Mattermost ship them.

use std::io::Write;
use std::path::Path;

use reqwest::Method;
use serde_json::Value;

use crate::cli::agora;
use crate::helpers::{json, Creds, TestApp};

/// Credentials of an imported account of `subdomain`, by its address (exports have no keys:
/// the administrator gives one with `agora reset-api-key`).
pub async fn creds(app: &TestApp, subdomain: &str, email: &str) -> Creds {
    let out = agora(&app.data_dir, &["reset-api-key", "--subdomain", subdomain, "--user", email]).await;
    let printed = crate::cli::printed(&out);
    Creds {
        email: email.to_owned(),
        password: String::new(),
        api_key: printed["api_key"].as_str().unwrap().to_owned(),
        user_id: printed["user_id"].as_i64().unwrap(),
        host: format!("{subdomain}.agora.test"),
    }
}

/// A `GET` that must succeed; its body.
pub async fn get(app: &TestApp, who: &Creds, path: &str) -> Value {
    let (status, body) = json(app.as_user(who, Method::GET, path).send().await.unwrap()).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// The first 100 messages of a narrow, oldest first.
pub async fn messages(app: &TestApp, who: &Creds, narrow: &str) -> Vec<Value> {
    let narrow: String = form_urlencoded::byte_serialize(narrow.as_bytes()).collect();
    let path = format!("/messages?anchor=oldest&num_before=0&num_after=100&narrow={narrow}");
    get(app, who, &path).await["messages"].as_array().unwrap().clone()
}

/// Zips a directory: its files at the top of the archive, or in the folder `top` (`"x/"`).
pub fn zip_dir(dir: &Path, into: &Path, top: &str) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(into).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{top}{}", path.strip_prefix(dir).unwrap().to_str().unwrap());
            if path.is_dir() {
                zip.add_directory(format!("{name}/"), options).unwrap();
                stack.push(path);
            } else {
                zip.start_file(name, options).unwrap();
                zip.write_all(&std::fs::read(&path).unwrap()).unwrap();
            }
        }
    }
    zip.finish().unwrap();
}
