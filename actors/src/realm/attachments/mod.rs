//! Attachments (Zulip's `zerver/lib/attachments.py`, `zerver/views/attachments.py` and the
//! authorization of `zerver/views/upload.py`): the row an upload gets, `GET` and `DELETE
//! /attachments`, the `attachment` events, and who may download a file.
//!
//! - [`ops`]: creating and deleting attachments, and the thumbnails' arrival.
//! - [`reads`]: `GET /attachments` and download authorization, on the reader threads
//!   (they read which messages claim a file).
//! - [`format`]: the attachment object and its events.
//! - [`thumbnails`]: recording an image's thumbnails and showing them in the messages
//!   that link it.
//!
//! Claiming (a message that links an upload) is part of sending and editing: see
//! [`crate::realm::uploads_data::claims`], which those changes call.

pub mod format;
pub mod ops;
pub mod reads;
pub mod thumbnails;

use actix::prelude::*;

pub use ops::NewUpload;
pub use reads::{FileAccess, ListAttachments, ServedFile, ThumbnailStatus};
pub use thumbnails::ThumbnailsMade;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /user_uploads`, once the file is stored: records it for its uploader. Replies
/// with the attachment's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct CreateAttachment {
    pub user_id: UserId,
    pub upload: NewUpload,
}

/// `DELETE /attachments/{attachment_id}`: only the owner's. Replies with the deleted
/// file's path id (the handler removes the bytes once the row is gone).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct DeleteAttachment {
    pub user_id: UserId,
    pub attachment_id: i64,
}

impl Handler<CreateAttachment> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: CreateAttachment, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.user_id, msg.upload, crate::clock::now())?;
        self.commit(change)
    }
}

impl Handler<DeleteAttachment> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: DeleteAttachment, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_delete(&self.state, msg.user_id, msg.attachment_id)?;
        self.commit(change)
    }
}

impl Handler<ThumbnailsMade> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ThumbnailsMade, _: &mut Self::Context) -> Self::Result {
        match thumbnails::plan(&self.state, msg) {
            Some(change) => self.commit(change),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
