//! `spawn_app()`: a real server on port 0 over a temporary data directory, and a client.

use std::path::{Path, PathBuf};

use agora::admin::AdminRequest;
use agora::http::hashing::HashPool;
use agora::settings::{ApiRateLimit, Settings};
use agora::startup::{Application, ShutdownHandle};
use agora_actors::ratelimit::Rule;
use agora_actors::registry::{RealmHandle, Realms};
use agora_actors::secrets::{hash_password, HashCost};
use reqwest::{Method, Response};
use serde_json::{json, Value};

pub use crate::openapi::ApiRequest;

/// The external host test servers use; organizations are `<sub>.agora.test`.
pub const HOST: &str = "agora.test";

/// Login and API credentials of one account.
#[derive(Debug, Clone)]
pub struct Creds {
    pub email: String,
    pub password: String,
    pub api_key: String,
    pub user_id: i64,
    /// The Host header of the account's organization.
    pub host: String,
}

pub struct TestApp {
    pub address: String,
    pub data_dir: PathBuf,
    /// The owner of the root organization created on first start.
    pub owner: Creds,
    pub realms: Realms,
    pub client: reqwest::Client,
    /// The server's password-hashing pool.
    pub hash_pool: HashPool,
    /// The metrics endpoint's port, when `metrics_bind` is set.
    pub metrics_port: Option<u16>,
    handle: ShutdownHandle,
    join: actix_web::rt::task::JoinHandle<std::io::Result<()>>,
    _tmp: Option<tempfile::TempDir>,
}

/// Requests per minute of the tests' rate limits: on, so that every request of every test
/// goes through them, but out of reach of any test but the rate-limit ones, which lower it.
pub const TEST_RATE_LIMIT: usize = 100_000;

/// Settings for tests: port 0, cheap hashing, no signal handling, rate limits out of reach.
pub fn test_settings(data_dir: &Path) -> Settings {
    let minute = std::time::Duration::from_secs(60);
    Settings {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.to_owned(),
        external_host: HOST.into(),
        http_workers: 2,
        actor_threads: 1,
        password_hash: HashCost::cheapest(),
        handle_signals: false,
        shutdown_timeout: std::time::Duration::from_secs(1),
        api_rate_limit: ApiRateLimit {
            enabled: true,
            per_user: Rule { max: TEST_RATE_LIMIT, window: minute },
            per_ip: Rule { max: TEST_RATE_LIMIT, window: minute },
        },
        ..Settings::default()
    }
}

/// A server on a fresh temporary data directory.
pub async fn spawn_app() -> TestApp {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().to_owned();
    let mut app = spawn_app_at(&path).await;
    app._tmp = Some(tmp);
    app
}

/// A server on a fresh temporary data directory, with settings changed by `tweak`.
pub async fn spawn_app_with(tweak: impl FnOnce(&mut Settings)) -> TestApp {
    let tmp = tempfile::tempdir().unwrap();
    let mut settings = test_settings(tmp.path());
    tweak(&mut settings);
    let mut app = spawn_with(settings).await;
    app._tmp = Some(tmp);
    app
}

/// A server on `data_dir` (which keeps its files when the server stops).
pub async fn spawn_app_at(data_dir: &Path) -> TestApp {
    spawn_with(test_settings(data_dir)).await
}

/// A server with the given settings.
pub async fn spawn_with(settings: Settings) -> TestApp {
    let data_dir = settings.data_dir.clone();
    let app = Application::build(settings).await.expect("server starts");
    let address = format!("http://127.0.0.1:{}", app.port());
    let realms = app.realms();
    let handle = app.handle();
    let hash_pool = app.hash_pool();
    let metrics_port = app.metrics_port();
    let join = actix_web::rt::spawn(app.run());
    let owner = read_owner(&data_dir);
    let client = reqwest::Client::new();
    TestApp { address, data_dir, owner, realms, client, hash_pool, metrics_port, handle, join, _tmp: None }
}

/// The bootstrap owner's credentials, from the files the server wrote (empty when the
/// directory was prepared without a bootstrap).
fn read_owner(dir: &Path) -> Creds {
    let Ok(rc) = std::fs::read_to_string(dir.join("zuliprc")) else {
        return Creds {
            email: String::new(),
            password: String::new(),
            api_key: String::new(),
            user_id: 0,
            host: HOST.into(),
        };
    };
    let field = |name: &str| rc.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap().to_owned();
    Creds {
        email: field("email"),
        password: std::fs::read_to_string(dir.join("owner-password")).unwrap().trim().to_owned(),
        api_key: field("key"),
        user_id: 1,
        host: HOST.into(),
    }
}

impl TestApp {
    /// A request to `path` under `/api/v1`, addressed to the root organization.
    pub fn request(&self, method: Method, path: &str) -> ApiRequest {
        self.request_to(HOST, method, path)
    }

    /// A request to `path` under `/api/v1`, with the given Host header.
    pub fn request_to(&self, host: &str, method: Method, path: &str) -> ApiRequest {
        let path = format!("/api/v1{path}");
        let builder = self.client.request(method.clone(), format!("{}{path}", self.address)).header("Host", host);
        ApiRequest::new(builder, method, path)
    }

