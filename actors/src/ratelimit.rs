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
}

impl RateLimiter {
    /// A limiter enforcing `rule` per key.
    pub fn new(rule: Rule) -> Self {
        RateLimiter { rule, attempts: HashMap::new() }
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
        // Keep the map from growing without bound with keys nobody retries.
        if self.attempts.len() > 10_000 {
            self.attempts.retain(|_, v| v.back().is_some_and(|t| now.saturating_duration_since(*t) < window));
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
    fn clearing_resets_a_key() {
        let mut rl = RateLimiter::new(Rule { max: 1, window: Duration::from_secs(60) });
        let t0 = Instant::now();
        assert!(rl.attempt("a", t0).is_ok());
        assert!(rl.attempt("a", t0).is_err());
        rl.clear("a");
        assert!(rl.attempt("a", t0).is_ok());
    }
}
