//! Code shared by the load generators (`loadgen`, `msgload`): the server they start, the
//! API client and accounts, percentile statistics and memory readings.
//!
//! Each example includes it with `#[path = "support/mod.rs"] mod support;`.

// Each example uses only part of this module.
#![allow(dead_code, reason = "each example includes this module and uses only part of it")]

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::distributions::Alphanumeric;
use rand::Rng;
use reqwest::StatusCode;
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub mod floor;
pub mod presence;
pub mod queues;

/// Any error, sendable between tasks.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// An HTTP client for many concurrent connections to one host.
pub fn http_client() -> Result<reqwest::Client, BoxError> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .pool_idle_timeout(None)
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .no_proxy()
        .build()?)
}

/// How to start the server (`ManagedServer::start`).
pub struct ServerOptions {
    /// Server binary [default: target/<profile>/agora, next to the examples directory].
    pub bin: Option<PathBuf>,
    /// The server's `--log` filter.
    pub log: String,
    /// `--http-workers`.
    pub http_workers: Option<usize>,
    /// `--actor-threads`.
    pub actor_threads: Option<usize>,
    /// Prefix of the temporary data directory's name.
    pub dir_prefix: &'static str,
    /// The server's settings file (TOML), e.g. [`LOAD_CONFIG`].
    pub config: String,
    /// Write the server's log to `server.log` in its data directory instead of this
    /// program's stderr, with the realm actors' group commits (`agora::group_commit` at
    /// `debug`), so that [`ManagedServer::group_commits`] can count them.
    pub capture_log: bool,
    /// A directory whose files are copied into the fresh data directory before the server
    /// first starts (a database prepared by an earlier run, with its `zuliprc`).
    pub seed: Option<PathBuf>,
}

/// Settings for load generators that create users and send far more than Zulip's rate
/// limits allow: cheap password hashing (what is measured is the server, not argon2: 19 MiB
/// and ~30 ms per hash by default) and no rate limits.
pub const LOAD_CONFIG: &str =
    "[password_hash]\nmemory_kib = 64\niterations = 1\nparallelism = 1\n[api_rate_limit]\nenabled = false\n";

// ---------------------------------------------------------------------------------------
// Statistics

/// Durations sorted once, so that percentiles are read straight off the order.
pub struct Stats {
    pub sorted: Vec<Duration>,
}

impl Stats {
    pub fn new(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        Stats { sorted: samples }
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Nearest-rank percentile: the smallest sample with at least `pct`% of the samples at
    /// or below it, i.e. the sample of 1-based rank ceil(pct/100 * len). Integer arithmetic,
    /// so p99 of 20,000 samples is exactly rank 19,800. None when empty or pct not in 1..=100.
    pub fn percentile(&self, pct: usize) -> Option<Duration> {
        if !(1..=100).contains(&pct) {
            return None;
        }
        let rank = (pct * self.sorted.len()).div_ceil(100);
        rank.checked_sub(1).and_then(|i| self.sorted.get(i)).copied()
    }

    pub fn max(&self) -> Option<Duration> {
        self.sorted.last().copied()
    }

    pub fn describe(&self) -> String {
        format!("p50 {}, p99 {}, max {}", ms(self.percentile(50)), ms(self.percentile(99)), ms(self.max()))
    }
}

pub fn ms(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".to_owned(), |d| format!("{:.2} ms", d.as_secs_f64() * 1e3))
}

pub fn ms_json(d: Option<Duration>) -> Option<f64> {
    d.map(|d| round3(d.as_secs_f64() * 1e3))
}

pub fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

// ---------------------------------------------------------------------------------------
// HTTP helpers and accounts

#[derive(Clone)]
pub struct Api {
    pub client: reqwest::Client,
    /// e.g. `http://127.0.0.1:9991`, no trailing slash.
    pub base: String,
}

impl Api {
    pub fn url(&self, endpoint: &str) -> String {
        format!("{}/api/v1/{endpoint}", self.base)
    }

    pub fn post(&self, endpoint: &str, user: &Creds) -> reqwest::RequestBuilder {
        self.client.post(self.url(endpoint)).basic_auth(&user.email, Some(&user.api_key))
    }
}

/// The body of a Zulip success, or an error quoting the status and the body.
pub fn success_json(what: &str, status: StatusCode, body: &[u8]) -> Result<Value, BoxError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(reply) if status.is_success() && reply["result"] == "success" => Ok(reply),
        _ => {
            let text: String = String::from_utf8_lossy(body).chars().take(2000).collect();
            Err(format!("{what} failed: HTTP {status}: {}", text.trim()).into())
        }
    }
}

