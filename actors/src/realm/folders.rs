//! Channel folders (spec 2.14, 4.8): operations, their messages and the realm actor's
//! handlers for them.
//!
//! Folders are organization-wide and visible to everyone: every change sends a
//! `channel_folder` event (`add`, `update`, `reorder`) to every active user, as Zulip does.
//! Only administrators change them.

use std::collections::BTreeMap;

use actix::prelude::*;
use serde_json::{json, Value};

use super::actor::RealmActor;
use super::catalog::{MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH};
use super::model::ChannelFolder;
use super::state::RealmState;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{FolderId, UserId};
use crate::markdown;
use crate::store::{self, Store, StoreError};
use crate::validate;

/// A folder as `GET /channel_folders`, register and the `add` event show it.
pub fn folder_dict(folder: &ChannelFolder) -> Value {
    json!({
        "id": folder.id,
        "name": folder.name,
        "description": folder.description,
        "rendered_description": folder.rendered_description,
        "order": folder.order,
        "date_created": folder.date_created,
        "creator_id": folder.creator_id,
        "is_archived": folder.is_archived,
    })
}

/// The organization's folders sorted by `order` (then id), archived ones only when
/// `include_archived`.
pub fn folder_dicts(state: &RealmState, include_archived: bool) -> Vec<Value> {
    let mut folders: Vec<&ChannelFolder> = state.folders().filter(|f| include_archived || !f.is_archived).collect();
    folders.sort_by_key(|f| (f.order, f.id));
    folders.into_iter().map(folder_dict).collect()
}

fn invalid_folder_id() -> ApiError {
    ApiError::bad_request("Invalid channel folder ID")
}

/// The folder `id` of this organization, or Zulip's "Invalid channel folder ID".
fn folder_by_id(state: &RealmState, id: i64) -> ApiResult<&ChannelFolder> {
    state.folder(FolderId(id)).ok_or_else(invalid_folder_id)
}

/// Checks the `folder_id` given for a channel (creation or `PATCH /streams/{id}`): it must
/// name an active folder of this organization, else 400 "Invalid channel folder ID".
/// Archived folders are refused: archiving needs the folder empty, and a channel joining
/// one afterwards would break that rule.
pub fn check_folder_for_channel(state: &RealmState, folder_id: i64) -> ApiResult<FolderId> {
    match folder_by_id(state, folder_id) {
        Ok(folder) if !folder.is_archived => Ok(folder.id),
        _ => Err(ApiError::bad_request("Invalid channel folder ID")),
    }
}

/// Zulip's parameter length check (`StringConstraints(max_length=..)`).
fn check_length(var_name: &str, value: &str, max: usize) -> ApiResult<()> {
    if value.chars().count() > max {
        return Err(ApiError::bad_request(format!("{var_name} is too long (limit: {max} characters)")));
    }
    Ok(())
}

/// Zulip's `check_channel_folder_name`: not blank, printable, and no other folder of the
/// organization (archived ones included) has it, compared case-insensitively.
fn check_name(state: &RealmState, name: &str) -> ApiResult<()> {
    if name.trim().is_empty() {
        return Err(ApiError::bad_request("Channel folder name can't be empty."));
    }
    if let Some(position) = validate::first_unprintable(name) {
        return Err(ApiError::bad_request(format!(
            "Invalid character in channel folder name, at position {position}."
        )));
    }
    let lower = name.to_lowercase();
    if state.folders().any(|f| f.name.to_lowercase() == lower) {
        return Err(ApiError::bad_request(format!("Channel folder '{name}' already exists")));
    }
    Ok(())
}

/// `POST /channel_folders/create` arguments (both required by Zulip).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFolder {
    pub name: String,
    pub description: String,
}

/// Creates a folder (administrators only). It comes last: its `order` is its id, as in
/// Zulip. Sends `channel_folder`/`add` to every active user.
pub fn create_folder(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewFolder,
    now: i64,
) -> ApiResult<(FolderId, Vec<Outgoing>)> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    check_length("description", &new.description, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH)?;
    check_length("name", &new.name, MAX_CHANNEL_FOLDER_NAME_LENGTH)?;
    check_name(state, &new.name)?;
    let mut folder = ChannelFolder {
        id: FolderId(0),
        rendered_description: markdown::render(&new.description),
        name: new.name,
        description: new.description,
        order: 0,
        is_archived: false,
        creator_id: Some(acting),
        date_created: now,
    };
    let realm_id = state.realm().id;
    let id = store.write(|tx| {
        let id = store::channels::insert_folder(tx, realm_id, &folder)?;
        store::channels::set_folder_order(tx, id, id.0)?;
        Ok::<_, StoreError>(id)
    })?;
    folder.id = id;
    folder.order = id.0;
    let event = folder_event(json!({ "op": "add", "channel_folder": folder_dict(&folder) }));
    state.put_folder(folder);
    Ok((id, vec![state.to_everyone(event)]))
}

