//! Reading one uploaded file from a multipart body straight into storage, never whole in
//! memory: each part's bytes are gathered into blocks of at most [`BLOCK`] bytes and each
//! block is written to the storage's pending file on the blocking pool. The file is named
//! (committed) by the caller once everything about it is known; a refusal on the way drops
//! the pending file, which leaves nothing behind.

use std::cell::Cell;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::header::HeaderMap;
use actix_web::web::{self, BytesMut};
use agora_actors::uploads::{PendingFile, Storage};
use agora_actors::ApiError;

use super::body::{next_part, timed_out, BodyRules, Watched};
use super::response::HttpError;

/// How much of a file is gathered before it is written.
const BLOCK: usize = 1 << 20;

/// The one file of an upload, written to a pending file.
pub struct ReceivedFile {
    pub pending: Box<dyn PendingFile>,
    /// The name the client gave it.
    pub filename: String,
    /// The part's `Content-Type`, if any.
    pub content_type: Option<String>,
    pub size: u64,
}

/// What a multipart upload body held.
pub struct ReceivedUpload {
    /// The first file.
    pub file: Option<ReceivedFile>,
    /// How many files there were (the first one's bytes only are kept).
    pub files: usize,
    /// Form fields that are not files (names and values).
    pub fields: Vec<(String, String)>,
}

/// Why reading an upload stopped.
pub enum UploadRefusal {
    /// An error to answer with; the body may be left unread.
    Error(ApiError),
}

impl From<ApiError> for UploadRefusal {
    fn from(e: ApiError) -> Self {
        UploadRefusal::Error(e)
    }
}

impl From<HttpError> for UploadRefusal {
    fn from(e: HttpError) -> Self {
        UploadRefusal::Error(e.0)
    }
}

/// Zulip's refusal of a file over the limit.
pub fn too_large_file(max_mib: u64) -> ApiError {
    ApiError::bad_request(format!("File is larger than this server's configured maximum upload size ({max_mib} MiB)."))
}

/// Writes `block` to `file` on the blocking pool, giving the file back.
async fn write_block(mut file: Box<dyn PendingFile>, block: BytesMut) -> Result<Box<dyn PendingFile>, ApiError> {
    let written = web::block(move || file.write_all(&block).map(|()| file)).await;
    match written {
        Ok(Ok(file)) => Ok(file),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "could not write an upload");
            Err(ApiError::internal())
        }
        Err(_) => Err(ApiError::internal()),
    }
}

/// Reads a multipart body: its first file, streamed to a pending file of `storage` and at
/// most `max_bytes` long (else `too_large`), and its other fields. A second file is
/// `several`'s error if given, else counted and skipped.
pub async fn receive(
    headers: &HeaderMap,
    payload: Payload,
    rules: &BodyRules,
    storage: &Arc<dyn Storage>,
    max_bytes: u64,
    too_large: ApiError,
    several: Option<ApiError>,
) -> Result<ReceivedUpload, UploadRefusal> {
    let deadline = tokio::time::Instant::now() + rules.timeout;
    let within = |idle: std::time::Duration| deadline.min(tokio::time::Instant::now() + idle);
    let ended = Rc::new(Cell::new(false));
    let payload = Watched::new(payload, Rc::clone(&ended));
    let mut multipart = actix_multipart::Multipart::new(headers, payload);
    let mut out = ReceivedUpload { file: None, files: 0, fields: Vec::new() };
    loop {
        let next = tokio::time::timeout_at(within(rules.idle_timeout), next_part(&mut multipart, &ended)).await;
        let Some(mut field) = next.map_err(|_| timed_out())?? else { break };
        let disposition = field.content_disposition().cloned();
        let name = disposition.as_ref().and_then(|d| d.get_name()).unwrap_or("").to_owned();
        let filename = disposition.as_ref().and_then(|d| d.get_filename()).map(str::to_owned);
        let Some(filename) = filename else {
            let mut value = BytesMut::new();
            while let Some(chunk) = tokio::time::timeout_at(within(rules.idle_timeout), next_part(&mut field, &ended))
                .await
                .map_err(|_| timed_out())??
            {
                if value.len() + chunk.len() > 64 * 1024 {
                    return Err(super::body::too_large().into());
                }
                value.extend_from_slice(&chunk);
            }
            out.fields.push((name, String::from_utf8_lossy(&value).into_owned()));
            continue;
        };
        out.files += 1;
        if out.file.is_some() {
            if let Some(e) = several {
                return Err(e.into());
            }
            let mut skipped = 0u64;
            while let Some(chunk) = tokio::time::timeout_at(within(rules.idle_timeout), next_part(&mut field, &ended))
                .await
                .map_err(|_| timed_out())??
            {
                skipped += chunk.len() as u64;
                if skipped > max_bytes {
                    return Err(too_large.into());
                }
            }
            continue;
        }
        let content_type = field.content_type().map(|m| m.essence_str().to_owned());
        let created = {
            let storage = Arc::clone(storage);
            web::block(move || storage.create()).await
        };
        let mut pending = match created {
            Ok(Ok(p)) => p,
            _ => return Err(ApiError::internal().into()),
        };
        let (mut size, mut block) = (0u64, BytesMut::with_capacity(BLOCK));
        while let Some(chunk) = tokio::time::timeout_at(within(rules.idle_timeout), next_part(&mut field, &ended))
            .await
            .map_err(|_| timed_out())??
        {
            size += chunk.len() as u64;
            if size > max_bytes {
                return Err(too_large.into());
            }
            block.extend_from_slice(&chunk);
            if block.len() >= BLOCK {
                pending = write_block(pending, std::mem::replace(&mut block, BytesMut::with_capacity(BLOCK))).await?;
            }
        }
        if !block.is_empty() {
            pending = write_block(pending, block).await?;
        }
        out.file = Some(ReceivedFile { pending, filename, content_type, size });
    }
    Ok(out)
}
