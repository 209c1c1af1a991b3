//! Where uploaded bytes live, behind [`Storage`], so that an object store can be added
//! without touching the handlers: a file is written to a temporary place ([`PendingFile`])
//! and only then given its real name in one step ([`PendingFile::commit`]), so that a crash
//! never leaves a half-written file under a name someone can ask for.
//!
//! [`LocalStorage`] keeps files under a directory (the data directory's `uploads/`), with
//! temporary files in its `tmp/` (on the same file system, so the commit is a rename).
//! No path outside that directory is ever opened: path ids are checked segment by segment
//! (no empty, `.` or `..` segment, no separator, no control character), and no symbolic
//! link is followed on the way.

use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A place to keep uploaded files, named by their path ids (`2/5d/<random>/name.png`).
pub trait Storage: Send + Sync + Debug {
    /// Starts a new file: bytes written to it stay invisible until it is committed.
    fn create(&self) -> io::Result<Box<dyn PendingFile>>;

    /// Opens a stored file for reading; `None` if there is none by that id (or the id
    /// could not name one).
    fn open(&self, path_id: &str) -> io::Result<Option<StoredFile>>;

    /// Stores `bytes` under `path_id` at once (thumbnails, avatars, emoji), atomically.
    fn put(&self, path_id: &str, bytes: &[u8]) -> io::Result<()> {
        let mut file = self.create()?;
        file.write_all(bytes)?;
        file.commit(path_id)
    }

    /// Reads a whole stored file.
    fn read(&self, path_id: &str) -> io::Result<Option<Vec<u8>>> {
        use std::io::Read;
        match self.open(path_id)? {
            Some(mut stored) => {
                let mut bytes = Vec::with_capacity(stored.len as usize);
                stored.file.read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
            None => Ok(None),
        }
    }

    /// Removes a stored file and everything under its id (its thumbnails); removing what
    /// is not there is no error.
    fn delete(&self, path_id: &str) -> io::Result<()>;

    /// Removes every file whose path id starts with `prefix/` (an organization's files,
    /// when its import failed), thumbnails included.
    fn delete_tree(&self, prefix: &str) -> io::Result<()>;
}

/// A file being written. Dropped without [`PendingFile::commit`], it leaves nothing behind.
pub trait PendingFile: Write + Send {
    /// Bytes written so far.
    fn written(&self) -> u64;

    /// Gives the file its name: from now on `open(path_id)` finds it whole.
    fn commit(self: Box<Self>, path_id: &str) -> io::Result<()>;

    /// Reads back what was written and discards the file (small files that are made into
    /// something else: emoji, avatars).
    fn into_bytes(self: Box<Self>) -> io::Result<Vec<u8>>;

    /// What was written so far, to read from its start (an image's header, before the file
    /// is committed); the pending file is unchanged.
    fn reader(&mut self) -> io::Result<File>;
}

/// A stored file, opened, with where it lives (to serve it) and its length.
#[derive(Debug)]
pub struct StoredFile {
    pub file: File,
    pub path: PathBuf,
    pub len: u64,
}

/// Files under a local directory.
#[derive(Debug)]
pub struct LocalStorage {
    root: PathBuf,
    counter: AtomicU64,
}

impl LocalStorage {
    /// Storage under `root` (created if missing, with its `tmp/`). Temporary files left by
    /// a crash are removed.
    pub fn open(root: &Path) -> io::Result<LocalStorage> {
        let tmp = root.join("tmp");
        if tmp.exists() {
            fs::remove_dir_all(&tmp)?;
        }
        fs::create_dir_all(&tmp)?;
        Ok(LocalStorage { root: root.to_path_buf(), counter: AtomicU64::new(0) })
    }

    /// Storage under `root` for a second process beside a running server (an import): its
    /// temporary files are the server's to clean up, so none is removed here (each
    /// process's own temporary names carry its process id).
    pub fn attach(root: &Path) -> io::Result<LocalStorage> {
        fs::create_dir_all(root.join("tmp"))?;
        Ok(LocalStorage { root: root.to_path_buf(), counter: AtomicU64::new(0) })
    }

    /// The file a path id names, if it can name one under the root.
    fn resolve(&self, path_id: &str) -> Option<PathBuf> {
        if !valid_path_id(path_id) {
            return None;
        }
        let mut path = self.root.clone();
        for segment in path_id.split('/') {
            path.push(segment);
        }
        Some(path)
    }

    /// Whether any component from the root down to `path` is a symbolic link.
    fn through_link(&self, path: &Path) -> bool {
        let Ok(rest) = path.strip_prefix(&self.root) else {
            return true;
        };
        let mut at = self.root.clone();
        for component in rest.components() {
            at.push(component);
            if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return true;
            }
        }
        false
    }
}

/// Whether `path_id` is made of plain segments only.
pub fn valid_path_id(path_id: &str) -> bool {
    !path_id.is_empty()
        && path_id.len() <= 1024
        && path_id
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && !s.chars().any(|c| c.is_control() || c == '\\'))
        && Path::new(path_id).components().all(|c| matches!(c, Component::Normal(_)))
}

impl Storage for LocalStorage {
    fn create(&self) -> io::Result<Box<dyn PendingFile>> {
        let spool = Spool::create(&self.root.join("tmp"), &self.counter)?;
        Ok(Box::new(LocalPending { root: self.root.clone(), spool }))
    }

