//! Uploads over HTTP: `POST /user_uploads` (one streamed file, Zulip's names, the size
//! limit), serving files (`/user_uploads/...` with Basic auth, the temporary URL form, the
//! headers, ranges, traversal), who may read a file (uploader, readers of a message that
//! claims it), attachments (`GET`/`DELETE /attachments`, events, `has:` narrows) and
//! restarts.

use reqwest::multipart::{Form, Part};
use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, post, raw_exchange, spawn_app, spawn_app_at, spawn_app_with, Creds, TestApp, Watch,
};

/// Uploads `data` as `name` (`content_type` if given) in a multipart field `field`.
pub async fn upload_as(
    app: &TestApp,
    who: &Creds,
    field: &str,
    name: &str,
    data: Vec<u8>,
    content_type: Option<&str>,
) -> Response {
    let mut part = Part::bytes(data).file_name(name.to_owned());
    if let Some(t) = content_type {
        part = part.mime_str(t).unwrap();
    }
    app.as_user(who, Method::POST, "/user_uploads")
        .multipart(Form::new().part(field.to_owned(), part))
        .send()
        .await
        .unwrap()
}

/// Uploads a file and returns its URL.
pub async fn uploaded(app: &TestApp, who: &Creds, name: &str, data: &[u8]) -> String {
    let (status, body) = json(upload_as(app, who, "file", name, data.to_vec(), None).await).await;
    assert_eq!(status, 200, "{body}");
    body["url"].as_str().unwrap().to_owned()
}

/// `GET` of a file URL (outside `/api/v1`) as `who`, or without credentials.
pub async fn fetch_file(app: &TestApp, who: Option<&Creds>, url: &str) -> Response {
    let host = who.map_or(crate::helpers::HOST.to_owned(), |w| w.host.clone());
    let request = app.client.get(format!("{}{url}", app.address)).header("Host", host);
    match who {
        Some(w) => request.basic_auth(&w.email, Some(&w.api_key)),
        None => request,
    }
    .send()
    .await
    .unwrap()
}

async fn status_of(app: &TestApp, who: Option<&Creds>, url: &str) -> u16 {
    fetch_file(app, who, url).await.status().as_u16()
}

const NOT_FOUND: &str = "<p>This file does not exist or has been deleted.</p>";

async fn channel(app: &TestApp, name: &str, invite_only: bool, subscribers: &[&Creds]) {
    let mut ids: Vec<i64> = subscribers.iter().map(|c| c.user_id).collect();
    ids.push(app.owner.user_id);
    let ids = json!(ids).to_string();
    let form =
        [("name", name), ("subscribers", ids.as_str()), ("invite_only", if invite_only { "true" } else { "false" })];
    let (status, body) = json(post(app, &app.owner, "/channels/create", &form).await).await;
    assert_eq!(status, 200, "{body}");
}

