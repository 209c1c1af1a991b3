//! Giving the memory the server has freed back to the system.
//!
//! glibc's allocator keeps what is freed for the next allocations and returns to the system
//! only the free end of its heaps. A large reply (a register in an organization of 10,000
//! users is 5 MB of JSON, built in pieces on several threads) leaves megabytes free in the
//! middle of the heaps, resident for good: `examples/scale` saw the server at 74 MiB after a
//! restart and 140-240 MiB after registers, account creations and presence had run, with
//! nothing more in use. A thread of its own looks every few seconds and asks glibc to hand
//! the free pages back (`malloc_trim`, which also releases whole free pages inside the
//! heaps) when the heaps hold more than a threshold free and the process has grown since
//! the last trim: trimmed pages stay counted as free, so the free count alone would call
//! for a trim at every look. The pages come back on demand; between two trims a busy server
//! reuses what it freed, so the cost is a few page faults per trim, not per request.
//!
//! On other platforms (and with other C libraries) this is a no-op.
//!
//! The only `unsafe` of the workspace: two calls into glibc that take no pointer and have
//! nothing for the caller to uphold (`unsafe_code` is denied everywhere else).
#![allow(unsafe_code)]

use std::time::{Duration, Instant};

use agora_actors::worker_thread::WorkerThread;

/// When to trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimRule {
    /// How often the memory is looked at.
    pub every: Duration,
    /// Free bytes in the allocator's heaps from which they are given back, once the
    /// process has grown by a quarter of this since the last trim.
    pub threshold: usize,
}

/// The trimming thread (a [`WorkerThread`]); stops when dropped.
pub struct Trimmer {
    _thread: Option<WorkerThread>,
}

impl Trimmer {
    /// Starts the thread (nothing where trimming is not supported).
    pub fn start(rule: TrimRule) -> std::io::Result<Trimmer> {
        if !SUPPORTED {
            return Ok(Trimmer { _thread: None });
        }
        let thread = WorkerThread::spawn("agora-trim", move |stop| {
            let mut trims = Trims::default();
            loop {
                stop.pause(rule.every);
                if stop.stopping() {
                    return;
                }
                trims.look(rule.threshold);
            }
        })?;
        Ok(Trimmer { _thread: Some(thread) })
    }
}

/// What the last trim left.
#[derive(Debug, Default)]
pub struct Trims {
    /// Resident bytes right after the last trim.
    resident_after: Option<usize>,
}

impl Trims {
    /// Gives the free memory back when the heaps hold more than `threshold` bytes free and
    /// the process has grown by `threshold / 4` since the last trim (always, the first
    /// time); returns whether it did.
    pub fn look(&mut self, threshold: usize) -> bool {
        let free = free_bytes();
        if free <= threshold {
            return false;
        }
        let resident = resident_bytes();
        if let (Some(after), Some(now)) = (self.resident_after, resident) {
            if now < after.saturating_add(threshold / 4) {
                return false;
            }
        }
        let started = Instant::now();
        trim();
        let after = resident_bytes();
        self.resident_after = after;
        tracing::debug!(
            free_mib = free >> 20,
            resident_mib_before = resident.map(|r| r >> 20),
            resident_mib_after = after.map(|r| r >> 20),
            micros = started.elapsed().as_micros() as u64,
            "memory given back"
        );
        metrics::counter!("agora_memory_trims_total").increment(1);
        true
    }
}

/// The process's resident memory, from `/proc/self/status`.
pub fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
const SUPPORTED: bool = true;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
const SUPPORTED: bool = false;

/// Bytes free in the allocator's heaps (all arenas), not counting its mapped blocks.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn free_bytes() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's statistics; it takes each arena's lock.
    let info = unsafe { libc::mallinfo2() };
    info.fordblks
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn free_bytes() -> usize {
    0
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes each arena's lock and releases free pages; no pointer of
    // ours is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn freed_memory_in_the_middle_of_the_heap_goes_back_once() {
        // 64 KiB blocks stay below glibc's mmap threshold: they are carved from the heap.
        // Every block is written (resident); all but the last are freed, and the last one
        // pins the heap's end, so only trimming can give the freed pages back. Other tests
        // of this process run meanwhile: the margins are wide.
        let blocks: Vec<Vec<u8>> = (0..1024).map(|i| vec![i as u8; 64 << 10]).collect();
        let mut blocks = blocks.into_iter();
        let pin = blocks.next_back().unwrap();
        drop(blocks);
        assert!(free_bytes() >= 60 << 20, "free: {}", free_bytes());
        let mut trims = Trims::default();
        let before = resident_bytes().unwrap();
        assert!(trims.look(32 << 20));
        let after = resident_bytes().unwrap();
        assert!(before.saturating_sub(after) >= 40 << 20, "resident {before} -> {after}");
        assert_eq!(pin[0], 255);
        // The pages given back still count as free: without new growth, no second trim.
        assert!(free_bytes() >= 60 << 20);
        assert!(!trims.look(32 << 20));
        // Below the threshold, nothing is looked at.
        assert!(!Trims::default().look(usize::MAX));
    }

    #[test]
    fn the_thread_stops_when_dropped() {
        // A threshold nothing reaches: this test must not trim under the other one.
        let trimmer = Trimmer::start(TrimRule { every: Duration::from_millis(5), threshold: usize::MAX }).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        drop(trimmer);
    }
}
