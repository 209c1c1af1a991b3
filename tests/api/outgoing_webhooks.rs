//! Outgoing webhooks over HTTP: a mention of an outgoing-webhook bot, or a direct message
//! to it, is POSTed to its service (a local HTTP server here) with Zulip's payload, and
//! the reply comes back as the bot: in the topic, or in the conversation. Failures give
//! Zulip's notices, to the conversation and to the bot's owner.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agora_actors::config::OutgoingWebhookConfig;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::bots::create_bot;
use crate::helpers::{json, poll, post, register, spawn_app_with, Creds, TestApp};

/// A bot's service: records each request's JSON body and answers with the next scripted
/// (status, body), or 200 `{}` once the script is done.
struct Service {
    url: String,
    requests: mpsc::UnboundedReceiver<Value>,
    script: Arc<Mutex<VecDeque<(u16, String)>>>,
    /// Each answer waits for a permit.
    gate: Arc<tokio::sync::Semaphore>,
}

impl Service {
    async fn start() -> Service {
        Service::start_at(0, tokio::sync::Semaphore::MAX_PERMITS).await
    }

    /// A service on `port` (0: any) that gives `permits` answers before waiting for
    /// [`Service::release`].
    async fn start_at(port: u16, permits: usize) -> Service {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let gate = Arc::new(tokio::sync::Semaphore::new(permits));
        let permits = Arc::clone(&gate);
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let (tx, requests) = mpsc::unbounded_channel();
        let script: Arc<Mutex<VecDeque<(u16, String)>>> = Arc::default();
        let answers = Arc::clone(&script);
        actix_web::rt::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let body = loop {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break None;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                    let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map(|v| v.trim().parse().unwrap())
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + length {
                        break Some(buf[end + 4..end + 4 + length].to_vec());
                    }
                };
                let Some(body) = body else { continue };
                let _ = tx.send(serde_json::from_slice(&body).unwrap_or(Value::Null));
                permits.acquire().await.unwrap().forget();
                let (status, text) = answers.lock().unwrap().pop_front().unwrap_or((200, "{}".into()));
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = conn.write_all(response.as_bytes()).await;
            }
        });
        Service { url, requests, script, gate }
    }

    /// Lets one more answer go.
    fn release(&self) {
        self.gate.add_permits(1);
    }

    fn answer(&self, status: u16, body: &str) {
        self.script.lock().unwrap().push_back((status, body.to_owned()));
    }

    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(20), self.requests.recv()).await.unwrap().unwrap()
    }
}

/// A long-polled queue of `message` events.
struct Messages {
    who: Creds,
    queue_id: String,
    last: i64,
}

