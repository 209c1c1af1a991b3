//! Data exports through the API (`/export/realm`): administrators ask, the worker writes
//! the archive in Zulip's format, a `realm_export` event says so, the link downloads it,
//! and a deletion removes it; Zulip's errors and rate limit.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, post, send, spawn_app, success, TestApp, Watch};

async fn exports(app: &TestApp, who: &crate::helpers::Creds) -> Vec<Value> {
    let (status, body) = json(app.as_user(who, Method::GET, "/export/realm").send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["exports"].as_array().unwrap().clone()
}

/// Waits (polling the API) until the export is no longer pending.
async fn finished(app: &TestApp, who: &crate::helpers::Creds, id: i64) -> Value {
    for _ in 0..300 {
        let list = exports(app, who).await;
        let export = list.iter().find(|e| e["id"] == id).cloned().unwrap();
        if export["pending"] == false {
            return export;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("export {id} still pending after 30 s");
}

#[actix_web::test]
async fn an_administrator_exports_downloads_and_deletes_an_organization() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let secret = post(
        &app,
        &owner,
        "/users/me/subscriptions",
        &[("subscriptions", r#"[{"name": "secret"}]"#), ("invite_only", "true")],
    )
    .await;
    assert_eq!(secret.status(), 200);
    let sent = post(
        &app,
        &owner,
        "/messages",
        &[("type", "stream"), ("to", "secret"), ("topic", "t"), ("content", "hidden words")],
    )
    .await;
    assert_eq!(sent.status(), 200);
    let playground =
        [("name", "Rust"), ("pygments_language", "Rust"), ("url_template", "https://play.example/?code={code}")];
    assert_eq!(post(&app, &owner, "/realm/playgrounds", &playground).await.status(), 200);
    let open = post(&app, &owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "open"}]"#)]).await;
    assert_eq!(open.status(), 200);
    let sent = post(
        &app,
        &owner,
        "/messages",
        &[("type", "stream"), ("to", "open"), ("topic", "t"), ("content", "open words")],
    )
    .await;
    assert_eq!(sent.status(), 200);
    let sent = post(
        &app,
        &member,
        "/messages",
        &[("type", "private"), ("to", &format!("[{}]", owner.user_id)), ("content", "between us")],
    )
    .await;
    assert_eq!(sent.status(), 200);

    // Members may not.
    for (method, path) in [
        (Method::GET, "/export/realm"),
        (Method::POST, "/export/realm"),
        (Method::GET, "/export/realm/consents"),
        (Method::DELETE, "/export/realm/1"),
    ] {
        let refused = json!({"result": "error", "msg": "Must be an organization administrator", "code": "UNAUTHORIZED_PRINCIPAL"});
        expect(send(&app, &member, method, path, &[]).await, 400, refused).await;
    }
    // Export types are named since FL 449; the former numbers are refused.
    for export_type in ["1", "3", "standard"] {
        expect(
            post(&app, &owner, "/export/realm", &[("export_type", export_type)]).await,
            400,
            error("Invalid export_type: Value error, Not in the list of possible values"),
        )
        .await;
    }
    // A full export without consent needs the organization's `owner_full_content_access`.
    expect(
        post(&app, &owner, "/export/realm", &[("export_type", "full_without_consent")]).await,
        400,
        error("Full exports without consent are not enabled for this organization."),
    )
    .await;
    let consents = json(app.as_user(&owner, Method::GET, "/export/realm/consents").send().await.unwrap()).await.1;
    let mut listed: Vec<Value> = consents["export_consents"].as_array().unwrap().clone();
    listed.sort_by_key(|c| c["user_id"].as_i64());
    assert_eq!(
        listed,
        [
            json!({"user_id": owner.user_id, "consented": false, "email_address_visibility": 1}),
            json!({"user_id": member.user_id, "consented": false, "email_address_visibility": 1})
        ]
    );

    let mut watch = Watch::new(&app, &owner, r#"["realm_export"]"#).await;
    let (status, body) = json(post(&app, &owner, "/export/realm", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    assert_eq!(body, json!({"result": "success", "msg": "", "id": id}));
    let done = finished(&app, &owner, id).await;
    assert_eq!(done["acting_user_id"], owner.user_id);
    assert_eq!(
        (done["export_type"].as_str(), done["failed_timestamp"].as_f64(), done["deleted_timestamp"].as_f64()),
        (Some("public"), None, None)
    );
    assert!(done["export_time"].is_f64());
    // The events: the request (pending), then the archive (its link).
    let mut seen = Vec::new();
    for _ in 0..50 {
        seen.extend(watch.events(&app).await);
        if seen.iter().any(|e| e["exports"][0]["pending"] == false) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen[0]["type"], "realm_export");
    assert_eq!(seen[0]["exports"][0]["pending"], true);
    assert_eq!(seen.last().unwrap()["exports"], json!([done.clone()]));

    // The link downloads a Zulip export; a public export has no private messages.
    let url = done["export_url"].as_str().unwrap();
    let path = url.strip_prefix("http://agora.test").unwrap_or(url).to_owned();
    assert!(path.starts_with("/user_avatars/exports/") && path.ends_with(".tar.gz"), "{url}");
    let download = app.client.get(format!("{}{path}", app.address)).header("Host", "agora.test").send().await.unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(download.headers()["content-type"], "application/gzip");
    let bytes = download.bytes().await.unwrap();
    let unpacked = tempfile::tempdir().unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..])).unpack(unpacked.path()).unwrap();
    let top = std::fs::read_dir(unpacked.path()).unwrap().next().unwrap().unwrap().path();
    let realm: Value = serde_json::from_slice(&std::fs::read(top.join("realm.json")).unwrap()).unwrap();
    assert_eq!(realm["zerver_realm"][0]["string_id"], "");
    let playground = &realm["zerver_realmplayground"][0];
    assert_eq!((playground["name"].as_str(), playground["pygments_language"].as_str()), (Some("Rust"), Some("Rust")));
    let messages = std::fs::read_to_string(top.join("messages-000001.json")).unwrap();
    assert!(messages.contains("open words"));
    assert!(
        !messages.contains("hidden words") && !messages.contains("between us"),
        "a public export holds public channels' messages only"
    );

    // Deleting: at once, then never again.
    let mut watch = Watch::new(&app, &owner, r#"["realm_export"]"#).await;
    expect(send(&app, &owner, Method::DELETE, &format!("/export/realm/{id}"), &[]).await, 200, success()).await;
    let gone = app.client.get(format!("{}{path}", app.address)).header("Host", "agora.test").send().await.unwrap();
    assert_eq!(gone.status(), 404);
    let events = watch.events(&app).await;
    assert!(events[0]["exports"][0]["deleted_timestamp"].is_f64(), "{events:?}");
    assert_eq!(events[0]["exports"][0]["export_url"], Value::Null);
    expect(
        send(&app, &owner, Method::DELETE, &format!("/export/realm/{id}"), &[]).await,
        400,
        error("Export already deleted"),
    )
    .await;
    expect(send(&app, &owner, Method::DELETE, "/export/realm/0", &[]).await, 400, error("Invalid data export ID"))
        .await;
    app.stop().await;
}

#[actix_web::test]
async fn a_standard_export_holds_the_private_data_of_those_who_consented_and_five_a_week_at_most() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    let member = app.create_user("", "member@agora.test", "Member", 400).await;
    let consent = send(&app, &member, Method::PATCH, "/settings", &[("allow_private_data_export", "true")]).await;
    assert_eq!(consent.status(), 200);
    assert_eq!(
        post(
            &app,
            &member,
            "/messages",
            &[("type", "private"), ("to", &format!("[{}]", owner.user_id)), ("content", "shared words")]
        )
        .await
        .status(),
        200
    );
    assert_eq!(
        post(
            &app,
            &owner,
            "/messages",
            &[("type", "private"), ("to", &format!("[{}]", member.user_id)), ("content", "kept words")]
        )
        .await
        .status(),
        200
    );
    let (_, body) = json(post(&app, &owner, "/export/realm", &[("export_type", "full_with_consent")]).await).await;
    let done = finished(&app, &owner, body["id"].as_i64().unwrap()).await;
    assert_eq!(done["export_type"], "full_with_consent");
    let url = done["export_url"].as_str().unwrap();
    let path = url.strip_prefix("http://agora.test").unwrap_or(url).to_owned();
    let bytes = app
        .client
        .get(format!("{}{path}", app.address))
        .header("Host", "agora.test")
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let unpacked = tempfile::tempdir().unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..])).unpack(unpacked.path()).unwrap();
    let top = std::fs::read_dir(unpacked.path()).unwrap().next().unwrap().unwrap().path();
    let messages = std::fs::read_to_string(top.join("messages-000001.json")).unwrap();
    assert!(messages.contains("shared words"), "the consenting member's direct message is in it");
    assert!(!messages.contains("kept words"), "the owner did not consent");
    // Four more make five this week; the sixth is refused.
    for _ in 0..4 {
        assert_eq!(post(&app, &owner, "/export/realm", &[]).await.status(), 200);
    }
    expect(post(&app, &owner, "/export/realm", &[]).await, 400, error("Exceeded rate limit.")).await;
    app.stop().await;
}