    /// An authenticated request as `who`, to `who`'s organization.
    pub fn as_user(&self, who: &Creds, method: Method, path: &str) -> ApiRequest {
        self.request_to(&who.host, method, path).basic_auth(&who.email, Some(&who.api_key))
    }

    /// The running actor of an organization.
    pub fn realm(&self, subdomain: &str) -> RealmHandle {
        self.realms.directory.get(subdomain).expect("realm running")
    }

    /// Creates an organization with an owner through the server's actors.
    pub async fn create_realm(&self, subdomain: &str, owner_email: &str) -> Creds {
        let password = format!("pw-{subdomain}-owner");
        let request = AdminRequest::CreateRealm {
            subdomain: subdomain.into(),
            name: format!("Org {subdomain}"),
            owner_email: owner_email.into(),
            owner_name: "Org Owner".into(),
            owner_password_hash: Some(hash_password(&password, HashCost::cheapest()).unwrap()),
        };
        let out = request.run_in_server(&self.realms).await.unwrap();
        creds(&out, owner_email, &password, subdomain)
    }

    /// Creates a user through the server's actors, as a fixture: the account alone, without
    /// the default channels and welcome messages of a real new member (see the onboarding
    /// tests for those).
    pub async fn create_user(&self, subdomain: &str, email: &str, full_name: &str, role: i64) -> Creds {
        let password = format!("pw-{email}");
        let role = agora_actors::realm::model::Role::from_i64(role).unwrap();
        let hash = Some(hash_password(&password, HashCost::cheapest()).unwrap());
        let new = agora_actors::realm::users::NewUser::human(email, full_name, role, hash);
        let realm = self.realms.find(subdomain).await.unwrap().unwrap();
        let msg = agora_actors::realm::onboarding::testing::CreateFixtureUser(new);
        let created = realm.addr.send(msg).await.unwrap().unwrap();
        let out = json!({"realm_id": realm.id, "user_id": created.user_id, "api_key": created.api_key});
        creds(&out, email, &password, subdomain)
    }

    /// Stops the server gracefully and waits until it is down.
    pub async fn stop(self) -> Option<tempfile::TempDir> {
        self.handle.stop(true).await;
        self.join.await.unwrap().unwrap();
        self._tmp
    }
}

fn creds(out: &Value, email: &str, password: &str, subdomain: &str) -> Creds {
    Creds {
        email: email.into(),
        password: password.into(),
        api_key: out["api_key"].as_str().unwrap().into(),
        user_id: out["user_id"].as_i64().unwrap(),
        host: if subdomain.is_empty() { HOST.into() } else { format!("{subdomain}.{HOST}") },
    }
}

