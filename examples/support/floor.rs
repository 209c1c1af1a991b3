//! The machine's floor for waking long-polls: a bare actix-web server, the same HTTP stack as
//! Agora's with nothing of Agora's behind it. `GET /api/v1/events` waits for a broadcast
//! (parameters and credentials are ignored); `POST /api/v1/fire` broadcasts one `message`
//! event, serialized once, whose bytes every waiting poll answers with. Load generators run
//! it as a process of its own (themselves, with `--floor-server`), so that a measurement of
//! Agora can be compared with this floor in the same run, on the same machine and load.

use std::sync::atomic::{AtomicI64, Ordering};

use actix_web::{web, App, HttpResponse, HttpServer};
use bytes::Bytes;
use tokio::sync::broadcast;

use super::queues::Queue;
use super::{spawn_guarded, Api, BoxError, ChildGuard, Creds};

/// `n` queues to long-poll on the floor server (which ignores ids and credentials).
pub fn queues(n: usize) -> Vec<Queue> {
    let nobody = Creds { email: "floor@example.com".into(), api_key: "floor".into() };
    (0..n)
        .map(|index| Queue {
            index,
            user: nobody.clone(),
            id: format!("floor-{index}"),
            last_event_id: -1,
            register_latency: std::time::Duration::ZERO,
        })
        .collect()
}

/// A message event about the size of Agora's for a short channel message.
fn event_body(id: i64) -> Bytes {
    let message = serde_json::json!({
        "id": id, "sender_id": 8, "content": format!("Round {id}"), "recipient_id": 3, "timestamp": 1_795_238_460,
        "client": "msgload", "subject": "rounds", "topic_links": [], "is_me_message": false, "reactions": [],
        "submessages": [], "sender_full_name": "Msgload Admin", "sender_email": "msgload-admin@example.com",
        "sender_realm_str": "", "display_recipient": "msgload delivery", "type": "stream", "stream_id": 3,
        "avatar_url": "https://secure.gravatar.com/avatar/00000000000000000000000000000000?d=identicon&version=1",
        "content_type": "text/x-markdown",
    });
    let event = serde_json::json!({ "type": "message", "message": message, "flags": [], "id": 0 });
    Bytes::from(format!(r#"{{"result":"success","msg":"","events":[{event}]}}"#))
}

struct Floor {
    tx: broadcast::Sender<Bytes>,
    next: AtomicI64,
}

async fn poll(floor: web::Data<Floor>) -> HttpResponse {
    let mut rx = floor.tx.subscribe();
    match rx.recv().await {
        Ok(body) => HttpResponse::Ok().content_type("application/json").body(body),
        Err(_) => HttpResponse::ServiceUnavailable().finish(),
    }
}

async fn fire(floor: web::Data<Floor>) -> HttpResponse {
    let id = floor.next.fetch_add(1, Ordering::SeqCst);
    let _ = floor.tx.send(event_body(id));
    HttpResponse::Ok().content_type("application/json").body(format!(r#"{{"result":"success","msg":"","id":{id}}}"#))
}

/// Runs the floor server on `port` with `workers` HTTP workers (0: half the CPUs, at least
/// one, as Agora's default), until killed.
pub fn serve(port: u16, workers: usize) -> Result<(), BoxError> {
    let system = actix_web::rt::System::new();
    system.block_on(async move {
        let floor = web::Data::new(Floor { tx: broadcast::channel(16).0, next: AtomicI64::new(1) });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(floor.clone())
                .route("/api/v1/events", web::get().to(poll))
                .route("/api/v1/fire", web::post().to(fire))
                .route("/api/v1/server_settings", web::get().to(HttpResponse::Ok))
        })
        .backlog(4096)
        .bind(("127.0.0.1", port))?;
        let half_the_cpus = (std::thread::available_parallelism().map_or(1, usize::from) / 2).max(1);
        server.workers(if workers > 0 { workers } else { half_the_cpus }).run().await
    })?;
    Ok(())
}

/// The floor server, started as a process of its own: this program again, with
/// `--floor-server PORT` (and `--floor-workers N`).
pub struct FloorServer {
    _child: ChildGuard,
    pub api: Api,
    pub pid: u32,
}

impl FloorServer {
    pub async fn start(client: reqwest::Client, workers: Option<usize>) -> Result<FloorServer, BoxError> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut args = vec!["--floor-server".to_owned(), port.to_string()];
        if let Some(n) = workers {
            args.extend(["--floor-workers".to_owned(), n.to_string()]);
        }
        let child = spawn_guarded(&std::env::current_exe()?, &args)?;
        let pid = child.0.id();
        let api = Api { client, base: format!("http://127.0.0.1:{port}") };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            if let Ok(response) = api.client.get(api.url("server_settings")).send().await {
                if response.status().is_success() {
                    return Ok(FloorServer { _child: child, api, pid });
                }
            }
            if std::time::Instant::now() > deadline {
                return Err("the floor server did not start within 20 s".into());
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Broadcasts one event; its message id.
    pub async fn fire(&self) -> Result<i64, BoxError> {
        let response = self.api.client.post(self.api.url("fire")).send().await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let reply = super::success_json("POST /api/v1/fire (floor)", status, &body)?;
        reply["id"].as_i64().ok_or_else(|| "floor: no id".into())
    }
}

/// `--floor-server PORT [--floor-workers N]` in the arguments: the floor server is what this
/// process is for (its callers check this before parsing their own arguments).
pub fn requested() -> Option<(u16, usize)> {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let port = value("--floor-server")?.parse().ok()?;
    Some((port, value("--floor-workers").and_then(|v| v.parse().ok()).unwrap_or(0)))
}

/// The `main` of a load generator that compares Agora with the floor: serves the floor when
/// started as one (`--floor-server`, a process of its own), else runs `run` on a runtime
/// of its own and reports as [`super::main_with`] does.
#[allow(dead_code)] // Not every load generator compares with the floor.
pub fn main<F>(name: &str, run: impl FnOnce() -> F) -> std::process::ExitCode
where
    F: std::future::Future<Output = Result<(), BoxError>>,
{
    use std::process::ExitCode;
    if let Some((port, workers)) = requested() {
        return match serve(port, workers) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{name} floor server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(super::main_with(name, run())),
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