    fn open(&self, path_id: &str) -> io::Result<Option<StoredFile>> {
        let Some(path) = self.resolve(path_id) else {
            return Ok(None);
        };
        if self.through_link(&path) {
            return Ok(None);
        }
        match File::open(&path) {
            Ok(file) => {
                let meta = file.metadata()?;
                if !meta.is_file() {
                    return Ok(None);
                }
                Ok(Some(StoredFile { file, path, len: meta.len() }))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn delete(&self, path_id: &str) -> io::Result<()> {
        let Some(path) = self.resolve(path_id) else {
            return Ok(());
        };
        if self.through_link(&path) {
            return Ok(());
        }
        for result in [fs::remove_file(&path), fs::remove_dir_all(self.root.join("thumbnail").join(path_id))] {
            match result {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    fn delete_tree(&self, prefix: &str) -> io::Result<()> {
        let Some(path) = self.resolve(prefix) else {
            return Ok(());
        };
        if self.through_link(&path) {
            return Ok(());
        }
        for result in [fs::remove_dir_all(&path), fs::remove_dir_all(self.root.join("thumbnail").join(prefix))] {
            match result {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A file being written, under a storage's temporary directory (named by process id, so
/// two processes never clash): its bytes counted, readable before it is done, and removed
/// when dropped unless it was moved into place.
pub struct Spool {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    kept: bool,
}

impl Spool {
    /// A new spool file in `dir`, the `counter`'s next.
    pub fn create(dir: &Path, counter: &AtomicU64) -> io::Result<Spool> {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{}-{n}", std::process::id()));
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        Ok(Spool { path, file: Some(file), written: 0, kept: false })
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// What was written so far, to read from its start.
    pub fn reader(&mut self) -> io::Result<File> {
        self.flush()?;
        File::open(&self.path)
    }

    /// Everything written.
    pub fn read_back(&mut self) -> io::Result<Vec<u8>> {
        self.flush()?;
        fs::read(&self.path)
    }

    /// Ends the writing (on disk for good): the file's path, to move or to read.
    pub fn finish(&mut self) -> io::Result<&Path> {
        let file = self.file.take().ok_or_else(|| io::Error::other("file already committed"))?;
        file.sync_all()?;
        Ok(&self.path)
    }

    /// The file was moved into place: nothing to remove.
    pub fn keep(&mut self) {
        self.kept = true;
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let file = self.file.as_mut().ok_or_else(|| io::Error::other("file already committed"))?;
        let n = file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if !self.kept {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A temporary file of [`LocalStorage`], renamed into place when committed.
struct LocalPending {
    root: PathBuf,
    spool: Spool,
}

impl Write for LocalPending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.spool.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.spool.flush()
    }
}

impl PendingFile for LocalPending {
    fn written(&self) -> u64 {
        self.spool.written()
    }

    fn commit(mut self: Box<Self>, path_id: &str) -> io::Result<()> {
        if !valid_path_id(path_id) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "invalid path id"));
        }
        let target = path_id.split('/').fold(self.root.clone(), |p, s| p.join(s));
        let path = self.spool.finish()?.to_path_buf();
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::rename(&path, &target)?;
        self.spool.keep();
        Ok(())
    }

    fn into_bytes(mut self: Box<Self>) -> io::Result<Vec<u8>> {
        // Dropping it removes the temporary file.
        self.spool.read_back()
    }

    fn reader(&mut self) -> io::Result<File> {
        self.spool.reader()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_appear_whole_only_once_committed() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let mut pending = storage.create().unwrap();
        pending.write_all(b"hello ").unwrap();
        pending.write_all(b"world").unwrap();
        assert_eq!(pending.written(), 11);
        assert!(storage.open("2/ab/x/a.txt").unwrap().is_none());
        // What was written can be read before the commit, and the commit still has it all.
        let mut early = String::new();
        std::io::Read::read_to_string(&mut pending.reader().unwrap(), &mut early).unwrap();
        assert_eq!(early, "hello world");
        pending.commit("2/ab/x/a.txt").unwrap();
        assert_eq!(storage.read("2/ab/x/a.txt").unwrap().unwrap(), b"hello world");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
        storage.delete("2/ab/x/a.txt").unwrap();
        assert!(storage.open("2/ab/x/a.txt").unwrap().is_none());
        storage.delete("2/ab/x/a.txt").unwrap();
    }

    #[test]
    fn a_dropped_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        let mut pending = storage.create().unwrap();
        pending.write_all(b"half").unwrap();
        drop(pending);
        let mut pending = storage.create().unwrap();
        pending.write_all(b"small").unwrap();
        assert_eq!(pending.into_bytes().unwrap(), b"small");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn no_path_outside_the_root_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("uploads");
        let storage = LocalStorage::open(&root).unwrap();
        fs::write(dir.path().join("secret"), b"s").unwrap();
        for bad in ["../secret", "/etc/passwd", "2/../../secret", "2//x", "2/./x", "", "2/a\\..\\b", "2/\0"] {
            assert!(storage.open(bad).unwrap().is_none(), "{bad:?}");
            assert!(!valid_path_id(bad), "{bad:?}");
        }
        std::os::unix::fs::symlink(dir.path(), root.join("2")).unwrap();
        assert!(storage.open("2/secret").unwrap().is_none());
        fs::create_dir_all(root.join("3")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("3/link")).unwrap();
        assert!(storage.open("3/link").unwrap().is_none());
        // A directory is not a file.
        assert!(storage.open("3").unwrap().is_none());
    }
}
