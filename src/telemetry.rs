//! Logging through `tracing`, filtered by the `log` setting (or `RUST_LOG`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; later calls do nothing.
pub fn init(filter: &str) {
    let filter = std::env::var("RUST_LOG").ok().filter(|f| !f.is_empty()).unwrap_or_else(|| filter.to_owned());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("info")))
        .with_target(true)
        .try_init();
}
