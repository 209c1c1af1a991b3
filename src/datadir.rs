//! The data directory: created private, and locked by the one server that uses it.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// The lock file; a running server holds an exclusive lock on it.
pub const LOCK_FILE: &str = "agora.lock";

/// Creates the directory (mode 0700) if it does not exist.
pub fn ensure(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    Ok(())
}

/// Takes the directory's exclusive lock: `None` if another process holds it.
pub fn lock(dir: &Path) -> io::Result<Option<File>> {
    let file = OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(dir.join(LOCK_FILE))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Writes a file only its owner can read.
pub fn write_private(path: &Path, contents: &str) -> io::Result<()> {
    use std::io::Write;
    let mut file = OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(path)?;
    file.write_all(contents.as_bytes())
}
