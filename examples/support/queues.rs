//! Event queues with a long-poll kept open on each, and the collection of one event per
//! queue per round (the delivery latency of one trigger to every queue).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{ms, success_json, Api, BoxError, Creds};

/// A long-poll answers within 45-55 s (an event or a heartbeat); give it generous slack.
const POLL_TIMEOUT: Duration = Duration::from_secs(120);

/// A registered event queue.
#[derive(Clone)]
pub struct Queue {
    pub index: usize,
    pub user: Creds,
    pub id: String,
    pub last_event_id: i64,
    pub register_latency: Duration,
}

/// What a poller tells the main task.
pub enum Report<T> {
    /// An event the poller's `pick` function chose (as `T`), and when its response body had
    /// fully arrived.
    Event { queue: usize, item: T, at: Instant },
    /// The poller stopped.
    Failed { queue: usize, error: String },
}

/// Registers `n` queues for `event_types` (a JSON list), round-robin over `users`, with
/// the initial state of `fetch_event_types` (a JSON list; `None`: every data set).
pub async fn register_all(
    api: &Api,
    users: &[Creds],
    n: usize,
    concurrency: usize,
    event_types: &str,
    fetch_event_types: Option<&str>,
) -> Result<Vec<Queue>, BoxError> {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = JoinSet::new();
    for (index, user) in users.iter().cycle().take(n).enumerate() {
        let (api, user, permits) = (api.clone(), user.clone(), permits.clone());
        let event_types = event_types.to_owned();
        let fetch_event_types = fetch_event_types.map(str::to_owned);
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let started = Instant::now();
            let mut form = vec![("event_types", event_types)];
            form.extend(fetch_event_types.map(|types| ("fetch_event_types", types)));
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

/// The pollers of a set of queues, each long-polling in its own task.
pub struct Pollers<T> {
    tasks: JoinSet<()>,
    pub rx: UnboundedReceiver<Report<T>>,
    waiting: Arc<AtomicUsize>,
    n: usize,
}

impl<T: Send + 'static> Pollers<T> {
    /// Starts one poller per queue; each reports the events for which `pick` returns `Some`.
    pub fn start(api: &Api, queues: &[Queue], pick: fn(&Value) -> Option<T>) -> Self {
        let (tx, rx) = unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let mut tasks = JoinSet::new();
        for queue in queues {
            tasks.spawn(poll_queue(api.clone(), queue.clone(), waiting.clone(), tx.clone(), pick));
        }
        Pollers { tasks, rx, waiting, n: queues.len() }
    }

    /// The same, started `batch` at a time, `pause` apart (many connections opened at once
    /// overflow the server's listen backlog).
    pub async fn start_gradually(
        api: &Api,
        queues: &[Queue],
        pick: fn(&Value) -> Option<T>,
        batch: usize,
        pause: Duration,
    ) -> Self {
        let (tx, rx) = unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let mut tasks = JoinSet::new();
        for chunk in queues.chunks(batch.max(1)) {
            for queue in chunk {
                tasks.spawn(poll_queue(api.clone(), queue.clone(), waiting.clone(), tx.clone(), pick));
            }
            tokio::time::sleep(pause).await;
        }
        Pollers { tasks, rx, waiting, n: queues.len() }
    }

    /// Waits (at most 60 s) until every poller has sent its first request.
    pub async fn wait_until_waiting(&self) -> Result<(), BoxError> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.waiting.load(Ordering::SeqCst) < self.n {
            if Instant::now() > deadline {
                let waiting = self.waiting.load(Ordering::SeqCst);
                return Err(format!("only {waiting} of {} pollers sent their request within 60 s", self.n).into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }

    /// Drains what already arrived: fails on a stopped poller, returns how many events came.
    pub fn drain(&mut self) -> Result<usize, BoxError> {
        let mut events = 0;
        while let Ok(report) = self.rx.try_recv() {
            match report {
                Report::Failed { queue, error } => return Err(format!("queue {queue}: {error}").into()),
                Report::Event { .. } => events += 1,
            }
        }
        Ok(events)
    }

    /// Stops every poller.
    pub async fn shutdown(mut self) {
        self.tasks.shutdown().await;
    }
}

async fn poll_queue<T>(
    api: Api,
    queue: Queue,
    waiting: Arc<AtomicUsize>,
    tx: UnboundedSender<Report<T>>,
    pick: fn(&Value) -> Option<T>,
) {
    if let Err(e) = poll_loop(&api, &queue, &waiting, &tx, pick).await {
        let _ = tx.send(Report::Failed { queue: queue.index, error: e.to_string() });
    }
}

/// Long-polls until an error, acknowledging each answer's highest event id in the next poll.
async fn poll_loop<T>(
    api: &Api,
    queue: &Queue,
    waiting: &AtomicUsize,
    tx: &UnboundedSender<Report<T>>,
    pick: fn(&Value) -> Option<T>,
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
            if let Some(item) = pick(event) {
                if tx.send(Report::Event { queue: queue.index, item, at }).is_err() {
                    return Ok(()); // the main task is finishing
                }
            }
        }
    }
}

/// Deletes the queues on a server we did not start (ours is simply killed).
pub async fn delete_queues(api: &Api, queues: &[Queue], concurrency: usize) {
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

/// Delivery latencies over rounds: each round one trigger, one matching event per queue.
#[derive(Default)]
pub struct Deliveries {
    n: usize,
    /// Pollers that stopped (their error was printed); they are not waited for.
    dead: Vec<bool>,
    /// Per queue and round: from the trigger's request to the event's arrival.
    pub latencies: Vec<Duration>,
    /// Per complete round: the slowest queue.
    pub last_poller: Vec<Duration>,
    pub missed: usize,
    /// Events that matched no round.
    pub stray: usize,
}

impl Deliveries {
    /// For `n` queues, with `stray` events already seen.
    pub fn new(n: usize, stray: usize) -> Self {
        Deliveries { n, dead: vec![false; n], stray, ..Deliveries::default() }
    }

    /// Pollers that stopped.
    pub fn failed(&self) -> usize {
        self.dead.iter().filter(|&&dead| dead).count()
    }

    /// Collects one round: the events for which `matches` holds, from the trigger sent at
    /// `t0` until every live queue has one or `timeout` has passed since `t0`.
    pub async fn collect<T>(
        &mut self,
        label: &str,
        t0: Instant,
        timeout: Duration,
        rx: &mut UnboundedReceiver<Report<T>>,
        matches: impl Fn(&T) -> bool,
    ) -> Result<(), BoxError> {
        let deadline = tokio::time::Instant::from_std(t0 + timeout);
        let mut got: Vec<Option<Duration>> = vec![None; self.n];
        let mut count = 0;
        // Stopped pollers are not waited for (a stopped poller sends nothing after `Failed`).
        let mut stopped = self.failed();
        while count + stopped < self.n {
            let report = match tokio::time::timeout_at(deadline, rx.recv()).await {
                Err(_) => break,
                Ok(None) => return Err("every poller has stopped".into()),
                Ok(Some(report)) => report,
            };
            match report {
                Report::Event { queue, item, at } if matches(&item) => {
                    if got[queue].is_none() {
                        got[queue] = Some(at.saturating_duration_since(t0));
                        count += 1;
                    }
                }
                Report::Event { .. } => self.stray += 1,
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
        eprintln!("{label}: {}/{} queues, last after {}", latencies.len(), self.n, ms(slowest));
        self.latencies.extend(latencies);
        Ok(())
    }
}
