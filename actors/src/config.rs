//! What the domain needs to know about the deployment: how organizations are reached and
//! how long event queues live.

use std::time::Duration;

/// Deployment facts shared by every realm (built from the server settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Host (and optional port) the root organization is reached at, e.g. `localhost:9991`.
    /// Other organizations live at `<subdomain>.<external_host>`.
    pub external_host: String,
    /// `http` or `https`: the scheme clients use to reach `external_host`.
    pub external_scheme: String,
    /// Event queue timings.
    pub queues: QueueConfig,
    /// When this server process started (Unix seconds): `server_generation` in
    /// `/register` and `restart` events.
    pub server_generation: i64,
    /// Presence: who sees whom, how often it is written, when events stop.
    pub presence: PresenceConfig,
    /// Mobile push notifications through Zulip's push notification service (the bouncer).
    pub push: PushConfig,
    /// Invitations: link validity, the daily limit, who may send them, the contact address.
    pub invites: InviteConfig,
    /// Wakes the mail worker when a commit queued mail (a no-op when no worker runs, as in
    /// the command-line tools: the mail waits in the outbox for the server).
    pub mail: crate::mail::MailWaker,
    /// Uploads: their size limit and how long their bodies may take.
    pub uploads: UploadConfig,
    /// The outgoing-webhook worker: request timeout, retries.
    pub outgoing_webhooks: OutgoingWebhookConfig,
}

/// The outgoing-webhook worker's timings (Zulip's `OUTGOING_WEBHOOK_TIMEOUT_SECONDS` and
/// `MAX_REQUEST_RETRIES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingWebhookConfig {
    /// How long one request to a bot's service may take (10 s).
    pub timeout: Duration,
    /// Failed attempts retried before giving up (3, so 4 attempts in all).
    pub max_retries: i64,
    /// The wait before the first retry (1 s), doubling each time up to `retry_max`.
    pub retry_initial: Duration,
    pub retry_max: Duration,
    /// How often the worker looks for due jobs when nothing woke it.
    pub poll_interval: Duration,
}

impl Default for OutgoingWebhookConfig {
    fn default() -> Self {
        OutgoingWebhookConfig {
            timeout: Duration::from_secs(10),
            max_retries: 3,
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            poll_interval: Duration::from_millis(250),
        }
    }
}

impl OutgoingWebhookConfig {
    /// The wait after the `attempts`-th failed attempt.
    pub fn backoff(&self, attempts: i64) -> Duration {
        let factor = 2u32.saturating_pow(attempts.saturating_sub(1).clamp(0, 20) as u32);
        self.retry_initial.saturating_mul(factor).min(self.retry_max)
    }
}

/// Upload settings (`[uploads]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadConfig {
    /// Zulip's `MAX_FILE_UPLOAD_SIZE`, in MiB (default 100): larger files are refused.
    pub max_file_upload_size_mib: u64,
    /// Longest time to receive an upload's whole body.
    pub timeout: Duration,
    /// Longest silence between two chunks of it.
    pub idle_timeout: Duration,
}

impl Default for UploadConfig {
    fn default() -> Self {
        UploadConfig {
            max_file_upload_size_mib: 100,
            timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(30),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            external_host: "localhost:9991".to_owned(),
            external_scheme: "http".to_owned(),
            queues: QueueConfig::default(),
            server_generation: chrono::Utc::now().timestamp(),
            presence: PresenceConfig::default(),
            push: PushConfig::default(),
            invites: InviteConfig::default(),
            mail: crate::mail::MailWaker::default(),
            uploads: UploadConfig::default(),
            outgoing_webhooks: OutgoingWebhookConfig::default(),
        }
    }
}

/// Invitation settings (Zulip's server settings of the same meaning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteConfig {
    /// Zulip's `INVITATION_LINK_VALIDITY_DAYS` in minutes: the default of
    /// `invite_expires_in_minutes` (10 days).
    pub validity_minutes: i64,
    /// Invitation mails an organization may send in 24 hours (Zulip's `max_invites`,
    /// `INVITES_DEFAULT_REALM_DAILY_MAX`); 0 for no limit.
    pub daily_limit: usize,
    /// Zulip's `INVITES_MIN_USER_AGE_DAYS`: in organizations anyone may join, accounts
    /// younger than this (administrators aside) may not invite.
    pub min_user_age_days: i64,
    /// The address invitation mails give for questions (the server's administrators).
    pub support_email: String,
}