fn folder_event(fields: Value) -> Event {
    Event::new("channel_folder", fields)
}

/// `PATCH /channel_folders/{id}` arguments; `None` leaves the value alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub is_archived: Option<bool>,
}

/// Changes a folder (administrators only). Values equal to the current ones are no-ops;
/// each changed property sends its own `channel_folder`/`update` event (name, then
/// description with `rendered_description`, then `is_archived`), as Zulip does. A folder
/// that still holds channels (archived channels included) cannot be archived.
///
/// Unlike Zulip, which commits each property separately, every check runs before anything
/// is written, so a refused request changes nothing.
pub fn update_folder(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: i64,
    changes: FolderChanges,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    if let Some(description) = &changes.description {
        check_length("description", description, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH)?;
    }
    if let Some(name) = &changes.name {
        check_length("name", name, MAX_CHANNEL_FOLDER_NAME_LENGTH)?;
    }
    let mut folder = folder_by_id(state, id)?.clone();
    let mut data = Vec::new();
    if let Some(name) = changes.name.filter(|n| *n != folder.name) {
        check_name(state, &name)?;
        data.push(json!({ "name": name }));
        folder.name = name;
    }
    if let Some(description) = changes.description.filter(|d| *d != folder.description) {
        folder.rendered_description = markdown::render(&description);
        data.push(json!({ "description": description, "rendered_description": folder.rendered_description }));
        folder.description = description;
    }
    if let Some(archived) = changes.is_archived.filter(|a| *a != folder.is_archived) {
        if archived && state.channels().any(|c| c.folder_id == Some(folder.id)) {
            return Err(ApiError::bad_request("You need to remove all the channels from this folder to archive it."));
        }
        data.push(json!({ "is_archived": archived }));
        folder.is_archived = archived;
    }
    if data.is_empty() {
        return Ok(Vec::new());
    }
    store.write(|tx| store::channels::update_folder(tx, &folder))?;
    let folder_id = folder.id;
    state.put_folder(folder);
    Ok(data
        .into_iter()
        .map(|d| state.to_everyone(folder_event(json!({ "op": "update", "channel_folder_id": folder_id, "data": d }))))
        .collect())
}

/// Reorders the folders (administrators only): each folder's `order` becomes its index in
/// `order`. Every folder (archived ones included) must be listed, else "Invalid order
/// mapping."; as in Zulip, unknown ids are ignored and a repeated id takes its last
/// position. Sends `channel_folder`/`reorder` with `order` as given to every active user.
pub fn reorder_folders(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    order: Vec<i64>,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(acting)?.role)?;
    let position: BTreeMap<i64, i64> = order.iter().enumerate().map(|(i, id)| (*id, i as i64)).collect();
    let mut folders: Vec<ChannelFolder> = state.folders().cloned().collect();
    for folder in &mut folders {
        folder.order = *position.get(&folder.id.0).ok_or_else(|| ApiError::bad_request("Invalid order mapping"))?;
    }
    store.write(|tx| folders.iter().try_for_each(|f| store::channels::set_folder_order(tx, f.id, f.order)))?;
    for folder in folders {
        state.put_folder(folder);
    }
    Ok(vec![state.to_everyone(folder_event(json!({ "op": "reorder", "order": order })))])
}

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
    pub folder: NewFolder,
}

/// `PATCH /channel_folders/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateFolder {
    pub acting: UserId,
    pub folder_id: i64,
    pub changes: FolderChanges,
}

/// `PATCH /channel_folders`: the new order of every folder.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReorderFolders {
    pub acting: UserId,
    pub order: Vec<i64>,
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
        let (id, events) = create_folder(&mut self.state, &self.store, msg.acting, msg.folder, crate::clock::now())?;
        self.committed(events);
        Ok(id)
    }
}

impl Handler<UpdateFolder> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateFolder, _: &mut Self::Context) -> Self::Result {
        let events = update_folder(&mut self.state, &self.store, msg.acting, msg.folder_id, msg.changes)?;
        self.committed(events);
        Ok(())
    }
}

impl Handler<ReorderFolders> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReorderFolders, _: &mut Self::Context) -> Self::Result {
        let events = reorder_folders(&mut self.state, &self.store, msg.acting, msg.order)?;
        self.committed(events);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
