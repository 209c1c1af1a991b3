//! Personal channel and topic settings: subscription properties (spec 4.3), muted topics
//! (4.4), topic visibility policies (4.5) and the topics of a channel (4.6).
//!
//! Every change here concerns the acting user alone, so its events go to that user only.
//!
//! - Here: the messages, and handlers that plan a change and commit it.
//! - [`policies`]: topic visibility policies and muting, and their register data.
//! - [`properties`]: a subscription's personal properties.
//! - [`history`]: the topics of a channel (a history read, on the reader threads).

pub mod history;
pub mod policies;
pub mod properties;

use actix::prelude::*;

pub use history::{channel_topics, GetChannelTopics};
pub use policies::{muted_topics_list, user_topics_list, TopicChannel, TopicPolicy};
pub use properties::{PropertyChange, PropertyUpdate};

use crate::clock::now;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
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

/// The same for reading: archived channels too (`allow_archived`; their topics are readable
/// since feature level 480).
pub(crate) fn readable_channel<'a>(state: &'a RealmState, user: &User, id: ChannelId) -> ApiResult<&'a Channel> {
    state.channel(id).filter(|c| state.has_content_access(user, c)).ok_or_else(invalid_channel_id)
}

/// `POST /user_topics`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetUserTopic {
    pub user_id: UserId,
    pub stream_id: i64,
    pub topic: String,
    pub visibility_policy: i64,
}

/// `PATCH /users/me/subscriptions/muted_topics`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct MuteTopic {
    pub user_id: UserId,
    pub channel: TopicChannel,
    pub topic: String,
    /// `op=add` (true) or `op=remove` (false).
    pub mute: bool,
}

/// `POST /users/me/subscriptions/properties` (and the single-property `PATCH`): changes
/// the requester's own subscription settings.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateSubscriptionProperties {
    pub user_id: UserId,
    pub changes: Vec<PropertyChange>,
}

impl Handler<SetUserTopic> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetUserTopic, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        let (channel, topic, policy) = (msg.stream_id, &msg.topic, msg.visibility_policy);
        let change = policies::plan_set_user_topic(&self.state, msg.user_id, channel, topic, policy, now())?;
        self.commit(change)
    }
}

impl Handler<MuteTopic> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: MuteTopic, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        let change = policies::plan_mute_topic(&self.state, msg.user_id, &msg.channel, &msg.topic, msg.mute, now())?;
        self.commit(change)
    }
}

impl Handler<UpdateSubscriptionProperties> for RealmActor {
    type Result = ApiResult<()>;

    /// One change after the other, each committed on its own, as Zulip does: a refused
    /// change (no access, not subscribed) stops the request after the earlier ones took
    /// effect (and sent their events).
    fn handle(&mut self, msg: UpdateSubscriptionProperties, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        for change in &msg.changes {
            let change = properties::plan_property(&self.state, msg.user_id, change)?;
            self.commit(change)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
