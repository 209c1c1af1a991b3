//! A background worker's thread, as the push and outgoing-webhook workers run theirs: named,
//! woken early by `unpark`, stopped by a flag it checks between jobs, and joined when its
//! handle is stopped or dropped.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// What the worker's loop checks: whether to stop, and how to wait without missing it.
#[derive(Clone)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn stopping(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Waits up to `d`, or until woken (a job was queued, or the worker is stopping).
    pub fn pause(&self, d: Duration) {
        if !self.stopping() {
            std::thread::park_timeout(d);
        }
    }
}

/// The running thread; stops (and joins) when dropped or [`WorkerThread::stop`]ped.
pub struct WorkerThread {
    stop: StopFlag,
    thread: Option<JoinHandle<()>>,
}

impl WorkerThread {
    /// Runs `body` on a thread named `name`.
    pub fn spawn(name: &str, body: impl FnOnce(StopFlag) + Send + 'static) -> io::Result<WorkerThread> {
        let stop = StopFlag(Arc::new(AtomicBool::new(false)));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || body(flag))?;
        Ok(WorkerThread { stop, thread: Some(thread) })
    }

    /// The thread, to wake it; `None` once stopped.
    pub fn thread(&self) -> Option<&Thread> {
        self.thread.as_ref().map(JoinHandle::thread)
    }

    /// Stops the worker after the job under way, and waits for it.
    pub fn stop(&mut self) {
        self.stop.0.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The time in milliseconds, as the outbox tables keep due times.
pub fn now_ms() -> i64 {
    crate::clock::now_micros() / 1000
}

/// How long an idle worker waits: until its earliest due job, at most `poll`.
pub fn idle_wait(earliest_due_ms: Option<i64>, poll: Duration) -> Duration {
    match earliest_due_ms {
        Some(due) => Duration::from_millis((due - now_ms()).clamp(1, poll.as_millis() as i64) as u64),
        None => poll,
    }
}
