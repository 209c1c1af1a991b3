//! Event-delivery load generator: registers many event queues, keeps a long-poll open on
//! each, then creates users one at a time and measures how long the `realm_user` `add`
//! event takes to reach every queue. Also measures the server's memory per idle queue.
//!
//! By default it starts its own server (`target/<profile>/agora`, next to this example's
//! directory) on a fresh temporary data directory and a free port, and kills it on exit:
//!
//! ```text
//! cargo build --release && cargo run --release --example loadgen -- --queues 1000
//! ```
//!
//! Against a server that is already running, give a zuliprc whose user may create users
//! (an administrator with `--can-create-users`); memory is then measured only with
//! `--server-pid`, and the users it creates stay behind:
//!
//! ```text
//! cargo run --release --example loadgen -- --server http://127.0.0.1:9991 --zuliprc admin.zuliprc --server-pid 1234
//! ```
//!
//! Each long-poll holds a connection on both sides: raise `ulimit -n` above the queue count.
//! Progress goes to stderr; the report and a final JSON summary line go to stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;

#[path = "support/mod.rs"]
mod support;
use support::queues::{delete_queues, register_all, Deliveries, Pollers, Report};
use support::*;

/// Load generator for Agora's event delivery (POST /register, GET /events).
#[derive(Debug, Parser)]
#[command(name = "loadgen")]
struct Args {
    /// Event queues to register, each with one long-poll kept open
    #[arg(long, default_value_t = 1000)]
    queues: usize,
    /// Ordinary members owning the queues (round-robin)
    #[arg(long, default_value_t = 10)]
    users: usize,
    /// Users created one at a time, each a `realm_user` `add` event to every queue
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// Pause between one round's completion and the next round
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Seconds to wait for every queue to get a round's event
    #[arg(long, default_value_t = 10)]
    round_timeout_secs: u64,
    /// Registrations in flight at once
    #[arg(long, default_value_t = 50)]
    register_concurrency: usize,
    /// Wait after every poller has sent its request, before measuring memory
    #[arg(long, default_value_t = 1000)]
    settle_ms: u64,
    /// Server binary to start [default: target/<profile>/agora, next to the examples directory]
    #[arg(long, value_name = "PATH", conflicts_with = "zuliprc")]
    server_bin: Option<PathBuf>,
    /// Server's log filter (`--log`) when this program starts it
    #[arg(long, value_name = "FILTER", default_value = "warn", conflicts_with = "zuliprc")]
    server_log: String,
    /// Passed to the started server as `--http-workers`
    #[arg(long, value_name = "N", conflicts_with = "zuliprc")]
    http_workers: Option<usize>,
    /// Passed to the started server as `--actor-threads`
    #[arg(long, value_name = "N", conflicts_with = "zuliprc")]
    actor_threads: Option<usize>,
    /// Use this running server instead of starting one [default: the zuliprc's site]
    #[arg(long, value_name = "URL", requires = "zuliprc")]
    server: Option<String>,
    /// Credentials of a user who may create users, on a running server
    #[arg(long, value_name = "PATH")]
    zuliprc: Option<PathBuf>,
    /// Process id of the running server, to measure its memory (Linux /proc)
    #[arg(long, value_name = "PID", requires = "zuliprc")]
    server_pid: Option<u32>,
}

