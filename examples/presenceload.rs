//! Presence load generator. Starts its own server (`target/<profile>/agora`, next to this
//! example's directory) on a fresh temporary data directory and a free port, creates
//! `--users` members (`POST /users` and `POST /fetch_api_key`, with the load settings'
//! cheap password hashing), then has every member ping `POST /users/me/presence` once per
//! `--interval-secs` with `last_update_id`, as Zulip's clients do: the first ping with -1
//! (everyone's presence), each later one with the id the previous reply gave. Pings are
//! spread evenly (10,000 users every 60 s is about 167 requests a second);
//! `--active-percent` of the users report `active`, the others `idle`.
//!
//! After one interval of warm-up (every client's first, full fetch) it measures
//! `--measure-secs`:
//! - the server's CPU share (utime + stime of `/proc/<pid>/stat` over the window, as a
//!   share of one core);
//! - request latency (p50, p99, max; sent to whole body received);
//! - database writes: the server's SQLite file is read every second (a read-only
//!   connection, WAL) and the `user_presence` rows whose `last_update_id` moved are
//!   counted: rows written per second, samples in which a write landed, and whether any
//!   user's row was written again within 50 s.
//!
//! ```text
//! cargo build --release && cargo run --release --example presenceload
//! ```
//!
//! Progress goes to stderr; the report and a final JSON summary line go to stdout.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::*;

/// Load generator for Agora's presence (POST /users/me/presence with last_update_id).
#[derive(Debug, Parser)]
#[command(name = "presenceload")]
struct Args {
    /// Members pinging
    #[arg(long, default_value_t = 10_000)]
    users: usize,
    /// Seconds between two pings of one member (Zulip's clients: 60)
    #[arg(long, default_value_t = 60)]
    interval_secs: u64,
    /// Share of the members reporting `active` (the others report `idle`)
    #[arg(long, default_value_t = 10)]
    active_percent: usize,
    /// Length of the measured window, after one interval of warm-up
    #[arg(long, default_value_t = 120)]
    measure_secs: u64,
    /// Accounts created at once
    #[arg(long, default_value_t = 16)]
    create_concurrency: usize,
    /// Server binary to start [default: target/<profile>/agora, next to the examples directory]
    #[arg(long, value_name = "PATH")]
    server_bin: Option<PathBuf>,
    /// Server's log filter (`--log`)
    #[arg(long, value_name = "FILTER", default_value = "warn")]
    server_log: String,
    /// Passed to the server as `--http-workers`
    #[arg(long, value_name = "N")]
    http_workers: Option<usize>,
    /// Passed to the server as `--actor-threads`
    #[arg(long, value_name = "N")]
    actor_threads: Option<usize>,
}

#[tokio::main]
async fn main() -> ExitCode {
    support::main_with("presenceload", run(Args::parse())).await
}

