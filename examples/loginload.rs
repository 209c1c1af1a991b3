//! Server memory under concurrent password logins with made-up usernames: for each count
//! given, starts a server of its own (default argon2 cost: 19 MiB per hash) on a fresh
//! temporary data directory, sends that many `POST /fetch_api_key` at once, each with a
//! username nobody has, and reports the server's peak resident memory (`VmHWM`) and what
//! stays resident afterwards, with how the logins were answered.
//!
//! ```text
//! cargo build --release && cargo run --release --example loginload -- --logins 64 --logins 200
//! ```
//!
//! `--server-bin` measures another build (an older one, say); `--server-config` gives the
//! server a settings file, e.g. one with `[api_rate_limit]` `enabled = false` to see the
//! hashing pool alone, without the per-address limit refusing most of the logins first.
//! Each login holds a connection: raise `ulimit -n` above the largest count.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::*;

/// Memory of concurrent logins with made-up usernames (POST /fetch_api_key).
#[derive(Debug, Parser)]
#[command(name = "loginload")]
struct Args {
    /// Concurrent logins, each count on a fresh server (repeat the flag for several)
    #[arg(long = "logins", default_values_t = [64, 200])]
    logins: Vec<usize>,
    /// Server binary [default: target/<profile>/agora next to this example]
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Settings file (TOML) for the server [default: none, every default]
    #[arg(long)]
    server_config: Option<PathBuf>,
    /// The server's log filter
    #[arg(long, default_value = "warn")]
    server_log: String,
    /// The server's --http-workers
    #[arg(long)]
    http_workers: Option<usize>,
    /// Wait after the last answer before reading the resident memory
    #[arg(long, default_value_t = 500)]
    settle_ms: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    main_with("loginload", run(Args::parse())).await
}

async fn run(args: Args) -> Result<(), BoxError> {
    let config = match &args.server_config {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => String::new(),
    };
    let mut results = Vec::new();
    for &n in &args.logins {
        let options = ServerOptions {
            bin: args.server_bin.clone(),
            log: args.server_log.clone(),
            http_workers: args.http_workers,
            actor_threads: None,
            dir_prefix: "agora-loginload-",
            config: config.clone(),
            capture_log: false,
            seed: None,
        };
        let (server, api) = ManagedServer::start(&options, http_client()?).await?;
        let pid = server.pid();
        let (before_peak, before_rss) = (peak_rss_kib(pid)?, rss_kib(pid)?);
        eprintln!("{n} logins: server {pid} started, VmHWM {} MiB", mib(before_peak));

        let started = Instant::now();
        let mut logins = JoinSet::new();
        for i in 0..n {
            let api = api.clone();
            logins.spawn(async move {
                let form = [
                    ("username", format!("ghost{i}-{}@example.com", random_string(8))),
                    ("password", random_string(16)),
                ];
                let sent = Instant::now();
                let response = api.client.post(api.url("fetch_api_key")).form(&form).send().await?;
                let status = response.status().as_u16();
                response.bytes().await?;
                Ok::<_, BoxError>((status, sent.elapsed()))
            });
        }
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        let mut latencies = Vec::new();
        while let Some(joined) = logins.join_next().await {
            let (status, latency) = joined??;
            *statuses.entry(status).or_default() += 1;
            latencies.push(latency);
        }
        let elapsed = started.elapsed();
        tokio::time::sleep(Duration::from_millis(args.settle_ms)).await;
        let (peak, rss) = (peak_rss_kib(pid)?, rss_kib(pid)?);
        let stats = Stats::new(latencies);
        let answers: Vec<String> = statuses.iter().map(|(status, count)| format!("{count}x {status}")).collect();
        println!(
            "{n} concurrent logins: peak RSS {} MiB (at start {} MiB), RSS after {} MiB (at start {} MiB); \
             answers {}; {:.2} s, latency {}",
            mib(peak),
            mib(before_peak),
            mib(rss),
            mib(before_rss),
            answers.join(", "),
            elapsed.as_secs_f64(),
            stats.describe(),
        );
        results.push(json!({
            "logins": n,
            "peak_rss_mib": mib(peak),
            "start_peak_rss_mib": mib(before_peak),
            "rss_after_mib": mib(rss),
            "start_rss_mib": mib(before_rss),
            "statuses": statuses.iter().map(|(s, c)| (s.to_string(), json!(c))).collect::<serde_json::Map<_, _>>(),
            "seconds": round3(elapsed.as_secs_f64()),
            "p50_ms": ms_json(stats.percentile(50)),
            "max_ms": ms_json(stats.max()),
        }));
        drop(server);
    }
    println!("{}", json!({ "loginload": results }));
    Ok(())
}

fn mib(kib: u64) -> f64 {
    round3(kib as f64 / 1024.0)
}
