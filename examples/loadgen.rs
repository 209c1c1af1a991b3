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

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::distributions::Alphanumeric;
use rand::Rng;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

type BoxError = Box<dyn Error + Send + Sync>;

/// A long-poll answers within 45-55 s (an event or a heartbeat); give it generous slack.
const POLL_TIMEOUT: Duration = Duration::from_secs(120);

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
    let args = Args::parse();
    // On Ctrl-C the `run` future is dropped, which kills a server we started.
    let result = tokio::select! {
        result = run(args) => result,
        _ = tokio::signal::ctrl_c() => Err("interrupted".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), BoxError> {
    if args.queues == 0 || args.users == 0 || args.rounds == 0 || args.register_concurrency == 0 {
        return Err("--queues, --users, --rounds and --register-concurrency must be at least 1".into());
    }
    let n = args.queues;
    if let Some(limit) = open_file_limit().filter(|&limit| limit < n as u64 + 64) {
        eprintln!("warning: the open-file limit is {limit}; {n} long-polls need more (ulimit -n)");
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .pool_idle_timeout(None)
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .no_proxy()
        .build()?;

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
            let (server, api) = ManagedServer::start(&args, client).await?;
            let maker = UserMaker::Cli { bin: server.bin.clone(), dir: server.dir.path().to_owned() };
            eprintln!("server pid {} on {}, data in {}", server.pid(), api.base, server.dir.path().display());
            let admin = maker.make("loadgen-admin@example.com", "Loadgen Admin", true).await?;
            let pid = server.pid();
            (Some(server), api, admin, maker, Some(pid))
        }
    };
    let suffix = random_string(8).to_ascii_lowercase();
    eprintln!("creating {} members...", args.users);
    let members = create_members(&maker, args.users, &suffix).await?;

    let rss_before = pid.map(rss_kib).transpose()?;
    eprintln!("registering {n} queues...");
    let started = Instant::now();
    let queues = register_all(&api, &members, n, args.register_concurrency).await?;
    let register_total = started.elapsed();
    let register_stats = Stats::new(queues.iter().map(|q| q.register_latency).collect());

    let (tx, mut rx) = unbounded_channel();
    let waiting = Arc::new(AtomicUsize::new(0));
    let mut pollers = JoinSet::new();
    for queue in &queues {
        pollers.spawn(poll_queue(api.clone(), queue.clone(), waiting.clone(), tx.clone()));
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(60);
    while waiting.load(Ordering::SeqCst) < n {
        if Instant::now() > deadline {
            return Err(format!(
                "only {} of {n} pollers sent their request within 60 s",
                waiting.load(Ordering::SeqCst)
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(args.settle_ms)).await;
    let mut stray = 0usize;
    while let Ok(report) = rx.try_recv() {
        match report {
            Report::Failed { queue, error } => return Err(format!("queue {queue}: {error}").into()),
            Report::Added { .. } => stray += 1,
        }
    }
    let rss_waiting = pid.map(rss_kib).transpose()?;
    let per_queue_kib = rss_before.zip(rss_waiting).map(|(b, a)| (a as f64 - b as f64) / n as f64);

    let mut rounds = Rounds { n, dead: vec![false; n], stray, ..Rounds::default() };
    let timeout = Duration::from_secs(args.round_timeout_secs);
    for round in 1..=args.rounds {
        rounds.run(round, &api, &admin, &suffix, timeout, &mut rx).await?;
        if round < args.rounds {
            tokio::time::sleep(Duration::from_millis(args.interval_ms)).await;
        }
    }
    let rss_after = pid.map(rss_kib).transpose()?;

    pollers.shutdown().await;
    if args.zuliprc.is_some() {
        delete_queues(&api, &queues, args.register_concurrency).await;
    }

    let delivery = Stats::new(rounds.deliveries);
    let last = Stats::new(rounds.last_poller);
    let post = Stats::new(rounds.post_latency);
    let failed = rounds.dead.iter().filter(|&&d| d).count();
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
                      "max_ms": ms_json(register_stats.max()) },
        "rss_kib": { "before_queues": rss_before, "with_waiting_polls": rss_waiting, "after_rounds": rss_after },
        "kib_per_idle_queue": per_queue_kib.map(round3),
        "delivery_ms": { "count": delivery.len(), "p50": ms_json(delivery.percentile(50)),
                         "p99": ms_json(delivery.percentile(99)), "max": ms_json(delivery.max()) },
        "last_poller_ms": { "rounds": last.len(), "p50": ms_json(last.percentile(50)), "max": ms_json(last.max()) },
        "post_users_ms": { "p50": ms_json(post.percentile(50)), "p99": ms_json(post.percentile(99)),
                           "max": ms_json(post.max()) },
        "missed": rounds.missed,
        "failed_pollers": failed,
        "stray_events": rounds.stray,
    });
    println!("{summary}");
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Statistics

/// Durations sorted once, so that percentiles are read straight off the order.
struct Stats {
    sorted: Vec<Duration>,
}

impl Stats {
    fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        Stats { sorted: samples }
    }

    fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Nearest-rank percentile: the smallest sample with at least `pct`% of the samples at
    /// or below it, i.e. the sample of 1-based rank ceil(pct/100 * len). Integer arithmetic,
    /// so p99 of 20,000 samples is exactly rank 19,800. None when empty or pct not in 1..=100.
    fn percentile(&self, pct: usize) -> Option<Duration> {
        if !(1..=100).contains(&pct) {
            return None;
        }
        let rank = (pct * self.sorted.len()).div_ceil(100);
        rank.checked_sub(1).and_then(|i| self.sorted.get(i)).copied()
    }

    fn max(&self) -> Option<Duration> {
        self.sorted.last().copied()
    }

    fn describe(&self) -> String {
        format!("p50 {}, p99 {}, max {}", ms(self.percentile(50)), ms(self.percentile(99)), ms(self.max()))
    }
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".to_owned(), |d| format!("{:.2} ms", d.as_secs_f64() * 1e3))
}

fn ms_json(d: Option<Duration>) -> Option<f64> {
    d.map(|d| round3(d.as_secs_f64() * 1e3))
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

// ---------------------------------------------------------------------------------------
// Rounds: one user created, one event expected on every queue

#[derive(Default)]
struct Rounds {
    n: usize,
    /// Pollers that stopped (their error was printed); they are not waited for.
    dead: Vec<bool>,
    deliveries: Vec<Duration>,
    last_poller: Vec<Duration>,
    post_latency: Vec<Duration>,
    missed: usize,
    stray: usize,
}

impl Rounds {
    async fn run(
        &mut self,
        round: usize,
        api: &Api,
        admin: &Creds,
        suffix: &str,
        timeout: Duration,
        rx: &mut UnboundedReceiver<Report>,
    ) -> Result<(), BoxError> {
        let email = format!("loadgen-{round}-{suffix}-{}@example.com", random_string(6).to_ascii_lowercase());
        let password = random_string(20);
        let full_name = format!("Loadgen {round}");
        let form = [("email", email.as_str()), ("password", &password), ("full_name", &full_name)];
        let t0 = Instant::now();
        let response = api.post("users", admin).form(&form).send().await?;
        let post_latency = t0.elapsed();
        let (status, body) = (response.status(), response.bytes().await?);
        let created = success_json("POST /api/v1/users", status, &body)?;
        self.post_latency.push(post_latency);
        // The event may carry a fake address (restricted email visibility): also match the id.
        let user_id = created["user_id"].as_i64();

        let deadline = tokio::time::Instant::from_std(t0 + timeout);
        let mut got: Vec<Option<Duration>> = vec![None; self.n];
        let mut count = 0;
        // Stopped pollers are not waited for (a stopped poller sends nothing after `Failed`).
        let mut stopped = self.dead.iter().filter(|&&dead| dead).count();
        while count + stopped < self.n {
            let report = match tokio::time::timeout_at(deadline, rx.recv()).await {
                Err(_) => break,
                Ok(None) => return Err("every poller has stopped".into()),
                Ok(Some(report)) => report,
            };
            match report {
                Report::Added { queue, email: e, user_id: id, at }
                    if e.eq_ignore_ascii_case(&email) || (id.is_some() && id == user_id) =>
                {
                    if got[queue].is_none() {
                        got[queue] = Some(at.saturating_duration_since(t0));
                        count += 1;
                    }
                }
                Report::Added { .. } => self.stray += 1,
                Report::Failed { queue, error } => {
                    eprintln!("queue {queue} stopped: {error}");
                    if !self.dead[queue] && got[queue].is_none() {
                        stopped += 1;
                    }
                    self.dead[queue] = true;
                }
            }
        }
        let latencies: Vec<Duration> = got.into_iter().flatten().collect();
        let slowest = latencies.iter().max().copied();
        self.missed += self.n - latencies.len();
        if latencies.len() == self.n {
            self.last_poller.extend(slowest);
        }
        eprintln!(
            "round {round}: {}/{} queues, last after {}, POST {}",
            latencies.len(),
            self.n,
            ms(slowest),
            ms(Some(post_latency))
        );
        self.deliveries.extend(latencies);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Event queues

#[derive(Clone)]
struct Queue {
    index: usize,
    user: Creds,
    id: String,
    last_event_id: i64,
    register_latency: Duration,
}

/// What a poller tells the main task.
enum Report {
    /// A `realm_user` `add` event, and when its response body had fully arrived.
    Added { queue: usize, email: String, user_id: Option<i64>, at: Instant },
    /// The poller stopped.
    Failed { queue: usize, error: String },
}

async fn register_all(api: &Api, users: &[Creds], n: usize, concurrency: usize) -> Result<Vec<Queue>, BoxError> {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = JoinSet::new();
    for (index, user) in users.iter().cycle().take(n).enumerate() {
        let (api, user, permits) = (api.clone(), user.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let started = Instant::now();
            let form = [("event_types", r#"["realm_user"]"#)];
            let response = api.post("register", &user).form(&form).send().await?;
            let (status, body) = (response.status(), response.bytes().await?);
            let register_latency = started.elapsed();
            let reply = success_json(&format!("POST /api/v1/register as {}", user.email), status, &body)?;
            let id = reply["queue_id"].as_str().ok_or("POST /api/v1/register: no queue_id string")?.to_owned();
            let last_event_id = reply["last_event_id"].as_i64().ok_or("POST /api/v1/register: no last_event_id")?;
            Ok::<_, BoxError>(Queue { index, user, id, last_event_id, register_latency })
        });
    }
    let mut queues = Vec::with_capacity(n);
    // The first failure returns; dropping `tasks` aborts the others.
    while let Some(queue) = tasks.join_next().await {
        queues.push(queue??);
    }
    queues.sort_by_key(|q| q.index);
    Ok(queues)
}

async fn poll_queue(api: Api, queue: Queue, waiting: Arc<AtomicUsize>, tx: UnboundedSender<Report>) {
    if let Err(e) = poll_loop(&api, &queue, &waiting, &tx).await {
        let _ = tx.send(Report::Failed { queue: queue.index, error: e.to_string() });
    }
}

/// Long-polls until an error, acknowledging each answer's highest event id in the next poll.
async fn poll_loop(
    api: &Api,
    queue: &Queue,
    waiting: &AtomicUsize,
    tx: &UnboundedSender<Report>,
) -> Result<(), BoxError> {
    let mut last_event_id = queue.last_event_id;
    let mut first = true;
    loop {
        if std::mem::take(&mut first) {
            waiting.fetch_add(1, Ordering::SeqCst);
        }
        let query = [("queue_id", queue.id.clone()), ("last_event_id", last_event_id.to_string())];
        let request = api.client.get(api.url("events")).basic_auth(&queue.user.email, Some(&queue.user.api_key));
        let response = request.query(&query).timeout(POLL_TIMEOUT).send().await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let at = Instant::now();
        let reply = success_json("GET /api/v1/events", status, &body)?;
        let events = reply["events"].as_array().ok_or("GET /api/v1/events: no events array")?;
        for event in events {
            let id = event["id"].as_i64().ok_or_else(|| format!("GET /api/v1/events: event without an id: {event}"))?;
            last_event_id = last_event_id.max(id);
            if event["type"] == "realm_user" && event["op"] == "add" {
                let person = &event["person"];
                let email = person["email"].as_str().unwrap_or_default().to_owned();
                let report = Report::Added { queue: queue.index, email, user_id: person["user_id"].as_i64(), at };
                if tx.send(report).is_err() {
                    return Ok(()); // the main task is finishing
                }
            }
        }
    }
}

/// Deletes the queues on a server we did not start (ours is simply killed).
async fn delete_queues(api: &Api, queues: &[Queue], concurrency: usize) {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = JoinSet::new();
    for queue in queues {
        let (api, queue, permits) = (api.clone(), queue.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.ok()?;
            let request = api.client.delete(api.url("events")).basic_auth(&queue.user.email, Some(&queue.user.api_key));
            let response = request.form(&[("queue_id", &queue.id)]).send().await.ok()?;
            response.status().is_success().then_some(())
        });
    }
    let mut failed = 0;
    while let Some(done) = tasks.join_next().await {
        failed += usize::from(!matches!(done, Ok(Some(()))));
    }
    if failed > 0 {
        eprintln!("warning: {failed} of {} queues could not be deleted", queues.len());
    }
}

// ---------------------------------------------------------------------------------------
// HTTP helpers and accounts

#[derive(Clone)]
struct Api {
    client: reqwest::Client,
    /// e.g. `http://127.0.0.1:9991`, no trailing slash.
    base: String,
}

impl Api {
    fn url(&self, endpoint: &str) -> String {
        format!("{}/api/v1/{endpoint}", self.base)
    }

    fn post(&self, endpoint: &str, user: &Creds) -> reqwest::RequestBuilder {
        self.client.post(self.url(endpoint)).basic_auth(&user.email, Some(&user.api_key))
    }
}

/// The body of a Zulip success, or an error quoting the status and the body.
fn success_json(what: &str, status: StatusCode, body: &[u8]) -> Result<Value, BoxError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(reply) if status.is_success() && reply["result"] == "success" => Ok(reply),
        _ => {
            let text: String = String::from_utf8_lossy(body).chars().take(2000).collect();
            Err(format!("{what} failed: HTTP {status}: {}", text.trim()).into())
        }
    }
}

#[derive(Clone)]
struct Creds {
    email: String,
    api_key: String,
}

struct Zuliprc {
    email: String,
    key: String,
    site: String,
}

impl Zuliprc {
    fn read(path: &Path) -> Result<Self, BoxError> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let field = |name: &str| {
            text.lines()
                .filter_map(|line| line.split_once('='))
                .find(|(key, _)| key.trim() == name)
                .map(|(_, value)| value.trim().to_owned())
                .filter(|value| !value.is_empty())
                .ok_or_else(|| format!("{}: no {name}=", path.display()))
        };
        Ok(Zuliprc { email: field("email")?, key: field("key")?, site: field("site")? })
    }
}

/// How accounts are made: through `agora create-user` (which reaches the running server
/// over its admin socket), or through the API on a server we did not start.
#[derive(Clone)]
enum UserMaker {
    Cli { bin: PathBuf, dir: PathBuf },
    Api { api: Api, admin: Creds },
}

impl UserMaker {
    async fn make(&self, email: &str, full_name: &str, administrator: bool) -> Result<Creds, BoxError> {
        let password = random_string(20);
        match self {
            UserMaker::Cli { bin, dir } => {
                let role = if administrator { "administrator" } else { "member" };
                let mut command = tokio::process::Command::new(bin);
                command.arg("--data-dir").arg(dir).args(["create-user", "--subdomain", "", "--email", email]);
                command.args(["--password", &password, "--full-name", full_name, "--role", role]);
                if administrator {
                    command.arg("--can-create-users");
                }
                let out = command.stdin(Stdio::null()).kill_on_drop(true).output().await?;
                if !out.status.success() {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    return Err(format!("agora create-user {email}: {}: {}", out.status, stderr.trim()).into());
                }
                let created: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
                    format!(
                        "agora create-user {email}: unexpected output {:?}: {e}",
                        String::from_utf8_lossy(&out.stdout)
                    )
                })?;
                let api_key = created["api_key"].as_str().ok_or("agora create-user: no api_key")?;
                Ok(Creds { email: email.to_owned(), api_key: api_key.to_owned() })
            }
            UserMaker::Api { api, admin } => {
                let form = [("email", email), ("password", &password), ("full_name", full_name)];
                let response = api.post("users", admin).form(&form).send().await?;
                let (status, body) = (response.status(), response.bytes().await?);
                success_json(&format!("POST /api/v1/users ({email})"), status, &body)?;
                let form = [("username", email), ("password", &password)];
                let response = api.client.post(api.url("fetch_api_key")).form(&form).send().await?;
                let (status, body) = (response.status(), response.bytes().await?);
                let reply = success_json(&format!("POST /api/v1/fetch_api_key ({email})"), status, &body)?;
                let api_key = reply["api_key"].as_str().ok_or("POST /api/v1/fetch_api_key: no api_key")?;
                let email = reply["email"].as_str().unwrap_or(email);
                Ok(Creds { email: email.to_owned(), api_key: api_key.to_owned() })
            }
        }
    }
}

