//! Message load generator. Starts its own server (`target/<profile>/agora`, next to this
//! example's directory) on a fresh temporary data directory and a free port, and measures:
//!
//! 1. sending (`POST /messages` to a channel with a few subscribers): messages per second
//!    and request latency with one sender, then with `--senders` concurrent senders
//!    (different users, each sending one message after another);
//! 2. send-to-delivery latency: `--queues` event queues (of members subscribed to a second
//!    channel) each keep a long-poll open; per round one message is sent to that channel,
//!    from the send request to the `message` event reaching every queue; each round is
//!    preceded by the same round on the machine's floor, a bare actix-web server (this
//!    program, `--floor-server`) holding as many long-polls and waking them all with one
//!    broadcast, so the two are compared under the same load;
//! 3. `GET /messages` latency on an organization holding `--history` messages (a million by
//!    default) in a third channel: anchor `newest`, a far `first_unread` (all read but a
//!    few messages 1% from the start), a topic narrow and a `search` narrow;
//! 4. sending next to searching: one sender's `POST /messages` latency on that history,
//!    alone and then while `--searchers` clients run the `search` narrow in a loop (history
//!    reads must not hold up writes).
//!
//! Sending a million messages over HTTP would take hours, so for step 3 the server is
//! stopped and the messages are written straight into its SQLite file (`messages`, the
//! reader's `user_messages` rows with the read flag, `messages_fts`), in large
//! transactions, then the server is started again. That path exists only for this
//! benchmark; the server itself only ever creates messages through `POST /messages`.
//!
//! ```text
//! cargo build --release && cargo run --release --example msgload
//! ```
//!
//! Each long-poll holds a connection on both sides: raise `ulimit -n` above the queue count.
//! Progress goes to stderr; the report and a final JSON summary line go to stdout.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::queues::{register_all, Deliveries, Pollers};
use support::*;

/// The channel of the send throughput measurements.
const SEND_CHANNEL: &str = "msgload send";
/// The channel whose subscribers' queues wait for messages.
const DELIVERY_CHANNEL: &str = "msgload delivery";
/// The channel holding the written history.
const HISTORY_CHANNEL: &str = "msgload history";
/// Topics of the history: `topic 0` .. `topic 99`.
const HISTORY_TOPICS: usize = 100;
/// The word of the search narrow: one history message in `NEEDLE_EVERY` contains it.
const NEEDLE: &str = "needle";
const NEEDLE_EVERY: usize = 1000;
/// History messages per transaction.
const HISTORY_BATCH: usize = 100_000;

