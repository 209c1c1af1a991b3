//! The mail worker: drains the outbox on a thread of its own, never on an actor's.

use std::time::Duration;

use super::transport::{SendError, Transport};
use super::{MailSettings, MailWaker};
use crate::store::outbox::{self, QueuedMail};
use crate::store::{Store, StoreError};

/// Mails read from the outbox at a time.
const BATCH: usize = 50;

/// Longest sleep between two looks at the outbox (a safety net: a wake-up is never lost).
const IDLE_LOOK: Duration = Duration::from_secs(300);

/// What one pass over the outbox did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    pub sent: usize,
    /// Failed this time, to be tried again.
    pub retried: usize,
    /// Failed for good.
    pub given_up: usize,
}

/// Runs `f` on the blocking pool against the store.
async fn blocking<T: Send + 'static>(
    store: &Store,
    f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| StoreError::Corrupt(format!("mail worker task: {e}")))?
}

/// Sends every mail due at `now` (in batches), marking each sent, to retry, or given up.
pub async fn drain_once(
    store: &Store,
    transport: &Transport,
    settings: &MailSettings,
    now: i64,
) -> Result<Drained, StoreError> {
    let mut done = Drained::default();
    loop {
        let due = blocking(store, move |s| outbox::due(&*s.conn()?, now, BATCH)).await?;
        let count = due.len();
        for mail in due {
            deliver(store, transport, settings, mail, now, &mut done).await?;
        }
        if count < BATCH {
            return Ok(done);
        }
    }
}

async fn deliver(
    store: &Store,
    transport: &Transport,
    settings: &MailSettings,
    queued: QueuedMail,
    now: i64,
    done: &mut Drained,
) -> Result<(), StoreError> {
    let (id, kind, to) = (queued.id, queued.mail.kind.clone(), queued.mail.to.clone());
    let attempt = u32::try_from(queued.attempts).unwrap_or(u32::MAX).saturating_add(1);
    match transport.send(&queued, &settings.from_address).await {
        Ok(how) => {
            blocking(store, move |s| s.write(|tx| outbox::mark_sent(tx, id, now))).await?;
            tracing::info!(mail.id = id, mail.kind = %kind, mail.to = %to, "mail {how}");
            done.sent += 1;
        }
        Err(SendError::Transient(error)) => {
            let retry_at = settings.retry_at(now, attempt);
            let (e, at) = (error.clone(), retry_at);
            blocking(store, move |s| s.write(|tx| outbox::mark_failed(tx, id, &e, at))).await?;
            match retry_at {
                Some(at) => {
                    tracing::warn!(mail.id = id, mail.kind = %kind, attempt, retry_in = at - now, %error, "mail not sent; will retry");
                    done.retried += 1;
                }
                None => {
                    tracing::error!(mail.id = id, mail.kind = %kind, mail.to = %to, attempt, %error, "mail not sent; giving up");
                    done.given_up += 1;
                }
            }
        }
        Err(SendError::Permanent(error)) => {
            let e = error.clone();
            blocking(store, move |s| s.write(|tx| outbox::mark_failed(tx, id, &e, None))).await?;
            tracing::error!(mail.id = id, mail.kind = %kind, mail.to = %to, %error, "mail cannot be sent; giving up");
            done.given_up += 1;
        }
    }
    Ok(())
}

/// Starts the worker on the current thread's runtime (give it a thread of its own): it
/// drains the outbox at once (mail left from before a restart), then whenever woken or a
/// retry falls due.
pub fn spawn_worker(store: Store, settings: MailSettings, waker: MailWaker) -> Result<(), String> {
    let transport = Transport::new(&settings)?;
    match &settings.smtp {
        Some(smtp) => tracing::info!(host = %smtp.host, port = smtp.port, "mail goes out through SMTP"),
        None => tracing::info!(dir = %settings.outbox_dir.display(), "no SMTP server: mail is written to files"),
    }
    actix::spawn(async move {
        loop {
            let now = crate::clock::now();
            if let Err(e) = drain_once(&store, &transport, &settings, now).await {
                tracing::error!(error = %e, "mail worker could not read the outbox");
            }
            let next = blocking(&store, |s| outbox::next_due(&*s.conn()?)).await.ok().flatten();
            let wait = next
                .map(|at| Duration::from_secs((at - crate::clock::now()).max(0) as u64))
                .unwrap_or(IDLE_LOOK)
                .min(IDLE_LOOK);
            tokio::select! {
                _ = waker.woken() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    });
    Ok(())
}
