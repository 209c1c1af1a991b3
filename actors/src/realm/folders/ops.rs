//! Folder changes, planned from the state (administrators only), written, applied.
//!
//! Zulip checks the role before it parses any parameter, so the plans take the parsed
//! request as a `Result`: a request that did not parse is refused for the role first.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::format::folder_dict;
use crate::error::{ApiError, ApiResult};
use crate::events::Event;
use crate::ids::{FolderId, RealmId, UserId};
use crate::markdown;
use crate::realm::catalog::{MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH};
use crate::realm::model::ChannelFolder;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate;

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
    ApiError::check_length(var_name, value, max)
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

/// Zulip's `require_realm_admin`, checked before the request's parameters.
fn require_admin_then<T>(state: &RealmState, acting: UserId, request: ApiResult<T>) -> ApiResult<T> {
    require_admin(state.user_or_err(acting)?.role)?;
    request
}

fn folder_event(fields: Value) -> Event {
    Event::new("channel_folder", fields)
}

/// `POST /channel_folders/create` arguments (both required by Zulip).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFolder {
    pub name: String,
    pub description: String,
}

/// A folder to create; its id (and so its `order`) comes with the write.
#[derive(Debug, Clone)]
pub struct FolderCreation {
    realm_id: RealmId,
    folder: ChannelFolder,
}

/// Plans a folder (administrators only). It comes last: its `order` is its id, as in Zulip.
pub fn plan_create_folder(
    state: &RealmState,
    acting: UserId,
    request: ApiResult<NewFolder>,
    now: i64,
) -> ApiResult<FolderCreation> {
    let new = require_admin_then(state, acting, request)?;
    check_length("description", &new.description, MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH)?;
    check_length("name", &new.name, MAX_CHANNEL_FOLDER_NAME_LENGTH)?;
    check_name(state, &new.name)?;
    let folder = ChannelFolder {
        id: FolderId(0),
        rendered_description: markdown::render(&new.description),
        name: new.name,
        description: new.description,
        order: 0,
        is_archived: false,
        creator_id: Some(acting),
        date_created: now,
    };
    Ok(FolderCreation { realm_id: state.realm().id, folder })
}

impl FolderCreation {
    /// Records the id the database gave the folder: its `order` too.
    fn record_id(&mut self, id: FolderId) {
        self.folder.id = id;
        self.folder.order = id.0;
    }
}

impl Change for FolderCreation {
    type Output = FolderId;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let id = store::channels::insert_folder(tx, self.realm_id, &self.folder)?;
        store::channels::set_folder_order(tx, id, id.0)?;
        self.record_id(id);
        Ok(())
    }

    /// `channel_folder`/`add` to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<FolderId> {
        let id = self.folder.id;
        let event = folder_event(json!({ "op": "add", "channel_folder": folder_dict(&self.folder) }));
        state.put_folder(self.folder);
        Applied::new(id, vec![state.to_everyone(event)])
    }
}

/// `PATCH /channel_folders/{id}` arguments; `None` leaves the value alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub is_archived: Option<bool>,
}

/// A folder's changed properties: the folder as it becomes, and the `data` of each
/// `update` event (none: nothing changes).
#[derive(Debug, Clone)]
pub struct FolderUpdate {
    folder: ChannelFolder,
    data: Vec<Value>,
}

/// Plans changes to folder `folder_id` (administrators only). Values equal to the current
/// ones are no-ops; each changed property sends its own `channel_folder`/`update` event
/// (name, then description with `rendered_description`, then `is_archived`), as Zulip does.
/// A folder that still holds channels (archived channels included) cannot be archived.
///
/// Unlike Zulip, which commits each property separately, every check runs before anything
/// is written, so a refused request changes nothing.
pub fn plan_update_folder(
    state: &RealmState,
    acting: UserId,
    folder_id: ApiResult<i64>,
    changes: ApiResult<FolderChanges>,
) -> ApiResult<FolderUpdate> {
    let id = require_admin_then(state, acting, folder_id)?;
    let changes = changes?;
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
    Ok(FolderUpdate { folder, data })
}

impl Change for FolderUpdate {
    type Output = ();

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        !self.data.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if !self.data.is_empty() {
            store::channels::update_folder(tx, &self.folder)?;
        }
        Ok(())
    }

    /// One `channel_folder`/`update` per changed property, to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        if self.data.is_empty() {
            return Applied::events(Vec::new());
        }
        let folder_id = self.folder.id;
        state.put_folder(self.folder);
        let update = |d: Value| json!({ "op": "update", "channel_folder_id": folder_id, "data": d });
        Applied::events(self.data.into_iter().map(|d| state.to_everyone(folder_event(update(d)))).collect())
    }
}

/// The folders with their new `order`, and the order as the request gave it.
#[derive(Debug, Clone)]
pub struct FolderOrder {
    folders: Vec<ChannelFolder>,
    order: Vec<i64>,
}

/// Plans a new order of the folders (administrators only): each folder's `order` becomes
/// its index in `order`. Every folder (archived ones included) must be listed, else
/// "Invalid order mapping."; as in Zulip, unknown ids are ignored and a repeated id takes
/// its last position.
pub fn plan_reorder_folders(state: &RealmState, acting: UserId, order: ApiResult<Vec<i64>>) -> ApiResult<FolderOrder> {
    let order = require_admin_then(state, acting, order)?;
    let position: BTreeMap<i64, i64> = order.iter().enumerate().map(|(i, id)| (*id, i as i64)).collect();
    let mut folders: Vec<ChannelFolder> = state.folders().cloned().collect();
    for folder in &mut folders {
        folder.order = *position.get(&folder.id.0).ok_or_else(|| ApiError::bad_request("Invalid order mapping"))?;
    }
    Ok(FolderOrder { folders, order })
}

impl Change for FolderOrder {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        for folder in &self.folders {
            store::channels::set_folder_order(tx, folder.id, folder.order)?;
        }
        Ok(())
    }

    /// `channel_folder`/`reorder` with `order` as given, to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        for folder in self.folders {
            state.put_folder(folder);
        }
        Applied::events(vec![state.to_everyone(folder_event(json!({ "op": "reorder", "order": self.order })))])
    }
}

#[cfg(test)]
impl FolderCreation {
    /// The change as if written, the folder getting `id` (tests without a database).
    pub(crate) fn once_written(mut self, id: FolderId) -> Self {
        self.record_id(id);
        self
    }
}
