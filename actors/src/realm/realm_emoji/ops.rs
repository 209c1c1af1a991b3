//! Adding and deactivating custom emoji, checked in Zulip's order (`upload_emoji`,
//! `delete_emoji`, `check_valid_emoji_name`, `check_remove_custom_emoji`).

use rusqlite::Transaction;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::realm::permissions::{has_realm_permission, require_member};
use crate::realm::state::RealmState;
use crate::realm::uploads_data::{emoji_dict, RealmEmoji};
use crate::realm::{Applied, Change};
use crate::store;

/// Zulip's `MAX_EMOJI_FILE_SIZE_MIB`.
pub const MAX_EMOJI_FILE_SIZE_MIB: u64 = 5;

/// What the handler made of the request: the name from the path, how many files came,
/// and the stored image (its file name) or why the file is no image.
#[derive(Debug, Clone)]
pub struct EmojiUpload {
    pub name: String,
    pub files: usize,
    /// The stored 64-pixel PNG's file name under `<realm_id>/emoji/images/`.
    pub file_name: Option<String>,
    /// Zulip's `BAD_IMAGE` message, when the file could not be made an emoji.
    pub bad_image: Option<String>,
}

/// Zulip's `check_valid_emoji_name`.
pub fn check_name(name: &str) -> ApiResult<()> {
    if name.is_empty() {
        return Err(ApiError::bad_request("Emoji name is missing"));
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if !name.chars().all(allowed) {
        return Err(ApiError::bad_request(
            "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
        ));
    }
    if name.ends_with(['-', '_']) {
        return Err(ApiError::bad_request("Emoji names must end with either a letter or digit."));
    }
    Ok(())
}

/// The name of a path as Zulip takes it: stripped, spaces as underscores.
pub fn normalize_name(raw: &str) -> String {
    crate::validate::python_strip(raw).replace(' ', "_")
}

/// A planned new emoji.
#[derive(Debug)]
pub struct AddEmojiChange {
    realm_id: RealmId,
    emoji: RealmEmoji,
}

/// Plans adding an emoji: name, permission (`can_add_custom_emoji_group`), a free name,
/// exactly one file, only administrators override built-in emoji, then the image.
pub fn plan_add(state: &RealmState, user_id: UserId, upload: EmojiUpload) -> ApiResult<AddEmojiChange> {
    let user = require_member(state, user_id)?;
    let name = normalize_name(&upload.name);
    check_name(&name)?;
    if !has_realm_permission(state, "can_add_custom_emoji_group", user.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    if state.uploads().active_emoji(&name).is_some() {
        return Err(ApiError::bad_request("A custom emoji with this name already exists."));
    }
    if upload.files != 1 {
        return Err(ApiError::bad_request("You must upload exactly one file."));
    }
    if crate::emoji::code_of(&name).is_some() && !user.role.is_admin() {
        return Err(ApiError::bad_request("Only administrators can override built-in emoji."));
    }
    if let Some(msg) = upload.bad_image {
        return Err(ApiError::new(ErrorCode::BadImage, 400, msg));
    }
    let file_name = upload.file_name.ok_or_else(ApiError::internal)?;
    let emoji = RealmEmoji { id: 0, name, file_name, author_id: Some(user.id), deactivated: false, is_animated: false };
    Ok(AddEmojiChange { realm_id: state.realm().id, emoji })
}

impl Change for AddEmojiChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let e = &self.emoji;
        self.emoji.id = store::attachments::insert_emoji(tx, self.realm_id, &e.name, &e.file_name, e.author_id)?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let added = json!({"op": "add", "emoji": emoji_dict(&self.emoji, state.realm().id)});
        state.uploads_mut().put_emoji(self.emoji);
        Applied::events(emoji_events(state, added))
    }
}

/// The events of a change to the custom emoji, to everyone: `realm_emoji` `update` with
/// every custom emoji for clients without the `individual_emoji_changes` capability, and
/// `granular` (`add` or `update_one`, feature level 491) for those with it (`queue::spec`
/// keeps one of the two per queue).
fn emoji_events(state: &RealmState, granular: Value) -> Vec<Outgoing> {
    let emoji = state.uploads().emoji_dicts(state.realm().id);
    vec![
        state.to_everyone(Event::new("realm_emoji", json!({"op": "update", "realm_emoji": emoji}))),
        state.to_everyone(Event::new("realm_emoji", granular)),
    ]
}

/// A planned deactivation.
#[derive(Debug)]
pub struct RemoveEmojiChange {
    emoji: RealmEmoji,
}

/// Plans deactivating the active emoji `name`: administrators, or its author.
pub fn plan_remove(state: &RealmState, user_id: UserId, name: &str) -> ApiResult<RemoveEmojiChange> {
    let user = state.user_or_err(user_id)?;
    let emoji = state
        .uploads()
        .active_emoji(name)
        .ok_or_else(|| ApiError::bad_request(format!("Emoji '{name}' does not exist")))?;
    if !user.role.is_admin() && emoji.author_id != Some(user.id) {
        return Err(ApiError::bad_request("Must be an organization administrator or emoji author"));
    }
    Ok(RemoveEmojiChange { emoji: RealmEmoji { deactivated: true, ..emoji.clone() } })
}

impl Change for RemoveEmojiChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::attachments::deactivate_emoji(tx, self.emoji.id)?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let changed = json!({"op": "update_one", "emoji_id": self.emoji.id.to_string(), "data": {"deactivated": true}});
        state.uploads_mut().put_emoji(self.emoji);
        Applied::events(emoji_events(state, changed))
    }
}
