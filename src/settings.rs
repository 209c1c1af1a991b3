//! Typed server settings: defaults, overridden by an optional TOML file, overridden by
//! `AGORA_*` environment variables, overridden by command-line flags.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agora_actors::config::OutgoingWebhookConfig;
use agora_actors::config::{InviteConfig, PresenceConfig, PushConfig, QueueConfig, ServerConfig, UploadConfig};
use agora_actors::ratelimit::Rule;
use agora_actors::realm::catalog::EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS;
use agora_actors::secrets::HashCost;
use agora_actors::store::Synchronous;
use serde::Deserialize;

pub mod mail;
mod rate_limit;
mod uploads;

pub use uploads::UploadStore;

pub use rate_limit::ApiRateLimit;

use crate::http::body::BodyRules;
use crate::http::hashing::PoolSize;
use crate::telemetry::LogFormat;
use mail::MailOptions;

/// Everything the server needs to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Address the HTTP server listens on (`127.0.0.1:9991`; port 0 picks a free port).
    pub bind: String,
    /// Directory holding the database, the admin socket and the first owner's credentials.
    pub data_dir: PathBuf,
    /// Host (and port) clients use to reach the root organization; other organizations are
    /// at `<subdomain>.<external_host>`.
    pub external_host: String,
    /// `http` or `https`, as clients reach `external_host` (behind a TLS proxy: `https`).
    pub external_scheme: String,
    /// Log filter in `tracing` syntax (`info`, `agora=debug,actix_web=warn`, ...).
    pub log: String,
    /// Text lines, or JSON objects for log collectors.
    pub log_format: LogFormat,
    /// HTTP worker threads; 0 means half the CPUs (at least one; measured: docs/benchmarks.md).
    pub http_workers: usize,
    /// Threads the realm actors run on; 0 means half the CPUs (at least one).
    pub actor_threads: usize,
    /// Threads that answer history reads (message fetches, search); 0 means half the CPUs
    /// (at least one), so that searches never take every core from the actors.
    pub reader_threads: usize,
    /// Cost of new password hashes.
    pub password_hash: HashCost,
    /// Threads that hash passwords and how many requests may wait for them.
    pub hash_pool: PoolSize,
    /// Password attempts allowed per username and window at `POST /fetch_api_key` (and of
    /// the old password at `PATCH /settings`).
    pub login_rate_limit: Rule,
    /// Zulip's general rate limits.
    pub api_rate_limit: ApiRateLimit,
    /// Proxies whose `X-Forwarded-For` names the client, for the per-address limit.
    pub trusted_proxies: Vec<IpAddr>,
    /// Size and time limits of request bodies (of every route: all take parameters).
    pub request_body: BodyRules,
    /// Longest wait for in-flight requests at shutdown.
    pub shutdown_timeout: Duration,
    /// Whether the server stops on SIGINT/SIGTERM itself (tests turn this off).
    pub handle_signals: bool,
    /// Event queue heartbeat, lifetime and expiry checks, backlog and reply limits.
    pub queues: QueueConfig,
    /// Presence: the accessible-users limit, how often rows are written, when events stop.
    pub presence: PresenceConfig,
    /// Mobile push notifications: the bouncer and this server's credentials there, retries.
    pub push: PushConfig,
    /// Address of the Prometheus metrics endpoint (`/metrics`); `None`: no metrics.
    pub metrics_bind: Option<String>,
    /// SQLite's `synchronous`: what a power loss may take back (see [`Synchronous`]).
    pub synchronous: Synchronous,
    /// Outgoing mail: SMTP or files, sender, retries.
    pub mail: MailOptions,
    /// Invitations: link validity, daily limit, minimum account age, contact address.
    pub invites: InviteConfig,
    /// The contact address of invitation mails [default: the sender address].
    pub support_email: Option<String>,
    /// Uploads: size limit and body timeouts (`[uploads]`).
    pub uploads: UploadConfig,
    /// Where uploaded files are kept (`[uploads] backend`).
    pub upload_store: UploadStore,
    /// The outgoing-webhook worker's timeout and retries (Zulip's; not in files or flags).
    pub outgoing_webhooks: OutgoingWebhookConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bind: "127.0.0.1:9991".into(),
            data_dir: PathBuf::from("./agora-data"),
            external_host: "localhost:9991".into(),
            external_scheme: "http".into(),
            log: "info".into(),
            log_format: LogFormat::Text,
            http_workers: 0,
            actor_threads: 0,
            reader_threads: 0,
            password_hash: HashCost::default(),
            hash_pool: PoolSize::default(),
            login_rate_limit: Rule { max: 5, window: Duration::from_secs(1800) },
            api_rate_limit: ApiRateLimit::default(),
            trusted_proxies: Vec::new(),
            request_body: BodyRules::default(),
            shutdown_timeout: Duration::from_secs(10),
            handle_signals: true,
            queues: QueueConfig::default(),
            presence: PresenceConfig::default(),
            push: PushConfig::default(),
            metrics_bind: None,
            synchronous: Synchronous::Normal,
            mail: MailOptions::default(),
            invites: InviteConfig::default(),
            support_email: None,
            uploads: UploadConfig::default(),
            upload_store: UploadStore::Local,
            outgoing_webhooks: OutgoingWebhookConfig::default(),
        }
    }
}