/// Load generator for Agora's messages (POST /messages, message events, GET /messages).
#[derive(Debug, Parser)]
#[command(name = "msgload")]
struct Args {
    /// Messages sent one after another by the single sender
    #[arg(long, default_value_t = 2000)]
    messages: usize,
    /// Concurrent senders (different users) of the second measurement
    #[arg(long, default_value_t = 50)]
    senders: usize,
    /// Messages each concurrent sender sends, one after another
    #[arg(long, default_value_t = 100)]
    messages_per_sender: usize,
    /// Subscribers of the send channel (among the senders; the others post unsubscribed)
    #[arg(long, default_value_t = 5)]
    subscribers: usize,
    /// Long-polling event queues waiting for the delivery rounds' messages
    #[arg(long, default_value_t = 1000)]
    queues: usize,
    /// Members owning the queues (round-robin), all subscribed to the delivery channel
    #[arg(long, default_value_t = 10)]
    queue_owners: usize,
    /// Delivery rounds: one message each, expected on every queue
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// Pause between one round's completion and the next round
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Seconds to wait for every queue to get a round's message
    #[arg(long, default_value_t = 10)]
    round_timeout_secs: u64,
    /// Messages written into the database for the GET /messages measurements
    #[arg(long, default_value_t = 1_000_000)]
    history: usize,
    /// Unread history messages (the reader has read all others), 1% from the start
    #[arg(long, default_value_t = 10)]
    unread: usize,
    /// GET /messages requests per case
    #[arg(long, default_value_t = 200)]
    fetches: usize,
    /// Messages per GET /messages (num_before, and num_after for first_unread)
    #[arg(long, default_value_t = 100)]
    fetch_size: usize,
    /// Clients running the search narrow in a loop during the last send measurement
    #[arg(long, default_value_t = 4)]
    searchers: usize,
    /// Messages the single sender sends alone, then again next to the searchers
    #[arg(long, default_value_t = 500)]
    contended_messages: usize,
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

fn main() -> ExitCode {
    // This program is also the floor server it compares Agora with (a process of its own).
    support::floor::main("msgload", || run(Args::parse()))
}

async fn run(args: Args) -> Result<(), BoxError> {
    let counts = [
        args.messages,
        args.senders,
        args.messages_per_sender,
        args.queues,
        args.queue_owners,
        args.searchers,
        args.contended_messages,
    ];
    if counts.contains(&0) || args.rounds == 0 || args.history == 0 || args.fetches == 0 || args.fetch_size == 0 {
        return Err("every count must be at least 1".into());
    }
    if let Some(limit) = open_file_limit().filter(|&limit| limit < args.queues as u64 + 64) {
        eprintln!("warning: the open-file limit is {limit}; {} long-polls need more (ulimit -n)", args.queues);
    }
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: args.server_log.clone(),
        http_workers: args.http_workers,
        actor_threads: args.actor_threads,
        dir_prefix: "agora-msgload-",
        config: LOAD_CONFIG.to_owned(),
        capture_log: true,
        seed: None,
    };
    // Held to the end: dropping it kills the server and removes its directory.
    let (mut server, api) = ManagedServer::start(&options, http_client()?).await?;
    eprintln!("server pid {} on {}, data in {}", server.pid(), api.base, server.dir.path().display());
    let maker = UserMaker::Cli { bin: server.bin.clone(), dir: server.dir.path().to_owned() };
    let suffix = random_string(8).to_ascii_lowercase();
    let admin = maker.make(&format!("msgload-admin-{suffix}@example.com"), "Msgload Admin", true).await?;
    eprintln!("creating {} senders and {} queue owners...", args.senders, args.queue_owners);
    let senders = create_members(&maker, "msgload-sender", args.senders, &suffix).await?;
    let owners = create_members(&maker, "msgload-owner", args.queue_owners, &suffix).await?;
    let reader = maker.make(&format!("msgload-reader-{suffix}@example.com"), "Msgload Reader", false).await?;
    let mut subscribers = vec![admin.clone()];
    subscribers.extend(senders.iter().take(args.subscribers).cloned());
    subscribe(&api, &admin, SEND_CHANNEL, &subscribers).await?;
    subscribe(&api, &admin, DELIVERY_CHANNEL, &owners).await?;
    subscribe(&api, &admin, HISTORY_CHANNEL, std::slice::from_ref(&reader)).await?;

    // 1. Sending. A few unmeasured messages first (connections, statement caches).
    send_all(&api, &server, &senders[..1], 50, "warm-up").await?;
    eprintln!("1 sender, {} messages...", args.messages);
    let one = send_all(&api, &server, &senders[..1], args.messages, "one sender").await?;
    eprintln!("{} senders, {} messages each...", args.senders, args.messages_per_sender);
    let many = send_all(&api, &server, &senders, args.messages_per_sender, "many senders").await?;

