//! Prometheus metrics, off unless `metrics_bind` is set: then `GET /metrics` on that address
//! (its own listener, never the API's) answers in Prometheus' text format.
//!
//! Hot paths only count and time (the `metrics` crate's counters and histograms: a lookup
//! and an atomic add, nothing at all while no recorder is installed). Everything that is a
//! level rather than a count — event queues, waiting polls, mailboxes, presence, the
//! database's size — is read when Prometheus scrapes, from what the organizations already
//! share with the HTTP layer.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{web, App, HttpResponse, HttpServer};
use agora_actors::registry::Realms;
use agora_actors::stats;
use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The request latency histogram (labels `method`, `route`, `status`).
pub const HTTP_REQUESTS: &str = "agora_http_request_duration_seconds";
const SQLITE_TRANSACTIONS: &str = "agora_sqlite_transaction_seconds";
const GROUP_COMMIT_CHANGES: &str = "agora_group_commit_changes";
/// How often histograms are drained when nobody scrapes (their samples would pile up).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process's recorder: installed once (the `metrics` crate has one global recorder),
/// shared by every server of the process (tests run several).
static RECORDER: Mutex<Option<PrometheusHandle>> = Mutex::new(None);

/// The process's Prometheus recorder, installed on first use.
pub fn recorder() -> Result<PrometheusHandle, String> {
    let mut slot = RECORDER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(handle) = &*slot {
        return Ok(handle.clone());
    }
    let seconds = |v: &[f64]| v.to_vec();
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(HTTP_REQUESTS.into()),
            &seconds(&[
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
            ]),
        )
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full(SQLITE_TRANSACTIONS.into()),
                &seconds(&[0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0]),
            )
        })
        .and_then(|b| {
            // Up to the group's limit (`MAX_GROUP`, 128).
            b.set_buckets_for_metric(
                Matcher::Full(GROUP_COMMIT_CHANGES.into()),
                &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0],
            )
        })
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
    describe();
    *slot = Some(handle.clone());
    Ok(handle)
}

/// The HELP lines.
fn describe() {
    describe_histogram!(HTTP_REQUESTS, Unit::Seconds, "API requests by method, route pattern and status, with their latency (GET /events includes the long-poll's wait; _count is the number of requests).");
    describe_histogram!(
        SQLITE_TRANSACTIONS,
        Unit::Seconds,
        "Write transactions, from BEGIN IMMEDIATE (waiting for the write lock included) to the end of COMMIT."
    );
    describe_histogram!(
        GROUP_COMMIT_CHANGES,
        Unit::Count,
        "Changes (sends, account creations) written per group commit: those waiting in an organization's mailbox share one transaction."
    );
    describe_counter!("agora_events_delivered_total", "Events handed to clients in GET /events replies.");
    describe_counter!("agora_uploads_total", "Files uploaded (POST /user_uploads).");
    describe_counter!("agora_upload_bytes_total", Unit::Bytes, "Bytes of the files uploaded.");
    describe_gauge!("agora_realms_running", "Organizations whose actor is running.");
    describe_gauge!("agora_active_users", "Active accounts of the running organizations.");
    describe_gauge!("agora_event_queues", "Open event queues.");
    describe_gauge!("agora_event_polls_waiting", "Long-polls (GET /events) waiting for an event.");
    describe_gauge!("agora_realm_mailbox_messages", "Requests sent to organizations' actors and not answered yet (queued or being handled), summed over organizations.");
    describe_gauge!("agora_realm_mailbox_messages_max", "The same, for the organization with the most.");
    describe_gauge!("agora_presence_rows", "Presence rows held in memory.");
    describe_gauge!("agora_presence_unwritten_rows", "Presence rows changed since they were last written.");
    describe_counter!("agora_presence_writes_total", "Transactions the presence actors committed.");
    describe_counter!("agora_presence_rows_written_total", "Presence rows written, over all transactions.");
    describe_gauge!("agora_database_bytes", Unit::Bytes, "Size of the database file.");
    describe_gauge!("agora_database_wal_bytes", Unit::Bytes, "Size of the database's write-ahead log.");
    describe_gauge!("agora_process_resident_memory_bytes", Unit::Bytes, "Resident memory of the server process.");
}

/// What the scrape handler reads.
struct Scrape {
    handle: PrometheusHandle,
    realms: Realms,
    database: PathBuf,
}

/// Starts the metrics endpoint on `listener` (one worker; it serves one scraper). The
/// returned server stops with the application.
pub fn serve(listener: TcpListener, handle: PrometheusHandle, realms: Realms) -> std::io::Result<Server> {
    let database = realms.store.path().to_owned();
    let upkeep = handle.clone();
    actix_web::rt::spawn(async move {
        let mut every = actix_web::rt::time::interval(UPKEEP_EVERY);
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    let scrape = web::Data::new(Scrape { handle, realms, database });
    let server = HttpServer::new(move || {
        App::new().app_data(scrape.clone()).route("/metrics", web::get().to(metrics)).default_service(web::to(
            || async { HttpResponse::NotFound().body("Not found: the metrics are at /metrics\n") },
        ))
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)?
    .run();
    Ok(server)
}

/// `GET /metrics`.
async fn metrics(scrape: web::Data<Scrape>) -> HttpResponse {
    collect(&scrape).await;
    HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(scrape.handle.render())
}

/// Sets the levels read at scrape time.
async fn collect(scrape: &Scrape) {
    let realms = stats::running(&scrape.realms).await;
    let sum = |f: fn(&stats::RealmFigures) -> usize| realms.iter().map(f).sum::<usize>() as f64;
    gauge!("agora_realms_running").set(realms.len() as f64);
    gauge!("agora_active_users").set(sum(|r| r.active_users));
    gauge!("agora_event_queues").set(sum(|r| r.event_queues));
    gauge!("agora_event_polls_waiting").set(sum(|r| r.waiting_polls));
    gauge!("agora_realm_mailbox_messages").set(sum(|r| r.mailbox));
    gauge!("agora_realm_mailbox_messages_max").set(realms.iter().map(|r| r.mailbox).max().unwrap_or(0) as f64);
    let presence = realms.iter().filter_map(|r| r.presence);
    let (mut rows, mut dirty, mut writes, mut written) = (0, 0, 0, 0);
    for p in presence {
        (rows, dirty, writes, written) = (rows + p.rows, dirty + p.dirty, writes + p.writes, written + p.rows_written);
    }
    gauge!("agora_presence_rows").set(rows as f64);
    gauge!("agora_presence_unwritten_rows").set(dirty as f64);
    counter!("agora_presence_writes_total").absolute(writes);
    counter!("agora_presence_rows_written_total").absolute(written);
    let size = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |m| m.len()) as f64;
    gauge!("agora_database_bytes").set(size(&scrape.database));
    let mut wal = scrape.database.as_os_str().to_owned();
    wal.push("-wal");
    gauge!("agora_database_wal_bytes").set(size(std::path::Path::new(&wal)));
    if let Some(rss) = resident_memory() {
        gauge!("agora_process_resident_memory_bytes").set(rss as f64);
    }
}

/// The process's resident memory (Linux), in bytes.
fn resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}