/// One ping's outcome, reported to the main task.
struct Pinged {
    user: usize,
    /// The reply's `presence_last_update_id`.
    last_update_id: i64,
    latency: Duration,
    sent: Instant,
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.users == 0 || args.interval_secs == 0 || args.measure_secs == 0 || args.create_concurrency == 0 {
        return Err("--users, --interval-secs, --measure-secs and --create-concurrency must be at least 1".into());
    }
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: args.server_log.clone(),
        http_workers: args.http_workers,
        actor_threads: args.actor_threads,
        dir_prefix: "agora-presenceload-",
        config: LOAD_CONFIG.to_owned(),
        capture_log: false,
    };
    // Held to the end: dropping it kills the server and removes its directory.
    let (server, api) = ManagedServer::start(&options, http_client()?).await?;
    let pid = server.pid();
    eprintln!("server pid {pid} on {}, data in {}", api.base, server.dir.path().display());
    let cli = UserMaker::Cli { bin: server.bin.clone(), dir: server.dir.path().to_owned() };
    let suffix = random_string(8).to_ascii_lowercase();
    let admin = cli.make(&format!("presenceload-admin-{suffix}@example.com"), "Presenceload Admin", true).await?;
    let maker = UserMaker::Api { api: api.clone(), admin };
    eprintln!("creating {} members through POST /users...", args.users);
    let started = Instant::now();
    let users = create(&maker, args.users, args.create_concurrency, &suffix).await?;
    eprintln!("created {} members in {:.1} s", users.len(), started.elapsed().as_secs_f64());

    let db = server.dir.path().join("agora.sqlite3");
    let users = Arc::new(users);
    let active = args.users * args.active_percent / 100;
    let period = Duration::from_secs(args.interval_secs).div_f64(args.users as f64);
    let (tx, mut rx) = mpsc::unbounded_channel::<Result<Pinged, String>>();
    let mut last_ids = vec![-1i64; args.users];
    let warm_up = Duration::from_secs(args.interval_secs);
    let measure = Duration::from_secs(args.measure_secs);
    eprintln!(
        "pinging: {} users every {} s ({:.0} requests/s), {active} active; {} s warm-up, then {} s measured",
        args.users,
        args.interval_secs,
        1.0 / period.as_secs_f64(),
        warm_up.as_secs(),
        measure.as_secs()
    );

    let start = Instant::now();
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut next = 0usize;
    let mut latencies = Vec::new();
    let mut sent_in_window = 0usize;
    let mut window: Option<Window> = None;
    let mut sampler = tokio::time::interval(Duration::from_secs(1));
    let mut writes = Writes::default();
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                let elapsed = start.elapsed();
                if elapsed >= warm_up + measure {
                    break;
                }
                if window.is_none() && elapsed >= warm_up {
                    window = Some(Window::open(pid)?);
                    writes.reset_counts();
                }
                let user = next % args.users;
                next += 1;
                if window.is_some() {
                    sent_in_window += 1;
                }
                let status = if user < active { "active" } else { "idle" };
                tokio::spawn(ping(api.clone(), Arc::clone(&users), user, status, last_ids[user], tx.clone()));
            }
            Some(result) = rx.recv() => {
                let pinged = result?;
                last_ids[pinged.user] = pinged.last_update_id;
                if window.as_ref().is_some_and(|w| pinged.sent >= w.opened) {
                    latencies.push(pinged.latency);
                }
            }
            _ = sampler.tick() => {
                writes.sample(&db, window.is_some())?;
            }
        }
    }
    let Some(window) = window else { return Err("the measured window never opened".into()) };
    let (cpu_share, wall) = window.close(pid)?;
    // The replies of pings sent within the window.
    let deadline = Instant::now() + Duration::from_secs(30);
    while latencies.len() < sent_in_window && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
            Ok(Some(result)) => latencies.push(result?.latency),
            _ => continue,
        }
    }
    let stats = Stats::new(latencies);
    let secs = wall.as_secs_f64();
    let rows_per_sec = writes.rows as f64 / secs;
    let rss = rss_kib(pid)?;

    println!("presence load: {} users, one ping each per {} s, {active} active", args.users, args.interval_secs);
    println!("  requests measured: {} over {secs:.1} s ({:.1}/s)", stats.len(), stats.len() as f64 / secs);
    println!("  latency: {}", stats.describe());
    println!("  server CPU: {:.1}% of one core", cpu_share * 100.0);
    println!(
        "  database: {} rows written ({rows_per_sec:.1}/s, {:.2} per user per minute), in {} of {} one-second samples",
        writes.rows,
        writes.rows as f64 / args.users as f64 / (secs / 60.0),
        writes.samples_with_writes,
        writes.samples
    );
    println!("  rows written again within 50 s of their last write: {}", writes.too_soon);
    println!("  server RSS: {} MiB", rss / 1024);
    let summary = json!({
        "users": args.users,
        "interval_secs": args.interval_secs,
        "active": active,
        "requests": stats.len(),
        "requests_per_sec": round3(stats.len() as f64 / secs),
        "p50_ms": ms_json(stats.percentile(50)),
        "p99_ms": ms_json(stats.percentile(99)),
        "max_ms": ms_json(stats.max()),
        "server_cpu_percent_of_one_core": round3(cpu_share * 100.0),
        "db_rows_written": writes.rows,
        "db_rows_per_sec": round3(rows_per_sec),
        "db_write_samples": writes.samples_with_writes,
        "db_samples": writes.samples,
        "rows_rewritten_within_50_s": writes.too_soon,
        "server_rss_kib": rss,
    });
    println!("{summary}");
    Ok(())
}

