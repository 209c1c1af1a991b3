//! Channel folders (spec 2.14, 4.8): their messages and the realm actor's handlers.
//!
//! Folders are organization-wide and visible to everyone: every change sends a
//! `channel_folder` event (`add`, `update`, `reorder`) to every active user, as Zulip does.
//! Only administrators change them; the role is checked before the request's parameters,
//! so the messages carry the parameters as parsed, or the error parsing them gave.
//!
//! - [`ops`]: the changes, planned from the state.
//! - [`format`]: folders as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use format::{folder_dict, folder_dicts};
pub use ops::{check_folder_for_channel, FolderChanges, NewFolder};

use super::actor::RealmActor;
use crate::clock::now;
use crate::error::ApiResult;
use crate::ids::{FolderId, UserId};

/// `GET /channel_folders`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListFolders {
    pub viewer: UserId,
    pub include_archived: bool,
}

/// `POST /channel_folders/create`: replies with the new folder's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<FolderId>")]
pub struct CreateFolder {
    pub acting: UserId,
    /// The parameters, or the error parsing them gave (reported after the role check).
    pub folder: ApiResult<NewFolder>,
}

/// `PATCH /channel_folders/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateFolder {
    pub acting: UserId,
    /// The id in the path, or the error parsing it gave (reported after the role check).
    pub folder_id: ApiResult<i64>,
    /// The parameters, or the error parsing them gave (reported after the folder id's).
    pub changes: ApiResult<FolderChanges>,
}

/// `PATCH /channel_folders`: the new order of every folder.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReorderFolders {
    pub acting: UserId,
    /// `order`, or the error parsing it gave (reported after the role check).
    pub order: ApiResult<Vec<i64>>,
}

impl Handler<ListFolders> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListFolders, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.viewer)?;
        Ok(folder_dicts(&self.state, msg.include_archived))
    }
}

impl Handler<CreateFolder> for RealmActor {
    type Result = ApiResult<FolderId>;

    fn handle(&mut self, msg: CreateFolder, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create_folder(&self.state, msg.acting, msg.folder, now())?;
        self.commit(change)
    }
}

impl Handler<UpdateFolder> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateFolder, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update_folder(&self.state, msg.acting, msg.folder_id, msg.changes)?;
        self.commit(change)
    }
}

impl Handler<ReorderFolders> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReorderFolders, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_reorder_folders(&self.state, msg.acting, msg.order)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
