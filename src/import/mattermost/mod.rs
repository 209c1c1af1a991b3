//! Mattermost's bulk export (JSON lines), one team of it.

use std::path::Path;

use agora_actors::transfer::ImportError;

/// Opens an unpacked Mattermost bulk export, for the team named `team`.
pub fn open(_dir: &Path, _team: &str) -> Result<super::Opened, ImportError> {
    Err(ImportError::new("Mattermost exports cannot be imported yet"))
}
