//! `POST /messages/render` (Zulip's `render_message_backend`): a message's content rendered
//! exactly as sending it would render it (mentions, channel links, emoji, linkifiers),
//! nothing stored. It runs on the reader threads against the latest state snapshot, so a
//! preview never waits behind the organization's changes.

use rusqlite::Connection;

use super::render::render;
use crate::error::ApiResult;
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
        super::viewer(state, self.user_id)?;
        Ok(render(state, &self.content).html)
    }
}
