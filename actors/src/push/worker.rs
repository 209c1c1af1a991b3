//! [`PushWorker`]: the thread that drains the push outbox.
//!
//! It runs beside the actors, never on their threads: it takes the oldest due job (a user's
//! jobs in order), sends it to the bouncer, and deletes it once done. A bouncer that cannot
//! be reached puts the job off with exponential backoff and pauses the worker as long (the
//! other jobs would fail alike); a job still failing after `max_attempts` is given up,
//! logged, and for a device registration reported as failed. Jobs are rows, so a restart
//! loses none; one is deleted only after the bouncer took it, so none is sent twice while
//! the server runs (a crash between the two sends it again on restart).

use std::sync::Arc;
use std::time::Duration;

use super::bouncer::{Bouncer, BouncerError};
use super::jobs::{self, Ctx, Outcome};
use crate::config::ServerConfig;
use crate::realm::push::PushDeviceOutcome;
use crate::registry::Realms;
use crate::store::push::{self as db, Job};
use crate::store::Store;
use crate::worker_thread::{idle_wait, now_ms, StopFlag, WorkerThread};

/// The running worker; stops (and joins) when dropped or [`PushWorker::stop`]ped.
pub struct PushWorker(WorkerThread);

impl PushWorker {
    /// Starts the worker on a thread of its own.
    pub fn start(store: Store, realms: Realms, config: Arc<ServerConfig>) -> std::io::Result<PushWorker> {
        let thread = WorkerThread::spawn("agora-push", move |stop| Worker { store, realms, config, stop }.run())?;
        Ok(PushWorker(thread))
    }

    /// Stops the worker after the job under way.
    pub fn stop(&mut self) {
        self.0.stop();
    }
}

struct Worker {
    store: Store,
    realms: Realms,
    config: Arc<ServerConfig>,
    stop: StopFlag,
}