    // 2. Delivery to long-polling queues, round by round alternately on the machine's floor
    // (a bare actix-web server waking as many long-polls) and on Agora, so that both meet
    // the same load from whatever else the machine runs.
    eprintln!("the floor: a bare actix-web server with {} long-polls...", args.queues);
    let mut floor = FloorRig::start(&args).await?;
    eprintln!("registering {} queues...", args.queues);
    let queues = register_all(&api, &owners, args.queues, 50, r#"["message"]"#, None).await?;
    let mut pollers = Pollers::start(&api, &queues, message_id);
    pollers.wait_until_waiting().await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut deliveries = Deliveries::new(args.queues, pollers.drain()?);
    let mut round_posts = Vec::with_capacity(args.rounds);
    let timeout = Duration::from_secs(args.round_timeout_secs);
    let mut rounds_cpu = CpuUse::default();
    let pause = Duration::from_millis(args.interval_ms);
    for round in 1..=args.rounds {
        floor.round(round, timeout).await?;
        tokio::time::sleep(pause).await;
        let cpu = CpuMeter::start(Some(server.pid()));
        let t0 = Instant::now();
        let id = send(&api, &admin, DELIVERY_CHANNEL, "rounds", &format!("Round {round}")).await?;
        round_posts.push(t0.elapsed());
        let label = format!("round {round}");
        deliveries.collect(&label, t0, timeout, &mut pollers.rx, |&got| got == id).await?;
        rounds_cpu = rounds_cpu.plus(cpu.stop().unwrap_or_default());
        if round < args.rounds {
            tokio::time::sleep(pause).await;
        }
    }
    let rounds_cpu = Some(rounds_cpu);
    pollers.shutdown().await;
    let floor = floor.finish().await;

    // 3. GET /messages over a large history, written while the server is stopped.
    server.stop()?;
    let db = server.dir.path().join("agora.sqlite3");
    let reader_id = user_id(&db, &reader.email)?;
    eprintln!("writing {} messages into {}...", args.history, db.display());
    let started = Instant::now();
    let history = write_history(&db, reader_id, args.history, args.unread)?;
    let write_secs = started.elapsed().as_secs_f64();
    eprintln!("written in {write_secs:.1} s; restarting the server...");
    server.restart(&api).await?;
    let cases = fetch_cases(&history, args.fetch_size);
    let mut fetched = Vec::with_capacity(cases.len());
    for case in &cases {
        eprintln!("GET /messages, {}...", case.name);
        let cpu = CpuMeter::start(Some(server.pid()));
        let stats = fetch_case(&api, &reader, case, args.fetches).await?;
        fetched.push((stats, cpu.stop()));
    }

    // 4. One sender alone, then next to clients searching the history in a loop.
    send_all(&api, &server, &senders[..1], 50, "warm-up after restart").await?;
    eprintln!("1 sender alone on the large history, {} messages...", args.contended_messages);
    let alone = send_all(&api, &server, &senders[..1], args.contended_messages, "alone").await?;
    eprintln!("1 sender next to {} searching clients...", args.searchers);
    let search = cases.iter().find(|c| c.name == "search").ok_or("no search case")?;
    let searching = Searchers::start(&api, &reader, &search.query, args.searchers);
    let contended = send_all(&api, &server, &senders[..1], args.contended_messages, "next to searches").await?;
    let searches = searching.stop().await?;
    let contention = Contention { alone, contended, searches };

    let delivered = Delivered { deliveries, posts: round_posts, cpu: rounds_cpu, floor };
    report(&args, &one, &many, &delivered, &cases, fetched, write_secs, &contention);
    for line in server.log_problems() {
        eprintln!("server: {line}");
    }
    Ok(())
}

/// Prints the figures, then the JSON summary line.
#[allow(clippy::too_many_arguments, reason = "one report of everything measured")]
fn report(
    args: &Args,
    one: &SendRun,
    many: &SendRun,
    delivered: &Delivered,
    cases: &[FetchCase],
    fetched: Vec<(Stats, Option<CpuUse>)>,
    write_secs: f64,
    contention: &Contention,
) {
    let deliveries = &delivered.deliveries;
    let delivery = Stats::new(deliveries.latencies.clone());
    let last = Stats::new(deliveries.last_poller.clone());
    let posts = Stats::new(delivered.posts.clone());
    println!("Agora messages");
    println!("  1 sender: {}", one.describe());
    println!("  {} senders: {}", args.senders, many.describe());
    println!(
        "  delivery to {} queues over {} members, {} rounds: per queue {}; last queue per round p50 {}, max {}",
        args.queues,
        args.queue_owners,
        args.rounds,
        delivery.describe(),
        ms(last.percentile(50)),
        ms(last.max())
    );
    let floor_last = Stats::new(delivered.floor.deliveries.last_poller.clone());
    let floor_delivery = Stats::new(delivered.floor.deliveries.latencies.clone());
    println!(
        "    the floor (bare actix-web, same long-polls): per queue {}; last queue per round p50 {}, max {}; {}",
        floor_delivery.describe(),
        ms(floor_last.percentile(50)),
        ms(floor_last.max()),
        describe_cpu(delivered.floor.cpu, delivered.floor.deliveries.latencies.len(), "delivery")
    );
    let ratio = last.percentile(50).zip(floor_last.percentile(50)).map(|(a, f)| a.as_secs_f64() / f.as_secs_f64());
    println!("    last queue p50 / floor's: {}", ratio.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}")));
    println!("    POST /messages of the rounds: {}", posts.describe());
    println!(
        "    {} per round; {}",
        describe_cpu(delivered.cpu, args.rounds, "round"),
        describe_cpu(delivered.cpu, deliveries.latencies.len(), "delivery")
    );
    println!(
        "    missed deliveries: {}, failed pollers: {}, stray events: {}",
        deliveries.missed,
        deliveries.failed(),
        deliveries.stray
    );
    println!(
        "  GET /messages with {} messages ({write_secs:.1} s to write), {} requests each:",
        args.history, args.fetches
    );
    for (case, (stats, cpu)) in cases.iter().zip(&fetched) {
        println!("    {}: {}; {}", case.name, stats.describe(), describe_cpu(*cpu, args.fetches + 5, "request"));
    }
    println!("  1 sender on that history, alone: {}", contention.alone.describe());
    println!(
        "  1 sender next to {} clients searching in a loop (the CPU includes the searches): {}",
        args.searchers,
        contention.contended.describe()
    );
    println!(
        "    searches meanwhile: {} ({:.1}/s), latency {}",
        contention.searches.len(),
        contention.searches.len() as f64 / contention.contended.elapsed.as_secs_f64(),
        contention.searches.describe()
    );
    let stats_json = |s: &Stats| json!({ "p50": ms_json(s.percentile(50)), "p99": ms_json(s.percentile(99)), "max": ms_json(s.max()) });
    let fetch_json: serde_json::Map<String, Value> = cases
        .iter()
        .zip(&fetched)
        .map(|(case, (stats, cpu))| {
            let mut figures = stats_json(stats);
            figures["cpu"] = cpu_json(*cpu, args.fetches + 5);
            (case.name.to_owned(), figures)
        })
        .collect();
    let summary = json!({
        "loadgen": "messages",
        "one_sender": one.to_json(),
        "many_senders": many.to_json(),
        "delivery": { "queues": args.queues, "rounds": args.rounds, "per_queue_ms": stats_json(&delivery),
                      "last_queue_ms": { "p50": ms_json(last.percentile(50)), "max": ms_json(last.max()) },
                      "post_ms": stats_json(&posts), "missed": deliveries.missed,
                      "cpu_per_round": cpu_json(delivered.cpu, args.rounds),
                      "floor": { "per_queue_ms": stats_json(&floor_delivery),
                                 "last_queue_ms": { "p50": ms_json(floor_last.percentile(50)), "max": ms_json(floor_last.max()) },
                                 "cpu_per_delivery": cpu_json(delivered.floor.cpu, delivered.floor.deliveries.latencies.len()),
                                 "missed": delivered.floor.deliveries.missed },
                      "last_queue_over_floor": ratio.map(round3),
                      "cpu_per_delivery": cpu_json(delivered.cpu, deliveries.latencies.len()),
                      "failed_pollers": deliveries.failed(), "stray_events": deliveries.stray },
        "get_messages": { "history": args.history, "write_s": round3(write_secs), "requests": args.fetches,
                          "size": args.fetch_size, "ms": fetch_json },
        "send_next_to_searches": { "searchers": args.searchers, "alone": contention.alone.to_json(),
                                   "with_searches": contention.contended.to_json(),
                                   "searches": contention.searches.len(),
                                   "search_ms": stats_json(&contention.searches) },
    });
    println!("{summary}");
}

// ---------------------------------------------------------------------------------------
// Channels and sending

/// Creates `channel` (as `admin`) with `users` subscribed.
async fn subscribe(api: &Api, admin: &Creds, channel: &str, users: &[Creds]) -> Result<(), BoxError> {
    let emails: Vec<&str> = users.iter().map(|u| u.email.as_str()).collect();
    let form = [("subscriptions", json!([{ "name": channel }]).to_string()), ("principals", json!(emails).to_string())];
    let response = api.post("users/me/subscriptions", admin).form(&form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    success_json(&format!("POST /api/v1/users/me/subscriptions ({channel})"), status, &body)?;
    Ok(())
}

/// Sends a channel message; returns its id.
async fn send(api: &Api, user: &Creds, channel: &str, topic: &str, content: &str) -> Result<i64, BoxError> {
    let form = [("type", "stream"), ("to", channel), ("topic", topic), ("content", content)];
    let response = api.post("messages", user).form(&form).send().await?;
    let (status, body) = (response.status(), response.bytes().await?);
    let reply = success_json(&format!("POST /api/v1/messages as {}", user.email), status, &body)?;
    reply["id"].as_i64().ok_or_else(|| "POST /api/v1/messages: no id".into())
}

/// One sending measurement.
struct SendRun {
    messages: usize,
    elapsed: Duration,
    latency: Stats,
    /// The server's CPU over the run.
    cpu: Option<CpuUse>,
    /// The group commits that carried the messages.
    groups: Option<GroupCommits>,
}

impl SendRun {
    fn rate(&self) -> f64 {
        self.messages as f64 / self.elapsed.as_secs_f64()
    }

    fn describe(&self) -> String {
        format!(
            "{} messages in {:.2} s = {:.0} msg/s; latency {}; {}; {}",
            self.messages,
            self.elapsed.as_secs_f64(),
            self.rate(),
            self.latency.describe(),
            describe_cpu(self.cpu, self.messages, "message"),
            self.groups.as_ref().map_or_else(|| "group commits not counted".to_owned(), GroupCommits::describe)
        )
    }

    fn to_json(&self) -> Value {
        json!({ "messages": self.messages, "seconds": round3(self.elapsed.as_secs_f64()),
                "msg_per_s": self.rate().round(), "p50_ms": ms_json(self.latency.percentile(50)),
                "p99_ms": ms_json(self.latency.percentile(99)), "max_ms": ms_json(self.latency.max()),
                "cpu": cpu_json(self.cpu, self.messages),
                "group_commits": self.groups.as_ref().map(GroupCommits::to_json) })
    }
}

/// Every sender sends `each` messages to the send channel, one after another, all senders
/// at once; the rate counts from the start to the last reply.
async fn send_all(
    api: &Api,
    server: &ManagedServer,
    senders: &[Creds],
    each: usize,
    topic: &str,
) -> Result<SendRun, BoxError> {
    let cpu = CpuMeter::start(Some(server.pid()));
    let log_from = server.log_len();
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for (s, sender) in senders.iter().enumerate() {
        let (api, sender, topic) = (api.clone(), sender.clone(), format!("{topic} {s}"));
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(each);
            for i in 0..each {
                let t0 = Instant::now();
                send(&api, &sender, SEND_CHANNEL, &topic, &format!("Message {i} from sender {s}.")).await?;
                latencies.push(t0.elapsed());
            }
            Ok::<_, BoxError>(latencies)
        });
    }
    let mut latencies = Vec::with_capacity(senders.len() * each);
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done??);
    }
    let elapsed = started.elapsed();
    let cpu = cpu.stop();
    let groups = server.group_commits(log_from);
    Ok(SendRun { messages: latencies.len(), elapsed, latency: Stats::new(latencies), cpu, groups })
}

