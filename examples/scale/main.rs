//! A large organization: 10,000 users, 1,000 channels (10 default channels with everyone,
//! the others with 20 members each), a million messages. Starts its own server
//! (`target/<profile>/agora`) on a fresh temporary data directory, makes a template member
//! and two template channels through the API, stops the server and copies them into its
//! SQLite file (see `bulk.rs`), starts it again and measures:
//!
//! 1. `POST /register` with every data set and `include_subscribers`, one at a time, then
//!    from 20 clients at once (each request's queue is deleted after it);
//! 2. `GET /users`; then register, `GET /users` and `GET /messages` without and with
//!    `Accept-Encoding: gzip` (bytes, latency, server CPU);
//! 3. `POST /users` in the large organization (one at a time, then 16 at once);
//! 4. presence: every user pinging once a minute (167 requests/s), 10% of them active
//!    (`examples/support/presence.rs`, as `presenceload`): the server's CPU;
//! 5. 10,000 idle long-polls (one queue per user): the server's memory, its CPU while they
//!    wait, and when their heartbeats came; then the memory as many long-polls cost a bare
//!    actix-web server (this program, `--floor-server`), the floor of Agora's HTTP stack.
//!
//! Each figure comes with the server's CPU time per request (`/proc/<pid>/stat`). The last
//! line of the report is one JSON object with every figure.
//!
//! ```text
//! cargo build --release && cargo run --release --example scale
//! ```
//!
//! The long-polls need over 10,000 open files in this program and in the server: raise
//! `ulimit -n`. Progress and each figure as it is measured go to stderr.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::seq::SliceRandom;
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

mod bulk;
mod gzip;
#[path = "../support/mod.rs"]
mod support;

use support::queues::{register_all, Pollers, Report};
use support::*;

const TEMPLATE_MEMBER: &str = "scale-template@example.com";
const DEFAULT_CHANNEL: &str = "scale default";
const CHANNEL: &str = "scale channel";

/// Benchmark of a large organization (register, GET /users, POST /users, presence, idle
/// long-polls).
#[derive(Debug, Parser)]
#[command(name = "scale")]
struct Args {
    /// Users in the organization
    #[arg(long, default_value_t = 10_000)]
    users: usize,
    /// Channels in the organization
    #[arg(long, default_value_t = 1000)]
    channels: usize,
    /// Default channels (every user subscribed)
    #[arg(long, default_value_t = 10)]
    default_channels: usize,
    /// Members of each other channel
    #[arg(long, default_value_t = 20)]
    channel_members: usize,
    /// Messages (in the ordinary channels)
    #[arg(long, default_value_t = 1_000_000)]
    messages: usize,
    /// Newest messages of each ordinary channel left unread for its members
    #[arg(long, default_value_t = 5)]
    unread_per_channel: usize,
    /// POST /register requests one at a time
    #[arg(long, default_value_t = 50)]
    registers: usize,
    /// Clients registering at once
    #[arg(long, default_value_t = 20)]
    register_clients: usize,
    /// POST /register requests of each of those clients
    #[arg(long, default_value_t = 5)]
    registers_per_client: usize,
    /// GET /users requests
    #[arg(long, default_value_t = 50)]
    user_lists: usize,
    /// POST /users requests, one at a time, then as many again 16 at once
    #[arg(long, default_value_t = 100)]
    creations: usize,
    /// Seconds between two presence pings of one user
    #[arg(long, default_value_t = 60)]
    presence_interval_secs: u64,
    /// Share of the users reporting `active`
    #[arg(long, default_value_t = 10)]
    presence_active_percent: usize,
    /// Measured presence window, after one interval of warm-up (0: no presence measurement)
    #[arg(long, default_value_t = 60)]
    presence_secs: u64,
    /// Requests of each compression case (register, GET /users, GET /messages), plain
    /// and gzipped alternately (0: none)
    #[arg(long, default_value_t = 20)]
    gzip_requests: usize,
    /// Idle long-polls, one queue per user (0: none)
    #[arg(long, default_value_t = 10_000)]
    idle_polls: usize,
    /// How long the idle long-polls are watched (heartbeats come after 45-55 s)
    #[arg(long, default_value_t = 70)]
    idle_secs: u64,
    /// Server binary to start [default: target/<profile>/agora, next to the examples directory]
    #[arg(long, value_name = "PATH")]
    server_bin: Option<std::path::PathBuf>,
    /// Server's log filter (`--log`)
    #[arg(long, value_name = "FILTER", default_value = "warn")]
    server_log: String,
    /// Passed to the server as `--http-workers`
    #[arg(long, value_name = "N")]
    http_workers: Option<usize>,
    /// Passed to the server as `--actor-threads`
    #[arg(long, value_name = "N")]
    actor_threads: Option<usize>,
    /// Keep a copy of the written organization in DIR (its database, zuliprc and the
    /// members' keys) for `--seed`
    #[arg(long, value_name = "DIR", conflicts_with = "seed")]
    save_seed: Option<std::path::PathBuf>,
    /// Start from an organization saved with `--save-seed` instead of writing one (the
    /// size options must be the same as when it was saved)
    #[arg(long, value_name = "DIR")]
    seed: Option<std::path::PathBuf>,
    /// Only write the organization and save it (with `--save-seed`), measuring nothing (the
    /// web client's benchmark, `examples/webclient`, starts from such a seed)
    #[arg(long, requires = "save_seed")]
    seed_only: bool,
}