/// Status and JSON body of a response (the body must be JSON ending in a newline).
pub async fn json(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert!(text.ends_with('\n'), "body lacks Zulip's trailing newline: {text:?}");
    (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")))
}

/// Makes Gravatar the avatar of accounts created from now on (a new organization gives
/// Jdenticons, as Zulip 12's): for tests of what depends on gravatars.
pub async fn gravatar_default(app: &TestApp) {
    let form = [("default_avatar_source", "G")];
    let (status, body) = json(send(app, &app.owner, Method::PATCH, "/realm", &form).await).await;
    assert_eq!(status, 200, "{body}");
}

/// Turns on Notification Bot's notices in each channel's "channel events" topic (level
/// 434's `send_channel_events_messages`), off in a new organization as in Zulip 12.
pub async fn channel_event_notices_on(app: &TestApp) {
    let on = [("send_channel_events_messages", "true")];
    let (status, body) = json(send(app, &app.owner, Method::PATCH, "/realm", &on).await).await;
    assert_eq!(status, 200, "{body}");
}

/// Asserts a response's status and its exact body: the same keys in the same order, the
/// same values, compact, with Zulip's trailing newline.
pub async fn expect(response: Response, status: u16, expected: Value) {
    let got_status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!((got_status, text), (status, format!("{}\n", serde_json::to_string(&expected).unwrap())));
}

/// Asserts two JSON values are the same, key order included.
pub fn assert_same(got: &Value, expected: &Value) {
    assert_eq!(serde_json::to_string(got).unwrap(), serde_json::to_string(expected).unwrap());
}

/// `POST /register` as `who` with a form; the (successful) body.
pub async fn register(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Value {
    let response = app.as_user(who, Method::POST, "/register").form(form).send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// A long poll of `queue_id` after `last_event_id`.
pub fn poll(app: &TestApp, who: &Creds, queue_id: &str, last_event_id: i64) -> ApiRequest {
    app.as_user(who, Method::GET, &format!("/events?queue_id={queue_id}&last_event_id={last_event_id}"))
}

/// A poll of `queue_id` that does not wait.
pub fn poll_now(app: &TestApp, who: &Creds, queue_id: &str, last_event_id: i64) -> ApiRequest {
    app.as_user(who, Method::GET, &format!("/events?queue_id={queue_id}&last_event_id={last_event_id}&dont_block=true"))
}

/// The `queue_id` of a register response.
pub fn queue_id(body: &Value) -> String {
    body["queue_id"].as_str().unwrap().to_owned()
}

/// A queue of `who` receiving only `event_types` (a JSON list), for watching what an action
/// sends: `Watch::events` returns what arrived since the last call, without the heartbeat.
#[allow(dead_code)] // Used by the area test modules as they land.
pub struct Watch {
    pub who: Creds,
    pub queue_id: String,
    last_event_id: i64,
}

#[allow(dead_code)]
impl Watch {
    /// Registers a queue for `who` with `event_types` (e.g. `r#"["realm_user"]"#`) and the
    /// modern capabilities (`user_settings_object`, `bulk_message_deletion`, ...).
    pub async fn new(app: &TestApp, who: &Creds, event_types: &str) -> Watch {
        let capabilities = r#"{"notification_settings_null":true,"bulk_message_deletion":true,"user_avatar_url_field_optional":false,"stream_typing_notifications":true,"user_settings_object":true,"linkifier_url_template":true,"user_list_incomplete":false,"include_deactivated_groups":true,"archived_channels":true,"empty_topic_name":true}"#;
        let body = register(app, who, &[("event_types", event_types), ("client_capabilities", capabilities)]).await;
        Watch { who: who.clone(), queue_id: queue_id(&body), last_event_id: -1 }
    }

    /// Registers a queue with the given register form (event types, capabilities...).
    pub async fn with_form(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Watch {
        let body = register(app, who, form).await;
        Watch { who: who.clone(), queue_id: queue_id(&body), last_event_id: -1 }
    }

    /// The events that arrived since the last call (without waiting), ids removed.
    pub async fn events(&mut self, app: &TestApp) -> Vec<Value> {
        let (status, body) =
            json(poll_now(app, &self.who, &self.queue_id, self.last_event_id).send().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        let mut out = Vec::new();
        for mut event in body["events"].as_array().unwrap().iter().cloned() {
            self.last_event_id = event["id"].as_i64().unwrap();
            event.as_object_mut().unwrap().remove("id");
            if event["type"] != "heartbeat" {
                out.push(event);
            }
        }
        out
    }
}

/// Zulip's plain error body: `BAD_REQUEST` with `msg`.
pub fn error(msg: &str) -> Value {
    json!({"result": "error", "msg": msg, "code": "BAD_REQUEST"})
}

/// Zulip's body for a missing required parameter.
pub fn missing(name: &str) -> Value {
    json!({"result": "error", "msg": format!("Missing '{name}' argument"), "var_name": name, "code": "REQUEST_VARIABLE_MISSING"})
}

/// A success body without data.
pub fn success() -> Value {
    json!({"result": "success", "msg": ""})
}

/// A form request as `who`.
pub async fn send(app: &TestApp, who: &Creds, method: Method, path: &str, form: &[(&str, &str)]) -> Response {
    app.as_user(who, method, path).form(form).send().await.unwrap()
}

/// A form `POST` as `who`.
pub async fn post(app: &TestApp, who: &Creds, path: &str, form: &[(&str, &str)]) -> Response {
    send(app, who, Method::POST, path, form).await
}

/// A response read off a raw connection.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    /// The value of header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends `request` as it is on a new connection to the server and reads one response, if
/// one comes within `within` (None otherwise). For requests no HTTP client sends: bodies
/// shorter than they claim, or cut inside a boundary. The connection stays open meanwhile.
pub async fn raw_exchange(app: &TestApp, request: &[u8], within: std::time::Duration) -> Option<RawResponse> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.address.trim_start_matches("http://")).await.unwrap();
    stream.write_all(request).await.unwrap();
    let read = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                let mut lines = head.split("\r\n");
                let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize =
                    headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
                    return Some(RawResponse { status, headers, body });
                }
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(within, read).await.ok().flatten()
}

/// The newest messages `who` has (up to 10), oldest first: (sender email, channel or "",
/// topic, content, flags).
pub async fn inbox(app: &TestApp, who: &Creds) -> Vec<(String, String, String, String, Vec<String>)> {
    let path = "/messages?anchor=newest&num_before=10&num_after=0&apply_markdown=false";
    let (status, body) = json(send(app, who, Method::GET, path, &[]).await).await;
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let channel =
                if m["type"] == "stream" { m["display_recipient"].as_str().unwrap().to_owned() } else { String::new() };
            let flags = m["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect();
            (
                m["sender_email"].as_str().unwrap().to_owned(),
                channel,
                m["subject"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
                flags,
            )
        })
        .collect()
}

/// The ids of the administrators' and the members' system groups, from `realm_user_groups`.
pub async fn admins_and_members_groups(app: &TestApp) -> (i64, i64) {
    let state = register(app, &app.owner, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let group = |name: &str| {
        state["realm_user_groups"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    (group("role:administrators"), group("role:members"))
}