impl Worker {
    fn run(self) {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => return tracing::error!(error = %e, "push worker: no runtime; mobile notifications are off"),
        };
        let push = &self.config.push;
        let bouncer = Bouncer::from_config(push);
        let (org_id, org_key) = (push.org_id.clone().unwrap_or_default(), push.org_key.clone().unwrap_or_default());
        if let Some(bouncer) = &bouncer {
            let ctx = Ctx { bouncer, store: &self.store, config: &self.config, org_id: &org_id, org_key: &org_key };
            // As Zulip's worker at start: the bouncer learns this server's organizations.
            if let Err(e) = runtime.block_on(ctx.upload_server_data()) {
                tracing::warn!(error = %e, "push worker: could not send the organizations to the bouncer");
            }
        }
        while !self.stop.stopping() {
            let job = match self
                .store
                .conn()
                .map_err(|e| e.to_string())
                .and_then(|c| db::next_due(&c, now_ms()).map_err(|e| e.to_string()))
            {
                Ok(job) => job,
                Err(e) => {
                    tracing::error!(error = %e, "push worker: cannot read the outbox");
                    self.stop.pause(push.poll_interval);
                    continue;
                }
            };
            let Some(job) = job else {
                self.stop.pause(self.idle_wait());
                continue;
            };
            let Some(bouncer) = &bouncer else {
                tracing::debug!(job.id = job.id, kind = %job.kind, "push worker: no push service; job dropped");
                self.finish(&job);
                continue;
            };
            let ctx = Ctx { bouncer, store: &self.store, config: &self.config, org_id: &org_id, org_key: &org_key };
            if job.kind == "message" && job.payload["if_off_zulip"] == true && self.on_zulip(&runtime, &job) {
                // Active elsewhere all along: the client has the message (Zulip sends
                // nothing once the user's queues took it).
                self.finish(&job);
                continue;
            }
            match runtime.block_on(jobs::run(&ctx, &job)) {
                Ok(Outcome::Done) => self.finish(&job),
                Ok(Outcome::Progress(payload)) => {
                    if let Err(e) = self.store.write(|tx| db::update_payload(tx, job.id, &payload)) {
                        tracing::error!(error = %e, "push worker: cannot record a job's progress");
                        self.stop.pause(push.poll_interval);
                    }
                }
                Ok(Outcome::Report(outcome)) => {
                    self.report(&runtime, &job, outcome);
                    self.finish(&job);
                }
                Err(BouncerError::RetryLater(msg)) => self.retry(&runtime, &job, &msg),
                Err(e @ BouncerError::Refused { .. }) => {
                    tracing::warn!(job.id = job.id, kind = %job.kind, user.id = %job.user_id, error = %e,
                        "push worker: the bouncer refused a job; given up");
                    self.finish(&job);
                }
            }
        }
    }

    /// How long to wait with nothing due: until the next job is due, at most a poll interval.
    fn idle_wait(&self) -> Duration {
        idle_wait(
            self.store.conn().ok().and_then(|c| db::earliest_due(&c).ok().flatten()),
            self.config.push.poll_interval,
        )
    }

    fn finish(&self, job: &Job) {
        if let Err(e) = self.store.write(|tx| db::finish(tx, job.id)) {
            tracing::error!(job.id = job.id, error = %e, "push worker: cannot remove a finished job");
            self.stop.pause(self.config.push.poll_interval);
        }
    }

    /// A failed attempt: later, or given up after `max_attempts`.
    fn retry(&self, runtime: &tokio::runtime::Runtime, job: &Job, msg: &str) {
        let push = &self.config.push;
        let attempts = job.attempts + 1;
        if attempts >= push.max_attempts {
            tracing::warn!(job.id = job.id, kind = %job.kind, user.id = %job.user_id, attempts, error = %msg,
                "push worker: maximum retries exceeded; job given up");
            if job.kind == "e2ee_register" {
                let device_id = job.payload["device_id"].as_i64().unwrap_or_default();
                let token_id = job.payload["token_id"].as_i64().unwrap_or_default();
                // Zulip retries until the registration request expires.
                let error_code = "REQUEST_EXPIRED".to_owned();
                let outcome = PushDeviceOutcome::Failed { user_id: job.user_id, device_id, token_id, error_code };
                self.report(runtime, job, outcome);
            }
            self.finish(job);
            return;
        }
        let wait = push.backoff(attempts);
        tracing::info!(job.id = job.id, kind = %job.kind, attempts, wait_ms = wait.as_millis() as u64, error = %msg,
            "push worker: bouncer unavailable; retrying later");
        let due = now_ms() + wait.as_millis() as i64;
        if let Err(e) = self.store.write(|tx| db::retry_later(tx, job.id, attempts, due, msg)) {
            tracing::error!(error = %e, "push worker: cannot record a retry");
        }
        // The bouncer is down for every job: wait before trying another.
        self.stop.pause(wait);
    }

    /// The realm actor of the job's organization, if it runs or can be started.
    fn realm(&self, runtime: &tokio::runtime::Runtime, job: &Job) -> Option<crate::registry::RealmHandle> {
        runtime.block_on(self.realms.find_by_id(job.realm_id)).ok()?
    }

    /// Whether the job's user has an event queue open.
    fn on_zulip(&self, runtime: &tokio::runtime::Runtime, job: &Job) -> bool {
        self.realm(runtime, job).is_some_and(|h| h.queues.users().contains(&job.user_id))
    }

    /// Hands a device outcome to the realm actor (which writes it and tells the clients).
    fn report(&self, runtime: &tokio::runtime::Runtime, job: &Job, outcome: PushDeviceOutcome) {
        let Some(handle) = self.realm(runtime, job) else {
            return tracing::warn!(job.id = job.id, "push worker: the organization is gone; outcome dropped");
        };
        match runtime.block_on(handle.addr.send(outcome)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "push worker: the organization refused a device outcome"),
            Err(e) => tracing::warn!(error = %e, "push worker: organization unavailable; device outcome dropped"),
        }
    }
}

/// Runs one bouncer call outside the server (the `register-server` command).
pub fn call_once<T>(f: impl std::future::Future<Output = T>) -> std::io::Result<T> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(f))
}