/// A `message` event's message id.
fn message_id(event: &Value) -> Option<i64> {
    (event["type"] == "message").then(|| event["message"]["id"].as_i64()).flatten()
}

// ---------------------------------------------------------------------------------------
// The history, written straight into the database (benchmark only)

/// What `write_history` wrote.
struct History {
    /// Id of the first message the reader has not read.
    first_unread: i64,
}

/// The id of the user whose (delivery) email is `email`.
fn user_id(db: &Path, email: &str) -> Result<i64, BoxError> {
    let conn = rusqlite::Connection::open(db)?;
    let sql = "SELECT id FROM users WHERE delivery_email = ?1 COLLATE NOCASE";
    Ok(conn.query_row(sql, [email], |row| row.get(0))?)
}

/// Writes `count` messages from `reader` to the history channel, its `user_messages` rows
/// (all read but `unread` messages 1% from the start) and the full-text rows, in
/// transactions of `HISTORY_BATCH` messages. The server must be stopped.
fn write_history(db: &Path, reader: i64, count: usize, unread: usize) -> Result<History, BoxError> {
    let mut conn = rusqlite::Connection::open(db)?;
    let (channel, realm): (i64, i64) =
        conn.query_row("SELECT id, realm_id FROM channels WHERE name = ?1", [HISTORY_CHANNEL], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs() as i64;
    // Message i (0-based) was sent `count - i` seconds ago; the unread ones are i in
    // [far, far + unread).
    let far = (count / 100) as i64;
    let mut first_unread = None;
    // What the reader got before (the system bots' welcome messages) is read too.
    conn.execute("UPDATE user_messages SET flags = flags | 1 WHERE user_id = ?1", [reader])?;
    for start in (0..count).step_by(HISTORY_BATCH) {
        let end = (start + HISTORY_BATCH).min(count) as i64;
        let tx = conn.transaction()?;
        let before: i64 = tx.query_row("SELECT COALESCE(MAX(id), 0) FROM messages", [], |row| row.get(0))?;
        tx.execute(
            "INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent,
                                   sending_client)
             WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?2),
                  body(i, text) AS (
                      SELECT i, 'History message ' || i || ' about the '
                                || CASE i % 5 WHEN 0 THEN 'quick brown fox' WHEN 1 THEN 'lazy dog'
                                              WHEN 2 THEN 'release plan' WHEN 3 THEN 'lunch order'
                                              ELSE 'build failure' END
                                || CASE WHEN i % ?7 = 7 THEN ' with a ' || ?8 ELSE '' END || '.'
                      FROM seq)
             SELECT ?3, ?4, ?5, 'topic ' || (i % ?6), text, '<p>' || text || '</p>', ?9 + i, 'msgload'
             FROM body",
            rusqlite::params![
                start as i64,
                end,
                realm,
                reader,
                channel,
                HISTORY_TOPICS as i64,
                NEEDLE_EVERY as i64,
                NEEDLE,
                now - count as i64
            ],
        )?;
        tx.execute(
            "INSERT INTO messages_fts (rowid, content, topic) SELECT id, content, topic FROM messages WHERE id > ?1",
            [before],
        )?;
        // Row i of this batch has id `before + 1 + (i - start)`.
        let (unread_from, unread_to) =
            (before + 1 + far - start as i64, before + 1 + far + unread as i64 - start as i64);
        tx.execute(
            "INSERT INTO user_messages (user_id, message_id, flags)
             SELECT ?1, id, CASE WHEN id >= ?3 AND id < ?4 THEN 0 ELSE 1 END FROM messages WHERE id > ?2",
            rusqlite::params![reader, before, unread_from, unread_to],
        )?;
        tx.commit()?;
        if unread > 0 && (start as i64..end).contains(&far) {
            first_unread = Some(unread_from);
        }
        eprintln!("  {end} of {count}");
    }
    // With nothing unread, first_unread is the newest message.
    let newest: i64 = conn.query_row("SELECT MAX(id) FROM messages", [], |row| row.get(0))?;
    Ok(History { first_unread: first_unread.unwrap_or(newest) })
}

