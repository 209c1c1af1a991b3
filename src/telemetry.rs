//! Logging through `tracing` to stderr, filtered by the `log` setting.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tracing::{Event, Level, Metadata};
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Installs the global subscriber; later calls do nothing.
pub fn init(filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true)
        .with_filter(ProtocolErrors::new(Duration::from_secs(60)));
    let _ = tracing_subscriber::registry().with(filter).with(output).try_init();
}

/// Lets through at most one warning or error of actix-http's connection handling per
/// `every`. actix-http logs each malformed request (a bad header, a broken chunk) at ERROR:
/// anyone who can open a connection could otherwise write a log line per request.
pub struct ProtocolErrors {
    every: Duration,
    start: Instant,
    /// When the last one went through, in milliseconds since `start`, plus one (0: never).
    last: AtomicU64,
}

impl ProtocolErrors {
    /// At most one protocol error per `every`.
    pub fn new(every: Duration) -> Self {
        ProtocolErrors { every, start: Instant::now(), last: AtomicU64::new(0) }
    }

    fn is_protocol_error(meta: &Metadata<'_>) -> bool {
        meta.target().starts_with("actix_http::") && *meta.level() <= Level::WARN
    }

    /// Whether one may go through at `now`; if so, it is counted.
    fn admit(&self, now: Instant) -> bool {
        let now = u64::try_from(now.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX) + 1;
        let every = u64::try_from(self.every.as_millis()).unwrap_or(u64::MAX);
        let last = self.last.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < every {
            return false;
        }
        // Of two threads racing for the same slot, one wins.
        self.last.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }
}

impl<S> Filter<S> for ProtocolErrors {
    fn enabled(&self, _: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        true
    }

    fn event_enabled(&self, event: &Event<'_>, _: &Context<'_, S>) -> bool {
        !Self::is_protocol_error(event.metadata()) || self.admit(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_protocol_error_per_period() {
        let throttle = ProtocolErrors::new(Duration::from_secs(60));
        let t0 = throttle.start;
        assert!(throttle.admit(t0));
        assert!(!throttle.admit(t0 + Duration::from_secs(1)));
        assert!(!throttle.admit(t0 + Duration::from_secs(59)));
        assert!(throttle.admit(t0 + Duration::from_secs(60)));
        assert!(!throttle.admit(t0 + Duration::from_secs(61)));
    }
}