/// Creates `count` members, `concurrency` at a time.
async fn create(maker: &UserMaker, count: usize, concurrency: usize, suffix: &str) -> Result<Vec<Creds>, BoxError> {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = JoinSet::new();
    for i in 0..count {
        let (maker, permits) = (maker.clone(), Arc::clone(&permits));
        let email = format!("presence-{i}-{suffix}@example.com");
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            maker.make(&email, &format!("Presence {i}"), false).await.map(|creds| (i, creds))
        });
    }
    let mut made = Vec::with_capacity(count);
    while let Some(result) = tasks.join_next().await {
        made.push(result??);
        if made.len() % 1000 == 0 {
            eprintln!("  {} members", made.len());
        }
    }
    made.sort_by_key(|(i, _)| *i);
    Ok(made.into_iter().map(|(_, creds)| creds).collect())
}

/// One ping; the reply's `presence_last_update_id` is read off the end of its body (the
/// body is everyone who changed in the last minute: not worth parsing whole here).
async fn ping(
    api: Api,
    users: Arc<Vec<Creds>>,
    user: usize,
    status: &'static str,
    last_update_id: i64,
    tx: mpsc::UnboundedSender<Result<Pinged, String>>,
) {
    let sent = Instant::now();
    let outcome = async {
        // The whole chain of causes: reqwest's own message hides them.
        let describe = |e: reqwest::Error| {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        };
        let id = last_update_id.to_string();
        let form = [("status", status), ("last_update_id", id.as_str())];
        let response = api.post("users/me/presence", &users[user]).form(&form).send().await.map_err(describe)?;
        let status = response.status();
        let body = response.bytes().await.map_err(describe)?;
        let latency = sent.elapsed();
        let text = std::str::from_utf8(&body).map_err(|e| e.to_string())?;
        let last_update_id = text
            .rsplit_once(r#""presence_last_update_id":"#)
            .and_then(|(_, rest)| rest.trim_end().trim_end_matches('}').parse::<i64>().ok())
            .filter(|_| status.is_success())
            .ok_or_else(|| format!("POST /users/me/presence: HTTP {status}: {}", &text[..text.len().min(300)]))?;
        Ok(Pinged { user, last_update_id, latency, sent })
    };
    let _ = tx.send(outcome.await);
}

/// The measured window: when it opened and the server's CPU time then.
struct Window {
    opened: Instant,
    cpu_ticks: u64,
}

impl Window {
    fn open(pid: u32) -> Result<Window, BoxError> {
        Ok(Window { opened: Instant::now(), cpu_ticks: cpu_ticks(pid)? })
    }

    /// The server's CPU time over the window as a share of one core, and the window's length.
    fn close(self, pid: u32) -> Result<(f64, Duration), BoxError> {
        let ticks = cpu_ticks(pid)? - self.cpu_ticks;
        let wall = self.opened.elapsed();
        Ok((ticks as f64 / clock_ticks_per_sec() / wall.as_secs_f64(), wall))
    }
}

/// A row written again sooner than this after its last write breaks the server's rule (a
/// row changes at most every 55 s; the batched write adds up to its 5 s interval).
const TOO_SOON: Duration = Duration::from_secs(50);

/// Database writes seen by sampling `user_presence` once a second.
#[derive(Default)]
struct Writes {
    /// Each user's `last_update_id` and when it was last seen to change.
    seen: HashMap<i64, (i64, Instant)>,
    rows: u64,
    samples: u64,
    samples_with_writes: u64,
    too_soon: u64,
}

impl Writes {
    fn reset_counts(&mut self) {
        (self.rows, self.samples, self.samples_with_writes, self.too_soon) = (0, 0, 0, 0);
    }

    fn sample(&mut self, db: &Path, counting: bool) -> Result<(), BoxError> {
        let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        let mut stmt = conn.prepare("SELECT user_id, last_update_id FROM user_presence")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        let now = Instant::now();
        let mut changed = 0;
        for row in rows {
            let (user, update_id) = row?;
            match self.seen.get(&user).copied() {
                Some((old, _)) if old == update_id => continue,
                Some((_, when)) if counting && now.duration_since(when) < TOO_SOON => self.too_soon += 1,
                _ => {}
            }
            self.seen.insert(user, (update_id, now));
            changed += 1;
        }
        if counting {
            self.samples += 1;
            self.rows += changed;
            self.samples_with_writes += u64::from(changed > 0);
        }
        Ok(())
    }
}