#[derive(Clone)]
pub struct Creds {
    pub email: String,
    pub api_key: String,
}

pub struct Zuliprc {
    pub email: String,
    pub key: String,
    pub site: String,
}

impl Zuliprc {
    pub fn read(path: &Path) -> Result<Self, BoxError> {
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
pub enum UserMaker {
    Cli { bin: PathBuf, dir: PathBuf },
    Api { api: Api, admin: Creds },
}

impl UserMaker {
    pub async fn make(&self, email: &str, full_name: &str, administrator: bool) -> Result<Creds, BoxError> {
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

pub async fn create_members(
    maker: &UserMaker,
    label: &str,
    count: usize,
    suffix: &str,
) -> Result<Vec<Creds>, BoxError> {
    // argon2 runs in each `create-user` process (or in the server): a few at a time.
    let permits = Arc::new(Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get())));
    let mut tasks = JoinSet::new();
    for i in 0..count {
        let (maker, permits) = (maker.clone(), permits.clone());
        let email = format!("{label}-member-{i}-{suffix}@example.com");
        let full_name = format!("{label} member {i}");
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            maker.make(&email, &full_name, false).await
        });
    }
    let mut members = Vec::with_capacity(count);
    while let Some(member) = tasks.join_next().await {
        members.push(member??);
    }
    Ok(members)
}

pub fn random_string(len: usize) -> String {
    rand::thread_rng().sample_iter(&Alphanumeric).take(len).map(char::from).collect()
}

// ---------------------------------------------------------------------------------------
// The server we start, and its memory

/// A server started on a fresh data directory. Fields drop in order: the child is killed
/// before its data directory is removed.
pub struct ManagedServer {
    pub child: ChildGuard,
    pub dir: tempfile::TempDir,
    pub bin: PathBuf,
    /// `host:port` it listens on.
    addr: String,
    /// Its command-line arguments before `serve`, for `restart`.
    args: Vec<String>,
    /// Where its log goes, when captured.
    log_file: Option<PathBuf>,
}

/// Group commits the server logged: how many changes (sends, ...) each carried.
#[derive(Debug, Default, Clone)]
pub struct GroupCommits {
    pub commits: u64,
    pub changes: u64,
    pub largest: u64,
}

impl GroupCommits {
    pub fn mean(&self) -> f64 {
        if self.commits == 0 {
            0.0
        } else {
            self.changes as f64 / self.commits as f64
        }
    }

    pub fn describe(&self) -> String {
        format!("{} commits, {:.2} changes per commit (largest {})", self.commits, self.mean(), self.largest)
    }

    pub fn to_json(&self) -> Value {
        serde_json::json!({ "commits": self.commits, "changes": self.changes,
                            "changes_per_commit": round3(self.mean()), "largest": self.largest })
    }
}