/// What a seed directory holds besides the server's files.
const SEED_MEMBERS: &str = "scale-members.json";

fn main() -> ExitCode {
    // This program is also the bare server whose idle long-polls it compares with Agora's.
    support::floor::main("scale", || run(Args::parse()))
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.users < args.channel_members + 10 || args.channels <= args.default_channels || args.register_clients == 0 {
        return Err("need more users than channel members, more channels than default channels, and clients".into());
    }
    if let Some(limit) = open_file_limit().filter(|&limit| limit < args.idle_polls as u64 + 256) {
        eprintln!("warning: the open-file limit is {limit}; {} long-polls need more (ulimit -n)", args.idle_polls);
    }
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: args.server_log.clone(),
        http_workers: args.http_workers,
        actor_threads: args.actor_threads,
        dir_prefix: "agora-scale-",
        config: LOAD_CONFIG.to_owned(),
        capture_log: false,
        seed: args.seed.clone(),
    };
    // Held to the end: dropping it kills the server and removes its directory.
    let (mut server, api) = ManagedServer::start(&options, http_client()?).await?;
    eprintln!("server pid {} on {}, data in {}", server.pid(), api.base, server.dir.path().display());
    let db = server.dir.path().join("agora.sqlite3");
    let (admin, written, write_secs, restart_secs) = match &args.seed {
        Some(seed) => {
            let saved: Value = serde_json::from_slice(&std::fs::read(seed.join(SEED_MEMBERS))?)?;
            let creds = |v: &Value| -> Result<Creds, BoxError> {
                let field = |k: &str| v[k].as_str().map(str::to_owned).ok_or(format!("{SEED_MEMBERS}: no {k}"));
                Ok(Creds { email: field("email")?, api_key: field("api_key")? })
            };
            let admin = creds(&saved["admin"])?;
            let members = saved["members"].as_array().ok_or("no members")?;
            let members = members
                .iter()
                .map(|m| Ok((m["id"].as_i64().unwrap_or(0), creds(m)?)))
                .collect::<Result<_, BoxError>>()?;
            let written = bulk::Written {
                members,
                subscriptions: saved["subscriptions"].as_i64().unwrap_or(0),
                user_messages: saved["user_messages"].as_i64().unwrap_or(0),
            };
            (admin, written, 0.0, 0.0)
        }
        None => {
            let cli = UserMaker::Cli { bin: server.bin.clone(), dir: server.dir.path().to_owned() };
            let admin = cli.make("scale-admin@example.com", "Scale Admin", true).await?;
            let maker = UserMaker::Api { api: api.clone(), admin: admin.clone() };
            let template = maker.make(TEMPLATE_MEMBER, "Scale Template", false).await?;
            make_template_channels(&api, &admin, &template).await?;
            server.stop()?;
            eprintln!("writing the organization into {}...", db.display());
            let spec = bulk::Spec {
                users: args.users,
                channels: args.channels,
                default_channels: args.default_channels,
                channel_members: args.channel_members,
                messages: args.messages,
                unread_per_channel: args.unread_per_channel,
            };
            let templates =
                bulk::Templates { member_email: TEMPLATE_MEMBER, default_channel: DEFAULT_CHANNEL, channel: CHANNEL };
            let started = Instant::now();
            let written = bulk::write(&db, &spec, &templates)?;
            let write_secs = started.elapsed().as_secs_f64();
            if let Some(dir) = &args.save_seed {
                save_seed(dir, server.dir.path(), &admin, &written)?;
                if args.seed_only {
                    return Ok(());
                }
            }
            eprintln!("written in {write_secs:.1} s; restarting the server...");
            let started = Instant::now();
            server.restart(&api).await?;
            (admin, written, write_secs, started.elapsed().as_secs_f64())
        }
    };
    let db_mib = std::fs::metadata(&db)?.len() as f64 / (1024.0 * 1024.0);
    let maker = UserMaker::Api { api: api.clone(), admin: admin.clone() };
    let pid = server.pid();
    let rss_loaded = rss_kib(pid)?;
    let members: Vec<Creds> = written.members.iter().map(|(_, c)| c.clone()).collect();
    eprintln!("database {db_mib:.0} MiB; restart {restart_secs:.1} s, server RSS {} MiB", rss_loaded / 1024);

    let mut report = Figures::default();
    // 1. Registers.
    let full = [("include_subscribers", "true")];
    warm_up(&api, &members, &full).await?;
    eprintln!("POST /register, {} one at a time...", args.registers);
    report.register = timed(pid, args.registers, || registers(&api, &members, &full, 1, args.registers)).await?;
    eprintln!("POST /register, {} clients x {}...", args.register_clients, args.registers_per_client);
    report.register_concurrent = timed(pid, args.register_clients * args.registers_per_client, || {
        registers(&api, &members, &full, args.register_clients, args.registers_per_client)
    })
    .await?;
    report.register_bytes = register_size(&api, &members[0], &full).await?;
    eprintln!("  one at a time: {}", report.register.describe("register"));
    eprintln!("  at once: {}; {} bytes", report.register_concurrent.describe("register"), report.register_bytes);

    // 2. GET /users.
    eprintln!("GET /users x {}...", args.user_lists);
    report.users = timed(pid, args.user_lists, || user_lists(&api, &members, args.user_lists)).await?;
    eprintln!("  {}", report.users.describe("request"));

    // 2b. Compression of the large replies.
    if args.gzip_requests > 0 {
        eprintln!("plain and gzipped replies, {} of each...", args.gzip_requests);
        report.gzip = gzip::measure(&api, pid, &members[0], &full, args.gzip_requests).await?;
    }

    // 3. POST /users.
    eprintln!("POST /users, {} one at a time, then {} 16 at once...", args.creations, args.creations);
    report.creations = timed(pid, args.creations, || creations(&maker, "one", args.creations, 1)).await?;
    report.creations_concurrent = timed(pid, args.creations, || creations(&maker, "many", args.creations, 16)).await?;
    eprintln!("  one at a time: {}", report.creations.describe("user"));
    eprintln!("  16 at once: {}", report.creations_concurrent.describe("user"));

    // 4. Presence.
    if args.presence_secs > 0 {
        let load = presence::PingLoad {
            interval: Duration::from_secs(args.presence_interval_secs),
            active: members.len() * args.presence_active_percent / 100,
            measure: Duration::from_secs(args.presence_secs),
        };
        let run = presence::run(&api, pid, &db, Arc::new(members.clone()), &load).await?;
        eprintln!(
            "  {} pings: latency {}; server CPU {:.1}% of one core; {} bytes per reply",
            run.latency.len(),
            run.latency.describe(),
            run.cpu.share() * 100.0,
            run.bytes / run.latency.len().max(1) as u64
        );
        report.presence = Some(run);
    }

    // 5. Idle long-polls.
    if args.idle_polls > 0 {
        let mut idle = idle_polls(&api, pid, &members, args.idle_polls, Duration::from_secs(args.idle_secs)).await?;
        idle.floor_kib_per_poll = Some(floor_idle_polls(args.idle_polls, args.http_workers).await?);
        report.idle = Some(idle);
    }
    report.print(&args, &written, write_secs, db_mib, restart_secs, rss_loaded);
    Ok(())
}

