//! Bringing an organization in from elsewhere (Zulip's export format, Slack, Mattermost):
//! every importer turns its input into a [`model::Organization`] and a stream of
//! [`model::Message`]s, and the [`writer::Writer`] writes them.
//!
//! The organization is written under a subdomain no request can name
//! ([`crate::store::transfer::IMPORTING`]), in transactions of a few thousand messages (so a
//! running server's other organizations are never held up for long), and is given its real
//! subdomain in one last step: it appears whole or not at all. A failure (or a crash, found
//! by the next import) removes every row and file of it.

pub mod export;
pub mod model;
mod remap;
pub mod writer;

use std::fmt;

/// What went wrong, and where in the input (a file, a line, an object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub place: Option<String>,
    pub what: String,
}

impl ImportError {
    /// A problem with the input at `place`.
    pub fn at(place: impl Into<String>, what: impl Into<String>) -> Self {
        ImportError { place: Some(place.into()), what: what.into() }
    }

    /// A problem not tied to a place in the input.
    pub fn new(what: impl Into<String>) -> Self {
        ImportError { place: None, what: what.into() }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(place) => write!(f, "{place}: {}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for ImportError {}

impl From<crate::store::StoreError> for ImportError {
    fn from(e: crate::store::StoreError) -> Self {
        ImportError::new(format!("database: {e}"))
    }
}

/// How far an import has come, for a progress bar or log lines.
pub trait Progress {
    /// A new stage (`"messages"`), with the number of items when known.
    fn stage(&mut self, name: &str, total: Option<u64>);
    /// `n` more items of the current stage are done.
    fn advance(&mut self, n: u64);
}

/// Progress nobody watches.
pub struct Quiet;

impl Progress for Quiet {
    fn stage(&mut self, _: &str, _: Option<u64>) {}
    fn advance(&mut self, _: u64) {}
}

/// Files of the input, by the names the input gives them.
pub trait Files {
    /// The file's bytes, or `None` when the input has no such file.
    fn open(&mut self, name: &str) -> std::io::Result<Option<Box<dyn std::io::Read + '_>>>;
}

/// An input without files.
pub struct NoFiles;

impl Files for NoFiles {
    fn open(&mut self, _: &str) -> std::io::Result<Option<Box<dyn std::io::Read + '_>>> {
        Ok(None)
    }
}

/// What an import brought in.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub realm_id: i64,
    pub subdomain: String,
    pub users: u64,
    pub channels: u64,
    pub messages: u64,
    pub reactions: u64,
    pub uploads: u64,
    /// Files the input named but did not hold (their links stay, leading nowhere).
    pub missing_files: u64,
    /// Password-reset mails queued.
    pub reset_mails: u64,
}
