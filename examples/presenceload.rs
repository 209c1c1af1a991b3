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

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::presence;
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
        seed: None,
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
    let active = args.users * args.active_percent / 100;
    let load = presence::PingLoad {
        interval: Duration::from_secs(args.interval_secs),
        active,
        measure: Duration::from_secs(args.measure_secs),
    };
    let run = presence::run(&api, pid, &db, Arc::new(users), &load).await?;
    let (stats, writes, cpu_share) = (run.latency, run.writes, run.cpu.share());
    let secs = run.cpu.wall_secs;
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
