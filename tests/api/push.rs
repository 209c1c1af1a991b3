//! Mobile push notifications against a stand-in bouncer (an HTTP server on 127.0.0.1 that
//! records what it is sent): registrations are forwarded, a direct message to an away user
//! is one notification with Zulip's payload, reading it removes it, a muted topic sends
//! nothing, and a bouncer that is down delays notifications without losing or repeating
//! them. Zulip 12's logged-in devices (`POST /register_client_device`, `POST
//! /mobile_push/register` by device, the `device` events) are in `crate::push_devices`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::{Nonce, XSalsa20Poly1305};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{error, expect, json, post, register, send, spawn_app, spawn_app_with, success, Creds, TestApp};

/// One request the bouncer got.
#[derive(Debug, Clone)]
pub(crate) struct Got {
    path: String,
    auth: Option<String>,
    user_agent: String,
    body: String,
}

impl Got {
    pub(crate) fn form(&self) -> HashMap<String, String> {
        form_urlencoded::parse(self.body.as_bytes()).into_owned().collect()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

#[derive(Default)]
pub(crate) struct Stand {
    got: Mutex<Vec<Got>>,
    /// Answer 503 to everything.
    down: AtomicBool,
    /// Requests refused while down.
    refused: AtomicI64,
    /// Token ids `push/e2ee/notify` answers are gone (`delete_token_ids`).
    pub(crate) gone: Mutex<Vec<String>>,
}

pub(crate) struct StandIn {
    url: String,
    pub(crate) stand: Arc<Stand>,
}

impl StandIn {
    /// What it got at `/api/v1/remotes/<endpoint>`.
    pub(crate) fn at(&self, endpoint: &str) -> Vec<Got> {
        let path = format!("/api/v1/remotes/{endpoint}");
        self.stand.got.lock().unwrap().iter().filter(|g| g.path == path).cloned().collect()
    }

    /// Waits (a few seconds at most) until it got `n` requests at `endpoint`.
    pub(crate) async fn wait_for(&self, endpoint: &str, n: usize) -> Vec<Got> {
        let start = Instant::now();
        loop {
            let got = self.at(endpoint);
            if got.len() >= n || start.elapsed() > Duration::from_secs(10) {
                return got;
            }
            actix_web::rt::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

async fn answer(req: HttpRequest, body: web::Bytes, stand: web::Data<Stand>) -> HttpResponse {
    if stand.down.load(Ordering::SeqCst) {
        stand.refused.fetch_add(1, Ordering::SeqCst);
        return HttpResponse::ServiceUnavailable().finish();
    }
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    stand.got.lock().unwrap().push(Got {
        path: req.path().to_owned(),
        auth: header("authorization"),
        user_agent: header("user-agent").unwrap_or_default(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let endpoint = req.path().trim_start_matches("/api/v1/remotes/");
    let form: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    if endpoint == "push/e2ee/register" && form.get("bouncer_public_key").map(String::as_str) == Some("invalid") {
        let refused =
            json!({"result": "error", "msg": "Invalid bouncer_public_key", "code": "INVALID_BOUNCER_PUBLIC_KEY"});
        return HttpResponse::BadRequest().json(refused);
    }
    let data = match endpoint {
        "push/notify" => json!({
            "total_android_devices": 1, "total_apple_devices": 0,
            "deleted_devices": {"android_devices": [], "apple_devices": []}, "realm": null,
        }),
        "push/e2ee/notify" => json!({"delete_token_ids": stand.gone.lock().unwrap().clone()}),
        "server/register" => json!({"created": true}),
        "server/analytics" => json!({"realms": {}}),
        _ => json!({}),
    };
    let mut body = json!({"result": "success", "msg": ""});
    body.as_object_mut().unwrap().extend(data.as_object().unwrap().clone());
    HttpResponse::Ok().json(body)
}

pub(crate) async fn stand_in() -> StandIn {
    let stand = Arc::new(Stand::default());
    let data = web::Data::from(Arc::clone(&stand));
    let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(answer)))
        .workers(1)
        .bind(("127.0.0.1", 0))
        .unwrap();
    let port = server.addrs()[0].port();
    actix_web::rt::spawn(server.run());
    StandIn { url: format!("http://127.0.0.1:{port}"), stand }
}

const ORG_ID: &str = "0e8ea2d2-4f2a-4d0e-9a53-6c3c6b1d2f10";
const ORG_KEY: &str = "k3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3y";

/// A server using the stand-in bouncer, retrying fast.
pub(crate) async fn app_with_bouncer(bouncer: &StandIn) -> TestApp {
    let url = bouncer.url.clone();
    spawn_app_with(move |s| {
        s.push.bouncer_url = Some(url);
        s.push.org_id = Some(ORG_ID.into());
        s.push.org_key = Some(ORG_KEY.into());
        s.push.poll_interval = Duration::from_millis(5);
        s.push.retry_initial = Duration::from_millis(20);
        s.push.retry_max = Duration::from_millis(100);
    })
    .await
}

/// A push key as the mobile app makes one: the secretbox byte, then the key.
pub(crate) fn push_key(key: [u8; 32]) -> String {
    STANDARD.encode([[0x31u8].as_slice(), &key].concat())
}

/// A token's id as the mobile app computes it (the first 8 bytes of its SHA-256).
pub(crate) fn token_id(token: &str) -> String {
    use sha2::Digest;
    STANDARD.encode(&sha2::Sha256::digest(token.as_bytes())[..8])
}

/// The full `POST /mobile_push/register` form of `device`: key `key_id` and token `token`.
pub(crate) fn e2ee_form(device: i64, key: [u8; 32], key_id: &str, token: &str) -> Vec<(String, String)> {
    [
        ("device_id", device.to_string()),
        ("push_key_id", key_id.to_owned()),
        ("push_key", push_key(key)),
        ("token_kind", "fcm".to_owned()),
        ("token_id", token_id(token)),
        ("bouncer_public_key", "Ym91bmNlci1rZXk=".to_owned()),
        ("encrypted_push_registration", "ZW5jcnlwdGVk".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `form` borrowed, for `post`.
pub(crate) fn borrowed(form: &[(String, String)]) -> Vec<(&str, &str)> {
    form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// A new device record of `who` (`POST /register_client_device`); its id.
pub(crate) async fn client_device(app: &TestApp, who: &Creds) -> i64 {
    let (status, body) = json(post(app, who, "/register_client_device", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["device_id"].as_i64().unwrap()
}

/// Opens what a device with `key` receives in `encrypted_data`, as the mobile app does.
pub(crate) fn open(key: [u8; 32], encrypted: &Value) -> Value {
    let bytes = STANDARD.decode(encrypted.as_str().unwrap()).unwrap();
    let (nonce, boxed) = bytes.split_at(24);
    let plain = XSalsa20Poly1305::new_from_slice(&key).unwrap().decrypt(Nonce::from_slice(nonce), boxed).unwrap();
    serde_json::from_slice(&plain).unwrap()
}

#[actix_web::test]
async fn without_a_bouncer_e2ee_registration_is_refused_and_push_is_off() {
    let app = spawn_app().await;
    // A device record needs no push notification service; its registration does.
    let device = client_device(&app, &app.owner).await;
    let form = e2ee_form(device, [7u8; 32], "1", "token");
    let response = post(&app, &app.owner, "/mobile_push/register", &borrowed(&form)).await;
    let refused = json!({"result": "error", "msg": "Server is not configured to use push notification service.",
        "code": "PUSH_SERVICE_NOT_CONFIGURED"});
    expect(response, 400, refused).await;
    let data = register(&app, &app.owner, &[("fetch_event_types", r#"["realm", "device"]"#)]).await;
    let empty = json!({"push_key_id": null, "push_token_id": null, "pending_push_token_id": null,
        "push_token_last_updated_timestamp": null, "push_registration_error_code": null});
    assert_eq!(
        (data["realm_push_notifications_enabled"].clone(), data["devices"].clone()),
        (json!(false), json!({ device.to_string(): empty }))
    );
    let (_, settings) = json(app.request(Method::GET, "/server_settings").send().await.unwrap()).await;
    assert_eq!(settings["push_notifications_enabled"], false);
    // Legacy tokens are kept (Zulip stores them either way).
    fcm_token(&app, &app.owner, "abc").await;
    let removed = send(&app, &app.owner, Method::DELETE, "/users/me/android_gcm_reg_id", &[("token", "abc")]).await;
    expect(removed, 200, success()).await;
    let again = send(&app, &app.owner, Method::DELETE, "/users/me/android_gcm_reg_id", &[("token", "abc")]).await;
    expect(again, 400, error("Token does not exist")).await;
}

#[actix_web::test]
async fn legacy_token_parameters_are_checked() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let bad_apns =
        post(&app, &app.owner, "/users/me/apns_device_token", &[("token", "zz"), ("appid", "org.zulip.Zulip")]);
    expect(bad_apns.await, 400, error("Invalid APNS token")).await;
    let empty = post(&app, &app.owner, "/users/me/android_gcm_reg_id", &[("token", "")]).await;
    expect(empty, 400, error("Empty or invalid length token")).await;
}

#[actix_web::test]
async fn legacy_registrations_are_forwarded() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let apns = [("token", "c0ffee"), ("appid", "org.zulip.Zulip")];
    expect(post(&app, &hamlet, "/users/me/apns_device_token", &apns).await, 200, success()).await;

    let legacy = bouncer.wait_for("push/register", 1).await;
    let form = legacy[0].form();
    assert_eq!(
        (form["token"].as_str(), form["token_kind"].as_str(), form["ios_app_id"].as_str(), form["user_id"].as_str()),
        ("c0ffee", "1", "org.zulip.Zulip", hamlet.user_id.to_string().as_str())
    );
    assert_eq!(form["user_uuid"].len(), 36);
    let expected_auth = format!("Basic {}", STANDARD.encode(format!("{ORG_ID}:{ORG_KEY}")));
    assert_eq!(legacy[0].auth.as_deref(), Some(expected_auth.as_str()));
    assert!(legacy[0].user_agent.starts_with("ZulipServer/12.0 (Agora "));
    let data = register(&app, &hamlet, &[("fetch_event_types", r#"["realm"]"#)]).await;
    assert_eq!(data["realm_push_notifications_enabled"], true);
    // Removing a token forwards the removal.
    let removed = send(&app, &hamlet, Method::DELETE, "/users/me/apns_device_token", &[("token", "c0ffee")]).await;
    expect(removed, 200, success()).await;
    let gone = bouncer.wait_for("push/unregister", 1).await;
    assert_eq!(gone[0].form()["token"], "c0ffee");
}

/// Registers a legacy FCM token for `who` (`POST /users/me/android_gcm_reg_id`).
pub(crate) async fn fcm_token(app: &TestApp, who: &Creds, token: &str) {
    expect(post(app, who, "/users/me/android_gcm_reg_id", &[("token", token)]).await, 200, success()).await;
}

/// Registers an end-to-end encrypted FCM device for `who` (a device record, then its key
/// and token) and waits until the bouncer has its token; its id.
pub(crate) async fn e2ee_device(app: &TestApp, who: &Creds, key: [u8; 32], token: &str) -> i64 {
    let device = client_device(app, who).await;
    let form = e2ee_form(device, key, "2408", token);
    expect(post(app, who, "/mobile_push/register", &borrowed(&form)).await, 200, success()).await;
    wait_active(app, who, device).await;
    device
}

/// Waits until `who`'s device `device` has its token registered at the bouncer.
pub(crate) async fn wait_active(app: &TestApp, who: &Creds, device: i64) {
    let start = Instant::now();
    while register(app, who, &[("fetch_event_types", r#"["device"]"#)]).await["devices"][device.to_string()]
        ["push_token_id"]
        .is_null()
    {
        assert!(start.elapsed() < Duration::from_secs(10), "device {device} was not registered");
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The owner sends `hamlet` a direct message; its id.
async fn dm(app: &TestApp, from: &Creds, to: &Creds, content: &str) -> i64 {
    let to = format!("[{}]", to.user_id);
    let response = post(app, from, "/messages", &[("type", "direct"), ("to", &to), ("content", content)]).await;
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

#[actix_web::test]
async fn a_direct_message_to_an_away_user_is_notified_and_removed_once_read() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    fcm_token(&app, &hamlet, "fcm-token").await;
    let key = [5u8; 32];
    e2ee_device(&app, &hamlet, key, "fcm-e2ee").await;

    let id = dm(&app, &app.owner, &hamlet, "Hello **Hamlet** &").await;
    let notified = bouncer.wait_for("push/notify", 1).await;
    assert_eq!(notified.len(), 1);
    let body = notified[0].json();
    let gcm = &body["gcm_payload"];
    let owner_email = app.owner.email.as_str();
    assert_eq!(
        (
            gcm["event"].as_str(),
            gcm["zulip_message_id"].as_i64(),
            gcm["content"].as_str(),
            gcm["recipient_type"].as_str()
        ),
        (Some("message"), Some(id), Some("Hello Hamlet &"), Some("private"))
    );
    assert_eq!((gcm["sender_id"].as_i64(), gcm["sender_email"].as_str()), (Some(app.owner.user_id), Some(owner_email)));
    assert_eq!((gcm["user_id"].as_i64(), gcm["realm_url"].as_str()), (Some(hamlet.user_id), Some("http://agora.test")));
    assert_eq!(gcm["content_truncated"], false);
    // Absolute, as Zulip's `absolute_avatar_url`.
    assert_eq!(gcm["sender_avatar_url"], "http://agora.test/user_avatars/1/jdenticon/1.png?version=1");
    assert_eq!(body["gcm_options"], json!({"priority": "high"}));
    assert_eq!(body["android_devices"], json!(["fcm-token"]));
    assert_eq!(body["apple_devices"], json!([]));
    let apns = &body["apns_payload"];
    assert_eq!(apns["alert"]["body"], "Hello Hamlet &");
    assert_eq!(apns["alert"]["subtitle"], "");
    assert_eq!(apns["custom"]["zulip"]["message_ids"], json!([id]));

    // The end-to-end encrypted device gets the same notification, encrypted with its push
    // key, addressed by its token's id (Zulip 12).
    let sealed = bouncer.wait_for("push/e2ee/notify", 1).await;
    let request = &sealed[0].json()["push_requests"][0];
    let token = token_id("fcm-e2ee");
    assert_eq!((request["token_id"].as_str(), request["fcm_priority"].as_str()), (Some(token.as_str()), Some("high")));
    assert_eq!(request["payload"]["push_key_id"], 2408);
    let opened = open(key, &request["payload"]["encrypted_data"]);
    let mut everyone = vec![app.owner.user_id, hamlet.user_id];
    everyone.sort_unstable();
    assert_eq!((opened["recipient_user_ids"].clone(), opened.get("pm_users")), (json!(everyone), None));
    assert_eq!(
        (
            opened["type"].as_str(),
            opened["message_id"].as_i64(),
            opened["recipient_type"].as_str(),
            opened["content"].as_str()
        ),
        (Some("message"), Some(id), Some("direct"), Some("Hello Hamlet &"))
    );
    assert_eq!(
        (opened["user_id"].as_i64(), opened["sender_id"].as_i64()),
        (Some(hamlet.user_id), Some(app.owner.user_id))
    );

    // Reading it takes it off the phone: a removal to each kind of device.
    let ids = format!("[{id}]");
    let read = post(&app, &hamlet, "/messages/flags", &[("messages", &ids), ("op", "add"), ("flag", "read")]).await;
    assert_eq!(read.status(), 200);
    let notified = bouncer.wait_for("push/notify", 2).await;
    let gcm = &notified[1].json()["gcm_payload"];
    assert_eq!(
        (gcm["event"].as_str(), gcm["zulip_message_ids"].as_str()),
        (Some("remove"), Some(id.to_string().as_str()))
    );
    assert_eq!(notified[1].json()["gcm_options"], json!({"priority": "normal"}));
    let sealed = bouncer.wait_for("push/e2ee/notify", 2).await;
    let request = &sealed[1].json()["push_requests"][0];
    let opened = open(key, &request["payload"]["encrypted_data"]);
    assert_eq!((opened["type"].as_str(), opened["message_ids"].clone()), (Some("remove"), json!([id])));
    // Reading it again removes nothing more.
    let unread =
        post(&app, &hamlet, "/messages/flags", &[("messages", &ids), ("op", "remove"), ("flag", "read")]).await;
    assert_eq!(unread.status(), 200);
    post(&app, &hamlet, "/messages/flags", &[("messages", &ids), ("op", "add"), ("flag", "read")]).await;
    let marker = dm(&app, &app.owner, &hamlet, "marker").await;
    let notified = bouncer.wait_for("push/notify", 3).await;
    assert_eq!(notified.len(), 3);
    assert_eq!(notified[2].json()["gcm_payload"]["zulip_message_id"], marker);
}

#[actix_web::test]
async fn a_muted_topic_sends_nothing() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    fcm_token(&app, &hamlet, "fcm-token").await;
    let subs = r#"[{"name": "denmark"}]"#;
    let principals = format!("[{}, {}]", hamlet.user_id, app.owner.user_id);
    let form = [("subscriptions", subs), ("principals", principals.as_str())];
    assert_eq!(post(&app, &app.owner, "/users/me/subscriptions", &form).await.status(), 200);
    let (_, body) =
        json(app.as_user(&hamlet, Method::GET, "/get_stream_id?stream=denmark").send().await.unwrap()).await;
    let channel = body["stream_id"].as_i64().unwrap().to_string();
    let on = r#"[{"stream_id": CH, "property": "push_notifications", "value": true}]"#.replace("CH", &channel);
    let props = post(&app, &hamlet, "/users/me/subscriptions/properties", &[("subscription_data", &on)]).await;
    assert_eq!(props.status(), 200);
    let mute = [("stream_id", channel.as_str()), ("topic", "quiet"), ("visibility_policy", "1")];
    assert_eq!(post(&app, &hamlet, "/user_topics", &mute).await.status(), 200);

    let quiet = [("type", "stream"), ("to", "denmark"), ("topic", "quiet"), ("content", "news")];
    assert_eq!(post(&app, &app.owner, "/messages", &quiet).await.status(), 200);
    let loud = [("type", "stream"), ("to", "denmark"), ("topic", "loud"), ("content", "news")];
    let (_, loud) = json(post(&app, &app.owner, "/messages", &loud).await).await;
    let notified = bouncer.wait_for("push/notify", 1).await;
    // Jobs go in order: the muted topic's message would have come first.
    assert_eq!(notified.len(), 1);
    let gcm = &notified[0].json()["gcm_payload"];
    assert_eq!((gcm["zulip_message_id"].clone(), gcm["topic"].as_str()), (loud["id"].clone(), Some("loud")));
    assert_eq!((gcm["recipient_type"].as_str(), gcm["stream"].as_str()), (Some("stream"), Some("denmark")));
}

#[actix_web::test]
async fn a_bouncer_that_is_down_delays_without_losing_or_repeating() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    fcm_token(&app, &hamlet, "fcm-token").await;
    bouncer.wait_for("push/register", 1).await;
    bouncer.stand.down.store(true, Ordering::SeqCst);
    let first = dm(&app, &app.owner, &hamlet, "one").await;
    let second = dm(&app, &app.owner, &hamlet, "two").await;
    // Wait until it was tried and refused a few times.
    let start = Instant::now();
    while bouncer.stand.refused.load(Ordering::SeqCst) < 3 {
        assert!(start.elapsed() < Duration::from_secs(10), "the worker did not retry");
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(bouncer.at("push/notify").is_empty());
    bouncer.stand.down.store(false, Ordering::SeqCst);
    let notified = bouncer.wait_for("push/notify", 2).await;
    let marker = dm(&app, &app.owner, &hamlet, "three").await;
    let notified_all = bouncer.wait_for("push/notify", 3).await;
    let ids: Vec<Value> = notified_all.iter().map(|g| g.json()["gcm_payload"]["zulip_message_id"].clone()).collect();
    assert_eq!(ids, vec![json!(first), json!(second), json!(marker)]);
    assert_eq!(notified.len(), 2);
}

#[actix_web::test]
async fn deactivated_users_lose_their_devices() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    fcm_token(&app, &hamlet, "fcm-token").await;
    let path = format!("/users/{}", hamlet.user_id);
    assert_eq!(send(&app, &app.owner, Method::DELETE, &path, &[]).await.status(), 200);
    let cleared = bouncer.wait_for("push/unregister/all", 1).await;
    assert_eq!(cleared[0].form()["user_id"], hamlet.user_id.to_string());
}

/// Runs `agora` with `args` (blocking, on a thread of the pool).
async fn agora(args: Vec<String>) -> std::process::Output {
    actix_web::web::block(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
            .args(&args)
            .env_remove("AGORA_PUSH_BOUNCER_URL")
            .env_remove("AGORA_PUSH_BOUNCER_ORG_ID")
            .env_remove("AGORA_PUSH_BOUNCER_ORG_KEY")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[actix_web::test]
async fn register_server_registers_with_the_bouncer() {
    let bouncer = stand_in().await;
    let dir = tempfile::tempdir().unwrap();
    let base = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["--data-dir", dir.path().to_str().unwrap(), "--external-host", "chat.example.org"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    // Terms first, as Zulip's command.
    let out = agora(base(&["register-server", "--contact-email", "admin@example.org"])).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("You must agree to the terms of service"));
    let out = agora(base(&[
        "register-server",
        "--agree-to-terms-of-service",
        "--contact-email",
        "admin@example.org",
        "--push-bouncer-url",
        &bouncer.url,
        "--push-bouncer-org-id",
        ORG_ID,
        "--push-bouncer-org-key",
        ORG_KEY,
    ]))
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("You've successfully registered for the Mobile Push Notification Service!"), "{stdout}");
    let got = bouncer.at("server/register");
    assert_eq!(got.len(), 1);
    let form = got[0].form();
    let expected: HashMap<String, String> = [
        ("zulip_org_id", ORG_ID),
        ("zulip_org_key", ORG_KEY),
        ("hostname", "chat.example.org"),
        ("contact_email", "admin@example.org"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(form, expected);
    assert_eq!(got[0].auth, None);
    // Without credentials it makes some and prints them for the settings.
    let out = agora(base(&[
        "register-server",
        "--agree-to-terms-of-service",
        "--contact-email",
        "admin@example.org",
        "--push-bouncer-url",
        &bouncer.url,
    ]))
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let form = bouncer.at("server/register")[1].form();
    assert!(stdout.contains(&format!("org_id = \"{}\"", form["zulip_org_id"])), "{stdout}");
    assert_eq!(form["zulip_org_key"].len(), 64);
}
