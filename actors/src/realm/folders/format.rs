//! Channel folders as the API shows them.

use serde_json::{json, Value};

use crate::realm::model::ChannelFolder;
use crate::realm::state::RealmState;

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
