//! Zulip 12's logged-in devices, as the current mobile app uses them (feature levels 468 and
//! 470): `POST /register_client_device`, `POST /mobile_push/register` with a device's push
//! key and token id (each rotated on its own), the `devices` data set of `POST /register`,
//! the `device` events, what reaches a stand-in bouncer, and `POST /remove_client_device`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::{error, expect, missing, post, register, spawn_app_at, success, Creds, TestApp, Watch};
use crate::push::{
    app_with_bouncer, borrowed, client_device, e2ee_device, e2ee_form, fcm_token, push_key, stand_in, token_id,
    wait_active,
};

const REGISTER: &str = "/mobile_push/register";

/// Waits (a few seconds at most) for `n` events on `watch`.
async fn events(app: &TestApp, watch: &mut Watch, n: usize) -> Vec<Value> {
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < n && start.elapsed() < Duration::from_secs(10) {
        got.extend(watch.events(app).await);
        if got.len() < n {
            actix_web::rt::time::sleep(Duration::from_millis(5)).await;
        }
    }
    got
}

/// The `devices` data set of `who`.
async fn devices(app: &TestApp, who: &Creds) -> Value {
    register(app, who, &[("fetch_event_types", r#"["device"]"#)]).await["devices"].clone()
}

#[actix_web::test]
async fn a_device_registers_its_key_and_token_and_is_told_each_step() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["device"]"#).await;

    let device = client_device(&app, &hamlet).await;
    assert_eq!(events(&app, &mut watch, 1).await, vec![json!({"type": "device", "op": "add", "device_id": device})]);

    let form = e2ee_form(device, [1u8; 32], "2408", "fcm-token");
    let before = chrono::Utc::now().timestamp();
    expect(post(&app, &hamlet, REGISTER, &borrowed(&form)).await, 200, success()).await;
    let got = events(&app, &mut watch, 2).await;
    let token = token_id("fcm-token");
    let timestamp = got[0]["push_token_last_updated_timestamp"].as_i64().unwrap();
    assert!(timestamp >= before && timestamp <= chrono::Utc::now().timestamp());
    assert_eq!(
        got,
        vec![
            json!({"type": "device", "op": "update", "device_id": device, "push_key_id": 2408,
                "pending_push_token_id": token, "push_token_last_updated_timestamp": timestamp,
                "push_registration_error_code": null}),
            json!({"type": "device", "op": "update", "device_id": device, "push_token_id": token,
                "pending_push_token_id": null}),
        ]
    );
    // The bouncer got the token's id and the registration the app encrypted for it.
    let sent = bouncer.wait_for("push/e2ee/register", 1).await;
    let sent = sent[0].form();
    let mut keys: Vec<&str> = sent.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["bouncer_public_key", "encrypted_push_registration", "realm_uuid", "token_id"]);
    assert_eq!(
        (sent["token_id"].as_str(), sent["bouncer_public_key"].as_str(), sent["encrypted_push_registration"].as_str()),
        (token.as_str(), "Ym91bmNlci1rZXk=", "ZW5jcnlwdGVk")
    );
    assert_eq!(sent["realm_uuid"].len(), 36);
    assert_eq!(
        devices(&app, &hamlet).await,
        json!({ device.to_string(): {"push_key_id": 2408, "push_token_id": token, "pending_push_token_id": null,
            "push_token_last_updated_timestamp": timestamp, "push_registration_error_code": null} })
    );

    // The same registration again changes nothing and tells the bouncer nothing.
    expect(post(&app, &hamlet, REGISTER, &borrowed(&form)).await, 200, success()).await;
    // A new key alone.
    let key = push_key([2u8; 32]);
    let rotate_key = [("device_id", device.to_string()), ("push_key", key), ("push_key_id", "7".to_owned())];
    let rotate_key: Vec<(&str, &str)> = rotate_key.iter().map(|(k, v)| (*k, v.as_str())).collect();
    expect(post(&app, &hamlet, REGISTER, &rotate_key).await, 200, success()).await;
    assert_eq!(
        events(&app, &mut watch, 1).await,
        vec![json!({"type": "device", "op": "update", "device_id": device, "push_key_id": 7})]
    );
    expect(post(&app, &hamlet, REGISTER, &rotate_key).await, 200, success()).await;
    // A new token alone.
    let mut rotate_token = e2ee_form(device, [2u8; 32], "7", "new-token");
    rotate_token.retain(|(k, _)| k != "push_key" && k != "push_key_id");
    expect(post(&app, &hamlet, REGISTER, &borrowed(&rotate_token)).await, 200, success()).await;
    let got = events(&app, &mut watch, 2).await;
    let new_token = token_id("new-token");
    let timestamp = got[0]["push_token_last_updated_timestamp"].clone();
    assert_eq!(
        got,
        vec![
            json!({"type": "device", "op": "update", "device_id": device, "pending_push_token_id": new_token,
                "push_token_last_updated_timestamp": timestamp, "push_registration_error_code": null}),
            json!({"type": "device", "op": "update", "device_id": device, "push_token_id": new_token,
                "pending_push_token_id": null}),
        ]
    );
    assert_eq!(bouncer.wait_for("push/e2ee/register", 2).await.len(), 2);
    expect(post(&app, &hamlet, REGISTER, &borrowed(&rotate_token)).await, 200, success()).await;
    assert!(watch.events(&app).await.is_empty());

    // Logging out removes the record.
    let id = device.to_string();
    expect(post(&app, &hamlet, "/remove_client_device", &[("device_id", &id)]).await, 200, success()).await;
    assert_eq!(events(&app, &mut watch, 1).await, vec![json!({"type": "device", "op": "remove", "device_id": device})]);
    assert_eq!(devices(&app, &hamlet).await, json!({}));
    let again = post(&app, &hamlet, "/remove_client_device", &[("device_id", &id)]).await;
    expect(again, 400, error("Invalid `device_id`")).await;
    assert_eq!(bouncer.at("push/e2ee/register").len(), 2);
}

#[actix_web::test]
async fn registrations_are_checked_in_zulips_order() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let device = client_device(&app, &hamlet).await;
    let theirs = client_device(&app, &app.owner).await;
    let robot = create_bot(&app, &hamlet, "robot", &[]).await;
    expect(post(&app, &robot, REGISTER, &[]).await, 400, error("This endpoint does not accept bot requests.")).await;
    expect(post(&app, &hamlet, REGISTER, &[]).await, 400, missing("device_id")).await;

    let full = e2ee_form(device, [1u8; 32], "2408", "token");
    let with = |changes: &[(&str, &str)], removed: &[&str]| -> Vec<(String, String)> {
        let mut form = full.clone();
        form.retain(|(k, _)| !removed.contains(&k.as_str()));
        for (name, value) in changes {
            form.iter_mut().find(|(n, _)| n == name).unwrap().1 = value.to_string();
        }
        form
    };
    let theirs = theirs.to_string();
    let uint32 = "Invalid push_key_id: Value error, Not a valid unsigned 32-bit integer";
    let cases: Vec<(Vec<(String, String)>, Value)> = vec![
        (
            with(&[("token_kind", "gcm")], &[]),
            error("Invalid token_kind: Value error, Not in the list of possible values"),
        ),
        (with(&[("push_key_id", "-1")], &[]), error(uint32)),
        (with(&[("push_key_id", "4294967296")], &[]), error(uint32)),
        (with(&[("device_id", &theirs)], &[]), error("Invalid `device_id`")),
        (
            with(&[], &["push_key_id", "token_id"]),
            error("Missing parameters: must provide either all push key fields, all token fields, or both."),
        ),
        (with(&[], &["token_kind", "token_id"]), error("No push registration exists to rotate key for.")),
        (with(&[], &["push_key", "push_key_id"]), error("No push registration exists to rotate token for.")),
        (with(&[("token_id", "@abcdefg")], &[]), error("`token_id` is not Base64 encoded")),
        (with(&[("push_key", "@abcdefg")], &[]), error("Invalid `push_key`")),
        (with(&[("push_key", "abcd")], &[]), error("Invalid `push_key`")),
        (with(&[("push_key", &push_key([1u8; 32]).replacen('M', "Q", 1))], &[]), error("Invalid `push_key`")),
    ];
    for (form, expected) in cases {
        expect(post(&app, &hamlet, REGISTER, &borrowed(&form)).await, 400, expected).await;
    }
    assert!(bouncer.at("push/e2ee/register").is_empty());
    // One registration at a time: a second one while the first waits for the bouncer is
    // refused (the stand-in may already have answered; then the same form is a no-op).
    expect(post(&app, &hamlet, REGISTER, &borrowed(&full)).await, 200, success()).await;
    let second = post(&app, &hamlet, REGISTER, &borrowed(&with(&[("token_id", &token_id("other"))], &[]))).await;
    let (status, body) = crate::helpers::json(second).await;
    assert!(status == 200 || body == error("A registration for the device already in progress."), "{status} {body}");
}