/// Copies the written organization (the server stopped) and the keys into `dir`.
fn save_seed(
    dir: &std::path::Path,
    data: &std::path::Path,
    admin: &Creds,
    written: &bulk::Written,
) -> Result<(), BoxError> {
    std::fs::create_dir_all(dir)?;
    for name in ["agora.sqlite3", "zuliprc"] {
        std::fs::copy(data.join(name), dir.join(name))?;
    }
    let members: Vec<Value> =
        written.members.iter().map(|(id, c)| json!({ "id": id, "email": c.email, "api_key": c.api_key })).collect();
    let saved = json!({ "admin": { "email": admin.email, "api_key": admin.api_key }, "members": members,
                        "subscriptions": written.subscriptions, "user_messages": written.user_messages });
    std::fs::write(dir.join(SEED_MEMBERS), saved.to_string())?;
    eprintln!("saved the organization in {}", dir.display());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Templates, made through the API

/// The two template channels, with the admin and the template member subscribed; the first
/// one made a default channel.
async fn make_template_channels(api: &Api, admin: &Creds, template: &Creds) -> Result<(), BoxError> {
    let form = [
        ("subscriptions", json!([{ "name": DEFAULT_CHANNEL }, { "name": CHANNEL }]).to_string()),
        ("principals", json!([admin.email, template.email]).to_string()),
    ];
    let response = api.post("users/me/subscriptions", admin).form(&form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    success_json("POST /api/v1/users/me/subscriptions", status, &body)?;
    let response = api.client.get(api.url("get_stream_id")).basic_auth(&admin.email, Some(&admin.api_key));
    let response = response.query(&[("stream", DEFAULT_CHANNEL)]).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    let id = success_json("GET /api/v1/get_stream_id", status, &body)?["stream_id"].as_i64().ok_or("no stream_id")?;
    let response = api.post("default_streams", admin).form(&[("stream_id", id.to_string())]).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    success_json("POST /api/v1/default_streams", status, &body)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Measurements

/// Latencies and the server's CPU over them.
#[derive(Default)]
struct Timed {
    latency: Option<Stats>,
    requests: usize,
    cpu: Option<CpuUse>,
}

impl Timed {
    fn describe(&self, unit: &str) -> String {
        let latency = self.latency.as_ref().map_or_else(|| "-".to_owned(), Stats::describe);
        format!("{latency}; {}", describe_cpu(self.cpu, self.requests, unit))
    }

    fn to_json(&self) -> Value {
        let latency = self.latency.as_ref();
        json!({ "p50": latency.and_then(|s| ms_json(s.percentile(50))),
                "p99": latency.and_then(|s| ms_json(s.percentile(99))),
                "max": latency.and_then(|s| ms_json(s.max())),
                "requests": self.requests, "cpu": cpu_json(self.cpu, self.requests) })
    }
}

async fn timed<F, Fut>(pid: u32, requests: usize, f: F) -> Result<Timed, BoxError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Duration>, BoxError>>,
{
    let cpu = CpuMeter::start(Some(pid));
    let latencies = f().await?;
    let cpu = cpu.stop();
    if latencies.len() != requests {
        eprintln!("warning: {} requests measured instead of {requests}", latencies.len());
    }
    Ok(Timed { requests: latencies.len(), latency: Some(Stats::new(latencies)), cpu })
}

/// A few unmeasured registers (connections, caches).
async fn warm_up(api: &Api, members: &[Creds], form: &[(&str, &str)]) -> Result<(), BoxError> {
    for member in members.iter().take(3) {
        register_once(api, member, form).await?;
    }
    Ok(())
}

/// One `POST /register` (its queue deleted after): its latency. The reply (megabytes in a
/// large organization) is only looked at, not parsed: this program shares the machine with
/// the server, and parsing twenty of them at once would slow down what it measures.
async fn register_once(api: &Api, who: &Creds, form: &[(&str, &str)]) -> Result<Duration, BoxError> {
    let t0 = Instant::now();
    let response = api.post("register", who).form(form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    let elapsed = t0.elapsed();
    let text = std::str::from_utf8(&body)?;
    let queue_id = text
        .strip_prefix(r#"{"result":"success","#)
        .filter(|_| status.is_success())
        .and_then(|_| text.split_once(r#""queue_id":""#))
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(id, _)| id)
        .ok_or_else(|| {
            format!("POST /api/v1/register as {}: HTTP {status}: {}", who.email, &text[..text.len().min(300)])
        })?;
    let request = api.client.delete(api.url("events")).basic_auth(&who.email, Some(&who.api_key));
    request.form(&[("queue_id", queue_id)]).send().await?;
    Ok(elapsed)
}

/// The size of one full register reply, plain.
async fn register_size(api: &Api, who: &Creds, form: &[(&str, &str)]) -> Result<usize, BoxError> {
    let response = api.post("register", who).form(form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    let reply = success_json("POST /api/v1/register", status, &body)?;
    if let Some(queue_id) = reply["queue_id"].as_str() {
        let request = api.client.delete(api.url("events")).basic_auth(&who.email, Some(&who.api_key));
        request.form(&[("queue_id", queue_id)]).send().await?;
    }
    Ok(body.len())
}

/// `clients` clients each registering `each` times as random members.
async fn registers(
    api: &Api,
    members: &[Creds],
    form: &[(&'static str, &'static str)],
    clients: usize,
    each: usize,
) -> Result<Vec<Duration>, BoxError> {
    let mut tasks = JoinSet::new();
    for _ in 0..clients {
        let (api, form) = (api.clone(), form.to_vec());
        let who: Vec<Creds> = members.choose_multiple(&mut rand::thread_rng(), each).cloned().collect();
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(who.len());
            for member in &who {
                latencies.push(register_once(&api, member, &form).await?);
            }
            Ok::<_, BoxError>(latencies)
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done??);
    }
    Ok(latencies)
}

/// `GET /users`, one after another.
async fn user_lists(api: &Api, members: &[Creds], n: usize) -> Result<Vec<Duration>, BoxError> {
    let mut latencies = Vec::with_capacity(n);
    for i in 0..n + 3 {
        let who = &members[i % members.len()];
        let t0 = Instant::now();
        let response = api.client.get(api.url("users")).basic_auth(&who.email, Some(&who.api_key)).send().await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let elapsed = t0.elapsed();
        let reply = success_json("GET /api/v1/users", status, &body)?;
        if reply["members"].as_array().map_or(0, Vec::len) == 0 {
            return Err("GET /api/v1/users: no members".into());
        }
        if i >= 3 {
            latencies.push(elapsed);
        }
    }
    Ok(latencies)
}

/// `POST /users`, `concurrency` at a time.
async fn creations(maker: &UserMaker, label: &str, n: usize, concurrency: usize) -> Result<Vec<Duration>, BoxError> {
    let UserMaker::Api { api, admin } = maker else { return Err("creations go through the API".into()) };
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = JoinSet::new();
    let suffix = random_string(6).to_ascii_lowercase();
    for i in 0..n {
        let (api, admin, permits) = (api.clone(), admin.clone(), Arc::clone(&permits));
        let email = format!("scale-new-{label}-{i}-{suffix}@example.com");
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let password = random_string(20);
            let form = [("email", email.as_str()), ("password", &password), ("full_name", "Scale Newcomer")];
            let t0 = Instant::now();
            let response = api.post("users", &admin).form(&form).send().await?;
            let (status, body) = (response.status(), response.bytes().await?);
            let elapsed = t0.elapsed();
            success_json("POST /api/v1/users", status, &body)?;
            Ok::<_, BoxError>(elapsed)
        });
    }
    let mut latencies = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        latencies.push(done??);
    }
    Ok(latencies)
}

/// What the idle long-polls showed.
struct Idle {
    queues: usize,
    register_secs: f64,
    rss_before_kib: u64,
    /// With the queues registered, before their long-polls.
    rss_queues_kib: u64,
    rss_waiting_kib: u64,
    cpu: Option<CpuUse>,
    /// Seconds from the start of the watch to each heartbeat.
    heartbeats: Vec<f64>,
    /// What each long-poll costs a bare actix-web server (the floor), in KiB.
    floor_kib_per_poll: Option<f64>,
}

/// How long the memory is left to settle before it is read: the server gives freed memory
/// back at most every 10 s (`src/memory.rs`), so each reading follows a chance to trim
/// what came before it.
const SETTLE: Duration = Duration::from_secs(11);

/// Registers `n` light queues (one per member, no initial state), long-polls on each, and
/// watches them for `watch`.
async fn idle_polls(api: &Api, pid: u32, members: &[Creds], n: usize, watch: Duration) -> Result<Idle, BoxError> {
    tokio::time::sleep(SETTLE).await;
    let rss_before_kib = rss_kib(pid)?;
    eprintln!("registering {n} queues...");
    let started = Instant::now();
    // Light queues: no initial state.
    let queues = register_all(api, members, n, 50, r#"["message"]"#, Some("[]")).await?;
    let register_secs = started.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let rss_queues_kib = rss_kib(pid)?;
    eprintln!(
        "{n} queues in {register_secs:.1} s, server RSS {} MiB ({:.1} KiB per queue); starting their long-polls...",
        rss_queues_kib / 1024,
        (rss_queues_kib as f64 - rss_before_kib as f64) / n as f64
    );
    let heartbeat = |event: &Value| (event["type"] == "heartbeat").then_some(());
    let mut pollers = Pollers::start_gradually(api, &queues, heartbeat, 250, Duration::from_millis(100)).await;
    pollers.wait_until_waiting().await?;
    // Let every request reach the server and the memory settle.
    tokio::time::sleep(SETTLE).await;
    let rss_waiting_kib = rss_kib(pid)?;
    eprintln!(
        "{n} long-polls waiting, server RSS {} MiB; watching for {} s...",
        rss_waiting_kib / 1024,
        watch.as_secs()
    );
    let cpu = CpuMeter::start(Some(pid));
    let watch_start = Instant::now();
    let deadline = tokio::time::Instant::now() + watch;
    let mut heartbeats = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, pollers.rx.recv()).await {
            Err(_) | Ok(None) => break,
            Ok(Some(Report::Event { at, .. })) => heartbeats.push(at.duration_since(watch_start).as_secs_f64()),
            Ok(Some(Report::Failed { queue, error })) => return Err(format!("queue {queue}: {error}").into()),
        }
    }
    let cpu = cpu.stop();
    pollers.shutdown().await;
    heartbeats.sort_by(f64::total_cmp);
    Ok(Idle {
        queues: n,
        register_secs,
        rss_before_kib,
        rss_queues_kib,
        rss_waiting_kib,
        cpu,
        heartbeats,
        floor_kib_per_poll: None,
    })
}

/// The memory each of `n` waiting long-polls costs the floor: a bare actix-web server with
/// as many HTTP workers, nothing behind its polls but a broadcast channel.
async fn floor_idle_polls(n: usize, http_workers: Option<usize>) -> Result<f64, BoxError> {
    eprintln!("the floor: {n} long-polls on a bare actix-web server...");
    let server = support::floor::FloorServer::start(http_client()?, http_workers).await?;
    let before = rss_kib(server.pid)?;
    let queues = support::floor::queues(n);
    let none = |_: &Value| None::<()>;
    let pollers = Pollers::start_gradually(&server.api, &queues, none, 250, Duration::from_millis(100)).await;
    pollers.wait_until_waiting().await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiting = rss_kib(server.pid)?;
    pollers.shutdown().await;
    let per_poll = (waiting as f64 - before as f64) / n as f64;
    eprintln!(
        "  the floor: RSS {} MiB before, {} MiB waiting ({per_poll:.1} KiB per long-poll)",
        before / 1024,
        waiting / 1024
    );
    Ok(per_poll)
}

// ---------------------------------------------------------------------------------------
// The report

#[derive(Default)]
struct Figures {
    register: Timed,
    register_concurrent: Timed,
    register_bytes: usize,
    users: Timed,
    creations: Timed,
    creations_concurrent: Timed,
    presence: Option<presence::PingRun>,
    idle: Option<Idle>,
    gzip: Vec<gzip::Case>,
}

impl Figures {
    fn print(
        &self,
        args: &Args,
        written: &bulk::Written,
        write_secs: f64,
        db_mib: f64,
        restart_secs: f64,
        rss_kib: u64,
    ) {
        println!(
            "Agora at scale: {} users, {} channels ({} default with everyone, {} members in each other), {} messages",
            args.users, args.channels, args.default_channels, args.channel_members, args.messages
        );
        println!(
            "  written in {write_secs:.1} s: {} subscriptions, {} user_messages rows, {db_mib:.0} MiB; restart {restart_secs:.1} s, RSS {} MiB",
            written.subscriptions,
            written.user_messages,
            rss_kib / 1024
        );
        println!(
            "  POST /register (every data set, include_subscribers), one at a time: {}",
            self.register.describe("register")
        );
        println!(
            "  POST /register, {} clients at once: {}",
            args.register_clients,
            self.register_concurrent.describe("register")
        );
        println!("    reply size: {} bytes", self.register_bytes);
        println!("  GET /users: {}", self.users.describe("request"));
        println!("  POST /users, one at a time: {}", self.creations.describe("user"));
        println!("  POST /users, 16 at once: {}", self.creations_concurrent.describe("user"));
        if let Some(p) = &self.presence {
            println!(
                "  presence: {} pings over {:.0} s ({:.0}/s): latency {}; server CPU {:.1}% of one core; {} rows written",
                p.latency.len(),
                p.cpu.wall_secs,
                p.latency.len() as f64 / p.cpu.wall_secs,
                p.latency.describe(),
                p.cpu.share() * 100.0,
                p.writes.rows
            );
        }
        for case in &self.gzip {
            println!("  gzip, {}", case.describe());
        }
        if let Some(idle) = &self.idle {
            let spread = |pct: usize| -> Option<f64> {
                let n = idle.heartbeats.len();
                (n > 0).then(|| idle.heartbeats[((pct * n).div_ceil(100)).clamp(1, n) - 1])
            };
            println!(
                "  {} idle long-polls (registered in {:.1} s): server RSS {} MiB before, {} MiB waiting ({:.1} KiB per queue); {}",
                idle.queues,
                idle.register_secs,
                idle.rss_before_kib / 1024,
                idle.rss_waiting_kib / 1024,
                (idle.rss_waiting_kib as f64 - idle.rss_before_kib as f64) / idle.queues as f64,
                idle.cpu.map_or_else(|| "CPU not measured".to_owned(), |c| format!("server CPU while idle {:.1}% of one core", c.share() * 100.0))
            );
            let kib_each = |from: u64, to: u64| (to as f64 - from as f64) / idle.queues as f64;
            println!(
                "    of which the queues alone {:.1} KiB each, their long-polls {:.1} KiB each",
                kib_each(idle.rss_before_kib, idle.rss_queues_kib),
                kib_each(idle.rss_queues_kib, idle.rss_waiting_kib)
            );
            if let Some(floor) = idle.floor_kib_per_poll {
                println!("    the floor (bare actix-web, as many long-polls): {floor:.1} KiB per long-poll");
            }
            println!(
                "    heartbeats: {} within the watch, first after {:.1} s, p50 {:.1} s, last {:.1} s",
                idle.heartbeats.len(),
                spread(1).unwrap_or(0.0),
                spread(50).unwrap_or(0.0),
                spread(100).unwrap_or(0.0)
            );
        }
        let presence = self.presence.as_ref().map(|p| {
            json!({ "cpu_share": round3(p.cpu.share()), "requests": p.latency.len(),
                    "p50_ms": ms_json(p.latency.percentile(50)), "p99_ms": ms_json(p.latency.percentile(99)),
                    "rows_written": p.writes.rows, "reply_bytes": p.bytes / p.latency.len().max(1) as u64 })
        });
        let idle = self.idle.as_ref().map(|i| {
            let n = i.heartbeats.len();
            json!({ "queues": i.queues, "rss_mib": round3(i.rss_waiting_kib as f64 / 1024.0),
                    "rss_before_mib": round3(i.rss_before_kib as f64 / 1024.0),
                    "kib_per_queue": round3((i.rss_waiting_kib as f64 - i.rss_before_kib as f64) / i.queues as f64),
                    "kib_per_queue_alone": round3((i.rss_queues_kib as f64 - i.rss_before_kib as f64) / i.queues as f64),
                    "kib_per_poll": round3((i.rss_waiting_kib as f64 - i.rss_queues_kib as f64) / i.queues as f64),
                    "floor_kib_per_poll": i.floor_kib_per_poll.map(round3),
                    "cpu_share": i.cpu.map(|c| round3(c.share())), "heartbeats": n,
                    "heartbeat_s": { "first": i.heartbeats.first().copied().map(round3),
                                     "p50": (n > 0).then(|| round3(i.heartbeats[n.div_ceil(2) - 1])),
                                     "last": i.heartbeats.last().copied().map(round3) } })
        });
        let summary = json!({
            "benchmark": "scale",
            "users": args.users, "channels": args.channels, "messages": args.messages,
            "write_s": round3(write_secs), "restart_s": round3(restart_secs), "rss_loaded_mib": rss_kib / 1024,
            "register_ms": self.register.to_json(),
            "register_concurrent_ms": self.register_concurrent.to_json(),
            "register_bytes": self.register_bytes,
            "users_ms": self.users.to_json(),
            "post_users_ms": self.creations.to_json(),
            "post_users_concurrent_ms": self.creations_concurrent.to_json(),
            "presence": presence,
            "idle_polls": idle,
            "gzip": self.gzip.iter().map(gzip::Case::to_json).collect::<Vec<_>>(),
        });
        println!("{summary}");
    }
}
