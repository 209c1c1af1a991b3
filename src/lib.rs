//! Agora's server: settings, command line, HTTP layer and startup. The actors, domain state
//! and storage live in the `agora-actors` crate.

pub mod admin;
pub mod backup;
pub mod bootstrap;
pub mod cli;
pub mod datadir;
pub mod http;
pub mod import;
pub mod memory;
pub mod metrics;
pub mod push_cli;
pub mod settings;
pub mod startup;
pub mod telemetry;