#[actix_web::test]
async fn a_refused_registration_is_reported_and_can_be_retried() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let device = client_device(&app, &hamlet).await;
    let mut watch = Watch::new(&app, &hamlet, r#"["device"]"#).await;
    let mut form = e2ee_form(device, [1u8; 32], "9", "token");
    form.iter_mut().find(|(k, _)| k == "bouncer_public_key").unwrap().1 = "invalid".into();
    expect(post(&app, &hamlet, REGISTER, &borrowed(&form)).await, 200, success()).await;
    let got = events(&app, &mut watch, 2).await;
    assert_eq!(
        got[1],
        json!({"type": "device", "op": "update", "device_id": device,
            "push_registration_error_code": "INVALID_BOUNCER_PUBLIC_KEY"})
    );
    let listed = devices(&app, &hamlet).await[device.to_string()].clone();
    assert_eq!(
        (listed["push_registration_error_code"].as_str(), listed["push_token_id"].is_null()),
        (Some("INVALID_BOUNCER_PUBLIC_KEY"), true)
    );
    assert_eq!(listed["pending_push_token_id"], token_id("token"));
    // A failed registration may be sent again at once, and then succeeds.
    let good = e2ee_form(device, [1u8; 32], "9", "token");
    expect(post(&app, &hamlet, REGISTER, &borrowed(&good)).await, 200, success()).await;
    wait_active(&app, &hamlet, device).await;
    let listed = devices(&app, &hamlet).await[device.to_string()].clone();
    assert_eq!(listed["push_registration_error_code"], Value::Null);
}

