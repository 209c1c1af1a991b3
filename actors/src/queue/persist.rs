//! An organization's event queues saved when its actor stops and taken back when the next
//! one starts: at a restart of the server, and (the same operation) when an organization
//! moves to another node. Each is one transaction on one organization's rows; the format
//! is in [`super::saved`], the SQL in `store::queues`.

use std::time::Instant;

use actix::Addr;

use super::actor::{QueueActor, SaveQueue};
use super::saved::{Restorer, SavedQueue};
use crate::ids::RealmId;
use crate::store::{self, Store};

/// Stops the queues and saves what a client could still ask of them (expired queues are
/// left out); how many were saved. The encoding and the write run on a blocking thread,
/// not the caller's (an actor thread that other organizations may share).
pub async fn save(store: Store, realm_id: RealmId, queues: Vec<Addr<QueueActor>>) -> usize {
    let mut saved = Vec::with_capacity(queues.len());
    for queue in queues {
        if let Ok(Some(q)) = queue.send(SaveQueue).await {
            saved.push(q);
        }
    }
    let started = Instant::now();
    let now = crate::clock::now();
    let written = tokio::task::spawn_blocking(move || store::queues::save_all(&store, realm_id, &saved, now)).await;
    let report = match written {
        Ok(Ok(report)) => report,
        Ok(Err(e)) => {
            tracing::error!(realm.id = %realm_id, error = %e, "could not save event queues");
            return 0;
        }
        Err(e) => {
            tracing::error!(realm.id = %realm_id, error = %e, "could not save event queues");
            return 0;
        }
    };
    tracing::info!(
        realm.id = %realm_id,
        queues = report.queues,
        events = report.events,
        event_bytes = report.event_bytes,
        queue_bytes = report.queue_bytes,
        ms = started.elapsed().as_millis() as u64,
        "saved event queues"
    );
    report.queues
}

/// Takes the organization's saved queues out of the database, each with its idle time
/// grown by the time it spent saved; those that expired meanwhile are dropped. Nothing on
/// an error (logged): the clients register again, as after any lost queue.
pub fn take(store: &Store, realm_id: RealmId) -> Vec<SavedQueue> {
    let started = Instant::now();
    let now = crate::clock::now();
    let mut restorer = Restorer::default();
    if let Err(e) = store.write(|tx| store::queues::take(tx, realm_id, now, &mut restorer)) {
        tracing::error!(realm.id = %realm_id, error = %e, "could not restore event queues");
        return Vec::new();
    }
    let (saved, unreadable) = restorer.finish();
    let read = saved.len();
    let queues: Vec<SavedQueue> = saved
        .into_iter()
        .filter_map(|(mut queue, saved_secs)| {
            queue.idle_ms = queue.idle_ms.saturating_add(saved_secs.saturating_mul(1000));
            (queue.idle_ms < queue.spec.timeout_ms).then_some(queue)
        })
        .collect();
    if read > 0 || unreadable > 0 {
        tracing::info!(
            realm.id = %realm_id,
            queues = queues.len(),
            expired = read - queues.len(),
            unreadable,
            ms = started.elapsed().as_millis() as u64,
            "restored event queues"
        );
    }
    queues
}
