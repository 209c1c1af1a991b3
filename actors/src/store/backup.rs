//! Consistent copies of a live database (SQLite's online backup API), and the checks a
//! copy passes before a server may use it.

use std::path::Path;
use std::time::Duration;

use std::time::Instant;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use super::{migrate, Store, StoreError, StoreResult};

/// How long a copy waits for a busy database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a copy holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// The copy's schema version (`PRAGMA user_version`).
    pub schema_version: i64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The schema version this build brings databases to.
pub fn current_schema_version() -> i64 {
    migrate::MIGRATIONS.len() as i64
}

impl Store {
    /// Copies the database to a new file `to` while others keep writing to it. The copy
    /// is made in one step of the backup API, which reads the whole database inside one
    /// read transaction: it holds exactly the transactions committed before the step
    /// began (in WAL mode writers are not held up meanwhile).
    /// The copy is created private to its owner (it holds API keys and password hashes);
    /// `to` must not exist yet.
    pub fn backup_to(&self, to: &Path) -> StoreResult<Copied> {
        {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(to)
                .map_err(|e| StoreError::Corrupt(format!("{}: {e}", to.display())))?;
        }
        let source = self.read_connection()?;
        let mut copy = Connection::open(to)?;
        {
            let backup = Backup::new(&source, &mut copy)?;
            // One step copies every page (-1). It may find the database busy (a writer's
            // checkpoint truncating the WAL): wait a little and try again.
            let mut busy_since = None;
            loop {
                match backup.step(-1)? {
                    StepResult::Done => break,
                    StepResult::More => {}
                    _ => {
                        let since = *busy_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > BUSY_TIMEOUT {
                            return Err(StoreError::Corrupt("the database stayed busy; try again".into()));
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
        }
        // A single file (no -wal beside it), fit to archive.
        copy.pragma_update(None, "journal_mode", "DELETE")?;
        let schema_version: i64 = copy.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        drop(copy);
        let bytes = std::fs::metadata(to).map_err(|e| StoreError::Corrupt(format!("{}: {e}", to.display())))?.len();
        Ok(Copied { schema_version, bytes })
    }
}

/// Checks a database file before a server uses it: SQLite's `quick_check` passes and its
/// schema is not newer than this build's. Returns its schema version.
pub fn check_file(path: &Path) -> StoreResult<i64> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let verdict: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    if verdict != "ok" {
        return Err(StoreError::Corrupt(format!("the database fails SQLite's quick_check: {verdict}")));
    }
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > current_schema_version() {
        return Err(StoreError::Corrupt(format!(
            "the database's schema (version {version}) is newer than this build's ({})",
            current_schema_version()
        )));
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_holds_what_was_committed_and_passes_the_checks() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write(|tx| {
                tx.execute("INSERT INTO realms (subdomain, name, date_created) VALUES ('x', 'X', 0)", [])
                    .map_err(StoreError::from)
            })
            .unwrap();
        let to = dir.path().join("copy.sqlite3");
        let copied = store.backup_to(&to).unwrap();
        assert_eq!(copied.schema_version, current_schema_version());
        assert_eq!(copied.bytes, std::fs::metadata(&to).unwrap().len());
        assert_eq!(check_file(&to).unwrap(), current_schema_version());
        let conn = Connection::open(&to).unwrap();
        let n: i64 = conn.query_row("SELECT count(*) FROM realms WHERE subdomain = 'x'", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "delete");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&to).unwrap().permissions().mode() & 0o777, 0o600);
        // Never over an existing file.
        assert!(store.backup_to(&to).is_err());
    }

    #[test]
    fn a_newer_or_damaged_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("newer.sqlite3");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", current_schema_version() + 1)).unwrap();
        drop(conn);
        assert!(check_file(&path).unwrap_err().to_string().contains("newer than this build"));
        let junk = dir.path().join("junk.sqlite3");
        std::fs::write(&junk, b"this is not a database, not at all, not even close....").unwrap();
        assert!(check_file(&junk).is_err());
    }
}
