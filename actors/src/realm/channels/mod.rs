//! Channels (Zulip's streams) and subscriptions: creation, metadata, membership, default
//! channels, their register data sets and events (spec 2.4-2.6, 4.1, 4.2).

pub mod access;
pub mod format;
pub mod ops;
pub mod reads;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use ops::{ChannelOptions, ChannelUpdate, Principals, SubscribeRequest, SubscribeResult};
pub use reads::StreamFilter;

use super::actor::RealmActor;
use crate::clock::now;
use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{ChannelId, UserId};

/// `include_subscribers` of `POST /register` and `GET /users/me/subscriptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeSubscribers {
    #[default]
    No,
    Yes,
    Partial,
}

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

/// The channel reads, answered from the state.
#[derive(Debug, Clone)]
pub enum ChannelQuery {
    /// `GET /streams`: `{"streams": [...]}`.
    Streams(StreamFilter),
    /// `GET /streams/{id}`: `{"stream": {...}}`.
    Stream(ChannelId),
    /// `GET /get_stream_id`: `{"stream_id": N}`.
    StreamId(String),
    /// `GET /streams/{id}/members`: `{"subscribers": [...]}`.
    Members(ChannelId),
    /// `GET /users/me/subscriptions`: `{"subscriptions": [...]}`.
    Subscriptions(IncludeSubscribers),
    /// `GET /users/{user_id}/subscriptions/{stream_id}`: `{"is_subscribed": bool}`.
    IsSubscribed(UserId, ChannelId),
    /// `GET /default_streams`: `{"default_streams": [...]}`.
    DefaultStreams,
}

/// A channel read by `viewer`; replies with the response fields.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct QueryChannels {
    pub viewer: UserId,
    pub query: ChannelQuery,
}

impl RealmActor {
    /// Publishes a committed change's events and returns `out`.
    fn channels_done<T>(&mut self, out: T, events: Vec<Outgoing>) -> ApiResult<T> {
        self.committed(events);
        Ok(out)
    }
}

impl Handler<Subscribe> for RealmActor {
    type Result = ApiResult<SubscribeResult>;

    fn handle(&mut self, msg: Subscribe, _: &mut Self::Context) -> Self::Result {
        let (result, events) = ops::subscribe(&mut self.state, &self.store, msg.acting, msg.request, now())?;
        self.channels_done(result, events)
    }
}

impl Handler<CreateChannel> for RealmActor {
    type Result = ApiResult<ChannelId>;

    fn handle(&mut self, msg: CreateChannel, _: &mut Self::Context) -> Self::Result {
        let new = ops::NewChannel {
            name: msg.name,
            description: msg.description,
            subscribers: msg.subscribers,
            send_new_subscription_messages: msg.send_new_subscription_messages,
            options: msg.options,
        };
        let (id, events) = ops::create_channel(&mut self.state, &self.store, msg.acting, new, now())?;
        self.channels_done(id, events)
    }
}

impl Handler<Unsubscribe> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: Unsubscribe, _: &mut Self::Context) -> Self::Result {
        let (out, events) = ops::unsubscribe(&mut self.state, &self.store, msg.acting, &msg.names, msg.principals)?;
        self.channels_done(out, events)
    }
}

impl Handler<UpdateChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateChannel, _: &mut Self::Context) -> Self::Result {
        let events = ops::update_channel(&mut self.state, &self.store, msg.acting, msg.channel_id, msg.update)?;
        self.channels_done((), events)
    }
}

impl Handler<ArchiveChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ArchiveChannel, _: &mut Self::Context) -> Self::Result {
        let events = ops::archive_channel(&mut self.state, &self.store, msg.acting, msg.channel_id)?;
        self.channels_done((), events)
    }
}

impl Handler<SetDefaultChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetDefaultChannel, _: &mut Self::Context) -> Self::Result {
        let events = ops::set_default_stream(&mut self.state, &self.store, msg.acting, msg.channel_id, msg.add)?;
        self.channels_done((), events)
    }
}

impl Handler<QueryChannels> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: QueryChannels, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        let state = &self.state;
        let mut out = Map::new();
        let (key, value) = match msg.query {
            ChannelQuery::Streams(filter) => ("streams", Value::from(reads::list_streams(state, viewer, filter)?)),
            ChannelQuery::Stream(id) => ("stream", reads::get_stream(state, viewer, id)?),
            ChannelQuery::StreamId(name) => {
                ("stream_id", Value::from(reads::stream_id_by_name(state, viewer, &name)?.0))
            }
            ChannelQuery::Members(id) => ("subscribers", Value::from(reads::members(state, viewer, id)?)),
            ChannelQuery::Subscriptions(include) => {
                ("subscriptions", Value::from(reads::my_subscriptions(state, viewer, include)))
            }
            ChannelQuery::IsSubscribed(user, id) => {
                ("is_subscribed", Value::from(reads::is_subscribed(state, viewer, user, id)?))
            }
            ChannelQuery::DefaultStreams => ("default_streams", Value::from(reads::default_streams(state, viewer))),
        };
        out.insert(key.to_owned(), value);
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