impl Default for InviteConfig {
    fn default() -> Self {
        InviteConfig {
            validity_minutes: 10 * 24 * 60,
            daily_limit: 100,
            min_user_age_days: 3,
            support_email: "noreply@localhost".to_owned(),
        }
    }
}

/// Where mobile push notifications go (Zulip's `ZULIP_SERVICES_URL`, `ZULIP_ORG_ID`,
/// `ZULIP_ORG_KEY`) and how the push worker retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushConfig {
    /// The bouncer's base URL (`https://push.zulipchat.com`); `None`: no push service.
    pub bouncer_url: Option<String>,
    /// This server's registration with the bouncer: its UUID and secret key.
    pub org_id: Option<String>,
    pub org_key: Option<String>,
    /// The first retry waits this long; each further one twice as long, up to `retry_max`.
    pub retry_initial: Duration,
    pub retry_max: Duration,
    /// Attempts before a job is given up (logged, and dropped).
    pub max_attempts: u32,
    /// How often the worker looks for due jobs when it has none.
    pub poll_interval: Duration,
    /// How long one bouncer request may take.
    pub request_timeout: Duration,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            bouncer_url: None,
            org_id: None,
            org_key: None,
            retry_initial: Duration::from_secs(2),
            retry_max: Duration::from_secs(300),
            max_attempts: 12,
            poll_interval: Duration::from_millis(250),
            request_timeout: Duration::from_secs(15),
        }
    }
}

impl PushConfig {
    /// Whether the server uses a push notification service: a URL and credentials (Zulip's
    /// `uses_notification_bouncer` with `push_notifications_configured`).
    pub fn configured(&self) -> bool {
        self.bouncer_url.is_some() && self.org_id.is_some() && self.org_key.is_some()
    }

    /// The wait before attempt `attempt` (1 is the first retry).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
        self.retry_initial.saturating_mul(factor).min(self.retry_max)
    }
}

/// Presence settings (Zulip's server settings of the same meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresenceConfig {
    /// Zulip's `CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE`: users outside the
    /// organization's `can_access_all_users_group` see the presence of the users they can
    /// access only (off by default, as in Zulip).
    pub limit_to_accessible_users: bool,
    /// How often each organization's presence actor writes the presence rows that changed,
    /// in one transaction. A user's row changes at most once a minute, so any interval up to
    /// a minute keeps that bound; a crash loses at most this much presence.
    pub write_interval: Duration,
    /// Zulip's `USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS`: organizations with more
    /// active users get no presence events (clients still learn presence from their pings).
    pub event_user_limit: usize,
}

impl Default for PresenceConfig {
    fn default() -> Self {
        PresenceConfig {
            limit_to_accessible_users: false,
            write_interval: Duration::from_secs(5),
            event_user_limit: 100,
        }
    }
}

/// How long event queues and their polls live (Zulip's values by default; tests shorten
/// them), and how much a queue may hold and hand out at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// A waiting poll is answered with a `heartbeat` event after this long plus a random
    /// part of `heartbeat_jitter` (Zulip: 45 s + up to 10 s).
    pub heartbeat_min: Duration,
    pub heartbeat_jitter: Duration,
    /// Idle time after which a queue registered without `queue_lifespan_secs` is removed
    /// (Zulip: 10 minutes).
    pub default_timeout: Duration,
    /// The longest lifespan a client may ask for (Zulip: 7 days).
    pub max_timeout: Duration,
    /// How often queues check whether they have expired (Zulip: every minute).
    pub gc_interval: Duration,
    /// The most events a queue holds unacknowledged; a queue that would hold more is
    /// removed (its client gets `BAD_EVENT_QUEUE_ID` and registers again). Zulip has no
    /// such limit; it keeps one client that stopped polling (or one request that makes many
    /// events) from taking the server's memory.
    pub max_backlog_events: usize,
    /// The most bytes of events (as JSON) a queue holds unacknowledged; past it the queue
    /// is removed likewise.
    pub max_backlog_bytes: usize,
    /// The most events one `GET /events` reply carries; the client gets the rest by
    /// polling again from the last id it got (Zulip's clients do exactly that).
    pub max_reply_events: usize,
    /// The most bytes of events one reply carries (a single larger event still goes out
    /// alone).
    pub max_reply_bytes: usize,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            heartbeat_min: Duration::from_secs(45),
            heartbeat_jitter: Duration::from_secs(10),
            default_timeout: Duration::from_secs(600),
            max_timeout: Duration::from_secs(7 * 24 * 3600),
            gc_interval: Duration::from_secs(60),
            max_backlog_events: 10_000,
            max_backlog_bytes: 32 << 20,
            max_reply_events: 1_000,
            max_reply_bytes: 4 << 20,
        }
    }
}

