//! Outgoing mail: a durable outbox and the worker that drains it.
//!
//! A change that sends mail (an invitation) writes the mail into the `outbox` table in the
//! same transaction as itself, so nothing committed is ever without its mail and nothing
//! rolled back sends any. After the commit the realm actor wakes the worker ([`MailWaker`],
//! which never blocks); the worker ([`worker`]) runs on a thread of its own, reads what is
//! due, hands each mail to the transport ([`transport`]: SMTP through `lettre` when a
//! server is configured, else an `.eml` file in `<data-dir>/outbox/` and a log line) and
//! marks it sent. A failure is logged and the mail tried again later, the delay doubling
//! each time, until `max_attempts`; then it is given up and logged as an error. Mail still
//! pending when the server stops goes out after the next start.

pub mod transport;
pub mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

pub use transport::{SmtpSettings, SmtpTls, Transport};
pub use worker::{drain_once, spawn_worker, Drained};

/// Wakes the mail worker. Cloned into every realm actor; waking never blocks, and a wake-up
/// that comes while the worker is busy is kept for its next wait (none is lost).
#[derive(Clone, Default)]
pub struct MailWaker(Arc<Notify>);

impl MailWaker {
    /// Tells the worker that mail was queued.
    pub fn wake(&self) {
        self.0.notify_one();
    }

    /// Waits for the next wake-up (the worker's side).
    pub async fn woken(&self) {
        self.0.notified().await;
    }
}

impl std::fmt::Debug for MailWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MailWaker")
    }
}

/// Every deployment has one worker: two wakers are the same if they wake the same worker.
impl PartialEq for MailWaker {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for MailWaker {}

/// How mail goes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailSettings {
    /// The SMTP server; `None` writes each mail to `outbox_dir` instead.
    pub smtp: Option<SmtpSettings>,
    /// The sender's address (`From`, with the organization's name as display name).
    pub from_address: String,
    /// Where mails go without an SMTP server (`<data-dir>/outbox`).
    pub outbox_dir: PathBuf,
    /// Delay before the first retry; each further retry waits twice as long...
    pub retry_base: Duration,
    /// ... up to this.
    pub retry_max: Duration,
    /// Attempts before a mail is given up (logged as an error, kept in the outbox).
    pub max_attempts: u32,
}

impl MailSettings {
    /// Mail written to files in `outbox_dir`, sent from `from_address`.
    pub fn files(outbox_dir: PathBuf, from_address: &str) -> Self {
        MailSettings {
            smtp: None,
            from_address: from_address.to_owned(),
            outbox_dir,
            retry_base: Duration::from_secs(60),
            retry_max: Duration::from_secs(3600),
            max_attempts: 10,
        }
    }

    /// When a mail that failed its `attempts`-th attempt (1-based) is tried again, or
    /// `None` once it has had all its attempts.
    pub fn retry_at(&self, now: i64, attempts: u32) -> Option<i64> {
        if attempts >= self.max_attempts {
            return None;
        }
        let factor = 1u32.checked_shl(attempts.saturating_sub(1)).unwrap_or(u32::MAX);
        let delay = self.retry_base.saturating_mul(factor).min(self.retry_max);
        Some(now + delay.as_secs().max(1) as i64)
    }
}

#[cfg(test)]
mod tests;