// ---------------------------------------------------------------------------------------
// GET /messages

/// One GET /messages measurement: its query and the anchor it must report.
struct FetchCase {
    name: &'static str,
    query: Vec<(&'static str, String)>,
    /// The `anchor` of the reply, when known.
    anchor: Option<i64>,
}

fn fetch_cases(history: &History, size: usize) -> Vec<FetchCase> {
    let n = size.to_string();
    let half = (size / 2).to_string();
    let topic_narrow = json!([
        { "operator": "channel", "operand": HISTORY_CHANNEL },
        { "operator": "topic", "operand": "topic 42" },
    ]);
    let search_narrow = json!([{ "operator": "search", "operand": NEEDLE }]);
    let newest = |narrow: String| {
        vec![
            ("anchor", "newest".to_owned()),
            ("num_before", n.clone()),
            ("num_after", "0".to_owned()),
            ("narrow", narrow),
        ]
    };
    vec![
        FetchCase { name: "newest", query: newest("[]".to_owned()), anchor: None },
        FetchCase {
            name: "first_unread",
            query: vec![
                ("anchor", "first_unread".to_owned()),
                ("num_before", half.clone()),
                ("num_after", half),
                ("narrow", "[]".to_owned()),
            ],
            anchor: Some(history.first_unread),
        },
        FetchCase { name: "topic", query: newest(topic_narrow.to_string()), anchor: None },
        FetchCase { name: "search", query: newest(search_narrow.to_string()), anchor: None },
    ]
}

/// The delivery rounds: latencies, the rounds' sends, the server's CPU over the rounds.
struct Delivered {
    deliveries: Deliveries,
    posts: Vec<Duration>,
    cpu: Option<CpuUse>,
    /// The same rounds on the floor server.
    floor: Floor,
}

/// The floor server's rounds.
struct Floor {
    deliveries: Deliveries,
    cpu: Option<CpuUse>,
}

/// The floor server with as many long-polls as Agora's rounds, and what its rounds measured.
struct FloorRig {
    server: support::floor::FloorServer,
    pollers: Pollers<i64>,
    deliveries: Deliveries,
    cpu: CpuUse,
}

impl FloorRig {
    async fn start(args: &Args) -> Result<FloorRig, BoxError> {
        let server = support::floor::FloorServer::start(http_client()?, args.http_workers).await?;
        let queues = support::floor::queues(args.queues);
        let mut pollers = Pollers::start(&server.api, &queues, message_id);
        pollers.wait_until_waiting().await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let deliveries = Deliveries::new(args.queues, pollers.drain()?);
        Ok(FloorRig { server, pollers, deliveries, cpu: CpuUse::default() })
    }

