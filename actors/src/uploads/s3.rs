//! Files on an S3-compatible object store (`[uploads] backend = "s3"`): the same [`Storage`]
//! as the local directory, so every upload, thumbnail, avatar, emoji and export goes there
//! with the same access rules (the server still answers every request for a file; the store
//! is never exposed to clients).
//!
//! - A file being written is spooled to a local temporary file and streamed to the store
//!   under its name when committed (a multipart upload past 8 MiB, so data exports of any
//!   size fit), so nobody can fetch a half-written object.
//! - A file being read is streamed into an unnamed temporary file, which the server then
//!   serves like a local file (memory stays small whatever the file's size).
//! - Thumbnails live under `thumbnail/<path_id>/`, as on disk, and go with their file.
//!
//! Requests are blocking (the callers run off the async threads: `web::block` and the
//! workers), signed with AWS Signature V4, by the maintained `rust-s3` crate.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use s3::creds::Credentials;
use s3::{Bucket, Region};

use super::storage::{valid_path_id, PendingFile, Spool, Storage, StoredFile};

/// Where the object store is and how to sign in.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Options {
    /// The service's base URL (`https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`).
    pub endpoint: String,
    pub region: String,
    pub bucket: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Address the bucket in the path (`endpoint/bucket/key`) rather than as a host name;
    /// what most S3-compatible servers expect.
    pub path_style: bool,
}

impl fmt::Debug for S3Options {
    /// Without the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Options")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("bucket", &self.bucket)
            .field("access_key_id", &self.access_key_id)
            .field("path_style", &self.path_style)
            .finish_non_exhaustive()
    }
}

/// Files in a bucket, spooled through a local directory.
pub struct S3Storage {
    bucket: Box<Bucket>,
    spool: PathBuf,
    counter: AtomicU64,
}

impl fmt::Debug for S3Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Storage").field("bucket", &self.bucket.name()).field("spool", &self.spool).finish()
    }
}

fn failed(what: &str, e: impl fmt::Display) -> io::Error {
    io::Error::other(format!("object store: {what}: {e}"))
}

/// A status that is no success, as an error naming what was asked.
fn check(what: &str, status: u16) -> io::Result<()> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(failed(what, format!("HTTP {status}")))
    }
}

impl S3Storage {
    /// The store of `options`, with its spool under `spool` (emptied: what a crash left
    /// there was never committed). Checks that the bucket answers, so that a wrong setting
    /// stops the server at start, not at the first upload.
    pub fn open(options: &S3Options, spool: &Path) -> io::Result<S3Storage> {
        if spool.exists() {
            fs::remove_dir_all(spool)?;
        }
        let storage = Self::attach(options, spool)?;
        storage.check_bucket()?;
        Ok(storage)
    }

    /// The store for a second process beside a running server (an import): its spool files
    /// are named by process id, so nothing of the server's is removed.
    pub fn attach(options: &S3Options, spool: &Path) -> io::Result<S3Storage> {
        fs::create_dir_all(spool)?;
        let region = Region::Custom { region: options.region.clone(), endpoint: options.endpoint.clone() };
        let credentials =
            Credentials::new(Some(&options.access_key_id), Some(&options.secret_access_key), None, None, None)
                .map_err(|e| failed("credentials", e))?;
        let mut bucket = Bucket::new(&options.bucket, region, credentials).map_err(|e| failed("bucket", e))?;
        if options.path_style {
            bucket = bucket.with_path_style();
        }
        // Per request, so per part of a large upload; a whole large download has this long.
        bucket.set_request_timeout(Some(Duration::from_secs(600)));
        Ok(S3Storage { bucket, spool: spool.to_path_buf(), counter: AtomicU64::new(0) })
    }

    /// Lists one key of the bucket: an error says what is wrong with the settings.
    fn check_bucket(&self) -> io::Result<()> {
        let (_, status) = self
            .bucket
            .list_page("/".into(), None, None, None, Some(1))
            .map_err(|e| failed(&format!("bucket {:?} at {}", self.bucket.name(), self.bucket.url()), e))?;
        check(&format!("bucket {:?}", self.bucket.name()), status)
    }

    /// Every key under `prefix` (which ends with `/`).
    fn keys_under(&self, prefix: &str) -> io::Result<Vec<String>> {
        let pages = self.bucket.list(prefix.to_owned(), None).map_err(|e| failed("list", e))?;
        Ok(pages.into_iter().flat_map(|page| page.contents.into_iter().map(|o| o.key)).collect())
    }

    fn delete_key(&self, key: &str) -> io::Result<()> {
        let response = self.bucket.delete_object(key).map_err(|e| failed("delete", e))?;
        // Removing what is not there is no error.
        match response.status_code() {
            404 => Ok(()),
            status => check("delete", status),
        }
    }

    fn delete_under(&self, prefix: &str) -> io::Result<()> {
        for key in self.keys_under(prefix)? {
            self.delete_key(&key)?;
        }
        Ok(())
    }
}

impl Storage for S3Storage {
    fn create(&self) -> io::Result<Box<dyn PendingFile>> {
        let spool = Spool::create(&self.spool, &self.counter)?;
        Ok(Box::new(S3Pending { bucket: self.bucket.clone(), spool }))
    }

    fn open(&self, path_id: &str) -> io::Result<Option<StoredFile>> {
        if !valid_path_id(path_id) {
            return Ok(None);
        }
        let mut file = tempfile::tempfile_in(&self.spool)?;
        let status = self.bucket.get_object_to_writer(path_id, &mut file).map_err(|e| failed("get", e))?;
        match status {
            404 => return Ok(None),
            status => check("get", status)?,
        }
        let len = file.stream_position()?;
        file.rewind()?;
        // The name only tells the type and the download name.
        Ok(Some(StoredFile { file, path: PathBuf::from(path_id), len }))
    }

    fn delete(&self, path_id: &str) -> io::Result<()> {
        if !valid_path_id(path_id) {
            return Ok(());
        }
        self.delete_key(path_id)?;
        self.delete_under(&format!("thumbnail/{path_id}/"))
    }

    fn delete_tree(&self, prefix: &str) -> io::Result<()> {
        if !valid_path_id(prefix) {
            return Ok(());
        }
        self.delete_under(&format!("{prefix}/"))?;
        self.delete_under(&format!("thumbnail/{prefix}/"))
    }
}

/// A file being written: spooled locally until committed.
struct S3Pending {
    bucket: Box<Bucket>,
    spool: Spool,
}

impl Write for S3Pending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.spool.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.spool.flush()
    }
}

impl PendingFile for S3Pending {
    fn written(&self) -> u64 {
        self.spool.written()
    }

    /// Streams the spool file to the store; the spool file goes when this is dropped.
    fn commit(mut self: Box<Self>, path_id: &str) -> io::Result<()> {
        if !valid_path_id(path_id) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "invalid path id"));
        }
        let mut file = File::open(self.spool.finish()?)?;
        let status = self.bucket.put_object_stream(&mut file, path_id).map_err(|e| failed("put", e))?;
        check("put", status)
    }

    fn reader(&mut self) -> io::Result<File> {
        self.spool.reader()
    }

    fn into_bytes(mut self: Box<Self>) -> io::Result<Vec<u8>> {
        self.spool.read_back()
    }
}