/// A queue's requested idle timeout (`idle_queue_timeout` at `POST /register`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleTimeout {
    /// This many seconds (at most `max_timeout`).
    Seconds(i64),
    /// The mobile apps' timeout: 12 hours (Zulip's `"mobile"`).
    Mobile,
}

/// Zulip's idle timeout for the mobile apps' queues.
pub const MOBILE_QUEUE_TIMEOUT: Duration = Duration::from_secs(12 * 3600);

impl QueueConfig {
    /// The idle timeout a client asked for with `idle_queue_timeout`.
    pub fn idle_timeout(&self, asked: IdleTimeout) -> Duration {
        match asked {
            IdleTimeout::Seconds(secs) => self.timeout_for(secs),
            IdleTimeout::Mobile => MOBILE_QUEUE_TIMEOUT.min(self.max_timeout),
        }
    }

    /// The idle timeout of a queue registered with `queue_lifespan_secs` (0: the default).
    pub fn timeout_for(&self, lifespan_secs: i64) -> Duration {
        if lifespan_secs <= 0 {
            self.default_timeout
        } else {
            Duration::from_secs(lifespan_secs as u64).min(self.max_timeout)
        }
    }
}

impl ServerConfig {
    /// The host of an organization: the external host, prefixed by the subdomain if any.
    pub fn realm_host(&self, subdomain: &str) -> String {
        if subdomain.is_empty() {
            self.external_host.clone()
        } else {
            format!("{subdomain}.{}", self.external_host)
        }
    }

    /// The organization's URL, as in `realm_url`.
    pub fn realm_url(&self, subdomain: &str) -> String {
        format!("{}://{}", self.external_scheme, self.realm_host(subdomain))
    }

    /// The domain of the fake API emails (`user<ID>@<domain>`) of users whose real address
    /// is hidden. Zulip uses the realm host when it forms a valid address; a host with a
    /// port does not, so we drop the port rather than invent an unrelated domain.
    pub fn fake_email_domain(&self, subdomain: &str) -> String {
        let host = self.realm_host(subdomain);
        strip_port(&host).to_ascii_lowercase()
    }

    /// Which organization a request's `Host` names: `SUB.<external host>` is `SUB`, anything
    /// else (the external host itself, an IP address, an alias) is the root organization `""`.
    /// Ports are ignored on both sides, so a server reached on another port than the one in
    /// its external host still routes by name; `www` is an alias of the root, as in Zulip.
    pub fn subdomain_for_host(&self, host: &str) -> String {
        let host = strip_port(host.trim()).to_ascii_lowercase();
        let external = strip_port(&self.external_host).to_ascii_lowercase();
        match host.strip_suffix(&external).and_then(|prefix| prefix.strip_suffix('.')) {
            Some("www") | None => String::new(),
            Some(sub) => sub.to_owned(),
        }
    }
}

/// `host:port` -> `host` (IPv6 literals in brackets keep their brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(host: &str) -> ServerConfig {
        ServerConfig { external_host: host.to_owned(), ..ServerConfig::default() }
    }

    #[test]
    fn subdomains_come_from_the_host() {
        let c = config("localhost:9991");
        assert_eq!(c.subdomain_for_host("localhost:9991"), "");
        assert_eq!(c.subdomain_for_host("acme.localhost:9991"), "acme");
        assert_eq!(c.subdomain_for_host("ACME.Localhost"), "acme");
        assert_eq!(c.subdomain_for_host("acme.localhost:4000"), "acme");
        assert_eq!(c.subdomain_for_host("www.localhost:9991"), "");
        assert_eq!(c.subdomain_for_host("127.0.0.1:9991"), "");
        assert_eq!(c.subdomain_for_host("evillocalhost:9991"), "");
        assert_eq!(c.subdomain_for_host("a.b.localhost"), "a.b");
        assert_eq!(c.subdomain_for_host("[::1]:9991"), "");
    }

    #[test]
    fn urls_and_fake_domains() {
        let c = config("chat.example.org:8443");
        assert_eq!(c.realm_url(""), "http://chat.example.org:8443");
        assert_eq!(c.realm_url("eng"), "http://eng.chat.example.org:8443");
        assert_eq!(c.fake_email_domain("eng"), "eng.chat.example.org");
        assert_eq!(c.fake_email_domain(""), "chat.example.org");
    }
}
