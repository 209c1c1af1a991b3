//! The export worker: writes the archives administrators ask for (`POST /export/realm`) on a
//! thread of its own, never on an organization's actor. An export is begun from the
//! database, so one asked for just before a stop is written after the next start; one that
//! was under way at a crash is tried once more, then marked failed (as Zulip marks an export
//! its worker sees twice).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::Thread;
use std::time::Duration;

use super::{export, Scope};
use crate::ids::RealmId;
use crate::realm::exports::ExportType;
use crate::registry::Realms;
use crate::store::{self, exports::ExportRow, Store};
use crate::transfer::{ImportError, Quiet};
use crate::uploads::storage::Storage;
use crate::worker_thread::{StopFlag, WorkerThread};

static THREADS: Mutex<Vec<Thread>> = Mutex::new(Vec::new());

/// Longest sleep between two looks at the pending exports (a wake-up is never needed).
const IDLE: Duration = Duration::from_secs(60);

/// Beginnings after which an export is given up (the worker died during it).
const MAX_ATTEMPTS: i64 = 2;

/// Wakes the worker (an export was asked for).
pub fn wake() {
    if let Ok(threads) = THREADS.lock() {
        for t in threads.iter() {
            t.unpark();
        }
    }
}

/// The running worker; stops when dropped.
pub struct ExportWorker(WorkerThread);

impl ExportWorker {
    /// Starts the worker; temporary directories a previous run left are removed.
    pub fn start(
        store: Store,
        storage: Arc<dyn Storage>,
        realms: Realms,
        data_dir: PathBuf,
    ) -> std::io::Result<ExportWorker> {
        if let Ok(entries) = std::fs::read_dir(&data_dir) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(".export-") {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let thread =
            WorkerThread::spawn("agora-exports", move |stop| Worker { store, storage, realms, data_dir, stop }.run())?;
        if let (Ok(mut threads), Some(t)) = (THREADS.lock(), thread.thread()) {
            threads.push(t.clone());
        }
        Ok(ExportWorker(thread))
    }

    /// Stops the worker after the export under way.
    pub fn stop(&mut self) {
        if let (Ok(mut threads), Some(t)) = (THREADS.lock(), self.0.thread()) {
            let id = t.id();
            threads.retain(|t| t.id() != id);
        }
        self.0.stop();
    }
}

impl Drop for ExportWorker {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Worker {
    store: Store,
    storage: Arc<dyn Storage>,
    realms: Realms,
    data_dir: PathBuf,
    stop: StopFlag,
}

impl Worker {
    fn run(self) {
        while !self.stop.stopping() {
            let pending = self
                .store
                .conn()
                .map_err(|e| e.to_string())
                .and_then(|c| store::exports::pending(&c).map_err(|e| e.to_string()));
            match pending {
                Ok(rows) => {
                    for row in rows {
                        if self.stop.stopping() {
                            return;
                        }
                        self.one(&row);
                    }
                }
                Err(e) => tracing::error!(error = %e, "export worker: cannot read the pending exports"),
            }
            self.stop.pause(IDLE);
        }
    }

    fn one(&self, row: &ExportRow) {
        let now = crate::clock::now_micros() as f64 / 1e6;
        if row.attempts >= MAX_ATTEMPTS {
            tracing::error!(export.id = row.id, realm.id = %row.realm_id, "marking an export as failed: it was begun twice (a crash during it?)");
            let _ = self.store.write(|tx| store::exports::fail(tx, row.id, now));
            self.tell(row.realm_id);
            return;
        }
        if let Err(e) = self.store.write(|tx| store::exports::begin(tx, row.id)) {
            tracing::error!(error = %e, "export worker: cannot record the start of an export");
            return;
        }
        let started = std::time::Instant::now();
        let scope = match ExportType::from_stored(row.export_type) {
            ExportType::Public => Scope::Public,
            ExportType::FullWithConsent => Scope::Standard,
            ExportType::FullWithoutConsent => Scope::Full,
        };
        match self.write(row.realm_id, &scope) {
            Ok(path_id) => {
                let kept = self.store.write(|tx| store::exports::finish(tx, row.id, &path_id));
                if !matches!(kept, Ok(true)) {
                    // Deleted while it was being written.
                    let _ = self.storage.delete(&path_id);
                }
                tracing::info!(export.id = row.id, realm.id = %row.realm_id, ms = started.elapsed().as_millis() as u64, "data export written");
            }
            Err(e) => {
                tracing::error!(export.id = row.id, realm.id = %row.realm_id, error = %e, "data export failed");
                let _ =
                    self.store.write(|tx| store::exports::fail(tx, row.id, crate::clock::now_micros() as f64 / 1e6));
            }
        }
        self.tell(row.realm_id);
    }

    /// Writes the archive into the uploads storage; returns its path id.
    fn write(&self, realm: RealmId, scope: &Scope) -> Result<String, ImportError> {
        let temp = tempfile::Builder::new()
            .prefix(".export-")
            .tempdir_in(&self.data_dir)
            .map_err(|e| ImportError::new(format!("{}: {e}", self.data_dir.display())))?;
        let name = format!("zulip-export-{}", crate::secrets::new_api_key()[..8].to_lowercase());
        let dir = temp.path().join(&name);
        export(&self.store, self.storage.as_ref(), realm, scope, &dir, &mut Quiet)?;
        let token = crate::secrets::new_api_key()[..24].to_owned();
        let path_id = format!("user_avatars/exports/{}/{token}/{name}.tar.gz", realm.0);
        let mut pending = self.storage.create().map_err(|e| ImportError::new(format!("uploads: {e}")))?;
        pack(&dir, &name, &mut pending).map_err(|e| ImportError::new(format!("packing the export: {e}")))?;
        pending.commit(&path_id).map_err(|e| ImportError::new(format!("uploads: {e}")))?;
        Ok(path_id)
    }

    /// Tells the organization (if it runs) that its exports changed: its administrators
    /// get the list.
    fn tell(&self, realm: RealmId) {
        let subdomain =
            self.store.conn().ok().and_then(|c| store::realms::by_id(&c, realm).ok().flatten()).map(|r| r.subdomain);
        if let Some(handle) = subdomain.and_then(|s| self.realms.directory.get(&s)) {
            handle.addr.do_send(crate::realm::exports::ExportsChanged);
        }
    }
}

/// Writes `dir` as a gzip-compressed tar archive whose one top directory is `top`.
pub fn pack(dir: &Path, top: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(out, flate2::Compression::fast()));
    tar.append_dir_all(top, dir)?;
    tar.into_inner()?.finish()?;
    Ok(())
}
