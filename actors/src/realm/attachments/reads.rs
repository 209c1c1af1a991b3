//! Reads that need the claiming messages, on the reader threads: `GET /attachments` and
//! whether a user may download a file (Zulip's `validate_attachment_request`).

use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::format;
use crate::error::ApiResult;
use crate::ids::{MessageId, RealmId, UserId};
use crate::reader::HistoryRead;
use crate::realm::chat::{has_message_access, viewer};
use crate::realm::model::{Role, User};
use crate::realm::state::RealmState;
use crate::realm::uploads_data::Attachment;
use crate::store;

/// `GET /attachments`: the user's attachments with the messages claiming them, and the
/// organization's `upload_space_used`.
#[derive(Debug)]
pub struct ListAttachments {
    pub user_id: UserId,
}

impl HistoryRead for ListAttachments {
    type Output = Map<String, Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        let user = viewer(state, self.user_id)?;
        let owned: Vec<&Attachment> = state.uploads().owned_by(user.id).collect();
        let ids: Vec<i64> = owned.iter().map(|a| a.id).collect();
        let claims = store::attachments::claims_of(conn, &ids)?;
        let list: Vec<Value> = owned
            .iter()
            .map(|a| {
                let messages: Vec<(MessageId, i64)> =
                    claims.iter().filter(|c| c.0 == a.id).map(|c| (c.1, c.2)).collect();
                format::attachment(a, &messages)
            })
            .collect();
        Ok(crate::json_object(json!({"attachments": list, "upload_space_used": state.uploads().space_used()})))
    }
}

/// What a download needs of an attachment the requester may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedFile {
    pub path_id: String,
    /// The name as uploaded.
    pub name: String,
    pub content_type: Option<String>,
}

/// Whether `user_id` may download `path_id` (a path under this organization): the
/// uploader may; a member who is not a guest may read a file a public channel's message
/// claims; anyone else who can read a message that claims it. `None` for a refusal and for
/// a file that does not exist alike, so a refusal never tells whether a file exists.
#[derive(Debug)]
pub struct FileAccess {
    pub user_id: UserId,
    pub path_id: String,
}

/// Whether `user` may read `a` (the uploader and public files from the state; others
/// through the messages that claim it).
pub fn may_read(state: &RealmState, conn: &Connection, user: &User, a: &Attachment) -> ApiResult<bool> {
    if a.owner_id == user.id || (a.is_realm_public && user.role != Role::Guest) {
        return Ok(true);
    }
    for (_, message, _) in store::attachments::claims_of(conn, &[a.id])? {
        if let Some((row, flags)) = store::messages::viewed_message(conn, state.realm().id, user.id, message)? {
            if has_message_access(state, user, row.channel_id, flags.is_some()) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The attachment `path_id` names in `realm`'s state, if the path is one of its own.
pub fn attachment_of<'s>(state: &'s RealmState, realm: RealmId, path_id: &str) -> Option<&'s Attachment> {
    path_id.strip_prefix(&format!("{}/", realm.0))?;
    state.uploads().by_path(path_id)
}

/// The attachment at `path_id` if the active user `user_id` may read it; `None` for a
/// refusal and for a file that does not exist alike.
fn readable<'s>(
    state: &'s RealmState,
    conn: &Connection,
    user_id: UserId,
    path_id: &str,
) -> ApiResult<Option<&'s Attachment>> {
    let Some(user) = state.user(user_id).filter(|u| u.is_active) else { return Ok(None) };
    let Some(a) = attachment_of(state, state.realm().id, path_id) else { return Ok(None) };
    Ok(may_read(state, conn, user, a)?.then_some(a))
}

impl HistoryRead for FileAccess {
    type Output = Option<ServedFile>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        let Some(a) = readable(state, conn, self.user_id, &self.path_id)? else { return Ok(None) };
        Ok(Some(ServedFile { path_id: a.path_id.clone(), name: a.name.clone(), content_type: a.content_type.clone() }))
    }
}

/// `GET /thumbnail/status/{realm_id}/{path}` (FL 479): whether the default thumbnail of a file
/// the user may read is made; `None` for a refusal and for a file that does not exist alike.
#[derive(Debug)]
pub struct ThumbnailStatus {
    pub user_id: UserId,
    pub path_id: String,
}

impl HistoryRead for ThumbnailStatus {
    type Output = Option<bool>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output> {
        let Some(a) = readable(state, conn, self.user_id, &self.path_id)? else { return Ok(None) };
        Ok(Some(a.image.as_ref().is_some_and(|image| !image.thumbnails.is_empty())))
    }
}