/// Kills the child when dropped, on success, error or panic alike.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl ManagedServer {
    /// Starts the server on a fresh data directory and a free port, and waits until it
    /// answers and has written the owner's zuliprc.
    pub async fn start(options: &ServerOptions, client: reqwest::Client) -> Result<(Self, Api), BoxError> {
        let bin = match &options.bin {
            Some(bin) => bin.clone(),
            // target/<profile>/examples/<example> -> target/<profile>/agora
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
        let dir = tempfile::Builder::new().prefix(options.dir_prefix).tempdir()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = format!("127.0.0.1:{port}");
        if let Some(seed) = &options.seed {
            for entry in std::fs::read_dir(seed)? {
                let entry = entry?;
                if entry.file_type()?.is_file() {
                    std::fs::copy(entry.path(), dir.path().join(entry.file_name()))?;
                }
            }
        }
        let config = dir.path().join("loadgen.toml");
        std::fs::write(&config, &options.config)?;
        let mut args = vec!["--data-dir".to_owned(), path_arg(dir.path())?, "--config".to_owned(), path_arg(&config)?];
        let log = if options.capture_log {
            format!("{},agora::group_commit=debug", options.log)
        } else {
            options.log.clone()
        };
        args.extend(["--bind", &addr, "--external-host", &addr, "--log", &log].map(str::to_owned));
        if let Some(n) = options.http_workers {
            args.extend(["--http-workers".to_owned(), n.to_string()]);
        }
        if let Some(n) = options.actor_threads {
            args.extend(["--actor-threads".to_owned(), n.to_string()]);
        }
        let log_file = options.capture_log.then(|| dir.path().join("server.log"));
        let child = spawn(&bin, &args, log_file.as_deref())?;
        let mut server = ManagedServer { child, dir, bin, addr, args, log_file };
        let api = Api { client, base: format!("http://{}", server.addr) };
        let deadline = Instant::now() + Duration::from_secs(30);
        server.wait_until_ready(&api, deadline).await?;
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

    /// Kills the server, keeping its data directory (e.g. to write into its database).
    pub fn stop(&mut self) -> Result<(), BoxError> {
        self.child.0.kill()?;
        self.child.0.wait()?;
        Ok(())
    }

    /// Starts the server again on the same data directory and port, after `stop`.
    pub async fn restart(&mut self, api: &Api) -> Result<(), BoxError> {
        self.child = spawn(&self.bin, &self.args, self.log_file.as_deref())?;
        self.wait_until_ready(api, Instant::now() + Duration::from_secs(120)).await
    }

    async fn wait_until_ready(&mut self, api: &Api, deadline: Instant) -> Result<(), BoxError> {
        loop {
            if let Some(status) = self.child.0.try_wait()? {
                return Err(format!("the server exited ({status}) before answering").into());
            }
            if let Ok(response) = api.client.get(api.url("server_settings")).send().await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                let addr = &self.addr;
                return Err(format!("the server did not answer GET /api/v1/server_settings on {addr} in time").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// How much the captured log holds (0 when not captured): where to count from.
    pub fn log_len(&self) -> u64 {
        self.log_file.as_ref().and_then(|path| std::fs::metadata(path).ok()).map_or(0, |m| m.len())
    }

    /// The group commits logged after `from` (a [`ManagedServer::log_len`]); `None` when
    /// the log is not captured.
    pub fn group_commits(&self, from: u64) -> Option<GroupCommits> {
        let text = std::fs::read(self.log_file.as_ref()?).ok()?;
        let text = String::from_utf8_lossy(text.get(from as usize..).unwrap_or_default());
        let mut counts = GroupCommits::default();
        for line in text.lines().filter(|line| line.contains("agora::group_commit")) {
            let changes = line.split_whitespace().find_map(|field| field.strip_prefix("changes=")?.parse::<u64>().ok());
            if let Some(changes) = changes {
                counts.commits += 1;
                counts.changes += changes;
                counts.largest = counts.largest.max(changes);
            }
        }
        Some(counts)
    }

    /// The captured log's other lines (warnings, errors), for the report.
    pub fn log_problems(&self) -> Vec<String> {
        let Some(text) = self.log_file.as_ref().and_then(|path| std::fs::read(path).ok()) else { return Vec::new() };
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|line| !line.contains("agora::group_commit"))
            .map(str::to_owned)
            .collect()
    }
}

fn path_arg(path: &Path) -> Result<String, BoxError> {
    path.to_str().map(str::to_owned).ok_or_else(|| format!("not UTF-8: {}", path.display()).into())
}

/// Starts `bin` with `args` (its output to this program's stderr), killed when dropped.
pub fn spawn_guarded(bin: &Path, args: &[String]) -> Result<ChildGuard, BoxError> {
    let mut command = std::process::Command::new(bin);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
    Ok(ChildGuard(command.spawn().map_err(|e| format!("{}: {e}", bin.display()))?))
}

fn spawn(bin: &Path, args: &[String], log_file: Option<&Path>) -> Result<ChildGuard, BoxError> {
    let mut command = std::process::Command::new(bin);
    let stderr = match log_file {
        Some(path) => Stdio::from(std::fs::OpenOptions::new().create(true).append(true).open(path)?),
        None => Stdio::inherit(),
    };
    command.args(args).arg("serve").stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr);
    Ok(ChildGuard(command.spawn().map_err(|e| format!("{}: {e}", bin.display()))?))
}

/// Resident set size of a process, in KiB (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> Result<u64, BoxError> {
    status_kib(pid, "VmRSS")
}

/// Peak resident set size of a process, in KiB (`VmHWM` of `/proc/<pid>/status`).
pub fn peak_rss_kib(pid: u32) -> Result<u64, BoxError> {
    status_kib(pid, "VmHWM")
}

fn status_kib(pid: u32, field: &str) -> Result<u64, BoxError> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .ok_or_else(|| format!("{path}: no {field}").into())
}

