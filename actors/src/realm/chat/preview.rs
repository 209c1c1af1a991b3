//! `POST /messages/render` (Zulip's `render_message_backend`): a message's content rendered
//! exactly as sending it would render it (mentions, channel links, emoji, linkifiers),
//! nothing stored. It runs on the reader threads against the latest state snapshot, so a
//! preview never waits behind the organization's changes.

use rusqlite::Connection;

use super::render::render;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::reader::HistoryRead;
use crate::realm::state::RealmState;

/// The rendered HTML of `content` (at most a message's length, checked by the caller).
#[derive(Debug, Clone)]
pub struct RenderPreview {
    pub user_id: UserId,
    pub content: String,
}

impl HistoryRead for RenderPreview {
    type Output = String;

    fn run(self, state: &RealmState, _: &Connection) -> ApiResult<String> {
        if state.user(self.user_id).is_none() {
            tracing::warn!(realm.id = %state.realm().id, user.id = %self.user_id, "render for a user this realm does not have");
            return Err(ApiError::internal());
        }
        Ok(render(state, &self.content).html)
    }
}
