//! SQLite storage: one file per data directory, WAL, numbered migrations.
//!
//! Every connection of the pool sets WAL, `synchronous` ([`Synchronous`]: `NORMAL` unless
//! the operator asks for `FULL`), a busy timeout and foreign keys. Writes go through [`Store::write`], which opens a `BEGIN IMMEDIATE` transaction so
//! that two writers never deadlock on lock upgrades.

pub mod attachments;
pub mod backup;
pub mod bots;
pub mod channels;
mod checkpoint;
pub mod client_devices;
pub mod drafts;
pub mod exports;
mod fixes;
pub mod groups;
pub mod invites;
pub mod linkifiers;
pub mod messages;
mod migrate;
pub mod narrow;
pub mod outbox;
pub mod playgrounds;
pub mod presence;
pub mod profile_fields;
pub mod push;
pub mod queues;
pub mod reactions;
pub mod realms;
pub mod scheduled;
pub mod stats;
pub mod submessages;
pub mod transfer;
pub mod user_data;
pub mod user_messages;
pub mod users;
pub mod views;
pub mod web_sessions;

use std::path::Path;
use std::time::{Duration, Instant};

use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::ApiError;

/// A failure of the storage layer. Never shown to clients: converting it into an
/// [`ApiError`] logs it and yields the generic 500.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("connection pool: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("bad stored value: {0}")]
    Corrupt(String),
    #[error("busy: {0}")]
    Busy(&'static str),
}

impl StoreError {
    /// Whether this is a UNIQUE constraint violation (not CHECK or FOREIGN KEY).
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        tracing::error!(error = %err, "storage failure");
        ApiError::internal()
    }
}

/// Result of a storage call.
pub type StoreResult<T> = Result<T, StoreError>;

/// How hard a commit is pushed to the disk: SQLite's `synchronous` (in WAL mode).
///
/// Both keep the database consistent after a crash of the process, the operating system
/// or the machine: nothing is ever half-written. They differ in what a power loss or an
/// operating-system crash (not a crash of the server alone) may take back:
/// - `Normal`: the write-ahead log is flushed to the disk only when it is checkpointed
///   (every 100 ms by a server's checkpoint thread, else about every 1000 pages), so the
///   last transactions committed before the loss may be rolled back, acknowledged
///   messages included. No fsync per commit.
/// - `Full`: the log is flushed at every commit, so whatever was acknowledged survives,
///   at the cost of one fsync per transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    #[default]
    Normal,
    Full,
}

impl Synchronous {
    /// `normal` or `full` (any case).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Some(Synchronous::Normal),
            "full" => Some(Synchronous::Full),
            _ => None,
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

/// A pool of connections to the data directory's database.
#[derive(Clone)]
pub struct Store {
    pool: Pool<SqliteConnectionManager>,
    path: std::path::PathBuf,
    synchronous: Synchronous,
    /// The log's threshold for checkpoints by the connections themselves (pages).
    autocheckpoint: u32,
    /// A server's store checkpoints on a thread of its own (`checkpoint.rs`).
    _checkpointer: Option<std::sync::Arc<checkpoint::Checkpointer>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("connections", &self.pool.state().connections).finish()
    }
}

/// Name of the database file inside a data directory.
pub const DB_FILE: &str = "agora.sqlite3";

impl Store {
    /// Opens (creating if needed) the database of `data_dir` and applies pending migrations.
    pub fn open(data_dir: &Path) -> StoreResult<Store> {
        Self::open_with(data_dir, Synchronous::default())
    }

    /// Opens the database of `data_dir`, committing as `synchronous` says.
    pub fn open_with(data_dir: &Path, synchronous: Synchronous) -> StoreResult<Store> {
        Self::open_file_with(&data_dir.join(DB_FILE), synchronous, 1000)
    }

    /// Opens the database of `data_dir` for a running server: as [`Store::open_with`], with
    /// the write-ahead log checkpointed on a thread of its own rather than by the commit
    /// that fills it (see `checkpoint.rs`).
    pub fn open_for_server(data_dir: &Path, synchronous: Synchronous) -> StoreResult<Store> {
        let mut store = Self::open_file_with(&data_dir.join(DB_FILE), synchronous, checkpoint::SAFETY_PAGES)?;
        let mut conn = Connection::open(&store.path)?;
        configure(&mut conn, synchronous, checkpoint::SAFETY_PAGES)?;
        let checkpointer = checkpoint::Checkpointer::start(conn)
            .map_err(|e| StoreError::Corrupt(format!("cannot start the checkpoint thread: {e}")))?;
        store._checkpointer = Some(std::sync::Arc::new(checkpointer));
        Ok(store)
    }

    /// Opens the database at `path`.
    pub fn open_file(path: &Path) -> StoreResult<Store> {
        Self::open_file_with(path, Synchronous::default(), 1000)
    }