impl Messages {
    async fn new(app: &TestApp, who: &Creds) -> Messages {
        let body = register(app, who, &[("event_types", r#"["message"]"#), ("apply_markdown", "false")]).await;
        Messages { who: who.clone(), queue_id: body["queue_id"].as_str().unwrap().to_owned(), last: -1 }
    }

    /// The next message sent by `sender` (waiting for it).
    async fn from(&mut self, app: &TestApp, sender: &Creds) -> Value {
        loop {
            let (status, body) = json(poll(app, &self.who, &self.queue_id, self.last).send().await.unwrap()).await;
            assert_eq!(status, 200, "{body}");
            for event in body["events"].as_array().unwrap() {
                self.last = event["id"].as_i64().unwrap();
                if event["type"] == "message" && event["message"]["sender_id"] == json!(sender.user_id) {
                    return event["message"].clone();
                }
            }
        }
    }
}

async fn app() -> TestApp {
    spawn_app_with(|s| {
        s.outgoing_webhooks = OutgoingWebhookConfig {
            timeout: Duration::from_secs(5),
            max_retries: 2,
            retry_initial: Duration::from_millis(20),
            retry_max: Duration::from_millis(40),
            poll_interval: Duration::from_millis(50),
        }
    })
    .await
}

async fn bot_token(app: &TestApp) -> String {
    let data = register(app, &app.owner, &[("fetch_event_types", r#"["realm_bot"]"#)]).await;
    data["realm_bots"][0]["services"][0]["token"].as_str().unwrap().to_owned()
}

async fn send_to_channel(app: &TestApp, who: &Creds, content: &str) -> i64 {
    let form = [("type", "stream"), ("to", "Denmark"), ("topic", "pings"), ("content", content)];
    let (status, body) = json(post(app, who, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// The owner's outgoing-webhook bot "Echo", posting to `url` (a JSON string).
async fn echo_bot(app: &TestApp, url: &str) -> Creds {
    create_bot(app, &app.owner, "echo", &[("bot_type", "3"), ("payload_url", url), ("full_name", "Echo")]).await
}

#[actix_web::test]
async fn a_mention_is_posted_to_the_service_and_its_reply_comes_back_in_the_topic() {
    let app = app().await;
    let mut service = Service::start().await;
    let url = format!("\"{}\"", service.url);
    let _ = post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let bot = echo_bot(&app, &url).await;
    let token = bot_token(&app).await;
    let mut messages = Messages::new(&app, &app.owner).await;

    service.answer(200, r#"{"content": "pong **back**"}"#);
    let id = send_to_channel(&app, &app.owner, "@**Echo** ping").await;
    let request = service.next().await;
    let message = &request["message"];
    assert_eq!(
        (&request["data"], &request["bot_email"], &request["bot_full_name"], &request["token"], &request["trigger"]),
        (&json!("@**Echo** ping"), &json!(bot.email), &json!("Echo"), &json!(token), &json!("mention"))
    );
    let keys: Vec<&str> = request.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["data", "message", "bot_email", "bot_full_name", "token", "trigger"]);
    assert_eq!(
        (&message["id"], &message["content"], &message["subject"], &message["display_recipient"], &message["type"]),
        (&json!(id), &json!("@**Echo** ping"), &json!("pings"), &json!("Denmark"), &json!("stream"))
    );
    assert_eq!(
        (&message["sender_id"], &message["content_type"]),
        (&json!(app.owner.user_id), &json!("text/x-markdown"))
    );
    assert!(message["rendered_content"].as_str().unwrap().contains("user-mention"), "{message}");
    assert!(message.get("avatar_computable").is_none());

    let reply = messages.from(&app, &bot).await;
    assert_eq!(
        (&reply["content"], &reply["subject"], &reply["display_recipient"]),
        (&json!("pong **back**"), &json!("pings"), &json!("Denmark"))
    );

    // Messages that do not mention it, and its own messages, trigger nothing.
    send_to_channel(&app, &app.owner, "no mention here").await;
    service.answer(200, r#"{"response_not_required": true}"#);
    send_to_channel(&app, &app.owner, "@**Echo** quiet").await;
    assert_eq!(service.next().await["data"], json!("@**Echo** quiet"));
    let bot_form = [("type", "stream"), ("to", "Denmark"), ("topic", "pings"), ("content", "@**Echo** from itself")];
    let (status, _) = json(post(&app, &bot, "/messages", &bot_form).await).await;
    assert_eq!(status, 200);
    service.answer(200, r#"{"content": "last"}"#);
    send_to_channel(&app, &app.owner, "@**Echo** last").await;
    assert_eq!(service.next().await["data"], json!("@**Echo** last"));
    // The next message from the bot is its own, then the reply to the last mention: none
    // for the quiet one.
    assert_eq!(messages.from(&app, &bot).await["content"], json!("@**Echo** from itself"));
    assert_eq!(messages.from(&app, &bot).await["content"], json!("last"));
}

#[actix_web::test]
async fn a_direct_message_is_answered_in_the_conversation() {
    let app = app().await;
    let mut service = Service::start().await;
    let url = format!("\"{}\"", service.url);
    let bot = echo_bot(&app, &url).await;
    let mut messages = Messages::new(&app, &app.owner).await;
    service.answer(200, r#"{"content": "hello human"}"#);
    let to = format!("[{}]", bot.user_id);
    let form = [("type", "direct"), ("to", to.as_str()), ("content", "hi bot")];
    expect_ok(post(&app, &app.owner, "/messages", &form).await).await;
    let request = service.next().await;
    assert_eq!(
        (&request["trigger"], &request["data"], &request["message"]["type"]),
        (&json!("direct_message"), &json!("hi bot"), &json!("private"))
    );
    let reply = messages.from(&app, &bot).await;
    assert_eq!((&reply["content"], &reply["type"]), (&json!("hello human"), &json!("private")));
    let participants: Vec<i64> =
        reply["display_recipient"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(participants.len(), 2);
    assert!(participants.contains(&app.owner.user_id) && participants.contains(&bot.user_id));
}

async fn expect_ok(response: reqwest::Response) {
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
}

#[actix_web::test]
async fn failures_give_zulips_notices_to_the_conversation_and_the_owner() {
    let app = app().await;
    let mut service = Service::start().await;
    let url = format!("\"{}\"", service.url);
    let _ = post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let bot = echo_bot(&app, &url).await;
    let mut messages = Messages::new(&app, &app.owner).await;

    service.answer(500, "oops");
    let id = send_to_channel(&app, &app.owner, "@**Echo** break").await;
    service.next().await;
    let failure = messages.from(&app, &bot).await;
    assert_eq!(
        (&failure["content"], &failure["subject"]),
        (&json!("Failure! Third party responded with 500"), &json!("pings"))
    );
    let note = messages.from(&app, &bot).await;
    let link = format!("http://{}/#narrow/channel/", crate::helpers::HOST);
    let expected = format!(
        "[A message]({link}{}-Denmark/topic/pings/near/{id}) to your bot @_**Echo** triggered an outgoing webhook.\nThe webhook got a response with status code *500*.\nThe response contains the following payload:\n```\nb'oops'\n```",
        channel_id(&app).await
    );
    assert_eq!((&note["content"], &note["type"]), (&json!(expected), &json!("private")));

    // A body that is not JSON.
    service.answer(200, "not json");
    send_to_channel(&app, &app.owner, "@**Echo** garbled").await;
    service.next().await;
    assert_eq!(messages.from(&app, &bot).await["content"], json!("Failure! Invalid JSON in response"));
    let note = messages.from(&app, &bot).await;
    let note = note["content"].as_str().unwrap();
    assert!(
        note.ends_with("triggered an outgoing webhook.\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid JSON in response\nThe response contains the following payload:\n```\n'not json'\n```"),
        "{note}"
    );
}

async fn channel_id(app: &TestApp) -> i64 {
    let (_, body) =
        json(app.as_user(&app.owner, Method::GET, "/get_stream_id?stream=Denmark").send().await.unwrap()).await;
    body["stream_id"].as_i64().unwrap()
}

#[actix_web::test]
async fn an_unreachable_service_is_retried_then_given_up() {
    let app = app().await;
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("\"http://127.0.0.1:{port}/hook\"");
    let _ = post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let bot = echo_bot(&app, &url).await;
    let mut messages = Messages::new(&app, &app.owner).await;
    send_to_channel(&app, &app.owner, "@**Echo** anyone?").await;
    assert_eq!(messages.from(&app, &bot).await["content"], json!("Failure! Bot is unavailable"));
    let note = messages.from(&app, &bot).await;
    assert!(
        note["content"].as_str().unwrap().ends_with(
            "to your bot @_**Echo** triggered an outgoing webhook.\nA connection error occurred. Is my bot server down?"
        ),
        "{note}"
    );
}

#[actix_web::test]
async fn a_job_waiting_at_a_stop_is_sent_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on yet: the first server's attempt fails.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.outgoing_webhooks.retry_initial = Duration::from_secs(3600);
    let app = crate::helpers::spawn_with(settings).await;
    let url = format!("\"http://127.0.0.1:{port}/hook\"");
    let _ = post(&app, &app.owner, "/users/me/subscriptions", &[("subscriptions", r#"[{"name": "Denmark"}]"#)]).await;
    let bot = echo_bot(&app, &url).await;
    let id = send_to_channel(&app, &app.owner, "@**Echo** later").await;
    app.stop().await;

    // The job was written with the message; an hour passes (its retry falls due).
    let conn = rusqlite::Connection::open(dir.path().join("agora.sqlite3")).unwrap();
    let (message_id, attempts): (i64, i64) = conn
        .query_row("SELECT message_id, attempts FROM outgoing_webhook_jobs", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(message_id, id);
    assert!(attempts <= 1, "{attempts}");
    conn.execute("UPDATE outgoing_webhook_jobs SET next_attempt_at = 0", []).unwrap();
    drop(conn);

    let mut service = Service::start_at(port, 0).await;
    service.answer(200, r#"{"content": "sorry I was away"}"#);
    let app = crate::helpers::spawn_app_at(dir.path()).await;
    let request = service.next().await;
    assert_eq!((&request["data"], &request["message"]["id"]), (&json!("@**Echo** later"), &json!(id)));
    let mut messages = Messages::new(&app, &app.owner).await;
    service.release();
    let reply = messages.from(&app, &bot).await;
    assert_eq!((&reply["content"], &reply["subject"]), (&json!("sorry I was away"), &json!("pings")));
    app.stop().await;
}

#[actix_web::test]
async fn a_scheduled_message_to_the_bot_reaches_its_service_when_sent() {
    let app = app().await;
    let mut service = Service::start().await;
    let url = format!("\"{}\"", service.url);
    let bot = echo_bot(&app, &url).await;
    let mut messages = Messages::new(&app, &app.owner).await;
    service.answer(200, r#"{"content": "on time"}"#);
    let at = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 1).to_string();
    let to = format!("[{}]", bot.user_id);
    let form =
        [("type", "direct"), ("to", to.as_str()), ("content", "later, bot"), ("scheduled_delivery_timestamp", &at)];
    expect_ok(post(&app, &app.owner, "/scheduled_messages", &form).await).await;
    let request = service.next().await;
    assert_eq!(
        (&request["trigger"], &request["data"], &request["message"]["sender_id"]),
        (&json!("direct_message"), &json!("later, bot"), &json!(app.owner.user_id))
    );
    assert_eq!(messages.from(&app, &bot).await["content"], json!("on time"));
}
