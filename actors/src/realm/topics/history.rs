//! The topics of a channel (`GET /users/me/{stream_id}/topics`; Zulip's
//! `get_topics_backend` and `get_topic_history_for_stream`), a history read answered on the
//! reader threads.
//!
//! The user needs content access to the channel ("Invalid channel ID" otherwise). With
//! public history every topic of the channel is listed; with protected history
//! (`history_public_to_subscribers` false) only topics of messages the user received,
//! that is messages sent while they were subscribed, as Zulip's join on UserMessage does.

use rusqlite::Connection;
use serde_json::{json, Value};

use super::readable_channel;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::reader::HistoryRead;
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::state::RealmState;
use crate::store;

/// `GET /users/me/{stream_id}/topics` (a history read).
#[derive(Debug, Clone)]
pub struct GetChannelTopics {
    pub user_id: UserId,
    pub stream_id: i64,
    pub allow_empty_topic_name: bool,
}

/// The `topics` list for `viewer`: `{name, max_id}` newest first; the empty topic is named
/// `""` with `allow_empty_topic_name`, else by its display name.
pub fn channel_topics(
    state: &RealmState,
    conn: &Connection,
    viewer: UserId,
    channel: i64,
    allow_empty_topic_name: bool,
) -> ApiResult<Vec<Value>> {
    let user = state.user_or_err(viewer)?;
    let channel = readable_channel(state, user, ChannelId(channel))?;
    let received_by = (!channel.history_public_to_subscribers).then_some(viewer);
    let topics = store::channels::channel_topics(conn, channel.id, received_by)?;
    Ok(topics
        .into_iter()
        .map(|(name, max_id)| {
            let name =
                if name.is_empty() && !allow_empty_topic_name { EMPTY_TOPIC_DISPLAY_NAME.to_owned() } else { name };
            json!({"name": name, "max_id": max_id})
        })
        .collect())
}

impl HistoryRead for GetChannelTopics {
    type Output = Vec<Value>;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Vec<Value>> {
        if state.user(self.user_id).is_none() {
            tracing::warn!(realm.id = %state.realm().id, user.id = %self.user_id, "read for a user this realm does not have");
            return Err(ApiError::internal());
        }
        channel_topics(state, conn, self.user_id, self.stream_id, self.allow_empty_topic_name)
    }
}