#[tokio::main]
async fn main() -> ExitCode {
    support::main_with("loadgen", run(Args::parse())).await
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.queues == 0 || args.users == 0 || args.rounds == 0 || args.register_concurrency == 0 {
        return Err("--queues, --users, --rounds and --register-concurrency must be at least 1".into());
    }
    let n = args.queues;
    if let Some(limit) = open_file_limit().filter(|&limit| limit < n as u64 + 64) {
        eprintln!("warning: the open-file limit is {limit}; {n} long-polls need more (ulimit -n)");
    }
    let client = http_client()?;

    // The server, the administrator who creates users, and how members are made.
    // `_server` is held to the end: dropping it kills the child and removes its directory.
    let (_server, api, admin, maker, pid) = match &args.zuliprc {
        Some(path) => {
            let rc = Zuliprc::read(path)?;
            let base = args.server.clone().unwrap_or_else(|| rc.site.clone());
            let api = Api { client, base: base.trim_end_matches('/').to_owned() };
            let admin = Creds { email: rc.email, api_key: rc.key };
            let maker = UserMaker::Api { api: api.clone(), admin: admin.clone() };
            (None, api, admin, maker, args.server_pid)
        }
        None => {
            let options = ServerOptions {
                bin: args.server_bin.clone(),
                log: args.server_log.clone(),
                http_workers: args.http_workers,
                actor_threads: args.actor_threads,
                dir_prefix: "agora-loadgen-",
                config: LOAD_CONFIG.to_owned(),
                capture_log: false,
                seed: None,
            };
            let (server, api) = ManagedServer::start(&options, client).await?;
            let maker = UserMaker::Cli { bin: server.bin.clone(), dir: server.dir.path().to_owned() };
            eprintln!("server pid {} on {}, data in {}", server.pid(), api.base, server.dir.path().display());
            let admin = maker.make("loadgen-admin@example.com", "Loadgen Admin", true).await?;
            let pid = server.pid();
            (Some(server), api, admin, maker, Some(pid))
        }
    };
    let suffix = random_string(8).to_ascii_lowercase();
    eprintln!("creating {} members...", args.users);
    let members = create_members(&maker, "loadgen", args.users, &suffix).await?;

    let rss_before = pid.map(rss_kib).transpose()?;
    eprintln!("registering {n} queues...");
    let started = Instant::now();
    let register_cpu = CpuMeter::start(pid);
    let queues = register_all(&api, &members, n, args.register_concurrency, r#"["realm_user"]"#, None).await?;
    let register_total = started.elapsed();
    let register_cpu = register_cpu.stop();
    let register_stats = Stats::new(queues.iter().map(|q| q.register_latency).collect());

    let mut pollers = Pollers::start(&api, &queues, added_user);
    pollers.wait_until_waiting().await?;
    tokio::time::sleep(Duration::from_millis(args.settle_ms)).await;
    let stray = pollers.drain()?;
    let rss_waiting = pid.map(rss_kib).transpose()?;
    let per_queue_kib = rss_before.zip(rss_waiting).map(|(b, a)| (a as f64 - b as f64) / n as f64);

    let mut rounds = Deliveries::new(n, stray);
    let mut post = Vec::with_capacity(args.rounds);
    let timeout = Duration::from_secs(args.round_timeout_secs);
    let rounds_cpu = CpuMeter::start(pid);
    for round in 1..=args.rounds {
        post.push(create_one(round, &api, &admin, &suffix, timeout, &mut pollers.rx, &mut rounds).await?);
        if round < args.rounds {
            tokio::time::sleep(Duration::from_millis(args.interval_ms)).await;
        }
    }
    let rounds_cpu = rounds_cpu.stop();
    let rss_after = pid.map(rss_kib).transpose()?;

    pollers.shutdown().await;
    if args.zuliprc.is_some() {
        delete_queues(&api, &queues, args.register_concurrency).await;
    }

    let failed = rounds.failed();
    let delivery = Stats::new(rounds.latencies);
    let last = Stats::new(rounds.last_poller);
    let post = Stats::new(post);
    println!(
        "Agora event delivery: {n} queues over {} members, {} rounds, {} ms apart",
        args.users, args.rounds, args.interval_ms
    );
    println!(
        "  registration: {:.2} s for all ({} at a time); per request {}",
        register_total.as_secs_f64(),
        args.register_concurrency,
        register_stats.describe()
    );
    println!("    {}", describe_cpu(register_cpu, n, "registration"));
    match (rss_before, rss_waiting, per_queue_kib) {
        (Some(before), Some(waiting), Some(per_queue)) => {
            println!("  server RSS: {before} KiB before the queues, {waiting} KiB with {n} waiting polls");
            println!("  memory per idle queue with a waiting poll: {per_queue:.1} KiB");
        }
        _ => println!("  server memory: not measured (give --server-pid)"),
    }
    if let Some(after) = rss_after {
        println!("  server RSS after the rounds: {after} KiB");
    }
    println!("  delivery latency per queue ({} deliveries): {}", delivery.len(), delivery.describe());
    println!(
        "  last poller per round ({} complete rounds): p50 {}, max {}",
        last.len(),
        ms(last.percentile(50)),
        ms(last.max())
    );
    println!("  POST /users request latency: {}", post.describe());
    println!(
        "  {} (one user created and its event delivered to every queue); {}",
        describe_cpu(rounds_cpu, args.rounds, "round"),
        describe_cpu(rounds_cpu, delivery.len(), "delivery")
    );
    println!("  missed deliveries: {}, failed pollers: {failed}, stray events: {}", rounds.missed, rounds.stray);
    let summary = json!({
        "loadgen": "event-delivery",
        "server": if args.zuliprc.is_some() { "external" } else { "started" },
        "queues": n,
        "users": args.users,
        "rounds": args.rounds,
        "interval_ms": args.interval_ms,
        "register": { "total_s": round3(register_total.as_secs_f64()), "concurrency": args.register_concurrency,
                      "p50_ms": ms_json(register_stats.percentile(50)), "p99_ms": ms_json(register_stats.percentile(99)),
                      "max_ms": ms_json(register_stats.max()), "cpu": cpu_json(register_cpu, n) },
        "rss_kib": { "before_queues": rss_before, "with_waiting_polls": rss_waiting, "after_rounds": rss_after },
        "kib_per_idle_queue": per_queue_kib.map(round3),
        "delivery_ms": { "count": delivery.len(), "p50": ms_json(delivery.percentile(50)),
                         "p99": ms_json(delivery.percentile(99)), "max": ms_json(delivery.max()) },
        "last_poller_ms": { "rounds": last.len(), "p50": ms_json(last.percentile(50)), "max": ms_json(last.max()) },
        "post_users_ms": { "p50": ms_json(post.percentile(50)), "p99": ms_json(post.percentile(99)),
                           "max": ms_json(post.max()) },
        "cpu_per_round": cpu_json(rounds_cpu, args.rounds),
        "cpu_per_delivery": cpu_json(rounds_cpu, delivery.len()),
        "missed": rounds.missed,
        "failed_pollers": failed,
        "stray_events": rounds.stray,
    });
    println!("{summary}");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Rounds: one user created, one event expected on every queue

/// A `realm_user` `add` event's person: email and user id.
fn added_user(event: &Value) -> Option<(String, Option<i64>)> {
    (event["type"] == "realm_user" && event["op"] == "add").then(|| {
        let person = &event["person"];
        (person["email"].as_str().unwrap_or_default().to_owned(), person["user_id"].as_i64())
    })
}

/// One round: creates a user and collects its `add` event from every queue; returns the
/// POST /users latency.
async fn create_one(
    round: usize,
    api: &Api,
    admin: &Creds,
    suffix: &str,
    timeout: Duration,
    rx: &mut UnboundedReceiver<Report<(String, Option<i64>)>>,
    rounds: &mut Deliveries,
) -> Result<Duration, BoxError> {
    let email = format!("loadgen-{round}-{suffix}-{}@example.com", random_string(6).to_ascii_lowercase());
    let password = random_string(20);
    let full_name = format!("Loadgen {round}");
    let form = [("email", email.as_str()), ("password", &password), ("full_name", &full_name)];
    let t0 = Instant::now();
    let response = api.post("users", admin).form(&form).send().await?;
    let post_latency = t0.elapsed();
    let (status, body) = (response.status(), response.bytes().await?);
    let created = success_json("POST /api/v1/users", status, &body)?;
    // The event may carry a fake address (restricted email visibility): also match the id.
    let user_id = created["user_id"].as_i64();
    let label = format!("round {round} (POST {})", ms(Some(post_latency)));
    rounds
        .collect(&label, t0, timeout, rx, |(e, id)| e.eq_ignore_ascii_case(&email) || (id.is_some() && *id == user_id))
        .await?;
    Ok(post_latency)
}