    /// One round: one broadcast, until every long-poll has it.
    async fn round(&mut self, round: usize, timeout: Duration) -> Result<(), BoxError> {
        let cpu = CpuMeter::start(Some(self.server.pid));
        let t0 = Instant::now();
        let id = self.server.fire().await?;
        let label = format!("floor round {round}");
        self.deliveries.collect(&label, t0, timeout, &mut self.pollers.rx, |&got| got == id).await?;
        self.cpu = self.cpu.plus(cpu.stop().unwrap_or_default());
        Ok(())
    }

    async fn finish(self) -> Floor {
        self.pollers.shutdown().await;
        Floor { deliveries: self.deliveries, cpu: Some(self.cpu) }
    }
}

/// One sender alone and next to searching clients.
struct Contention {
    alone: SendRun,
    contended: SendRun,
    /// Latencies of the searches that ran meanwhile.
    searches: Stats,
}

/// Clients running one GET /messages query in a loop until stopped.
struct Searchers {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    tasks: JoinSet<Result<Vec<Duration>, BoxError>>,
}

impl Searchers {
    fn start(api: &Api, reader: &Creds, query: &[(&'static str, String)], clients: usize) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut tasks = JoinSet::new();
        for _ in 0..clients {
            let (api, reader, query, stop) = (api.clone(), reader.clone(), query.to_vec(), stop.clone());
            tasks.spawn(async move {
                let mut latencies = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let t0 = Instant::now();
                    let request = api.client.get(api.url("messages")).basic_auth(&reader.email, Some(&reader.api_key));
                    let response = request.query(&query).send().await?;
                    let (status, body) = (response.status(), response.bytes().await?);
                    success_json("GET /api/v1/messages (search loop)", status, &body)?;
                    latencies.push(t0.elapsed());
                }
                Ok(latencies)
            });
        }
        Searchers { stop, tasks }
    }

    /// Stops the loops (each finishes its request) and returns every search's latency.
    async fn stop(mut self) -> Result<Stats, BoxError> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut latencies = Vec::new();
        while let Some(done) = self.tasks.join_next().await {
            latencies.extend(done??);
        }
        Ok(Stats::new(latencies))
    }
}

/// Runs a case `requests` times (after a few unmeasured ones), checking each reply.
async fn fetch_case(api: &Api, reader: &Creds, case: &FetchCase, requests: usize) -> Result<Stats, BoxError> {
    let mut latencies = Vec::with_capacity(requests);
    for i in 0..requests + 5 {
        let t0 = Instant::now();
        let response = api.client.get(api.url("messages")).basic_auth(&reader.email, Some(&reader.api_key));
        let response = response.query(&case.query).send().await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let elapsed = t0.elapsed();
        let reply = success_json(&format!("GET /api/v1/messages ({})", case.name), status, &body)?;
        let messages = reply["messages"].as_array().map_or(0, Vec::len);
        if messages == 0 {
            return Err(format!("GET /api/v1/messages ({}): no messages", case.name).into());
        }
        if case.anchor.is_some() && reply["anchor"].as_i64() != case.anchor {
            return Err(format!(
                "GET /api/v1/messages ({}): anchor {} instead of {:?}",
                case.name, reply["anchor"], case.anchor
            )
            .into());
        }
        if i >= 5 {
            latencies.push(elapsed);
        }
    }
    Ok(Stats::new(latencies))
}
