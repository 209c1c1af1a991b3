//! Channels (Zulip's streams) and subscriptions: creation, metadata, membership, default
//! channels, their register data sets and events (spec 2.4-2.6, 4.1, 4.2).
//!
//! - Here: the messages, and handlers that plan a change ([`ops`]) and commit it.
//! - [`access`]: who may see and do what in a channel (used by the other features).
//! - [`reads`]: the channel reads and register data sets, from the state.
//! - [`format`]: the channel objects of the API.

pub mod access;
pub mod format;
pub mod ops;
pub mod reads;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use ops::{ChannelOptions, ChannelUpdate, NewChannel, Principals, SubscribeRequest, SubscribeResult};
pub use reads::{ChannelQuery, IncludeSubscribers, StreamFilter};

use super::actor::RealmActor;
use crate::clock::now;
use crate::error::ApiResult;
use crate::ids::{ChannelId, UserId};
use crate::realm::notices::channel_events::{channel_archived_notice, channel_update_notices};
use crate::realm::notices::subscription_notices;

/// `POST /users/me/subscriptions`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<SubscribeResult>")]
pub struct Subscribe {
    pub acting: UserId,
    pub request: SubscribeRequest,
}

/// `POST /channels/create`; replies with the new channel's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<ChannelId>")]
pub struct CreateChannel {
    pub acting: UserId,
    pub name: String,
    pub description: Option<String>,
    pub subscribers: Vec<i64>,
    pub send_new_subscription_messages: bool,
    /// Announce the channel in the new-channel announcements channel.
    pub announce: bool,
    pub options: ChannelOptions,
}

/// `DELETE /users/me/subscriptions`; replies with `removed` and `not_removed`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct Unsubscribe {
    pub acting: UserId,
    pub names: Vec<String>,
    pub principals: Option<Principals>,
}

/// `PATCH /streams/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateChannel {
    pub acting: UserId,
    pub channel_id: ChannelId,
    pub update: ChannelUpdate,
}

/// `DELETE /streams/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ArchiveChannel {
    pub acting: UserId,
    pub channel_id: ChannelId,
}

/// `POST /default_streams` (`add`) and `DELETE /default_streams`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetDefaultChannel {
    pub acting: UserId,
    pub channel_id: ChannelId,
    pub add: bool,
}

/// A channel read by `viewer`; replies with the response fields.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct QueryChannels {
    pub viewer: UserId,
    pub query: ChannelQuery,
}

impl Handler<Subscribe> for RealmActor {
    type Result = ApiResult<SubscribeResult>;

    fn handle(&mut self, msg: Subscribe, _: &mut Self::Context) -> Self::Result {
        let announce = msg.request.announce;
        let change = ops::plan_subscribe(&self.state, msg.acting, msg.request, now())?;
        let result = self.commit(change)?;
        if let Some(acting) = self.state.user(msg.acting).cloned() {
            let dms = result.new_subscription_messages_sent == Some(true);
            let created = &result.channel_ids;
            let notices = subscription_notices(&self.state, &acting, &result.subscribed, created, announce, dms);
            self.post_notices(notices);
        }
        Ok(result)
    }
}

impl Handler<CreateChannel> for RealmActor {
    type Result = ApiResult<ChannelId>;

    fn handle(&mut self, msg: CreateChannel, _: &mut Self::Context) -> Self::Result {
        let new = NewChannel {
            name: msg.name,
            description: msg.description,
            subscribers: msg.subscribers,
            send_new_subscription_messages: msg.send_new_subscription_messages,
            announce: msg.announce,
            options: msg.options,
        };
        let change = ops::plan_create_channel(&self.state, msg.acting, new, now())?;
        let id = self.commit(change)?;
        // The channel-created notice comes whether or not the channel is announced.
        if let Some(acting) = self.state.user(msg.acting) {
            let notices = subscription_notices(&self.state, acting, &Default::default(), &[id], msg.announce, false);
            self.post_notices(notices);
        }
        Ok(id)
    }
}

impl Handler<Unsubscribe> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: Unsubscribe, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_unsubscribe(&self.state, msg.acting, &msg.names, msg.principals.as_ref())?;
        self.commit(change)
    }
}

impl Handler<UpdateChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateChannel, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, msg.acting, msg.channel_id, msg.update)?;
        let (old, new) = change.channels();
        let (old, new) = (old.clone(), new.clone());
        self.commit(change)?;
        if let Some(acting) = self.state.user(msg.acting) {
            let notices = channel_update_notices(&self.state, acting, &old, &new);
            self.post_notices(notices);
        }
        Ok(())
    }
}

impl Handler<ArchiveChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ArchiveChannel, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_archive(&self.state, msg.acting, msg.channel_id)?;
        self.commit(change)?;
        if let Some(channel) = self.state.channel(msg.channel_id) {
            let notices = channel_archived_notice(&self.state, channel);
            self.post_notices(notices);
        }
        Ok(())
    }
}

impl Handler<SetDefaultChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetDefaultChannel, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_default_channel(&self.state, msg.acting, msg.channel_id, msg.add)?;
        self.commit(change)
    }
}

impl Handler<QueryChannels> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: QueryChannels, _: &mut Self::Context) -> Self::Result {
        reads::answer(&self.state, self.viewer(msg.viewer)?, msg.query)
    }
}

#[cfg(test)]
pub(crate) mod tests;
