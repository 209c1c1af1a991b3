//! What a restart costs after ordinary use. Starts its own server (`target/<profile>/agora`,
//! next to this example's directory) on a fresh data directory, and:
//!
//! 1. makes an organization of `--users` members in `--channels` channels (everyone in
//!    every channel);
//! 2. runs one client per member for `--seconds`, at about `--rate` requests per second in
//!    all, doing what apps do: sends, `GET /events` with `dont_block` (acknowledging what
//!    the last one got), reactions, presence, history reads, edits, searches, read flags;
//!    and now and then (`--reload-share` of its requests) registering a new queue and
//!    abandoning the old one without deleting it, as a client does when it reloads;
//! 3. stops the server with SIGTERM and measures the time to exit, what the saved queues
//!    take in the database and the write-ahead log left behind;
//! 4. starts it again and measures the time until it answers, until every client's queue
//!    has answered a poll (each is drained to its `restart` event, so every queue is
//!    checked resumable, its events continuing after the last one acknowledged), the
//!    memory (peak, and settled after the trimmer has run), and the log;
//! 5. stops it a second time right away, and reports that stop as well.
//!
//! ```text
//! cargo build --release --bins --examples && target/release/examples/restart --seconds 150
//! ```
//!
//! Progress goes to stderr; the report and a final JSON summary line go to stdout.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::Rng;
use serde_json::{json, Value};
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::*;

/// A restart after ordinary use: SIGTERM, restart, SIGTERM again.
#[derive(Debug, Parser)]
#[command(name = "restart")]
struct Args {
    /// Members, each one client
    #[arg(long, default_value_t = 40)]
    users: usize,
    /// Channels, every member subscribed to each
    #[arg(long, default_value_t = 5)]
    channels: usize,
    /// Seconds of ordinary use before the first SIGTERM
    #[arg(long, default_value_t = 150)]
    seconds: u64,
    /// Requests per second, all clients together
    #[arg(long, default_value_t = 550.0)]
    rate: f64,
    /// Share of a client's requests that register a new queue, abandoning the old one
    #[arg(long, default_value_t = 0.02)]
    reload_share: f64,
    /// Seconds to let the restarted server settle (its memory trimmer runs every 10 s)
    #[arg(long, default_value_t = 12)]
    settle_secs: u64,
    /// Server binary [default: target/<profile>/agora, next to the examples directory]
    #[arg(long)]
    server_bin: Option<PathBuf>,
}

