//! [`Thumbnailer`]: makes the thumbnails of uploaded images on a thread of its own, never
//! on an actor's or an HTTP worker's (Zulip's `thumbnail` queue worker).
//!
//! Its queue is durable: an image whose thumbnails are not made yet is an `attachments`
//! row with `thumbnails = '[]'`. At start the worker takes every such row; afterwards each
//! new upload is handed to it. For each image it reads the file, writes each format under
//! `thumbnail/<path_id>/<format>` (atomically, so a retry after a crash rewrites the same
//! files), then tells the organization's actor ([`ThumbnailsMade`]), which records them and
//! shows them in the messages that link the image. A job whose organization cannot be
//! told stays in the queue for the next start; one is never done twice over (the actor
//! ignores thumbnails of a deleted attachment, and rewriting a preview is idempotent).

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::mpsc;

use crate::ids::RealmId;
use crate::realm::attachments::ThumbnailsMade;
use crate::registry::Realms;
use crate::store::{self, Store};
use crate::uploads::images::{self, THUMBNAIL_FORMATS};
use crate::uploads::Storage;

/// One image to thumbnail.
#[derive(Debug, Clone)]
pub struct ThumbnailJob {
    pub realm_id: RealmId,
    pub attachment_id: i64,
    pub path_id: String,
}

/// Hands images to the thumbnail worker.
#[derive(Clone, Debug)]
pub struct Thumbnailer {
    jobs: mpsc::UnboundedSender<ThumbnailJob>,
}

impl Thumbnailer {
    /// Starts the worker on an arbiter (a thread) of its own; it first takes the images
    /// left waiting by an earlier run. Call inside an actix system.
    pub fn start(storage: Arc<dyn Storage>, store: Store, realms: Realms) -> Thumbnailer {
        let (tx, mut rx) = mpsc::unbounded_channel::<ThumbnailJob>();
        let arbiter = Arbiter::new();
        arbiter.spawn(async move {
            let pending = match store
                .read_connection()
                .map_err(|e| e.to_string())
                .and_then(|conn| store::attachments::pending_thumbnails(&conn).map_err(|e| e.to_string()))
            {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::error!(error = %e, "could not read the images waiting for thumbnails");
                    Vec::new()
                }
            };
            for (realm_id, attachment_id, path_id) in pending {
                run(&*storage, &realms, ThumbnailJob { realm_id, attachment_id, path_id }).await;
            }
            while let Some(job) = rx.recv().await {
                run(&*storage, &realms, job).await;
            }
        });
        // The arbiter lives as long as the process: its thread ends with the system.
        std::mem::forget(arbiter);
        Thumbnailer { jobs: tx }
    }

    /// Queues an image (its row is already written, so a lost job is found at the next
    /// start).
    pub fn enqueue(&self, job: ThumbnailJob) {
        if self.jobs.send(job).is_err() {
            tracing::warn!("the thumbnail worker is gone; the image waits for the next start");
        }
    }
}

/// Makes one image's thumbnails and tells its organization.
async fn run(storage: &dyn Storage, realms: &Realms, job: ThumbnailJob) {
    let made = make(storage, &job.path_id);
    let thumbnails = match made {
        Ok(names) => names,
        Err(e) => {
            tracing::warn!(attachment.id = job.attachment_id, error = %e, "could not make thumbnails");
            return;
        }
    };
    let msg = ThumbnailsMade { attachment_id: job.attachment_id, thumbnails };
    match realms.find_by_id(job.realm_id).await {
        Ok(Some(realm)) => match realm.addr.send(msg).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(attachment.id = job.attachment_id, error = %e.msg, "thumbnails not recorded"),
            Err(e) => tracing::warn!(attachment.id = job.attachment_id, error = %e, "thumbnails not recorded"),
        },
        _ => tracing::warn!(realm.id = %job.realm_id, "thumbnails made for an organization that is not running"),
    }
}

/// Writes every thumbnail format of a stored image; their names.
pub fn make(storage: &dyn Storage, path_id: &str) -> Result<Vec<String>, String> {
    let bytes = storage.read(path_id).map_err(|e| e.to_string())?.ok_or_else(|| "file is gone".to_owned())?;
    let mut names = Vec::new();
    for format in THUMBNAIL_FORMATS {
        let (webp, _, _) = images::thumbnail(&bytes, format).map_err(|e| e.0.to_owned())?;
        let name = format.name();
        storage.put(&format!("thumbnail/{path_id}/{name}"), &webp).map_err(|e| e.to_string())?;
        names.push(name);
    }
    Ok(names)
}
