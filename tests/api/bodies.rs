//! Request bodies: size limits before and while reading, read timeouts, malformed
//! multipart, and authentication before any of the body is read. Most requests are written
//! by hand: no HTTP client sends a body shorter than it claims.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::helpers::{expect, raw_exchange, spawn_app, spawn_app_with, TestApp, HOST};

/// Longest wait for an answer that should come at once (or within a short timeout).
const PROMPTLY: Duration = Duration::from_secs(5);

/// A request head for `path` under `/api/v1` at the root organization.
fn head(method: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("{method} /api/v1{path} HTTP/1.1\r\nHost: {HOST}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn envelope(msg: &str, code: &str) -> String {
    format!("{}\n", json!({"result": "error", "msg": msg, "code": code}))
}

fn too_large() -> String {
    envelope("Request body is too large", "BAD_REQUEST")
}

/// Bodies may not be read for more than a second, nor wait 200 ms for a next chunk.
fn short_timeouts(app: &mut agora::settings::Settings) {
    app.request_body.timeout = Duration::from_secs(1);
    app.request_body.idle_timeout = Duration::from_millis(200);
}

#[actix_web::test]
async fn an_oversized_content_length_is_refused_before_the_body_is_sent() {
    let app = spawn_app().await;
    let length = (2 * 1024 * 1024).to_string();
    for (path, extra) in
        [("/fetch_api_key", None), ("/messages", None), ("/messages", Some(("Authorization", "Basic eDp5")))]
    {
        let mut headers =
            vec![("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", length.as_str())];
        headers.extend(extra);
        // Only the head is sent: the answer cannot wait for the body.
        let response = raw_exchange(&app, head("POST", path, &headers).as_bytes(), PROMPTLY)
            .await
            .unwrap_or_else(|| panic!("no answer to a 2 MiB Content-Length at {path}"));
        assert_eq!((response.status, response.body.as_str()), (413, too_large().as_str()), "{path}");
        assert_eq!(response.header("connection"), Some("close"));
    }
    app.stop().await;
}

#[actix_web::test]
async fn a_chunked_body_is_cut_off_at_the_limit() {
    let app = spawn_app_with(|s| s.request_body.max_bytes = 1024).await;
    let chunk = format!("{:x}\r\n{}\r\n", 800, "a".repeat(800));
    let mut request = head(
        "POST",
        "/fetch_api_key",
        &[("Content-Type", "application/x-www-form-urlencoded"), ("Transfer-Encoding", "chunked")],
    );
    request.push_str(&format!("{chunk}{chunk}0\r\n\r\n"));
    let response = raw_exchange(&app, request.as_bytes(), PROMPTLY).await.expect("an answer");
    assert_eq!((response.status, response.body.as_str()), (413, too_large().as_str()));
    // Within the limit, a body is read as before.
    let form = [("username", app.owner.email.as_str()), ("password", app.owner.password.as_str())];
    let response = app.request(Method::POST, "/fetch_api_key").form(&form).send().await.unwrap();
    assert_eq!(response.status(), 200);
    app.stop().await;
}

#[actix_web::test]
async fn a_multipart_body_ending_inside_a_boundary_is_malformed() {
    let app = spawn_app_with(short_timeouts).await;
    let body = "--XX\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nfoo@agora.test\r\n--X";
    let length = body.len().to_string();
    let mut request = head(
        "POST",
        "/fetch_api_key",
        &[("Content-Type", "multipart/form-data; boundary=XX"), ("Content-Length", length.as_str())],
    );
    request.push_str(body);
    // The whole body has come: it is malformed at once, not after the timeout.
    let started = Instant::now();
    let response = raw_exchange(&app, request.as_bytes(), PROMPTLY).await.expect("an answer to a cut multipart body");
    assert!(started.elapsed() < Duration::from_millis(200), "{:?}", started.elapsed());
    let malformed = envelope("Malformed request body", "BAD_REQUEST");
    assert_eq!((response.status, response.body.as_str()), (400, malformed.as_str()));
    app.stop().await;
}

#[actix_web::test]
async fn a_body_that_stops_arriving_is_answered_after_the_idle_timeout() {
    let app = spawn_app_with(short_timeouts).await;
    for content_type in ["application/x-www-form-urlencoded", "multipart/form-data; boundary=XX"] {
        let mut request = head("POST", "/fetch_api_key", &[("Content-Type", content_type), ("Content-Length", "100")]);
        request.push_str("--XX\r\nusern");
        let started = Instant::now();
        let response = raw_exchange(&app, request.as_bytes(), PROMPTLY).await.expect("an answer to a stalled body");
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        let timed_out = envelope("Timed out waiting for the request body", "REQUEST_TIMEOUT");
        assert_eq!((response.status, response.body.as_str()), (400, timed_out.as_str()), "{content_type}");
        assert_eq!(response.header("connection"), Some("close"));
    }
    app.stop().await;
}

/// A syntactically valid API key that is nobody's.
fn wrong_key(app: &TestApp) -> String {
    use base64::Engine;
    let credentials = format!("{}:{}", app.owner.email, "A".repeat(32));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials))
}

#[actix_web::test]
async fn credentials_are_checked_before_the_body_is_read() {
    let app = spawn_app().await;
    let invalid = json!({"result": "error", "msg": "Invalid API key", "code": "UNAUTHORIZED"});
    // A broken body behind bad credentials: the credentials are refused, the body unread.
    let response = app
        .request(Method::POST, "/messages")
        .header("Authorization", wrong_key(&app))
        .header("Content-Type", "multipart/form-data; boundary=xyz")
        .body("--xyz\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nunterminated")
        .send()
        .await
        .unwrap();
    expect(response, 401, invalid.clone()).await;
    // Nor does the answer wait for a body that is not coming.
    let authorization = wrong_key(&app);
    let request = head(
        "POST",
        "/messages",
        &[
            ("Authorization", authorization.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Content-Length", "1000"),
        ],
    );
    let response = raw_exchange(&app, request.as_bytes(), PROMPTLY).await.expect("an answer without the body");
    assert_eq!((response.status, response.body), (401, format!("{invalid}\n")));
    app.stop().await;
}

#[actix_web::test]
async fn a_page_form_that_trickles_in_is_answered() {
    let app = spawn_app_with(short_timeouts).await;
    // The sign-in form's head and the start of its body, then silence.
    let request = format!(
        "POST /login/ HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 100\r\n\r\nusername=a"
    );
    let started = Instant::now();
    let response = raw_exchange(&app, request.as_bytes(), PROMPTLY).await.expect("an answer");
    assert_eq!(response.status, 408);
    assert!(response.body.contains("The form took too long to arrive."), "{}", response.body);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    app.stop().await;
}
