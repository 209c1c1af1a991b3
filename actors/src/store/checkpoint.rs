//! Checkpoints of the write-ahead log on a thread of their own.
//!
//! SQLite checkpoints by itself when a commit takes the log past 1000 pages: that commit
//! then copies the log into the database and, with `synchronous=NORMAL`, waits for two
//! fsyncs. With one sender that was one send in a hundred taking 9-15 ms instead of 0.3.
//! A server's connections therefore checkpoint only past [`SAFETY_PAGES`] (a bound on the
//! log should this thread fall behind) and this thread runs a `PASSIVE` checkpoint every
//! [`EVERY`]: it never waits for the writers, who carry on appending meanwhile.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// How often the log is checkpointed.
pub const EVERY: Duration = Duration::from_millis(100);

/// The server's connections' own threshold (`wal_autocheckpoint`, pages of 4 KiB).
pub const SAFETY_PAGES: u32 = 10_000;

/// The checkpointing thread; stopped (and joined) when dropped.
pub(super) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread with a connection of its own.
    pub(super) fn start(conn: Connection) -> std::io::Result<Checkpointer> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new().name("agora-checkpoint".into()).spawn(move || {
            // Until the store is dropped (its sender with it).
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(EVERY) {
                let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get::<_, i64>(0));
                if let Err(e) = done {
                    tracing::warn!(error = %e, "checkpoint failed");
                }
            }
        })?;
        Ok(Checkpointer { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