impl Settings {
    /// What the domain needs of these settings.
    pub fn server_config(&self) -> ServerConfig {
        ServerConfig {
            external_host: self.external_host.clone(),
            external_scheme: self.external_scheme.clone(),
            queues: self.queues,
            presence: self.presence,
            push: self.push.clone(),
            invites: InviteConfig {
                support_email: self
                    .support_email
                    .clone()
                    .unwrap_or_else(|| self.mail.from_address(&self.external_host)),
                ..self.invites.clone()
            },
            uploads: self.uploads,
            outgoing_webhooks: self.outgoing_webhooks,
            ..ServerConfig::default()
        }
    }

    /// Applies a TOML settings file over these settings.
    pub fn apply_file(&mut self, path: &Path) -> Result<(), SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError(format!("{}: {e}", path.display())))?;
        let file: FileSettings =
            toml::from_str(&text).map_err(|e| SettingsError(format!("{}: {e}", path.display())))?;
        self.apply(file)
    }

    fn apply(&mut self, f: FileSettings) -> Result<(), SettingsError> {
        set(&mut self.bind, f.bind);
        set(&mut self.data_dir, f.data_dir);
        set(&mut self.external_host, f.external_host);
        set(&mut self.external_scheme, f.external_scheme);
        set(&mut self.log, f.log);
        set(&mut self.log_format, f.log_format);
        set(&mut self.http_workers, f.http_workers);
        set(&mut self.actor_threads, f.actor_threads);
        set(&mut self.reader_threads, f.reader_threads);
        set(&mut self.metrics_bind, f.metrics_bind.map(Some));
        set(&mut self.synchronous, f.synchronous);
        if let Some(cost) = f.password_hash {
            set(&mut self.password_hash.memory_kib, cost.memory_kib);
            set(&mut self.password_hash.iterations, cost.iterations);
            set(&mut self.password_hash.parallelism, cost.parallelism);
            set(&mut self.hash_pool.threads, cost.threads);
            set(&mut self.hash_pool.queue, cost.queue);
            set(&mut self.hash_pool.wait, cost.queue_wait_ms.map(Duration::from_millis));
        }
        if let Some(limit) = f.login_rate_limit {
            set(&mut self.login_rate_limit.max, limit.attempts);
            set(&mut self.login_rate_limit.window, limit.window_secs.map(Duration::from_secs));
        }
        if let Some(limit) = f.api_rate_limit {
            let api = &mut self.api_rate_limit;
            set(&mut api.enabled, limit.enabled);
            set(&mut api.per_user.max, limit.user_requests);
            set(&mut api.per_user.window, limit.user_window_secs.map(Duration::from_secs));
            set(&mut api.per_ip.max, limit.ip_requests);
            set(&mut api.per_ip.window, limit.ip_window_secs.map(Duration::from_secs));
        }
        set(&mut self.trusted_proxies, f.trusted_proxies);
        if let Some(body) = f.request_body {
            set(&mut self.request_body.max_bytes, body.max_kib.map(|kib| kib.saturating_mul(1024)));
            set(&mut self.request_body.timeout, body.timeout_secs.map(Duration::from_secs));
            set(&mut self.request_body.idle_timeout, body.idle_timeout_secs.map(Duration::from_secs));
        }
        set(&mut self.shutdown_timeout, f.shutdown_timeout_secs.map(Duration::from_secs));
        if let Some(q) = f.event_queues {
            set(&mut self.queues.heartbeat_min, q.heartbeat_secs.map(Duration::from_secs));
            set(&mut self.queues.heartbeat_jitter, q.heartbeat_jitter_secs.map(Duration::from_secs));
            set(&mut self.queues.default_timeout, q.idle_timeout_secs.map(Duration::from_secs));
            set(&mut self.queues.gc_interval, q.gc_interval_secs.map(Duration::from_secs));
            set(&mut self.queues.max_backlog_events, q.max_backlog_events);
            set(&mut self.queues.max_backlog_bytes, q.max_backlog_bytes);
            set(&mut self.queues.max_reply_events, q.max_reply_events);
            set(&mut self.queues.max_reply_bytes, q.max_reply_bytes);
        }
        if let Some(u) = f.uploads {
            set(&mut self.uploads.max_file_upload_size_mib, u.max_file_upload_size_mib);
            set(&mut self.uploads.timeout, u.timeout_secs.map(Duration::from_secs));
            set(&mut self.uploads.idle_timeout, u.idle_timeout_secs.map(Duration::from_secs));
            self.upload_store = u.store()?;
        }
        if let Some(p) = f.presence {
            set(&mut self.presence.limit_to_accessible_users, p.limit_to_accessible_users);
            set(&mut self.presence.write_interval, p.write_interval_secs.map(Duration::from_secs));
            set(&mut self.presence.event_user_limit, p.event_user_limit);
        }
        if let Some(p) = f.push {
            let push = &mut self.push;
            set(&mut push.bouncer_url, p.bouncer_url.map(Some));
            set(&mut push.org_id, p.org_id.map(Some));
            set(&mut push.org_key, p.org_key.map(Some));
            set(&mut push.retry_initial, p.retry_initial_ms.map(Duration::from_millis));
            set(&mut push.retry_max, p.retry_max_secs.map(Duration::from_secs));
            set(&mut push.max_attempts, p.max_attempts);
            set(&mut push.poll_interval, p.poll_interval_ms.map(Duration::from_millis));
            set(&mut push.request_timeout, p.request_timeout_secs.map(Duration::from_secs));
        }
        if let Some(i) = f.invitations {
            i.apply(&mut self.invites, &mut self.support_email);
        }
        f.mail.map_or(Ok(()), |m| m.apply(&mut self.mail))
    }

    /// Checks values that would otherwise fail late.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if !matches!(self.external_scheme.as_str(), "http" | "https") {
            return Err(SettingsError(format!(
                "external_scheme must be http or https, not {:?}",
                self.external_scheme
            )));
        }
        let q = &self.queues;
        if q.heartbeat_min.is_zero() || q.gc_interval.is_zero() || q.default_timeout.is_zero() {
            return Err(SettingsError("event queue heartbeat, idle timeout and gc interval must be positive".into()));
        }
        if [q.max_backlog_events, q.max_backlog_bytes, q.max_reply_events, q.max_reply_bytes].contains(&0) {
            return Err(SettingsError("event queue backlog and reply limits must be positive".into()));
        }
        // Clients give up on a poll after `event_queue_longpoll_timeout_seconds`.
        let client_timeout = EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS as u64;
        if q.heartbeat_min + q.heartbeat_jitter >= Duration::from_secs(client_timeout) {
            return Err(SettingsError(format!(
                "heartbeat_secs + heartbeat_jitter_secs must stay under {client_timeout}"
            )));
        }
        let api = &self.api_rate_limit;
        for (name, rule) in [
            ("login_rate_limit", &self.login_rate_limit),
            ("api_rate_limit", &api.per_user),
            ("api_rate_limit", &api.per_ip),
        ] {
            if rule.max == 0 || rule.window.is_zero() {
                return Err(SettingsError(format!("{name}: requests and windows must be positive")));
            }
        }
        if self.hash_pool.threads == 0 {
            return Err(SettingsError("password_hash.threads must be at least 1".into()));
        }
        let body = &self.request_body;
        if body.max_bytes == 0 || body.timeout.is_zero() || body.idle_timeout.is_zero() {
            return Err(SettingsError("request_body limits and timeouts must be positive".into()));
        }
        if self.presence.write_interval.is_zero() || self.presence.write_interval > Duration::from_secs(60) {
            return Err(SettingsError("presence.write_interval_secs must be between 1 and 60".into()));
        }
        self.validate_push()?;
        if self.metrics_bind.as_ref().is_some_and(|b| *b == self.bind && !b.ends_with(":0")) {
            return Err(SettingsError("metrics_bind must differ from bind".into()));
        }
        self.mail.validate()?;
        if self.external_host.is_empty() || self.external_host.contains('/') {
            return Err(SettingsError(format!("external_host must be a host[:port], not {:?}", self.external_host)));
        }
        Ok(())
    }

    fn validate_push(&self) -> Result<(), SettingsError> {
        let push = &self.push;
        if let Some(url) = &push.bouncer_url {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(SettingsError(format!("push.bouncer_url must be an http(s) URL, not {url:?}")));
            }
        }
        if push.retry_initial.is_zero() || push.poll_interval.is_zero() || push.request_timeout.is_zero() {
            return Err(SettingsError("push retry, poll and request times must be positive".into()));
        }
        if push.max_attempts == 0 {
            return Err(SettingsError("push.max_attempts must be at least 1".into()));
        }
        Ok(())
    }

    /// HTTP workers, actor threads and history readers to start: half the CPUs each unless
    /// set (on two cores one HTTP worker delivered events to 1,000 long-polls with a fifth
    /// less CPU than two, and sent and registered as fast).
    pub fn thread_counts(&self) -> [usize; 3] {
        [self.http_workers, self.actor_threads, self.reader_threads].map(half_the_cpus_unless)
    }
}

