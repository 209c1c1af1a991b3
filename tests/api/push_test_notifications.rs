//! Test notifications over HTTP (`POST /mobile_push/test_notification`, `POST
//! /mobile_push/e2ee/test_notification`): Zulip's checks and errors, and what reaches a
//! stand-in bouncer (the legacy devices' `push/test_notification`, the encrypted devices'
//! sealed `test` payload).

use serde_json::{json, Value};

use crate::bots::create_bot;
use crate::helpers::{error, expect, post, spawn_app, success};
use crate::push::{app_with_bouncer, client_device, e2ee_device, fcm_token, open, stand_in, token_id};

fn not_recognized() -> Value {
    json!({"result": "error", "msg": "Device not recognized", "code": "INVALID_PUSH_DEVICE_TOKEN"})
}

fn no_active_device() -> Value {
    json!({"result": "error", "msg": "No active registered push device", "code": "NO_ACTIVE_PUSH_DEVICE"})
}

const LEGACY: &str = "/mobile_push/test_notification";
const E2EE: &str = "/mobile_push/e2ee/test_notification";

#[actix_web::test]
async fn test_notifications_are_checked_as_zulip_checks_them() {
    let app = spawn_app().await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    let robot = create_bot(&app, &hamlet, "robot", &[]).await;
    // Humans only, before any parameter is read.
    let humans_only = error("This endpoint does not accept bot requests.");
    expect(post(&app, &robot, LEGACY, &[]).await, 400, humans_only.clone()).await;
    expect(post(&app, &robot, E2EE, &[("device_id", "x")]).await, 400, humans_only).await;
    // No device is no error for legacy devices: there is nothing to send to.
    expect(post(&app, &hamlet, LEGACY, &[]).await, 200, success()).await;
    expect(post(&app, &hamlet, LEGACY, &[("token", "abc")]).await, 400, not_recognized()).await;
    fcm_token(&app, &hamlet, "abc").await;
    // Without a push notification service, as on a Zulip server without one, nothing goes
    // out, and nothing fails.
    expect(post(&app, &hamlet, LEGACY, &[("token", "abc")]).await, 200, success()).await;
    expect(post(&app, &app.owner, LEGACY, &[("token", "abc")]).await, 400, not_recognized()).await;
    // Encrypted devices must be registered at the bouncer, which needs the service.
    expect(post(&app, &hamlet, E2EE, &[("device_id", "x")]).await, 400, error("device_id is not valid JSON")).await;
    expect(post(&app, &hamlet, E2EE, &[]).await, 400, no_active_device()).await;
    // A device record without a registered token is not active.
    let device = client_device(&app, &hamlet).await.to_string();
    expect(post(&app, &hamlet, E2EE, &[("device_id", &device)]).await, 400, no_active_device()).await;
    app.stop().await;
}

#[actix_web::test]
async fn test_notifications_reach_the_bouncer_for_the_chosen_devices() {
    let bouncer = stand_in().await;
    let app = app_with_bouncer(&bouncer).await;
    let hamlet = app.create_user("", "hamlet@agora.test", "Hamlet", 400).await;
    fcm_token(&app, &hamlet, "fcm-1").await;
    let apns = [("token", "c0ffee"), ("appid", "org.zulip.Zulip")];
    expect(post(&app, &hamlet, "/users/me/apns_device_token", &apns).await, 200, success()).await;

    // One device by its token.
    expect(post(&app, &hamlet, LEGACY, &[("token", "fcm-1")]).await, 200, success()).await;
    let sent = bouncer.wait_for("push/test_notification", 1).await;
    let body = sent[0].json();
    assert_eq!((body["token"].clone(), body["token_kind"].clone()), (json!("fcm-1"), json!(2)));
    assert_eq!(body["user_id"], hamlet.user_id);
    let registered = bouncer.wait_for("push/register", 1).await[0].form();
    assert_eq!(
        (body["realm_uuid"].as_str(), body["user_uuid"].as_str()),
        (Some(registered["realm_uuid"].as_str()), Some(registered["user_uuid"].as_str()))
    );
    let base = &body["base_payload"];
    let keys: Vec<&str> = base.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 6, "{base}");
    assert_eq!(
        (base["server"].as_str(), base["realm_url"].as_str(), base["realm_uri"].as_str(), base["user_id"].as_i64()),
        (Some("agora.test"), Some("http://agora.test"), Some("http://agora.test"), Some(hamlet.user_id))
    );
    // Every legacy device without one.
    expect(post(&app, &hamlet, LEGACY, &[]).await, 200, success()).await;
    let sent = bouncer.wait_for("push/test_notification", 3).await;
    let tokens: Vec<(Value, Value)> =
        sent[1..].iter().map(|g| (g.json()["token"].clone(), g.json()["token_kind"].clone())).collect();
    assert_eq!(tokens, vec![(json!("fcm-1"), json!(2)), (json!("c0ffee"), json!(1))]);

    // Encrypted devices: once registered, a sealed `test` payload.
    let key = [3u8; 32];
    let device = e2ee_device(&app, &hamlet, key, "fcm-e2ee").await;
    let other = (device + 1).to_string();
    expect(post(&app, &hamlet, E2EE, &[("device_id", &other)]).await, 400, no_active_device()).await;
    expect(post(&app, &hamlet, E2EE, &[("device_id", &device.to_string())]).await, 200, success()).await;
    let sealed = bouncer.wait_for("push/e2ee/notify", 1).await;
    let request = &sealed[0].json()["push_requests"][0];
    let token = token_id("fcm-e2ee");
    assert_eq!((request["token_id"].as_str(), request["fcm_priority"].as_str()), (Some(token.as_str()), Some("high")));
    assert_eq!(request["payload"]["push_key_id"], 2408);
    let opened = open(key, &request["payload"]["encrypted_data"]);
    let keys: Vec<&str> = opened.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 5, "{opened}");
    assert_eq!(
        (opened["type"].as_str(), opened["user_id"].as_i64(), opened["realm_url"].as_str()),
        (Some("test"), Some(hamlet.user_id), Some("http://agora.test"))
    );
    assert!(opened["time"].as_i64().is_some() && opened["realm_name"].is_string());
    app.stop().await;
}