async fn create_members(maker: &UserMaker, count: usize, suffix: &str) -> Result<Vec<Creds>, BoxError> {
    // argon2 runs in each `create-user` process (or in the server): a few at a time.
    let permits = Arc::new(Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get())));
    let mut tasks = JoinSet::new();
    for i in 0..count {
        let (maker, permits) = (maker.clone(), permits.clone());
        let email = format!("loadgen-member-{i}-{suffix}@example.com");
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            maker.make(&email, &format!("Loadgen Member {i}"), false).await
        });
    }
    let mut members = Vec::with_capacity(count);
    while let Some(member) = tasks.join_next().await {
        members.push(member??);
    }
    Ok(members)
}

fn random_string(len: usize) -> String {
    rand::thread_rng().sample_iter(&Alphanumeric).take(len).map(char::from).collect()
}

// ---------------------------------------------------------------------------------------
// The server we start, and its memory

/// A server started on a fresh data directory. Fields drop in order: the child is killed
/// before its data directory is removed.
struct ManagedServer {
    child: ChildGuard,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

/// Kills the child when dropped, on success, error or panic alike.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl ManagedServer {
    async fn start(args: &Args, client: reqwest::Client) -> Result<(Self, Api), BoxError> {
        let bin = match &args.server_bin {
            Some(bin) => bin.clone(),
            // target/<profile>/examples/loadgen -> target/<profile>/agora
            None => std::env::current_exe()?
                .parent()
                .and_then(Path::parent)
                .map(|dir| dir.join("agora"))
                .ok_or("cannot locate the server binary; pass --server-bin")?,
        };
        if !bin.is_file() {
            return Err(format!(
                "no server binary at {}: run `cargo build --release` or pass --server-bin",
                bin.display()
            )
            .into());
        }
        let dir = tempfile::Builder::new().prefix("agora-loadgen-").tempdir()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = format!("127.0.0.1:{port}");
        // The trigger creates users: keep their password hashing cheap, so that what is
        // measured is event delivery, not argon2 (19 MiB and ~30 ms per hash by default).
        let config = dir.path().join("loadgen.toml");
        std::fs::write(&config, "[password_hash]\nmemory_kib = 64\niterations = 1\nparallelism = 1\n")?;
        let mut command = std::process::Command::new(&bin);
        command.arg("--data-dir").arg(dir.path()).arg("--config").arg(&config);
        command.args(["--bind", &addr, "--external-host", &addr, "--log", &args.server_log]);
        if let Some(n) = args.http_workers {
            command.args(["--http-workers", &n.to_string()]);
        }
        if let Some(n) = args.actor_threads {
            command.args(["--actor-threads", &n.to_string()]);
        }
        command.arg("serve").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
        let child = ChildGuard(command.spawn().map_err(|e| format!("{}: {e}", bin.display()))?);
        let mut server = ManagedServer { child, dir, bin };
        let api = Api { client, base: format!("http://{addr}") };

        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = server.child.0.try_wait()? {
                return Err(format!("the server exited ({status}) before answering").into());
            }
            if let Ok(response) = api.client.get(api.url("server_settings")).send().await {
                if response.status().is_success() {
                    break;
                }
            }
            if Instant::now() > deadline {
                return Err(
                    format!("the server did not answer GET /api/v1/server_settings on {addr} within 30 s").into()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The owner's zuliprc marks the end of the first start's bootstrap.
        let zuliprc = server.dir.path().join("zuliprc");
        while Zuliprc::read(&zuliprc).is_err() {
            if Instant::now() > deadline {
                return Err(format!("the server did not write {} within 30 s", zuliprc.display()).into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok((server, api))
    }

    fn pid(&self) -> u32 {
        self.child.0.id()
    }
}

/// Resident set size of a process, in KiB (`VmRSS` of `/proc/<pid>/status`).
fn rss_kib(pid: u32) -> Result<u64, BoxError> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .ok_or_else(|| format!("{path}: no VmRSS").into())
}

/// This process's soft limit of open files (a server we start inherits it).
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find_map(|line| line.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse().ok()
}