/// utime + stime of a process, every thread included, in clock ticks (`/proc/<pid>/stat`
/// fields 14 and 15).
pub fn cpu_ticks(pid: u32) -> Result<u64, BoxError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) may hold spaces; the fields after it are plain.
    let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).ok_or("unexpected /proc/<pid>/stat")?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |n: usize| -> Result<u64, BoxError> { Ok(fields.get(n - 3).ok_or("short /proc/<pid>/stat")?.parse()?) };
    Ok(field(14)? + field(15)?)
}

/// `getconf CLK_TCK` (100 on Linux unless told otherwise).
pub fn clock_ticks_per_sec() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// The server's CPU time over a stretch of a measurement: on a shared machine the CPU an
/// operation costs is the figure that survives noise, where latency and throughput do not.
/// Without a process to watch (a server we did not start) it measures nothing.
#[derive(Clone, Copy)]
pub struct CpuMeter {
    pid: Option<u32>,
    ticks: u64,
    started: Instant,
}

/// What a [`CpuMeter`] measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuUse {
    /// Server CPU seconds (user + system, every thread).
    pub cpu_secs: f64,
    /// Wall-clock seconds.
    pub wall_secs: f64,
}

impl CpuMeter {
    pub fn start(pid: Option<u32>) -> Self {
        let ticks = pid.and_then(|pid| cpu_ticks(pid).ok()).unwrap_or(0);
        CpuMeter { pid, ticks, started: Instant::now() }
    }

    /// CPU used since `start`; `None` without a process or once it has gone.
    pub fn stop(&self) -> Option<CpuUse> {
        let now = cpu_ticks(self.pid?).ok()?;
        Some(CpuUse {
            cpu_secs: now.saturating_sub(self.ticks) as f64 / clock_ticks_per_sec(),
            wall_secs: self.started.elapsed().as_secs_f64(),
        })
    }
}

impl CpuUse {
    /// CPU microseconds per operation.
    pub fn micros_per(&self, operations: usize) -> f64 {
        if operations == 0 {
            return 0.0;
        }
        self.cpu_secs * 1e6 / operations as f64
    }

    /// Two stretches as one (CPU and wall time added).
    pub fn plus(self, other: CpuUse) -> CpuUse {
        CpuUse { cpu_secs: self.cpu_secs + other.cpu_secs, wall_secs: self.wall_secs + other.wall_secs }
    }

    /// Share of one core over the stretch.
    pub fn share(&self) -> f64 {
        if self.wall_secs > 0.0 {
            self.cpu_secs / self.wall_secs
        } else {
            0.0
        }
    }

    /// e.g. `server CPU 312 µs/op (0.62 s, 83% of a core)`.
    pub fn describe(&self, operations: usize, unit: &str) -> String {
        format!(
            "server CPU {:.0} µs/{unit} ({:.2} s, {:.0}% of a core)",
            self.micros_per(operations),
            self.cpu_secs,
            self.share() * 100.0
        )
    }

    pub fn to_json(self, operations: usize) -> Value {
        serde_json::json!({ "cpu_us_per_op": round3(self.micros_per(operations)), "cpu_s": round3(self.cpu_secs),
                            "core_share": round3(self.share()) })
    }
}

pub fn describe_cpu(cpu: Option<CpuUse>, operations: usize, unit: &str) -> String {
    cpu.map_or_else(|| "server CPU not measured".to_owned(), |c| c.describe(operations, unit))
}

pub fn cpu_json(cpu: Option<CpuUse>, operations: usize) -> Value {
    cpu.map_or(Value::Null, |c| c.to_json(operations))
}

/// This process's soft limit of open files (a server we start inherits it).
pub fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find_map(|line| line.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// Runs an example's `run` until it ends or Ctrl-C (which drops it, killing a server it
/// started), and turns its outcome into the exit code, naming the example on failure.
pub async fn main_with<F>(name: &str, run: F) -> std::process::ExitCode
where
    F: std::future::Future<Output = Result<(), BoxError>>,
{
    let result = tokio::select! {
        result = run => result,
        _ = tokio::signal::ctrl_c() => Err("interrupted".into()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