#[actix_web::test]
async fn a_token_the_bouncer_forgot_is_cleared() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let device = e2ee_device(&app, &hamlet, [4u8; 32], "stale").await;
    let mut watch = Watch::new(&app, &hamlet, r#"["device"]"#).await;
    bouncer.stand.gone.lock().unwrap().push(token_id("stale"));
    let id = device.to_string();
    expect(post(&app, &hamlet, "/mobile_push/e2ee/test_notification", &[("device_id", &id)]).await, 200, success())
        .await;
    assert_eq!(
        events(&app, &mut watch, 1).await,
        vec![json!({"type": "device", "op": "update", "device_id": device, "push_token_id": null})]
    );
    // Not active any more.
    let again = post(&app, &hamlet, "/mobile_push/e2ee/test_notification", &[("device_id", &id)]).await;
    let no_device =
        json!({"result": "error", "msg": "No active registered push device", "code": "NO_ACTIVE_PUSH_DEVICE"});
    expect(again, 400, no_device).await;
}

#[actix_web::test]
async fn devices_are_the_users_own_and_outlive_a_restart() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let first = client_device(&app, &hamlet).await;
    let second = client_device(&app, &hamlet).await;
    assert!(second > first);
    assert_eq!(devices(&app, &app.owner).await, json!({}));
    let id = first.to_string();
    let theirs = post(&app, &app.owner, "/remove_client_device", &[("device_id", &id)]).await;
    expect(theirs, 400, error("Invalid `device_id`")).await;
    expect(post(&app, &hamlet, "/remove_client_device", &[]).await, 400, missing("device_id")).await;
    let data_dir = app.data_dir.clone();
    let _tmp = app.stop().await;
    let app = spawn_app_at(&data_dir).await;
    let listed = devices(&app, &hamlet).await;
    let ids: Vec<&String> = listed.as_object().unwrap().keys().collect();
    assert_eq!(ids, [&first.to_string(), &second.to_string()]);
}

#[actix_web::test]
async fn a_new_api_key_removes_the_users_devices() {
    // Feature level 492: regenerating the key logs every device out, registrations and all.
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let othello = app.create_user("", "othello@agora.test", "Othello", 400).await;
    let device = client_device(&app, &hamlet).await;
    let form = e2ee_form(device, [1u8; 32], "2408", "fcm-token");
    expect(post(&app, &hamlet, REGISTER, &borrowed(&form)).await, 200, success()).await;
    let kept = client_device(&app, &othello).await;

    let (status, body) = crate::helpers::json(post(&app, &hamlet, "/users/me/api_key/regenerate", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    let hamlet = Creds { api_key: body["api_key"].as_str().unwrap().to_owned(), ..hamlet };
    assert_eq!(devices(&app, &hamlet).await, json!({}));
    let theirs: Vec<String> = devices(&app, &othello).await.as_object().unwrap().keys().cloned().collect();
    assert_eq!(theirs, [kept.to_string()]);
}

#[actix_web::test]
async fn an_encrypted_registration_replaces_the_legacy_one_of_the_same_token() {
    // Feature level 483: the phone's legacy registration goes once its token is registered
    // for encrypted notifications; another token's stays.
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    for token in ["fcm-token", "other-phone"] {
        fcm_token(&app, &hamlet, token).await;
    }
    e2ee_device(&app, &hamlet, [3u8; 32], "fcm-token").await;
    let gone = bouncer.wait_for("push/unregister", 1).await;
    assert_eq!(gone.len(), 1);
    assert_eq!((gone[0].form()["token"].as_str(), gone[0].form()["token_kind"].as_str()), ("fcm-token", "2"));
}
