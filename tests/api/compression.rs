//! gzip: large replies are compressed for clients that accept it and decode to the very
//! bytes a client without `Accept-Encoding` gets; small replies, long-poll events and
//! clients that refuse gzip get plain bodies.

use std::io::Read;

use reqwest::{Method, Response};
use serde_json::Value;

use crate::helpers::*;

/// Status, `Content-Encoding`, `Vary` and the raw body.
async fn raw(response: Response) -> (u16, Option<String>, Option<String>, Vec<u8>) {
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (encoding, vary) = (header("content-encoding"), header("vary"));
    let status = response.status().as_u16();
    (status, encoding, vary, response.bytes().await.unwrap().to_vec())
}

fn gunzip(bytes: &[u8]) -> String {
    let mut out = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut out).unwrap();
    out
}

/// The same request without and with `Accept-Encoding: gzip`: the plain body, and the
/// gzipped one decoded (asserting it was gzipped and smaller).
async fn plain_and_gzipped(app: &TestApp, who: &Creds, method: Method, path: &str) -> (String, String) {
    let (status, encoding, _, plain) = raw(app.as_user(who, method.clone(), path).send().await.unwrap()).await;
    assert_eq!((status, encoding), (200, None));
    let request = app.as_user(who, method, path).header("Accept-Encoding", "gzip, deflate, br");
    let (status, encoding, vary, packed) = raw(request.send().await.unwrap()).await;
    assert_eq!((status, encoding.as_deref(), vary.as_deref()), (200, Some("gzip"), Some("Accept-Encoding")));
    assert!(packed.len() < plain.len() / 2, "{} bytes gzipped, {} plain", packed.len(), plain.len());
    (String::from_utf8(plain).unwrap(), gunzip(&packed))
}

async fn members(app: &TestApp, n: usize) {
    for i in 0..n {
        app.create_user("", &format!("member{i}@agora.test"), &format!("Member Number {i}"), 400).await;
    }
}

#[actix_web::test]
async fn user_lists_and_messages_decode_to_the_plain_bytes() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    members(&app, 10).await;
    let (plain, unpacked) = plain_and_gzipped(&app, &owner, Method::GET, "/users").await;
    assert_eq!(unpacked, plain);
    assert!(serde_json::from_str::<Value>(&plain).unwrap()["members"].as_array().unwrap().len() >= 11);

    let to = owner.user_id.to_string();
    for i in 0..6 {
        let content = format!("Message {i} about **the release plan** and the lunch order, again and again.");
        let form = [("type", "direct"), ("to", to.as_str()), ("content", content.as_str())];
        assert_eq!(post(&app, &owner, "/messages", &form).await.status(), 200);
    }
    let path = "/messages?anchor=newest&num_before=10&num_after=0";
    let (plain, unpacked) = plain_and_gzipped(&app, &owner, Method::GET, path).await;
    assert_eq!(unpacked, plain);
    assert!(plain.contains("the release plan"));
    app.stop().await;
}

#[actix_web::test]
async fn a_gzipped_register_is_the_same_state() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    members(&app, 3).await;
    let (plain, unpacked) = plain_and_gzipped(&app, &owner, Method::POST, "/register").await;
    // Two registers differ in their queue and the presence data set's clock alone.
    let strip = |text: &str| {
        let mut state: Value = serde_json::from_str(text).unwrap();
        let object = state.as_object_mut().unwrap();
        assert!(object.remove("queue_id").is_some());
        object.remove("server_timestamp");
        serde_json::to_string(&state).unwrap()
    };
    assert!(plain.ends_with('\n') && unpacked.ends_with('\n'));
    assert_eq!(strip(&unpacked), strip(&plain));
    app.stop().await;
}

#[actix_web::test]
async fn small_replies_refusals_and_long_poll_events_stay_plain() {
    let app = spawn_app().await;
    let owner = app.owner.clone();
    members(&app, 10).await;
    // Small.
    let request = app.as_user(&owner, Method::GET, "/users/me").header("Accept-Encoding", "gzip");
    let (status, encoding, _, body) = raw(request.send().await.unwrap()).await;
    assert_eq!((status, encoding), (200, None));
    assert!(serde_json::from_slice::<Value>(&body).unwrap()["user_id"].is_i64());
    // Large, but gzip refused.
    for refusal in ["gzip;q=0", "identity", "br, deflate"] {
        let request = app.as_user(&owner, Method::GET, "/users").header("Accept-Encoding", refusal);
        let (status, encoding, _, body) = raw(request.send().await.unwrap()).await;
        assert_eq!((status, encoding), (200, None), "{refusal}");
        assert!(body.len() > 1400 && body.ends_with(b"\n"));
    }
    // A long-poll answered with one event.
    let queue = register(&app, &owner, &[("event_types", r#"["message"]"#)]).await;
    let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
    let long = "a long message body ".repeat(100);
    let to = owner.user_id.to_string();
    let form = [("type", "direct"), ("to", to.as_str()), ("content", long.as_str())];
    assert_eq!(post(&app, &owner, "/messages", &form).await.status(), 200);
    let request = poll(&app, &owner, &queue_id, -1).header("Accept-Encoding", "gzip");
    let (status, encoding, _, body) = raw(request.send().await.unwrap()).await;
    assert_eq!((status, encoding), (200, None));
    let events: Value = serde_json::from_slice(&body).unwrap();
    assert!(body.len() > 1400);
    assert_eq!(events["events"][0]["type"], "message");
    app.stop().await;
}
