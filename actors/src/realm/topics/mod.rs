//! Personal channel and topic settings: subscription properties (spec 4.3), muted topics
//! (4.4), topic visibility policies (4.5) and the topics of a channel (4.6).
//!
//! Every change here concerns the acting user alone, so its events go to that user only.

pub mod history;
pub mod policies;
pub mod properties;

pub use history::{channel_topics, GetChannelTopics};
pub use policies::{muted_topics_list, user_topics_list, MuteTopic, SetUserTopic, TopicChannel};
pub use properties::{PropertyChange, UpdateSubscriptionProperties};

use crate::error::{ApiError, ApiResult};
use crate::ids::ChannelId;
use crate::realm::model::{Channel, User};
use crate::realm::state::RealmState;

/// Zulip's "Invalid channel ID".
fn invalid_channel_id() -> ApiError {
    ApiError::bad_request("Invalid channel ID")
}

/// Zulip's `access_stream_by_id`: an active channel `user` has content access to, else
/// "Invalid channel ID".
pub(crate) fn accessible_channel<'a>(state: &'a RealmState, user: &User, id: ChannelId) -> ApiResult<&'a Channel> {
    state.channel(id).filter(|c| !c.is_archived && state.has_content_access(user, c)).ok_or_else(invalid_channel_id)
}