/// What the clients do, with their shares of the requests (the reloads apart).
const MIX: [(Action, u32); 8] = [
    (Action::Send, 25),
    (Action::Poll, 30),
    (Action::React, 8),
    (Action::Presence, 8),
    (Action::History, 7),
    (Action::Edit, 4),
    (Action::Search, 4),
    (Action::Flags, 14),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Action {
    Send,
    Poll,
    React,
    Presence,
    History,
    Edit,
    Search,
    Flags,
    Reload,
}

const EMOJI: [&str; 6] = ["smile", "heart", "tada", "octopus", "thumbs_up", "rocket"];
const WORDS: [&str; 12] =
    ["deploy", "review", "lunch", "release", "meeting", "question", "agenda", "bug", "fix", "docs", "coffee", "plan"];

#[tokio::main]
async fn main() -> ExitCode {
    main_with("restart", run(Args::parse())).await
}

/// One member's client: its current queue, what it acknowledged, its own messages.
#[derive(Clone)]
struct Client {
    creds: Creds,
    queue_id: String,
    last_event_id: i64,
    own: Vec<i64>,
}

/// What the clients did, by action: requests, refusals (4xx) and failures (5xx, I/O).
#[derive(Default)]
struct Tally {
    done: HashMap<Action, (u64, u64, u64)>,
}

impl Tally {
    fn add(&mut self, action: Action, status: Option<u16>) {
        let entry = self.done.entry(action).or_default();
        entry.0 += 1;
        match status {
            Some(s) if s < 400 => {}
            Some(s) if s < 500 => entry.1 += 1,
            _ => entry.2 += 1,
        }
    }

    fn merge(&mut self, other: Tally) {
        for (action, (n, refused, failed)) in other.done {
            let entry = self.done.entry(action).or_default();
            entry.0 += n;
            entry.1 += refused;
            entry.2 += failed;
        }
    }

    fn total(&self) -> (u64, u64, u64) {
        self.done.values().fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    let client = http_client()?;
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: "info".into(),
        http_workers: None,
        actor_threads: None,
        dir_prefix: "agora-restart-",
        config: LOAD_CONFIG.into(),
        capture_log: true,
        seed: None,
    };
    let (mut server, api) = ManagedServer::start(&options, client).await?;
    let dir = server.dir.path().to_owned();
    let rc = Zuliprc::read(&dir.join("zuliprc"))?;
    let owner = Creds { email: rc.email, api_key: rc.key };
    let maker = UserMaker::Cli { bin: server.bin.clone(), dir: dir.clone() };
    eprintln!("creating {} members and {} channels", args.users, args.channels);
    let members = create_members(&maker, "restart", args.users, &random_string(6)).await?;
    let emails: Vec<&str> = members.iter().map(|m| m.email.as_str()).collect();
    let channels: Vec<String> = (0..args.channels).map(|i| format!("channel {i}")).collect();
    let subscriptions: Vec<Value> = channels.iter().map(|name| json!({ "name": name })).collect();
    let form = [("subscriptions", json!(subscriptions).to_string()), ("principals", json!(emails).to_string())];
    let response = api.post("users/me/subscriptions", &owner).form(&form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    success_json("POST /api/v1/users/me/subscriptions", status, &body)?;

    let mut clients = Vec::with_capacity(members.len());
    for creds in members {
        let (queue_id, last_event_id) = register(&api, &creds).await?;
        clients.push(Client { creds, queue_id, last_event_id, own: Vec::new() });
    }

    // Ordinary use.
    eprintln!("{} clients at {} requests/s for {} s", clients.len(), args.rate, args.seconds);
    let recent = Arc::new(Mutex::new(VecDeque::<i64>::new()));
    let requests = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let interval = Duration::from_secs_f64(clients.len() as f64 / args.rate.max(0.1));
    let cpu = CpuMeter::start(Some(server.pid()));
    let mut tasks = JoinSet::new();
    for client in clients {
        let (api, recent, requests, channels) = (api.clone(), recent.clone(), requests.clone(), channels.clone());
        let reload_share = args.reload_share;
        tasks.spawn(async move {
            use_like_an_app(client, &api, &channels, &recent, &requests, deadline, interval, reload_share).await
        });
    }
    let pid = server.pid();
    let wal = dir.join("agora.sqlite3-wal");
    let started = Instant::now();
    let mut peak_wal = 0;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(10).min(deadline.saturating_duration_since(Instant::now()))).await;
        let wal_now = file_len(&wal);
        peak_wal = peak_wal.max(wal_now);
        eprintln!(
            "  {:>4} s: {} requests, RSS {} MiB, WAL {} MiB",
            started.elapsed().as_secs(),
            requests.load(Ordering::Relaxed),
            rss_kib(pid)? / 1024,
            wal_now >> 20
        );
    }
    let mut clients = Vec::new();
    let mut tally = Tally::default();
    while let Some(done) = tasks.join_next().await {
        let (client, client_tally) = done??;
        clients.push(client);
        tally.merge(client_tally);
    }
    let load_cpu = cpu.stop();
    let (total, refused, failed) = tally.total();
    let rss_before = rss_kib(pid)?;
    let wal_before = file_len(&wal);
    println!("ordinary use: {total} requests in {} s ({refused} refused, {failed} failed)", args.seconds);
    let mut actions: Vec<_> = tally.done.iter().collect();
    actions.sort_by_key(|(action, _)| format!("{action:?}"));
    for (action, (n, refused, failed)) in actions {
        println!("  {action:?}: {n} ({refused} refused, {failed} failed)");
    }
    println!("  {}", describe_cpu(load_cpu, total as usize, "request"));
    println!("  RSS {} MiB, WAL {} MiB (peak {} MiB)", rss_before / 1024, wal_before >> 20, peak_wal >> 20);

    let first = stop(&mut server, &dir).await?;
    println!("first SIGTERM: {}", first.describe());
    let back = restart(&mut server, &api, &clients, args.settle_secs).await?;
    println!("restart: {}", back.describe());
    let second = stop(&mut server, &dir).await?;
    println!("second SIGTERM: {}", second.describe());
    // The server's own account of its saves and restores, and any trouble it logged (the
    // abandoned queues it removed for their backlog are expected, and only counted).
    let log = server.log_problems();
    for line in log.iter().filter(|l| l.contains("event queues")) {
        println!("  log: {}", line.split_once("  INFO ").map_or(line.as_str(), |(_, rest)| rest));
    }
    let overflowed = log.iter().filter(|l| l.contains("backlog went past the limit")).count();
    println!("  abandoned queues removed for their backlog while running: {overflowed}");
    let problems: Vec<&String> = log
        .iter()
        .filter(|l| (l.contains("WARN") || l.contains("ERROR")) && !l.contains("backlog went past the limit"))
        .collect();
    for line in problems.iter().take(20) {
        println!("  log: {line}");
    }
    let summary = json!({
        "users": args.users, "channels": args.channels, "seconds": args.seconds, "rate": args.rate,
        "requests": total, "refused": refused, "failed": failed, "load_cpu": cpu_json(load_cpu, total as usize),
        "rss_before_mib": rss_before / 1024, "wal_before_mib": wal_before >> 20,
        "first_stop": first.to_json(), "restart": back.to_json(), "second_stop": second.to_json(),
        "overflowed_queues": overflowed, "log_problems": problems.len(),
    });
    println!("{summary}");
    if back.lost > 0 || failed > 0 {
        return Err(format!("{} queues lost, {failed} requests failed", back.lost).into());
    }
    Ok(())
}

