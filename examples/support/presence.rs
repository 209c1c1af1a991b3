//! Presence pings as Zulip's clients send them (`presenceload`, `scale`): every user pings
//! `POST /users/me/presence` once per interval with `last_update_id` (the first ping -1,
//! each later one the id the previous reply gave), spread evenly over the interval; a
//! share of the users report `active`, the others `idle`. After one interval of warm-up
//! (every client's first, full fetch) a window is measured: the server's CPU, request
//! latency, and the `user_presence` rows written (the database sampled once a second).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{Api, BoxError, CpuMeter, CpuUse, Creds, Stats};

/// What to run.
pub struct PingLoad {
    /// Seconds between two pings of one user (Zulip's clients: 60).
    pub interval: Duration,
    /// Users reporting `active` (the first ones); the others report `idle`.
    pub active: usize,
    /// The measured window, after one interval of warm-up.
    pub measure: Duration,
}

/// What a run measured.
pub struct PingRun {
    pub latency: Stats,
    /// Reply bytes, over the window.
    pub bytes: u64,
    /// Server CPU over the window.
    pub cpu: CpuUse,
    pub writes: Writes,
}

/// One ping's outcome, reported to the main task.
struct Pinged {
    user: usize,
    /// The reply's `presence_last_update_id`.
    last_update_id: i64,
    latency: Duration,
    sent: Instant,
    bytes: usize,
}

/// Pings as `load` says with `users` against the server `pid` whose database is `db`.
pub async fn run(api: &Api, pid: u32, db: &Path, users: Arc<Vec<Creds>>, load: &PingLoad) -> Result<PingRun, BoxError> {
    let n = users.len();
    if n == 0 {
        return Err("no users to ping".into());
    }
    // A user's connection idles for a minute between pings: longer than the server keeps
    // it (5 s), so a pooled one would race with the server closing it. A client of its own
    // drops them sooner.
    let client = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(2))
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .no_proxy()
        .build()?;
    let api = &Api { client, base: api.base.clone() };
    let period = load.interval.div_f64(n as f64);
    let (tx, mut rx) = mpsc::unbounded_channel::<Result<Pinged, String>>();
    let mut last_ids = vec![-1i64; n];
    let warm_up = load.interval;
    eprintln!(
        "pinging: {n} users every {} s ({:.0} requests/s), {} active; {} s warm-up, then {} s measured",
        load.interval.as_secs(),
        1.0 / period.as_secs_f64(),
        load.active,
        warm_up.as_secs(),
        load.measure.as_secs()
    );

    let start = Instant::now();
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut next = 0usize;
    let mut latencies = Vec::new();
    let mut bytes = 0u64;
    let mut sent_in_window = 0usize;
    let mut window: Option<(Instant, CpuMeter)> = None;
    let mut sampler = tokio::time::interval(Duration::from_secs(1));
    let mut writes = Writes::default();
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                let elapsed = start.elapsed();
                if elapsed >= warm_up + load.measure {
                    break;
                }
                if window.is_none() && elapsed >= warm_up {
                    window = Some((Instant::now(), CpuMeter::start(Some(pid))));
                    writes.reset_counts();
                }
                let user = next % n;
                next += 1;
                if window.is_some() {
                    sent_in_window += 1;
                }
                let status = if user < load.active { "active" } else { "idle" };
                tokio::spawn(ping(api.clone(), Arc::clone(&users), user, status, last_ids[user], tx.clone()));
            }
            Some(result) = rx.recv() => {
                let pinged = result?;
                last_ids[pinged.user] = pinged.last_update_id;
                if window.as_ref().is_some_and(|(opened, _)| pinged.sent >= *opened) {
                    latencies.push(pinged.latency);
                    bytes += pinged.bytes as u64;
                }
            }
            _ = sampler.tick() => {
                writes.sample(db, window.is_some())?;
            }
        }
    }
    let Some((_, meter)) = window else { return Err("the measured window never opened".into()) };
    let cpu = meter.stop().ok_or("the server has gone")?;
    // The replies of pings sent within the window.
    let deadline = Instant::now() + Duration::from_secs(30);
    while latencies.len() < sent_in_window && Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
            Ok(Some(result)) => {
                let pinged = result?;
                latencies.push(pinged.latency);
                bytes += pinged.bytes as u64;
            }
            _ => continue,
        }
    }
    Ok(PingRun { latency: Stats::new(latencies), bytes, cpu, writes })
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
        Ok(Pinged { user, last_update_id, latency, sent, bytes: body.len() })
    };
    let _ = tx.send(outcome.await);
}

/// A row written again sooner than this after its last write breaks the server's rule (a
/// row changes at most every 55 s; the batched write adds up to its 5 s interval).
const TOO_SOON: Duration = Duration::from_secs(50);

/// Database writes seen by sampling `user_presence` once a second.
#[derive(Default)]
pub struct Writes {
    /// Each user's `last_update_id` and when it was last seen to change.
    seen: HashMap<i64, (i64, Instant)>,
    pub rows: u64,
    pub samples: u64,
    pub samples_with_writes: u64,
    pub too_soon: u64,
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