pub async fn sent(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> i64 {
    let (status, body) = json(post(app, who, "/messages", form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

async fn attachments(app: &TestApp, who: &Creds) -> Value {
    let (status, body) = json(app.as_user(who, Method::GET, "/attachments").send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[actix_web::test]
async fn an_upload_is_stored_under_zulips_url_and_served_to_its_uploader() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    // Any field name: the Python client (`requests`) names the part after the file's path
    // and gives no content type.
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"/tmp/my file (1).txt\"; filename=\"my file (1).txt\"\r\n\r\nhello world\r\n--XyZ--\r\n";
    let response = app
        .as_user(&owner, Method::POST, "/user_uploads")
        .header("Content-Type", "multipart/form-data; boundary=XyZ")
        .body(body)
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    let url = body["url"].as_str().unwrap().to_owned();
    assert_eq!(body, json!({"result": "success", "msg": "", "uri": url, "url": url, "filename": "my file (1).txt"}));
    let parts: Vec<&str> = url.split('/').collect();
    assert_eq!((parts.len(), parts[1], parts[2], parts[5]), (6, "user_uploads", "1", "my-file-1.txt"), "{url}");
    assert_eq!(parts[4].len(), 24);

    let response = fetch_file(&app, Some(&owner), &url).await;
    assert_eq!(response.status(), 200);
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(header("content-type").as_deref(), Some("text/plain; charset=utf-8"));
    assert_eq!(header("content-disposition").as_deref(), Some("inline; filename=\"my file (1).txt\""));
    assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
    assert_eq!(header("cache-control").as_deref(), Some("private, immutable"));
    assert!(header("content-security-policy").unwrap().starts_with("default-src 'none'"));
    assert_eq!(header("accept-ranges").as_deref(), Some("bytes"));
    assert_eq!(response.text().await.unwrap(), "hello world");

    // Ranges, for video and large files.
    let ranged = app
        .client
        .get(format!("{}{url}", app.address))
        .header("Host", &owner.host)
        .header("Range", "bytes=6-10")
        .basic_auth(&owner.email, Some(&owner.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status(), 206);
    assert_eq!(ranged.headers()["content-range"], "bytes 6-10/11");
    assert_eq!(ranged.text().await.unwrap(), "world");

    // HEAD: the headers without the body.
    let head = app
        .client
        .head(format!("{}{url}", app.address))
        .header("Host", &owner.host)
        .basic_auth(&owner.email, Some(&owner.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!((head.status().as_u16(), head.headers()["content-length"].to_str().unwrap()), (200, "11"));
    assert_eq!(head.text().await.unwrap(), "");

    // Types not safe to show are downloads; /download/ always is.
    let html = uploaded(&app, &owner, "page.html", b"<script>alert(1)</script>").await;
    let response = fetch_file(&app, Some(&owner), &html).await;
    assert_eq!(response.headers()["content-disposition"], "attachment; filename=\"page.html\"");
    let download = url.replacen("/user_uploads/", "/user_uploads/download/", 1);
    let response = fetch_file(&app, Some(&owner), &download).await;
    assert_eq!(response.headers()["content-disposition"], "attachment; filename=\"my file (1).txt\"");
    // Names are percent-decoded, as Zulip does, then sanitized for the path.
    let (_, body) = json(upload_as(&app, &owner, "file", "50%25%20off.txt", b"x".to_vec(), None).await).await;
    assert_eq!(body["filename"], json!("50% off.txt"));
    assert!(body["url"].as_str().unwrap().ends_with("/50-off.txt"), "{body}");
    // A name that is not ASCII.
    let unicode = uploaded(&app, &owner, "résumé.txt", b"cv").await;
    let response = fetch_file(&app, Some(&owner), &unicode).await;
    assert_eq!(response.headers()["content-disposition"], "inline; filename*=UTF-8''r%C3%A9sum%C3%A9.txt");
}

#[actix_web::test]
async fn uploads_are_refused_as_zulip_refuses_them() {
    let app = spawn_app_with(|s| s.uploads.max_file_upload_size_mib = 1).await;
    let owner = app.owner.clone();
    let big = vec![b'x'; (1 << 20) + 1];
    let response = upload_as(&app, &owner, "file", "big.bin", big, None).await;
    expect(response, 400, error("File is larger than this server's configured maximum upload size (1 MiB).")).await;
    // Nothing is left behind: no file, no temporary file.
    let files: Vec<_> = walk(&app.data_dir.join("uploads"));
    assert!(files.is_empty(), "{files:?}");
    let exact = vec![b'x'; 1 << 20];
    assert_eq!(upload_as(&app, &owner, "file", "exact.bin", exact, None).await.status(), 200);

    let form = Form::new().text("note", "no file");
    let response = app.as_user(&owner, Method::POST, "/user_uploads").multipart(form).send().await.unwrap();
    expect(response, 400, error("You must specify a file to upload")).await;
    let form = Form::new()
        .part("a", Part::bytes(b"1".to_vec()).file_name("a.txt"))
        .part("b", Part::bytes(b"2".to_vec()).file_name("b.txt"));
    let response = app.as_user(&owner, Method::POST, "/user_uploads").multipart(form).send().await.unwrap();
    expect(response, 400, error("You may only upload one file at a time")).await;
    let response =
        app.request(Method::POST, "/user_uploads").multipart(Form::new().text("a", "b")).send().await.unwrap();
    assert_eq!(response.status(), 401);
}

/// Every regular file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[actix_web::test]
async fn a_file_is_readable_once_a_message_shares_it() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    channel(&app, "secret", true, &[&hamlet]).await;
    channel(&app, "lobby", false, &[]).await;

    let url = uploaded(&app, &owner, "plan.txt", b"the plan").await;
    // Nobody else may read it yet; the refusal is the missing file's.
    let response = fetch_file(&app, Some(&hamlet), &url).await;
    assert_eq!(response.status(), 404);
    assert_eq!(response.text().await.unwrap(), NOT_FOUND);
    let missing = format!("{}x", url);
    assert_eq!(fetch_file(&app, Some(&owner), &missing).await.text().await.unwrap(), NOT_FOUND);
    // No credentials: Zulip's 401.
    let (status, body) = json(fetch_file(&app, None, &url).await).await;
    assert_eq!((status, &body["msg"]), (401, &json!("Not logged in: API authentication or user session required")));

    // A private channel: its subscribers.
    let link = format!("[plan.txt]({url})");
    sent(&app, &owner, &[("type", "channel"), ("to", "secret"), ("topic", "t"), ("content", &link)]).await;
    assert_eq!(status_of(&app, Some(&hamlet), &url).await, 200);
    assert_eq!(status_of(&app, Some(&othello), &url).await, 404);

    // A direct message: its recipients.
    let dm = uploaded(&app, &owner, "dm.txt", b"between us").await;
    let to = json!([othello.user_id]).to_string();
    sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &format!("[dm]({dm})"))]).await;
    assert_eq!(status_of(&app, Some(&othello), &dm).await, 200);
    assert_eq!(status_of(&app, Some(&hamlet), &dm).await, 404);

    // A public channel: every member but guests.
    let public = uploaded(&app, &owner, "all.txt", b"for all").await;
    sent(&app, &owner, &[("type", "channel"), ("to", "lobby"), ("topic", "t"), ("content", &public)]).await;
    assert_eq!(status_of(&app, Some(&othello), &public).await, 200);
    assert_eq!(status_of(&app, Some(&guest), &public).await, 404);

    // A private channel with protected history: a subscriber who joined after the message
    // never received it, so not its file either.
    let me = json!([owner.user_id]).to_string();
    let form = [
        ("name", "vault"),
        ("subscribers", me.as_str()),
        ("invite_only", "true"),
        ("history_public_to_subscribers", "false"),
    ];
    assert_eq!(post(&app, &owner, "/channels/create", &form).await.status(), 200);
    let vault = uploaded(&app, &owner, "vault.txt", b"old secret").await;
    sent(&app, &owner, &[("type", "channel"), ("to", "vault"), ("topic", "t"), ("content", &vault)]).await;
    let principals = json!([hamlet.user_id]).to_string();
    let form = [("subscriptions", r#"[{"name": "vault"}]"#), ("principals", principals.as_str())];
    assert_eq!(post(&app, &owner, "/users/me/subscriptions", &form).await.status(), 200);
    assert_eq!(status_of(&app, Some(&hamlet), &vault).await, 404);

    // Another organization's user, even with the path: nothing.
    let acme = app.create_realm("acme", "boss@acme.test").await;
    assert_eq!(status_of(&app, Some(&acme), &public).await, 404);
}

#[actix_web::test]
async fn temporary_urls_serve_without_credentials_for_a_minute() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let url = uploaded(&app, &owner, "a.txt", b"abc").await;
    let api_path = url.trim_start_matches("/user_uploads");
    let (status, body) =
        json(app.as_user(&owner, Method::GET, &format!("/user_uploads{api_path}")).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let temporary = body["url"].as_str().unwrap().to_owned();
    assert_eq!(body, json!({"result": "success", "msg": "", "url": temporary}));
    assert!(temporary.starts_with("/user_uploads/temporary/") && temporary.ends_with("/a.txt"), "{temporary}");
    let response = fetch_file(&app, None, &temporary).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "abc");

    let wrong_name = temporary.replace("/a.txt", "/b.txt");
    expect(fetch_file(&app, None, &wrong_name).await, 400, error("Invalid filename")).await;
    let forged = temporary.replacen("/temporary/3", "/temporary/4", 1);
    expect(fetch_file(&app, None, &forged).await, 400, error("Invalid token")).await;
    // Someone who may not read the file gets no URL.
    let response = app.as_user(&hamlet, Method::GET, &format!("/user_uploads{api_path}")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.text().await.unwrap(), NOT_FOUND);
}

#[actix_web::test]
async fn no_path_outside_the_uploads_is_served() {
    let app = spawn_app().await;
    let owner = &app.owner;
    uploaded(&app, owner, "a.txt", b"abc").await;
    let auth = format!("Basic {}", base64_of(&format!("{}:{}", owner.email, owner.api_key)));
    for path in [
        "/user_uploads/1/../../agora.sqlite3",
        "/user_uploads/1/%2e%2e/%2e%2e/agora.sqlite3",
        "/user_uploads/1/..%2f..%2fagora.sqlite3",
        "/user_uploads/1/%2fetc%2fpasswd",
        "/user_uploads/1//etc/passwd",
        "/user_uploads/thumbnail/1/%2e%2e/%2e%2e/%2e%2e/agora.sqlite3/x",
        "/user_avatars/..%2f..%2fagora.sqlite3",
        "/user_avatars/../zuliprc",
    ] {
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: agora.test\r\nAuthorization: {auth}\r\nConnection: close\r\n\r\n");
        let response = raw_exchange(&app, request.as_bytes(), std::time::Duration::from_secs(5)).await.unwrap();
        assert_eq!(response.status, 404, "{path}: {}", response.body);
        assert!(!response.body.contains("SQLite") && !response.body.contains("api_key"), "{path}");
    }
}

fn base64_of(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[actix_web::test]
async fn attachments_list_claims_and_delete_with_their_events() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    channel(&app, "lobby", false, &[&hamlet]).await;
    let mut watch = Watch::new(&app, &owner, r#"["attachment"]"#).await;
    let url = uploaded(&app, &owner, "a.txt", b"12345").await;
    let path_id = url.trim_start_matches("/user_uploads/").to_owned();
    let listed = attachments(&app, &owner).await;
    let a = listed["attachments"][0].clone();
    let id = a["id"].as_i64().unwrap();
    let created = a["create_time"].as_i64().unwrap();
    // Seconds since feature level 443 (milliseconds before).
    assert!((1_600_000_000..4_000_000_000).contains(&created), "seconds: {created}");
    let object = |message_ids: Value| json!({"id": id, "name": "a.txt", "path_id": path_id, "size": 5, "create_time": created, "message_ids": message_ids});
    assert_eq!(
        listed,
        json!({"result": "success", "msg": "", "attachments": [object(json!([]))], "upload_space_used": 5})
    );
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "attachment", "op": "add", "attachment": object(json!([])), "upload_space_used": 5})]
    );
    assert_eq!(attachments(&app, &hamlet).await["attachments"], json!([]));

    let message = sent(
        &app,
        &owner,
        &[("type", "channel"), ("to", "lobby"), ("topic", "t"), ("content", &format!("see [a.txt]({url})"))],
    )
    .await;
    let listed = attachments(&app, &owner).await;
    let claimed = &listed["attachments"][0]["message_ids"];
    assert_eq!(claimed, &json!([message]));
    assert_eq!(
        watch.events(&app).await,
        vec![
            json!({"type": "attachment", "op": "update", "attachment": object(claimed.clone()), "upload_space_used": 5})
        ]
    );
    let narrow = json!([{"operator": "has", "operand": "attachment"}]).to_string();
    let (_, found) = json(
        app.as_user(&hamlet, Method::GET, "/messages")
            .query(&[("anchor", "newest"), ("num_before", "10"), ("narrow", &narrow)])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(found["messages"][0]["id"], json!(message));

    // An edit that drops the link detaches the file.
    let (status, edited) = json(
        crate::helpers::send(&app, &owner, Method::PATCH, &format!("/messages/{message}"), &[("content", "no link")])
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(edited, json!({"result": "success", "msg": "", "detached_uploads": [object(json!([]))]}));
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "attachment", "op": "update", "attachment": object(json!([])), "upload_space_used": 5})]
    );

    let path = format!("/attachments/{id}");
    expect(crate::helpers::send(&app, &hamlet, Method::DELETE, &path, &[]).await, 400, error("Invalid attachment"))
        .await;
    expect(
        crate::helpers::send(&app, &owner, Method::DELETE, "/attachments/99999", &[]).await,
        400,
        error("Invalid attachment"),
    )
    .await;
    expect(
        crate::helpers::send(&app, &owner, Method::DELETE, &path, &[]).await,
        200,
        json!({"result": "success", "msg": ""}),
    )
    .await;
    assert_eq!(
        watch.events(&app).await,
        vec![json!({"type": "attachment", "op": "remove", "attachment": {"id": id}, "upload_space_used": 0})]
    );
    assert_eq!(status_of(&app, Some(&owner), &url).await, 404);
    assert!(walk(&app.data_dir.join("uploads")).is_empty());
}

#[actix_web::test]
async fn deleting_the_last_message_leaves_the_file_to_its_owner_and_files_survive_a_restart() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let url = uploaded(&app, &owner, "a.txt", b"kept").await;
    let to = json!([hamlet.user_id]).to_string();
    let message = sent(&app, &owner, &[("type", "direct"), ("to", &to), ("content", &url)]).await;
    assert_eq!(status_of(&app, Some(&hamlet), &url).await, 200);
    let response = crate::helpers::send(&app, &owner, Method::DELETE, &format!("/messages/{message}"), &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(status_of(&app, Some(&hamlet), &url).await, 404);
    assert_eq!(attachments(&app, &owner).await["attachments"][0]["message_ids"], json!([]));

    let dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let app = spawn_app_at(&dir).await;
    let response = fetch_file(&app, Some(&owner), &url).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "kept");
    assert_eq!(attachments(&app, &owner).await["upload_space_used"], json!(4));
    app.stop().await;
    drop(tmp);
}
