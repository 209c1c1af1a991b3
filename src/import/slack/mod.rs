//! Slack's workspace export: `users.json`, `channels.json`, `groups.json`, `dms.json`,
//! `mpims.json`, and a folder of daily JSON files per conversation.

use std::path::Path;

use agora_actors::transfer::ImportError;

/// Opens an unpacked Slack export.
pub fn open(_dir: &Path) -> Result<super::Opened, ImportError> {
    Err(ImportError::new("Slack exports cannot be imported yet"))
}
