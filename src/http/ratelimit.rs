//! Zulip's general API rate limits (`api_by_user`, `api_by_ip`): at most `max` requests per
//! `window` per key, checked on every request that reaches a route.
//!
//! Each key keeps one instant, as Zulip's in-memory backend (the one its Tornado process
//! uses) keeps one "reset time" per key: the generic cell rate algorithm. A request moves
//! the key's instant `window / max` later (from now, if the instant lies in the past); a
//! request that would move it more than `window` ahead is refused. A key may so burst `max`
//! requests, then make one every `window / max`; what it has left and when it is whole
//! again are read off that one instant.
//!
//! Keys are spread over shards, each a small map behind its own mutex, held for the few
//! dozen nanoseconds a lookup takes: no actor hop, and threads rarely meet on a lock. A key
//! whose instant has passed is the same as an absent key, so each shard drops those when it
//! is swept, at most once per window: an idle key is gone a window after its last request,
//! and memory follows the keys seen in the last window.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use agora_actors::ratelimit::Rule;

/// Shards per limiter: enough that two HTTP workers seldom want the same one.
const SHARDS: usize = 32;

/// What the limiter said about one request: the numbers of the `X-RateLimit-*` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// The rule's `max`.
    pub limit: usize,
    /// Requests left at once (0 when refused).
    pub remaining: usize,
    /// Allowed: until the key's budget is whole again. Refused: until a request is allowed.
    pub reset_after: Duration,
}

/// One rule, applied per key.
#[derive(Debug)]
pub struct KeyedLimiter<K> {
    max: usize,
    /// `window / max`, in nanoseconds since `epoch`.
    step: u64,
    window: u64,
    epoch: Instant,
    hasher: RandomState,
    shards: Box<[Mutex<Shard<K>>]>,
}

#[derive(Debug)]
struct Shard<K> {
    /// Each key's instant (nanoseconds since the epoch).
    reset: HashMap<K, u64>,
    last_sweep: u64,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl<K: Hash + Eq> KeyedLimiter<K> {
    /// A limiter enforcing `rule` per key (a rule of 0 requests is taken as 1).
    pub fn new(rule: Rule, now: Instant) -> Self {
        let max = rule.max.max(1);
        let window = nanos(rule.window).max(1);
        let shards = (0..SHARDS).map(|_| Mutex::new(Shard { reset: HashMap::new(), last_sweep: 0 })).collect();
        KeyedLimiter { max, step: (window / max as u64).max(1), window, epoch: now, hasher: RandomState::new(), shards }
    }

    /// Counts a request of `key` at `now`, or refuses it (a refused request is not counted).
    pub fn check(&self, key: K, now: Instant) -> Verdict {
        let now = nanos(now.saturating_duration_since(self.epoch));
        let shard = &self.shards[(self.hasher.hash_one(&key) % SHARDS as u64) as usize];
        let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
        if now.saturating_sub(shard.last_sweep) >= self.window {
            shard.reset.retain(|_, reset| *reset > now);
            shard.last_sweep = now;
        }
        let from = shard.reset.get(&key).map_or(now, |reset| (*reset).max(now));
        let next = from.saturating_add(self.step);
        let horizon = now.saturating_add(self.window);
        if next > horizon {
            let wait = Duration::from_nanos(next - horizon);
            return Verdict { allowed: false, limit: self.max, remaining: 0, reset_after: wait };
        }
        shard.reset.insert(key, next);
        let left = u128::from(horizon - next) * self.max as u128 / u128::from(self.window);
        Verdict {
            allowed: true,
            limit: self.max,
            remaining: usize::try_from(left).unwrap_or(usize::MAX),
            reset_after: Duration::from_nanos(next - now),
        }
    }

    /// Keys currently held, across shards (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).reset.len()).sum()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_key_bursts_its_budget_then_waits_for_the_next_slot() {
        let t0 = Instant::now();
        let limiter = KeyedLimiter::new(Rule { max: 3, window: secs(60) }, t0);
        let remaining: Vec<(bool, usize, Duration)> =
            (0..4).map(|_| limiter.check("a", t0)).map(|v| (v.allowed, v.remaining, v.reset_after)).collect();
        assert_eq!(
            remaining,
            vec![(true, 2, secs(20)), (true, 1, secs(40)), (true, 0, secs(60)), (false, 0, secs(20))]
        );
        assert_eq!(limiter.check("a", t0).limit, 3);
        // Other keys have budgets of their own.
        assert!(limiter.check("b", t0).allowed);
        // One slot frees up every window / max.
        assert!(!limiter.check("a", t0 + secs(19)).allowed);
        let later = limiter.check("a", t0 + secs(20));
        assert_eq!((later.allowed, later.remaining, later.reset_after), (true, 0, secs(60)));
        // A key idle for a whole window is whole again.
        let idle = limiter.check("a", t0 + secs(200));
        assert_eq!((idle.allowed, idle.remaining), (true, 2));
    }

    #[test]
    fn refused_requests_are_not_counted() {
        let t0 = Instant::now();
        let limiter = KeyedLimiter::new(Rule { max: 1, window: secs(10) }, t0);
        assert!(limiter.check(1, t0).allowed);
        for _ in 0..100 {
            assert_eq!(limiter.check(1, t0 + secs(5)).reset_after, secs(5));
        }
        assert!(limiter.check(1, t0 + secs(10)).allowed);
    }

    #[test]
    fn idle_keys_are_dropped_a_window_after_their_last_request() {
        let t0 = Instant::now();
        let limiter = KeyedLimiter::new(Rule { max: 200, window: secs(60) }, t0);
        for key in 0..10_000u32 {
            assert!(limiter.check(key, t0).allowed);
        }
        assert_eq!(limiter.len(), 10_000);
        // Requests a window later sweep every shard they land in; the keys of the shards
        // they miss go at those shards' next use.
        for key in 10_000..10_000 + 4 * SHARDS as u32 {
            assert!(limiter.check(key, t0 + secs(61)).allowed);
        }
        assert!(limiter.len() < 10_000 / 4, "{}", limiter.len());
        assert!(!limiter.is_empty());
    }

    #[test]
    fn shared_between_threads() {
        let t0 = Instant::now();
        let limiter = std::sync::Arc::new(KeyedLimiter::new(Rule { max: 1000, window: secs(60) }, t0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let limiter = std::sync::Arc::clone(&limiter);
                std::thread::spawn(move || (0..500).filter(|_| limiter.check("shared", t0).allowed).count())
            })
            .collect();
        let allowed: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(allowed, 1000);
    }
}