/// Registers a queue as the mobile app does; its id and last event id.
async fn register(api: &Api, user: &Creds) -> Result<(String, i64), BoxError> {
    let capabilities = json!({
        "notification_settings_null": true, "bulk_message_deletion": true,
        "user_avatar_url_field_optional": true, "stream_typing_notifications": true,
        "user_settings_object": true, "empty_topic_name": true, "simplified_presence_events": true,
    });
    let form = [
        ("apply_markdown", "true".to_owned()),
        ("client_gravatar", "true".to_owned()),
        ("slim_presence", "true".to_owned()),
        ("client_capabilities", capabilities.to_string()),
    ];
    let response = api.post("register", user).form(&form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    let reply = success_json("POST /api/v1/register", status, &body)?;
    let id = reply["queue_id"].as_str().ok_or("register: no queue_id")?.to_owned();
    Ok((id, reply["last_event_id"].as_i64().ok_or("register: no last_event_id")?))
}

/// One client's requests until `deadline`, one every `interval` (or back to back when the
/// server is slower).
#[allow(clippy::too_many_arguments, reason = "one client's whole setting")]
async fn use_like_an_app(
    mut client: Client,
    api: &Api,
    channels: &[String],
    recent: &Mutex<VecDeque<i64>>,
    requests: &AtomicU64,
    deadline: Instant,
    interval: Duration,
    reload_share: f64,
) -> Result<(Client, Tally), BoxError> {
    let mut tally = Tally::default();
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let weights: u32 = MIX.iter().map(|(_, w)| w).sum();
    while Instant::now() < deadline {
        ticks.tick().await;
        let (action, pick, word, channel, emoji) = {
            let mut rng = rand::thread_rng();
            let action = if rng.gen_bool(reload_share.clamp(0.0, 1.0)) {
                Action::Reload
            } else {
                pick_action(rng.gen_range(0..weights))
            };
            let pick: f64 = rng.gen();
            (action, pick, WORDS[rng.gen_range(0..WORDS.len())], rng.gen_range(0..channels.len()), rng.gen_range(0..6))
        };
        let some_recent = |n: usize| -> Vec<i64> {
            let recent = recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            recent.iter().rev().take(n).copied().collect()
        };
        let user = &client.creds;
        let request = match action {
            Action::Send => api.post("messages", user).form(&[
                ("type", "stream".to_owned()),
                ("to", channels[channel].clone()),
                ("topic", format!("{word} {}", channel % 3)),
                ("content", format!("About the {word}: {} **ok**?", random_string(60))),
            ]),
            Action::Poll => api
                .client
                .get(api.url("events"))
                .basic_auth(&user.email, Some(&user.api_key))
                .query(&[("queue_id", client.queue_id.clone()), ("last_event_id", client.last_event_id.to_string())])
                .query(&[("dont_block", "true")]),
            Action::React => {
                let Some(&id) = some_recent(20).get((pick * 20.0) as usize % 20) else { continue };
                api.post(&format!("messages/{id}/reactions"), user).form(&[("emoji_name", EMOJI[emoji])])
            }
            Action::Presence => api.post("users/me/presence", user).form(&[("status", "active")]),
            Action::History => api
                .client
                .get(api.url("messages"))
                .basic_auth(&user.email, Some(&user.api_key))
                .query(&[("anchor", "newest"), ("num_before", "30"), ("num_after", "0")])
                .query(&[("narrow", json!([{"operator": "channel", "operand": channels[channel]}]).to_string())]),
            Action::Edit => {
                let Some(&id) = client.own.iter().rev().nth((pick * 5.0) as usize) else { continue };
                let content = format!("Edited: the {word} {}", random_string(40));
                api.client
                    .patch(api.url(&format!("messages/{id}")))
                    .basic_auth(&user.email, Some(&user.api_key))
                    .form(&[("content", content)])
            }
            Action::Search => api
                .client
                .get(api.url("messages"))
                .basic_auth(&user.email, Some(&user.api_key))
                .query(&[("anchor", "newest"), ("num_before", "20"), ("num_after", "0")])
                .query(&[("narrow", json!([{"operator": "search", "operand": word}]).to_string())]),
            Action::Flags => {
                let ids = some_recent(10);
                if ids.is_empty() {
                    continue;
                }
                api.post("messages/flags", user).form(&[
                    ("messages", json!(ids).to_string()),
                    ("op", "add".to_owned()),
                    ("flag", "read".to_owned()),
                ])
            }
            Action::Reload => {
                requests.fetch_add(1, Ordering::Relaxed);
                match register(api, user).await {
                    Ok((queue_id, last_event_id)) => {
                        (client.queue_id, client.last_event_id) = (queue_id, last_event_id);
                        tally.add(action, Some(200));
                    }
                    Err(_) => tally.add(action, None),
                }
                continue;
            }
        };
        requests.fetch_add(1, Ordering::Relaxed);
        let Ok(response) = request.send().await else {
            tally.add(action, None);
            continue;
        };
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        tally.add(action, Some(status));
        match action {
            Action::Send if status == 200 => {
                if let Some(id) = body["id"].as_i64() {
                    client.own.push(id);
                    let mut recent = recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    recent.push_back(id);
                    if recent.len() > 200 {
                        recent.pop_front();
                    }
                }
            }
            Action::Poll if status == 200 => {
                let ids = body["events"].as_array().into_iter().flatten().filter_map(|e| e["id"].as_i64());
                client.last_event_id = ids.fold(client.last_event_id, i64::max);
            }
            Action::Poll if body["code"] == "BAD_EVENT_QUEUE_ID" => {
                (client.queue_id, client.last_event_id) = register(api, &client.creds).await?;
            }
            _ => {}
        }
    }
    Ok((client, tally))
}

/// The action of the mix that `roll` (below the sum of the weights) falls on.
fn pick_action(mut roll: u32) -> Action {
    for (action, weight) in MIX {
        if roll < weight {
            return action;
        }
        roll -= weight;
    }
    Action::Poll
}

/// A graceful stop, as measured.
struct Stopped {
    exit: Duration,
    status: String,
    /// Saved queues and the bytes their tables hold (every text and blob column).
    queues: i64,
    saved_bytes: i64,
    wal: u64,
    db: u64,
}

impl Stopped {
    fn describe(&self) -> String {
        format!(
            "exit in {:.2} s ({}), {} queues saved in {:.1} MiB, WAL left {:.1} MiB, database {:.1} MiB",
            self.exit.as_secs_f64(),
            self.status,
            self.queues,
            self.saved_bytes as f64 / 1048576.0,
            self.wal as f64 / 1048576.0,
            self.db as f64 / 1048576.0
        )
    }

    fn to_json(&self) -> Value {
        json!({ "exit_s": round3(self.exit.as_secs_f64()), "status": self.status, "queues": self.queues,
                "saved_mib": round3(self.saved_bytes as f64 / 1048576.0), "wal_mib": round3(self.wal as f64 / 1048576.0),
                "db_mib": round3(self.db as f64 / 1048576.0) })
    }
}

/// SIGTERM, then waits for the exit and reads what was saved (read-only, so that the log is
/// left as the server left it).
async fn stop(server: &mut ManagedServer, dir: &Path) -> Result<Stopped, BoxError> {
    let pid = server.pid();
    let started = Instant::now();
    std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status()?;
    let status = loop {
        if let Some(status) = server.child.0.try_wait()? {
            break status;
        }
        if started.elapsed() > Duration::from_secs(300) {
            return Err("the server did not exit within 300 s of SIGTERM".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let exit = started.elapsed();
    let (wal, db) = (file_len(&dir.join("agora.sqlite3-wal")), file_len(&dir.join("agora.sqlite3")));
    let (queues, saved_bytes) = saved(&dir.join("agora.sqlite3"))?;
    Ok(Stopped { exit, status: status.to_string(), queues, saved_bytes, wal, db })
}

/// The saved queues: how many, and the bytes of every table that holds them.
fn saved(db: &Path) -> Result<(i64, i64), BoxError> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'event_queue%'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut bytes = 0;
    for table in &tables {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let sum = columns.iter().map(|c| format!("COALESCE(SUM(length(\"{c}\")), 0)")).collect::<Vec<_>>().join(" + ");
        bytes += conn.query_row(&format!("SELECT {sum} FROM \"{table}\""), [], |r| r.get::<_, i64>(0))?;
    }
    let queues = conn.query_row("SELECT COUNT(*) FROM event_queues", [], |r| r.get(0))?;
    Ok((queues, bytes))
}

/// The restart, as measured.
struct Restarted {
    listening: Duration,
    first_poll: Duration,
    all_polls: Duration,
    resumed: usize,
    lost: usize,
    events: usize,
    rss_peak: u64,
    rss_settled: u64,
    wal_settled: u64,
    cpu: Option<CpuUse>,
}

impl Restarted {
    fn describe(&self) -> String {
        format!(
            "listening after {:.2} s, first queue answered after {:.2} s, all after {:.2} s; {} queues resumed \
             ({} events), {} lost; RSS peak {} MiB, settled {} MiB; WAL {:.1} MiB; {}",
            self.listening.as_secs_f64(),
            self.first_poll.as_secs_f64(),
            self.all_polls.as_secs_f64(),
            self.resumed,
            self.events,
            self.lost,
            self.rss_peak / 1024,
            self.rss_settled / 1024,
            self.wal_settled as f64 / 1048576.0,
            self.cpu.map_or_else(|| "server CPU not measured".into(), |c| format!("server CPU {:.2} s", c.cpu_secs)),
        )
    }

    fn to_json(&self) -> Value {
        json!({ "listening_s": round3(self.listening.as_secs_f64()), "first_poll_s": round3(self.first_poll.as_secs_f64()),
                "all_polls_s": round3(self.all_polls.as_secs_f64()), "resumed": self.resumed, "lost": self.lost,
                "events": self.events, "rss_peak_mib": self.rss_peak / 1024, "rss_settled_mib": self.rss_settled / 1024,
                "wal_mib": round3(self.wal_settled as f64 / 1048576.0), "cpu": cpu_json(self.cpu, 1) })
    }
}

/// Starts the server again and drains every client's queue up to its `restart` event.
async fn restart(
    server: &mut ManagedServer,
    api: &Api,
    clients: &[Client],
    settle_secs: u64,
) -> Result<Restarted, BoxError> {
    let started = Instant::now();
    server.restart(api).await?;
    let listening = started.elapsed();
    let first = clients.first().cloned().ok_or("no clients")?;
    drain(api, &first).await?;
    let first_poll = started.elapsed();
    let mut tasks = JoinSet::new();
    for client in clients {
        let (api, client) = (api.clone(), client.clone());
        tasks.spawn(async move { drain(&api, &client).await });
    }
    let (mut resumed, mut lost, mut events) = (0, 0, 0);
    while let Some(result) = tasks.join_next().await {
        match result? {
            Ok(n) => {
                resumed += 1;
                events += n;
            }
            Err(e) => {
                eprintln!("  a queue was not resumed: {e}");
                lost += 1;
            }
        }
    }
    let all_polls = started.elapsed();
    // Everything the new process did so far: starting, restoring, answering.
    let cpu = cpu_ticks(server.pid())
        .ok()
        .map(|ticks| CpuUse { cpu_secs: ticks as f64 / clock_ticks_per_sec(), wall_secs: all_polls.as_secs_f64() });
    let rss_peak = peak_rss_kib(server.pid())?;
    tokio::time::sleep(Duration::from_secs(settle_secs)).await;
    let rss_settled = rss_kib(server.pid())?;
    let wal_settled = file_len(&server.dir.path().join("agora.sqlite3-wal"));
    Ok(Restarted { listening, first_poll, all_polls, resumed, lost, events, rss_peak, rss_settled, wal_settled, cpu })
}

/// Polls a queue from its client's last acknowledged event until its `restart` event:
/// how many events came before it. Fails unless the first event follows the acknowledged
/// one and the ids grow.
async fn drain(api: &Api, client: &Client) -> Result<usize, BoxError> {
    let mut last = client.last_event_id;
    let mut count = 0;
    loop {
        let response = api
            .client
            .get(api.url("events"))
            .basic_auth(&client.creds.email, Some(&client.creds.api_key))
            .query(&[("queue_id", client.queue_id.clone()), ("last_event_id", last.to_string())])
            .query(&[("dont_block", "true")])
            .send()
            .await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let reply = success_json(&format!("GET /events of {}", client.queue_id), status, &body)?;
        let events = reply["events"].as_array().cloned().unwrap_or_default();
        if events.is_empty() {
            return Err(format!("queue {} ended without a restart event", client.queue_id).into());
        }
        for event in events {
            let id = event["id"].as_i64().ok_or("an event without an id")?;
            if id <= last {
                return Err(format!("queue {}: event {id} after {last}", client.queue_id).into());
            }
            last = id;
            if event["type"] == "restart" {
                return Ok(count);
            }
            count += 1;
        }
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