    fn open_file_with(path: &Path, synchronous: Synchronous, autocheckpoint: u32) -> StoreResult<Store> {
        // The database holds API keys: create it private. SQLite gives its -wal and -shm
        // files the same mode.
        if !path.exists() {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| StoreError::Corrupt(format!("cannot create {}: {e}", path.display())))?;
        }
        // WAL is a property of the file: switch it once, before several connections race
        // to do it.
        let first = Connection::open(path)?;
        first.busy_timeout(Duration::from_secs(5))?;
        first.pragma_update(None, "journal_mode", "WAL")?;
        drop(first);
        let manager = SqliteConnectionManager::file(path).with_init(move |c| configure(c, synchronous, autocheckpoint));
        let pool =
            Pool::builder().max_size(8).min_idle(Some(1)).connection_timeout(Duration::from_secs(10)).build(manager)?;
        let mut conn = pool.get()?;
        migrate::apply(&mut conn)?;
        Ok(Store { pool, path: path.to_owned(), synchronous, autocheckpoint, _checkpointer: None })
    }

    /// A connection of its own for a reader thread: read-only (`query_only`), so that a
    /// read can never write, and outside the pool, so that long reads never keep writers
    /// waiting for a connection.
    pub fn read_connection(&self) -> StoreResult<Connection> {
        let mut conn = Connection::open(&self.path)?;
        configure(&mut conn, self.synchronous, self.autocheckpoint)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(conn)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A connection for reads.
    pub fn conn(&self) -> StoreResult<PooledConnection<SqliteConnectionManager>> {
        Ok(self.pool.get()?)
    }

    /// Copies the whole write-ahead log into the database and truncates it to nothing
    /// (`wal_checkpoint(TRUNCATE)`), waiting (up to the busy timeout) for the readers still
    /// on it; used after a large write such as the save of every event queue at a stop.
    /// A checkpoint already running elsewhere (the server's checkpoint thread) makes it
    /// answer "busy" at once, and a reader may hold the log: it tries again, each try
    /// waiting at most 100 ms, for two seconds in all (a stop must not hang on a long read;
    /// the log is then only cut back later).
    pub fn checkpoint_truncate(&self) -> StoreResult<()> {
        let conn = self.conn()?;
        conn.busy_timeout(Duration::from_millis(100))?;
        let deadline = Instant::now() + Duration::from_secs(2);
        let outcome = loop {
            let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
            if busy == 0 {
                break Ok(());
            }
            if Instant::now() >= deadline {
                break Err(StoreError::Busy("the log stayed in use for two seconds"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        conn.busy_timeout(Duration::from_secs(5))?;
        outcome
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction and commits if it returns `Ok`.
    /// Errors of `f` roll the transaction back.
    pub fn write<T, E>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.conn()?;
        let started = Instant::now();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from)?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::from)?;
        // From BEGIN (waiting for the write lock included) to the end of COMMIT.
        metrics::histogram!("agora_sqlite_transaction_seconds").record(started.elapsed());
        Ok(out)
    }

    /// [`Store::write`] without foreign-key checks, for an import's batches of rows whose
    /// references the importer has resolved itself (each check is a lookup per row). The
    /// connection checks again afterwards.
    pub fn write_unchecked<T, E>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.conn()?;
        conn.pragma_update(None, "foreign_keys", false).map_err(StoreError::from)?;
        let out = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from)?;
            let out = f(&tx)?;
            tx.commit().map_err(StoreError::from)?;
            Ok(out)
        })();
        conn.pragma_update(None, "foreign_keys", true).map_err(StoreError::from)?;
        out
    }
}

/// Runs `f` inside a savepoint of the open transaction: kept when it returns `Ok`, rolled
/// back (and nothing else of the transaction with it) when it returns `Err`. One change
/// of a group commit is written this way, so that its failure never touches the others.
pub fn within_savepoint<T, E>(tx: &Transaction<'_>, f: impl FnOnce() -> Result<T, E>) -> Result<T, E>
where
    E: From<StoreError>,
{
    tx.execute_batch("SAVEPOINT change").map_err(StoreError::from)?;
    match f() {
        Ok(out) => {
            tx.execute_batch("RELEASE change").map_err(StoreError::from)?;
            Ok(out)
        }
        Err(e) => {
            tx.execute_batch("ROLLBACK TO change; RELEASE change").map_err(StoreError::from)?;
            Err(e)
        }
    }
}

/// The size the write-ahead log is cut back to whenever a checkpoint has copied all of it
/// into the database (SQLite's `journal_size_limit`): one large transaction (a save of
/// many event queues, a backup's copy) would otherwise leave the file as large as it grew.
pub const JOURNAL_SIZE_LIMIT: i64 = 64 << 20;

/// Per-connection settings.
fn configure(conn: &mut Connection, synchronous: Synchronous, autocheckpoint: u32) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // The hot paths keep their statements prepared (`prepare_cached`); more of them than
    // rusqlite's default 16 are in use on a writer connection.
    conn.set_prepared_statement_cache_capacity(64);
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = {autocheckpoint}; \
         PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT};",
        synchronous.pragma()
    ))
}

