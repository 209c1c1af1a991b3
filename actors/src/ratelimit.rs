//! Sliding-window rate limiting, as Zulip's `RateLimitedObject` rules: at most `max`
//! attempts in any `window`.
//!
//! Time is passed in, so the limiter is plain data and tests need no clock.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// One rule: `max` attempts per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub max: usize,
    pub window: Duration,
}

/// Attempts per key within the window.
#[derive(Debug)]
pub struct RateLimiter {
    rule: Rule,
    attempts: HashMap<String, VecDeque<Instant>>,
    /// Size of `attempts` above which keys without a recent attempt are dropped.
    sweep_above: usize,
}

/// Keys kept before the first sweep.
const SWEEP_FLOOR: usize = 10_000;

impl RateLimiter {
    /// A limiter enforcing `rule` per key.
    pub fn new(rule: Rule) -> Self {
        RateLimiter { rule, attempts: HashMap::new(), sweep_above: SWEEP_FLOOR }
    }

    /// Records an attempt for `key` at `now`, or refuses it. A refusal says how long until
    /// the oldest attempt in the window expires; refused attempts are not recorded.
    pub fn attempt(&mut self, key: &str, now: Instant) -> Result<(), Duration> {
        if self.rule.max == 0 {
            return Err(self.rule.window);
        }
        let window = self.rule.window;
        let entry = self.attempts.entry(key.to_owned()).or_default();
        while entry.front().is_some_and(|t| now.saturating_duration_since(*t) >= window) {
            entry.pop_front();
        }
        if entry.len() >= self.rule.max {
            let oldest = entry.front().copied().unwrap_or(now);
            return Err(window.saturating_sub(now.saturating_duration_since(oldest)));
        }
        entry.push_back(now);
        // Keep the map from growing without bound with keys nobody retries. The next sweep
        // waits until the map has doubled, so that many keys still within their window
        // (made-up usernames, say) cost each attempt O(1) amortized, not a full scan.
        if self.attempts.len() > self.sweep_above {
            self.attempts.retain(|_, v| v.back().is_some_and(|t| now.saturating_duration_since(*t) < window));
            self.sweep_above = (self.attempts.len() * 2).max(SWEEP_FLOOR);
        }
        Ok(())
    }

    /// Forgets the history of `key` (after a successful login, as Zulip does).
    pub fn clear(&mut self, key: &str) {
        self.attempts.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_the_limit_until_the_window_slides() {
        let rule = Rule { max: 3, window: Duration::from_secs(60) };
        let mut rl = RateLimiter::new(rule);
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(rl.attempt("a", t0 + Duration::from_secs(i)).is_ok());
        }
        let wait = rl.attempt("a", t0 + Duration::from_secs(10)).unwrap_err();
        assert_eq!(wait, Duration::from_secs(50));
        // Other keys are independent.
        assert!(rl.attempt("b", t0 + Duration::from_secs(10)).is_ok());
        // The first attempt leaves the window at t0+60.
        assert!(rl.attempt("a", t0 + Duration::from_secs(60)).is_ok());
        assert!(rl.attempt("a", t0 + Duration::from_secs(60)).is_err());
    }

    #[test]
    fn keys_past_their_window_are_swept_and_sweeps_are_spaced() {
        let mut rl = RateLimiter::new(Rule { max: 1, window: Duration::from_secs(60) });
        let t0 = Instant::now();
        for i in 0..=SWEEP_FLOOR {
            assert!(rl.attempt(&format!("old{i}"), t0).is_ok());
        }
        // Every key was still within its window: all are kept, and the next sweep waits
        // until there are twice as many.
        assert_eq!(rl.attempts.len(), SWEEP_FLOOR + 1);
        assert_eq!(rl.sweep_above, 2 * (SWEEP_FLOOR + 1));
        // A minute later the old keys have left their window and go at the next sweep.
        let t1 = t0 + Duration::from_secs(60);
        for i in 0..=SWEEP_FLOOR + 1 {
            assert!(rl.attempt(&format!("new{i}"), t1).is_ok());
        }
        assert_eq!(rl.attempts.len(), SWEEP_FLOOR + 2);
        assert!(rl.attempts.keys().all(|k| k.starts_with("new")));
    }

    #[test]
    fn clearing_resets_a_key() {
        let mut rl = RateLimiter::new(Rule { max: 1, window: Duration::from_secs(60) });
        let t0 = Instant::now();
        assert!(rl.attempt("a", t0).is_ok());
        assert!(rl.attempt("a", t0).is_err());
        rl.clear("a");
        assert!(rl.attempt("a", t0).is_ok());
    }
}
