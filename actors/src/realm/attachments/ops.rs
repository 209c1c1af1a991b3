//! Creating and deleting attachments, and recording their thumbnails, planned from the
//! state, written, applied.

use rusqlite::Transaction;

use super::format;
use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::UserId;
use crate::realm::state::RealmState;
use crate::realm::uploads_data::{Attachment, ImageMeta};
use crate::realm::{Applied, Change};
use crate::store;
use crate::uploads::images::ImageInfo;

/// A stored file to record.
#[derive(Debug, Clone)]
pub struct NewUpload {
    pub path_id: String,
    /// The name as uploaded.
    pub name: String,
    pub size: i64,
    pub content_type: Option<String>,
    /// For images that get previews: what their header says.
    pub image: Option<ImageInfo>,
}

/// A planned new attachment.
#[derive(Debug)]
pub struct CreateAttachmentChange {
    realm_id: crate::ids::RealmId,
    attachment: Attachment,
}

/// Plans recording an upload of `user_id`'s (any active user may upload).
pub fn plan_create(
    state: &RealmState,
    user_id: UserId,
    upload: NewUpload,
    now: i64,
) -> ApiResult<CreateAttachmentChange> {
    let user = state.user_or_err(user_id)?;
    let image =
        upload.image.map(|i| ImageMeta { width: i.width, height: i.height, frames: i.frames, thumbnails: vec![] });
    Ok(CreateAttachmentChange {
        realm_id: state.realm().id,
        attachment: Attachment {
            id: 0,
            owner_id: user.id,
            path_id: upload.path_id,
            name: upload.name,
            size: upload.size,
            content_type: upload.content_type,
            create_time: now,
            is_realm_public: false,
            is_web_public: false,
            image,
        },
    })
}

impl Change for CreateAttachmentChange {
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.attachment.id = store::attachments::insert(tx, self.realm_id, &self.attachment)?;
        Ok(())
    }

    /// The attachment's id; `attachment` `add` to its owner.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let a = self.attachment;
        let (id, owner) = (a.id, a.owner_id);
        state.uploads_mut().put(a.clone());
        let event = format::changed("add", &a, &[], state.uploads().space_used());
        Applied::new(id, vec![Outgoing::to(vec![owner], event)])
    }
}

/// A planned deletion.
#[derive(Debug)]
pub struct DeleteAttachmentChange {
    id: i64,
    owner: UserId,
    path_id: String,
}

/// Plans deleting attachment `id`, which must be `user_id`'s ("Invalid attachment"
/// otherwise, whether or not it exists).
pub fn plan_delete(state: &RealmState, user_id: UserId, id: i64) -> ApiResult<DeleteAttachmentChange> {
    let user = state.user_or_err(user_id)?;
    let a = state
        .uploads()
        .by_id(id)
        .filter(|a| a.owner_id == user.id)
        .ok_or_else(|| ApiError::bad_request("Invalid attachment"))?;
    Ok(DeleteAttachmentChange { id, owner: a.owner_id, path_id: a.path_id.clone() })
}

impl Change for DeleteAttachmentChange {
    type Output = String;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::attachments::delete(tx, self.id)?;
        Ok(())
    }

    /// The path id of the deleted file; `attachment` `remove` to its owner.
    fn apply(self, state: &mut RealmState) -> Applied<String> {
        state.uploads_mut().remove(self.id);
        let event = format::removed(self.id, state.uploads().space_used());
        Applied::new(self.path_id, vec![Outgoing::to(vec![self.owner], event)])
    }
}