/// Reads a boolean stored as an integer.
pub(crate) fn flag(v: i64) -> bool {
    v != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_applies_migrations_and_pragmas_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn().unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, migrate::MIGRATIONS.len() as i64);
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let fk: i64 = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
        assert_eq!(fk, 1);
        drop(conn);
        drop(store);
        // Reopening applies nothing twice.
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn().unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, migrate::MIGRATIONS.len() as i64);
    }

    #[test]
    fn a_database_of_a_newer_build_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        let newer = migrate::MIGRATIONS.len() as i64 + 1;
        let file = dir.path().join("agora.sqlite3");
        Connection::open(&file).unwrap().execute_batch(&format!("PRAGMA user_version = {newer}")).unwrap();
        let Err(err) = Store::open(dir.path()) else { panic!("a newer schema is refused") };
        let err = err.to_string();
        assert_eq!(
            err,
            format!(
                "bad stored value: the database's schema (version {newer}) is newer than this build's ({}): run the \
                 newer agora, or restore a backup made before the upgrade",
                newer - 1
            )
        );
        let version: i64 = Connection::open(&file).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, newer);
    }

    #[test]
    fn a_failed_savepoint_rolls_back_only_its_own_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let insert = |tx: &Transaction<'_>, name: &str| {
            tx.execute("INSERT INTO realms (subdomain, name, date_created) VALUES (?1, ?1, 0)", [name]).map(|_| ())
        };
        store
            .write(|tx| {
                within_savepoint::<_, StoreError>(tx, || Ok(insert(tx, "a")?))?;
                let failed = within_savepoint::<(), StoreError>(tx, || {
                    insert(tx, "b")?;
                    Err(StoreError::Corrupt("refused".into()))
                });
                assert!(failed.is_err());
                within_savepoint::<_, StoreError>(tx, || Ok(insert(tx, "c")?))
            })
            .unwrap();
        let conn = store.conn().unwrap();
        let mut stmt =
            conn.prepare("SELECT subdomain FROM realms WHERE subdomain IN ('a', 'b', 'c') ORDER BY 1").unwrap();
        let names: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        assert_eq!(names, ["a", "c"]);
    }

    #[test]
    fn a_servers_log_is_checkpointed_by_its_own_thread() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_for_server(dir.path(), Synchronous::Normal).unwrap();
        let pages: i64 = store.conn().unwrap().query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).unwrap();
        assert_eq!(pages, i64::from(checkpoint::SAFETY_PAGES));
        let file = dir.path().join(DB_FILE);
        let before = std::fs::metadata(&file).unwrap().len();
        // About 1 MB in the log: far below the connections' own threshold.
        store
            .write::<_, StoreError>(|tx| {
                let name = "x".repeat(1000);
                for i in 0..1000 {
                    tx.execute(
                        "INSERT INTO realms (subdomain, name, date_created) VALUES (?1, ?2, 0)",
                        rusqlite::params![format!("r{i}"), name],
                    )?;
                }
                Ok(())
            })
            .unwrap();
        // The database file grows once the log is copied into it, which only the thread does.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::metadata(&file).unwrap().len() < before + 1_000_000 {
            assert!(Instant::now() < deadline, "no checkpoint within 10 s");
            std::thread::sleep(checkpoint::EVERY);
        }
        // Dropping the store stops the thread.
        drop(store);
    }

    #[test]
    fn synchronous_is_normal_unless_full_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let read =
            |store: &Store| -> i64 { store.conn().unwrap().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap() };
        // SQLite's numbers: 1 NORMAL, 2 FULL.
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(read(&store), 1);
        drop(store);
        let store = Store::open_with(dir.path(), Synchronous::Full).unwrap();
        assert_eq!(read(&store), 2);
        let reader = store.read_connection().unwrap();
        assert_eq!(reader.query_row("PRAGMA synchronous", [], |r| r.get::<_, i64>(0)).unwrap(), 2);
        assert_eq!(Synchronous::parse(" FULL "), Some(Synchronous::Full));
        assert_eq!(Synchronous::parse("normal"), Some(Synchronous::Normal));
        assert_eq!(Synchronous::parse("off"), None);
    }

    #[test]
    fn failed_writes_roll_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let res: Result<(), StoreError> = store.write(|tx| {
            tx.execute("INSERT INTO realms (subdomain, name, date_created) VALUES ('x', 'X', 0)", [])?;
            Err(StoreError::Corrupt("abort".into()))
        });
        assert!(res.is_err());
        let n: i64 = store.conn().unwrap().query_row("SELECT count(*) FROM realms", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 0);
    }
}
