//! The password-hashing pool: a few threads of its own for argon2, and a bounded wait for
//! them.
//!
//! Each argon2 run allocates its whole memory cost (19 MiB by default), and glibc keeps
//! freed memory in the arena of the thread that freed it. On the blocking pool, which grows
//! to hundreds of threads, N concurrent logins with made-up usernames left about N × 19 MiB
//! resident for good. Here only `threads` threads ever hash, so at most that many arenas
//! hold argon2 memory; `queue` more requests wait their turn, and any beyond those wait up
//! to `wait` for a place before they get Zulip's 429 `RATE_LIMIT_HIT`.
//!
//! Every argon2 run of the server goes through one pool: logins, password changes, accounts
//! created over the API, the first owner's password and the login decoy.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agora_actors::ApiError;
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

/// How many hash at once and how many may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSize {
    /// Threads that run argon2 (at least one).
    pub threads: usize,
    /// Requests that wait for a thread beyond those running.
    pub queue: usize,
    /// How long a request waits for a place in the queue before it is refused.
    pub wait: Duration,
}

impl Default for PoolSize {
    fn default() -> Self {
        PoolSize { threads: 2, queue: 32, wait: Duration::from_secs(1) }
    }
}

/// What a refused request is told to wait, in seconds.
const RETRY_AFTER_SECS: f64 = 1.0;

type Job = Box<dyn FnOnce() + Send>;

/// A handle on the pool; clones share it. The threads end when the last handle is dropped.
#[derive(Clone)]
pub struct HashPool {
    jobs: mpsc::Sender<Job>,
    /// One permit per thread and queue place: the pool never holds more jobs than that.
    places: Arc<Semaphore>,
    wait: Duration,
}

impl std::fmt::Debug for HashPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashPool").field("free_places", &self.free_places()).finish()
    }
}

impl HashPool {
    /// Starts the pool's threads.
    pub fn start(size: PoolSize) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let threads = size.threads.max(1);
        for i in 0..threads {
            let queue = Arc::clone(&queue);
            std::thread::Builder::new().name(format!("agora-hash-{i}")).spawn(move || loop {
                // One thread waits on the channel while the others wait for the lock.
                let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
                match job {
                    Ok(job) => job(),
                    Err(_) => return,
                }
            })?;
        }
        let places = Arc::new(Semaphore::new(threads + size.queue));
        Ok(HashPool { jobs, places, wait: size.wait })
    }

    /// Runs `f` (argon2 work) on one of the pool's threads and returns its result, or 429
    /// `RATE_LIMIT_HIT` when the pool stays full for longer than its wait. The caller's
    /// tracing span follows `f`. A request that goes away before its turn is skipped.
    pub async fn run<T, F>(&self, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let place = self.place().await?;
        let (tx, rx) = oneshot::channel();
        let span = tracing::Span::current();
        let job: Job = Box::new(move || {
            if tx.is_closed() {
                return;
            }
            let outcome = span.in_scope(|| std::panic::catch_unwind(AssertUnwindSafe(f)));
            // The place is free before the caller hears back.
            drop(place);
            match outcome {
                Ok(value) => {
                    let _ = tx.send(value);
                }
                Err(_) => tracing::error!("password hashing panicked"),
            }
        });
        self.jobs.send(job).map_err(|_| {
            tracing::error!("the password-hashing pool is gone");
            ApiError::internal()
        })?;
        rx.await.map_err(|_| ApiError::internal())
    }

    /// Places free at this moment: idle threads plus free queue places.
    pub fn free_places(&self) -> usize {
        self.places.available_permits()
    }

    async fn place(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        if let Ok(place) = Arc::clone(&self.places).try_acquire_owned() {
            return Ok(place);
        }
        match tokio::time::timeout(self.wait, Arc::clone(&self.places).acquire_owned()).await {
            Ok(Ok(place)) => Ok(place),
            Ok(Err(_)) => Err(ApiError::internal()),
            Err(_) => {
                tracing::debug!("password-hashing pool full");
                Err(ApiError::rate_limited(RETRY_AFTER_SECS))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize, queue: usize, wait_ms: u64) -> HashPool {
        HashPool::start(PoolSize { threads, queue, wait: Duration::from_millis(wait_ms) }).unwrap()
    }

    /// A job that holds its thread until told to finish.
    fn blocker(pool: &HashPool) -> (std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<Result<(), ApiError>>) {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let pool = pool.clone();
        let task = tokio::spawn(async move {
            pool.run(move || {
                let _ = held.recv();
            })
            .await
        });
        (release, task)
    }

    async fn until_full(pool: &HashPool) {
        while pool.free_places() > 0 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn runs_work_on_its_own_threads() {
        let pool = pool(2, 0, 0);
        let name = pool.run(|| std::thread::current().name().map(str::to_owned)).await.unwrap();
        assert!(name.unwrap().starts_with("agora-hash-"));
    }

    #[tokio::test]
    async fn a_full_pool_refuses_after_its_wait() {
        let pool = pool(1, 1, 0);
        let (release_a, a) = blocker(&pool);
        let (release_b, b) = blocker(&pool);
        until_full(&pool).await;
        let refused = pool.run(|| 1).await.unwrap_err();
        assert_eq!(refused, ApiError::rate_limited(RETRY_AFTER_SECS));
        release_a.send(()).unwrap();
        release_b.send(()).unwrap();
        a.await.unwrap().unwrap();
        b.await.unwrap().unwrap();
        assert_eq!(pool.run(|| 2).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn a_waiting_request_gets_the_place_freed_within_its_wait() {
        let pool = pool(1, 0, 10_000);
        let (release, held) = blocker(&pool);
        until_full(&pool).await;
        let waiting = tokio::spawn({
            let pool = pool.clone();
            async move { pool.run(|| 3).await }
        });
        release.send(()).unwrap();
        held.await.unwrap().unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 3);
    }
}
