//! The `[uploads]` table's store: a local directory or an S3-compatible object store.

use std::path::Path;
use std::sync::Arc;

use agora_actors::uploads::s3::{S3Options, S3Storage};
use agora_actors::uploads::{LocalStorage, Storage};
use serde::Deserialize;

use super::SettingsError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileUploads {
    pub(super) max_file_upload_size_mib: Option<u64>,
    pub(super) timeout_secs: Option<u64>,
    pub(super) idle_timeout_secs: Option<u64>,
    backend: Option<String>,
    s3_endpoint: Option<String>,
    s3_region: Option<String>,
    s3_bucket: Option<String>,
    s3_access_key_id: Option<String>,
    s3_secret_access_key: Option<String>,
    s3_path_style: Option<bool>,
}

impl FileUploads {
    /// The store `backend` names, with its settings: each missing one is named.
    pub(super) fn store(&self) -> Result<UploadStore, SettingsError> {
        match self.backend.as_deref().unwrap_or("local") {
            "local" => Ok(UploadStore::Local),
            "s3" => {
                let need = |value: &Option<String>, key: &str| {
                    value
                        .clone()
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| SettingsError(format!("[uploads] backend = \"s3\" needs {key}")))
                };
                Ok(UploadStore::S3(S3Options {
                    endpoint: need(&self.s3_endpoint, "s3_endpoint")?,
                    region: self.s3_region.clone().unwrap_or_else(|| "us-east-1".to_owned()),
                    bucket: need(&self.s3_bucket, "s3_bucket")?,
                    access_key_id: need(&self.s3_access_key_id, "s3_access_key_id")?,
                    secret_access_key: need(&self.s3_secret_access_key, "s3_secret_access_key")?,
                    path_style: self.s3_path_style.unwrap_or(true),
                }))
            }
            other => Err(SettingsError(format!("[uploads] backend: {other:?} is neither \"local\" nor \"s3\""))),
        }
    }
}

/// Where uploaded files are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadStore {
    /// Under the data directory's `uploads/`.
    Local,
    /// In a bucket of an S3-compatible object store.
    S3(S3Options),
}

impl UploadStore {
    /// The storage, for the server (`attach: false`: it owns the temporary files) or for a
    /// command beside it (`attach: true`).
    pub fn open(&self, data_dir: &Path, attach: bool) -> std::io::Result<Arc<dyn Storage>> {
        let dir = data_dir.join("uploads");
        Ok(match (self, attach) {
            (UploadStore::Local, false) => Arc::new(LocalStorage::open(&dir)?),
            (UploadStore::Local, true) => Arc::new(LocalStorage::attach(&dir)?),
            (UploadStore::S3(options), false) => Arc::new(S3Storage::open(options, &dir.join("tmp"))?),
            (UploadStore::S3(options), true) => Arc::new(S3Storage::attach(options, &dir.join("tmp"))?),
        })
    }
}