/// `n`, or half the CPUs (at least one) for 0.
fn half_the_cpus_unless(n: usize) -> usize {
    match n {
        0 => (std::thread::available_parallelism().map_or(1, usize::from) / 2).max(1),
        n => n,
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// A settings problem, reported before anything starts.
#[derive(Debug, thiserror::Error)]
#[error("invalid settings: {0}")]
pub struct SettingsError(pub String);

/// The TOML file: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    bind: Option<String>,
    data_dir: Option<PathBuf>,
    external_host: Option<String>,
    external_scheme: Option<String>,
    log: Option<String>,
    log_format: Option<LogFormat>,
    http_workers: Option<usize>,
    actor_threads: Option<usize>,
    reader_threads: Option<usize>,
    metrics_bind: Option<String>,
    synchronous: Option<Synchronous>,
    password_hash: Option<FileHashCost>,
    login_rate_limit: Option<FileRateLimit>,
    api_rate_limit: Option<FileApiRateLimit>,
    trusted_proxies: Option<Vec<IpAddr>>,
    request_body: Option<FileRequestBody>,
    shutdown_timeout_secs: Option<u64>,
    event_queues: Option<FileQueues>,
    presence: Option<FilePresence>,
    push: Option<FilePush>,
    mail: Option<mail::FileMail>,
    invitations: Option<mail::FileInvitations>,
    uploads: Option<uploads::FileUploads>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePush {
    bouncer_url: Option<String>,
    org_id: Option<String>,
    org_key: Option<String>,
    retry_initial_ms: Option<u64>,
    retry_max_secs: Option<u64>,
    max_attempts: Option<u32>,
    poll_interval_ms: Option<u64>,
    request_timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePresence {
    limit_to_accessible_users: Option<bool>,
    write_interval_secs: Option<u64>,
    event_user_limit: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileQueues {
    heartbeat_secs: Option<u64>,
    heartbeat_jitter_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
    gc_interval_secs: Option<u64>,
    max_backlog_events: Option<usize>,
    max_backlog_bytes: Option<usize>,
    max_reply_events: Option<usize>,
    max_reply_bytes: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHashCost {
    memory_kib: Option<u32>,
    iterations: Option<u32>,
    parallelism: Option<u32>,
    threads: Option<usize>,
    queue: Option<usize>,
    queue_wait_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileApiRateLimit {
    enabled: Option<bool>,
    user_requests: Option<usize>,
    user_window_secs: Option<u64>,
    ip_requests: Option<usize>,
    ip_window_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRequestBody {
    max_kib: Option<usize>,
    timeout_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRateLimit {
    attempts: Option<usize>,
    window_secs: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_overrides_only_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(
            &path,
            "external_host = \"chat.example.org\"\nexternal_scheme = \"https\"\ntrusted_proxies = [\"10.0.0.1\"]\n\
             [login_rate_limit]\nattempts = 3\n[event_queues]\nidle_timeout_secs = 120\nmax_backlog_events = 500\n\
             max_reply_bytes = 65536\n[api_rate_limit]\nenabled = false\nuser_requests = 50\n\
             [password_hash]\nthreads = 3\nqueue_wait_ms = 250\n[request_body]\nmax_kib = 64\nidle_timeout_secs = 2\n",
        )
        .unwrap();
        let mut s = Settings::default();
        s.apply_file(&path).unwrap();
        assert_eq!(s.external_host, "chat.example.org");
        assert_eq!(s.external_scheme, "https");
        assert_eq!(s.login_rate_limit.max, 3);
        assert_eq!(s.login_rate_limit.window, Duration::from_secs(1800));
        assert_eq!(s.bind, "127.0.0.1:9991");
        assert_eq!(s.queues.default_timeout, Duration::from_secs(120));
        assert_eq!(s.queues.heartbeat_min, Duration::from_secs(45));
        assert_eq!((s.queues.max_backlog_events, s.queues.max_backlog_bytes), (500, 32 << 20));
        assert_eq!((s.queues.max_reply_events, s.queues.max_reply_bytes), (1000, 65536));
        assert_eq!(s.trusted_proxies, vec!["10.0.0.1".parse::<IpAddr>().unwrap()]);
        let api = s.api_rate_limit;
        assert_eq!((api.enabled, api.per_user.max, api.per_user.window), (false, 50, Duration::from_secs(60)));
        assert_eq!(api.per_ip, ApiRateLimit::default().per_ip);
        assert_eq!(s.hash_pool, PoolSize { threads: 3, queue: 32, wait: Duration::from_millis(250) });
        assert_eq!(s.password_hash, HashCost::default());
        let body = s.request_body;
        assert_eq!(
            (body.max_bytes, body.timeout, body.idle_timeout),
            (64 * 1024, Duration::from_secs(30), Duration::from_secs(2))
        );
        s.validate().unwrap();
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(&path, "bnid = \"x\"\n").unwrap();
        assert!(Settings::default().apply_file(&path).is_err());
        let s = Settings { external_scheme: "ftp".into(), ..Settings::default() };
        assert!(s.validate().is_err());
        let mut s = Settings::default();
        s.queues.max_reply_events = 0;
        assert_eq!(s.validate().unwrap_err().0, "event queue backlog and reply limits must be positive");
        let mut s = Settings::default();
        s.api_rate_limit.per_ip.max = 0;
        assert!(s.validate().is_err());
        let mut s = Settings::default();
        s.request_body.idle_timeout = Duration::ZERO;
        assert!(s.validate().is_err());
    }

    #[test]
    fn the_uploads_backend_is_local_or_a_complete_s3_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let mut s = Settings::default();
            s.apply_file(&path).map(|()| s.upload_store).map_err(|e| e.0)
        };
        assert_eq!(read("[uploads]\nmax_file_upload_size_mib = 5\n"), Ok(UploadStore::Local));
        let s3 = "[uploads]\nbackend = \"s3\"\ns3_endpoint = \"http://127.0.0.1:9000\"\ns3_bucket = \"files\"\n\
                  s3_access_key_id = \"id\"\ns3_secret_access_key = \"secret\"\n";
        let Ok(UploadStore::S3(options)) = read(s3) else { panic!("an S3 store") };
        assert_eq!(
            (options.region.as_str(), options.path_style, options.bucket.as_str()),
            ("us-east-1", true, "files")
        );
        assert!(!format!("{options:?}").contains("secret"), "the secret is never logged");
        let missing = read("[uploads]\nbackend = \"s3\"\ns3_endpoint = \"http://127.0.0.1:9000\"\n").unwrap_err();
        assert!(missing.contains("s3_bucket"), "{missing}");
        let unknown = read("[uploads]\nbackend = \"ftp\"\n").unwrap_err();
        assert!(unknown.contains("\"ftp\""), "{unknown}");
    }

    #[test]
    fn the_presence_table_sets_presence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(&path, "[presence]\nlimit_to_accessible_users = true\nwrite_interval_secs = 2\n").unwrap();
        let mut s = Settings::default();
        assert_eq!(s.presence, PresenceConfig::default());
        s.apply_file(&path).unwrap();
        let expected = PresenceConfig {
            limit_to_accessible_users: true,
            write_interval: Duration::from_secs(2),
            ..PresenceConfig::default()
        };
        assert_eq!((s.presence, s.server_config().presence), (expected, expected));
        s.validate().unwrap();
        s.presence.write_interval = Duration::from_secs(61);
        assert_eq!(s.validate().unwrap_err().0, "presence.write_interval_secs must be between 1 and 60");
    }

    #[test]
    fn the_push_table_names_the_bouncer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agora.toml");
        std::fs::write(
            &path,
            "[push]\nbouncer_url = \"https://push.example.org\"\norg_id = \"a\"\norg_key = \"b\"\nmax_attempts = 3\n",
        )
        .unwrap();
        let mut s = Settings::default();
        assert!(!s.push.configured());
        s.apply_file(&path).unwrap();
        assert!(s.push.configured());
        assert_eq!(s.push.bouncer_url.as_deref(), Some("https://push.example.org"));
        assert_eq!((s.push.max_attempts, s.push.retry_initial), (3, Duration::from_secs(2)));
        assert_eq!(s.server_config().push, s.push);
        s.validate().unwrap();
        s.push.bouncer_url = Some("push.example.org".into());
        assert!(s.validate().is_err());
    }
}
