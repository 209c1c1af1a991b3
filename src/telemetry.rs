//! Logging through `tracing` to stderr, filtered by the `log` setting, as text for people
//! or as one JSON object per line for log collectors (`log_format`).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tracing::{Event, Level, Metadata};
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One human-readable line per event (colored on a terminal).
    #[default]
    Text,
    /// One JSON object per event: `timestamp`, `level`, `target`, the event's fields at the
    /// top level (`message`, `request_id`, `status`, ...), and `span` with the fields of the
    /// request it happened in (its `request_id`).
    Json,
}

impl LogFormat {
    /// `text` or `json` (any case).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

/// Installs the global subscriber; later calls do nothing.
pub fn init(filter: &str, format: LogFormat) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let throttle = ProtocolErrors::new(Duration::from_secs(60));
    let registry = tracing_subscriber::registry().with(filter);
    let _ = match format {
        LogFormat::Text => registry.with(text_layer(std::io::stderr).with_filter(throttle)).try_init(),
        LogFormat::Json => registry.with(json_layer(std::io::stderr).with_filter(throttle)).try_init(),
    };
}

fn text_layer<S, W>(writer: W) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt::layer().with_writer(writer).with_ansi(std::io::stderr().is_terminal()).with_target(true)
}

/// The JSON lines: fields flattened, the current span (the request) without the list of
/// its parents.
fn json_layer<S, W>(writer: W) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt::layer()
        .json()
        .flatten_event(true)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(true)
        .with_writer(writer)
}

/// Turns actix-http's reports of malformed requests (a bad header, a broken chunk), which it
/// logs at ERROR, into at most one WARN line per `every`: they are the client's errors, not
/// the server's, and anyone who can open a connection could otherwise write a line per
/// request.
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
        if !Self::is_protocol_error(event.metadata()) {
            return true;
        }
        if self.admit(Instant::now()) {
            let mut message = MessageText::default();
            event.record(&mut message);
            tracing::warn!(target: "agora::http", error = %message.0, "a client sent a malformed request (more are not logged for a minute)");
        }
        false
    }
}

/// The `message` of an event.
#[derive(Default)]
struct MessageText(String);

impl tracing::field::Visit for MessageText {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_owned();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_lines_carry_the_fields_and_the_request_span() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::registry().with(json_layer(move || writer.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request", request_id = "abc123");
            let _entered = span.enter();
            tracing::warn!(target: "agora::test", { user.id = 7 }, "something happened");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        let line: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["target"], "agora::test");
        assert_eq!(line["message"], "something happened");
        assert_eq!(line["user.id"], 7);
        assert_eq!(line["span"], serde_json::json!({"name": "request", "request_id": "abc123"}));
        assert!(line["timestamp"].is_string());
        assert_eq!(LogFormat::parse("JSON"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("xml"), None);
    }

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
