//! Channel reads: listings, single channels, subscribers and the register data sets.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::access::visible_channel;
use super::format;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::bots::ops::access_bot;
use crate::realm::model::{Channel, Role, SystemBot, User};
use crate::realm::state::RealmState;

/// `include_subscribers` of `POST /register` and `GET /users/me/subscriptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeSubscribers {
    #[default]
    No,
    Yes,
    Partial,
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
    /// `GET /users/{user_id}/channels` (FL 440): `{"subscribed_channel_ids": [...]}`.
    UserChannels(UserId),
    /// `GET /default_streams`: `{"default_streams": [...]}`.
    DefaultStreams,
    /// `GET /streams/{id}/email_address` with its `sender_id`: `{"email": ""}`.
    EmailAddress(ChannelId, Option<i64>),
}

/// Answers a channel read for `viewer`: the response fields.
pub fn answer(state: &RealmState, viewer: &User, query: ChannelQuery) -> ApiResult<Map<String, Value>> {
    let (key, value) = match query {
        ChannelQuery::Streams(filter) => ("streams", Value::from(list_streams(state, viewer, filter)?)),
        ChannelQuery::Stream(id) => ("stream", get_stream(state, viewer, id)?),
        ChannelQuery::StreamId(name) => ("stream_id", Value::from(stream_id_by_name(state, viewer, &name)?.0)),
        ChannelQuery::Members(id) => ("subscribers", Value::from(members(state, viewer, id)?)),
        ChannelQuery::Subscriptions(include) => {
            ("subscriptions", Value::from(my_subscriptions(state, viewer, include)))
        }
        ChannelQuery::IsSubscribed(user, id) => ("is_subscribed", Value::from(is_subscribed(state, viewer, user, id)?)),
        ChannelQuery::UserChannels(user) => {
            ("subscribed_channel_ids", Value::from(user_channels(state, viewer, user)?))
        }
        ChannelQuery::DefaultStreams => ("default_streams", Value::from(default_streams(state, viewer))),
        ChannelQuery::EmailAddress(id, sender) => ("email", Value::from(email_address(state, viewer, id, sender)?)),
    };
    let mut out = Map::new();
    out.insert(key.to_owned(), value);
    Ok(out)
}

/// `GET /streams/{id}/email_address` (Zulip's `get_stream_email_address`) on a server
/// without an email gateway: the channel is checked (content access, not archived), then
/// since FL 448 the permission to post in it (`can_send_message_group`, a bot also through
/// its owner, as for sending), then the sender (Email Gateway, the default; the user; or a
/// bot they administer), and the address is empty, as Zulip's `encode_email_address`
/// answers when `EMAIL_GATEWAY_PATTERN` is empty.
fn email_address(state: &RealmState, viewer: &User, id: ChannelId, sender: Option<i64>) -> ApiResult<String> {
    let channel = state
        .channel(id)
        .filter(|c| !c.is_archived && state.has_content_access(viewer, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))?;
    let may_post = |user: &User| state.in_channel_group(channel, "can_send_message_group", user);
    let owner = viewer.bot_owner_id.and_then(|id| state.user(id)).filter(|_| viewer.is_bot);
    if !(may_post(viewer) || owner.is_some_and(may_post)) {
        return Err(ApiError::bad_request("You do not have permission to post in this channel."));
    }
    let gateway = state.system_bot(SystemBot::EMAIL_GATEWAY).map(|bot| bot.id);
    match sender.map(UserId) {
        None => {}
        Some(id) if Some(id) == gateway || id == viewer.id => {}
        Some(id) => {
            access_bot(state, viewer, id)?;
        }
    }
    Ok(String::new())
}

/// The filters of `GET /streams`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamFilter {
    pub include_public: bool,
    pub include_web_public: bool,
    pub include_subscribed: bool,
    pub exclude_archived: bool,
    pub include_all: bool,
    pub include_default: bool,
    pub include_owner_subscribed: bool,
    pub include_can_access_content: bool,
}

impl Default for StreamFilter {
    fn default() -> Self {
        StreamFilter {
            include_public: true,
            include_web_public: false,
            include_subscribed: true,
            exclude_archived: true,
            include_all: false,
            include_default: false,
            include_owner_subscribed: false,
            include_can_access_content: false,
        }
    }
}

/// For a bot: whether its owner is subscribed to the channel (Zulip's
/// `include_owner_subscribed`). Always false for humans.
fn owner_subscribed(state: &RealmState, user: &User, channel: ChannelId) -> bool {
    user.is_bot && user.bot_owner_id.is_some_and(|owner| state.is_subscribed(owner, channel))
}

/// Whether `channel` passes the filter for `user`.
fn selected(state: &RealmState, user: &User, channel: &Channel, f: &StreamFilter) -> bool {
    if f.exclude_archived && channel.is_archived {
        return false;
    }
    if f.include_all {
        return state.has_metadata_access(user, channel);
    }
    (f.include_public && user.role != Role::Guest && !channel.invite_only)
        || (f.include_web_public && channel.is_web_public)
        || (f.include_subscribed && state.is_subscribed(user.id, channel.id))
        || (f.include_can_access_content && state.has_content_access(user, channel))
        || (f.include_owner_subscribed
            && owner_subscribed(state, user, channel.id)
            && state.has_metadata_access(user, channel))
}

/// `GET /streams`: the channels the filter selects, by name.
pub fn list_streams(state: &RealmState, user: &User, f: StreamFilter) -> ApiResult<Vec<Value>> {
    if f.include_all && !user.role.is_admin() {
        return Err(ApiError::bad_request("User not authorized for this query"));
    }
    let mut channels: Vec<&Channel> = state.channels().filter(|c| selected(state, user, c, &f)).collect();
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(channels
        .into_iter()
        .map(|c| {
            let mut dict = format::stream_dict(state, c);
            if f.include_default {
                dict.insert("is_default".into(), json!(state.default_channels().contains(&c.id)));
            }
            Value::Object(dict)
        })
        .collect())
}

/// `GET /streams/{id}`.
pub fn get_stream(state: &RealmState, user: &User, id: ChannelId) -> ApiResult<Value> {
    let channel = visible_channel(state, user, id)?;
    Ok(Value::Object(format::stream_dict(state, channel)))
}

/// `GET /get_stream_id`.
pub fn stream_id_by_name(state: &RealmState, user: &User, name: &str) -> ApiResult<ChannelId> {
    state
        .channel_by_name(name.trim())
        .filter(|c| state.has_metadata_access(user, c))
        .map(|c| c.id)
        .ok_or_else(|| ApiError::bad_request(format!("Invalid channel name '{name}'")))
}

/// `GET /streams/{id}/members`.
pub fn members(state: &RealmState, user: &User, id: ChannelId) -> ApiResult<Vec<i64>> {
    let channel = visible_channel(state, user, id)?;
    Ok(format::active_subscribers(state, channel.id))
}

/// `GET /users/{user_id}/subscriptions/{stream_id}`.
pub fn is_subscribed(state: &RealmState, viewer: &User, target: UserId, id: ChannelId) -> ApiResult<bool> {
    // Zulip looks the user up first.
    state.user(target).ok_or_else(|| ApiError::bad_request("No such user"))?;
    let channel = visible_channel(state, viewer, id)?;
    Ok(state.is_subscribed(target, channel.id))
}

/// `GET /users/{user_id}/channels` (FL 440): the channels `target` (a human or, from FL 458,
/// a bot; active or not) is subscribed to whose metadata the viewer may see, ascending.
pub fn user_channels(state: &RealmState, viewer: &User, target: UserId) -> ApiResult<Vec<i64>> {
    let target = state.user_or_err(target)?;
    Ok(state
        .subscribed_channels(target.id)
        .filter_map(|id| state.channel(id))
        .filter(|c| state.has_metadata_access(viewer, c))
        .map(|c| c.id.0)
        .collect())
}

/// The subscription data set of `user`: `(subscriptions, unsubscribed, never_subscribed)`,
/// each sorted by name (Zulip's `gather_subscriptions_helper`); `never_subscribed` written
/// as a JSON array, its objects (the same for every user) from the organization's cache.
pub fn subscription_sets(
    state: &RealmState,
    user: &User,
    include: IncludeSubscribers,
    include_archived: bool,
) -> (Vec<Value>, Vec<Value>, String) {
    let (mut subscribed, mut unsubscribed, mut never) = (Vec::new(), Vec::new(), Vec::new());
    for channel in state.channels() {
        if channel.is_archived && !include_archived {
            continue;
        }
        let visible = state.has_metadata_access(user, channel);
        let subscription = state.subscription(user.id, channel.id);
        if subscription.is_none() {
            if visible {
                never.push((channel.name.as_str(), never_subscribed_json(state, channel, include)));
            }
            continue;
        }
        let mut dict = match subscription {
            Some(sub) if sub.active || visible => format::subscription_dict(state, channel, sub),
            _ => continue,
        };
        let active = state.is_subscribed(user.id, channel.id);
        if include != IncludeSubscribers::No && (active || visible) {
            let ids = format::active_subscribers(state, channel.id);
            let key = if include == IncludeSubscribers::Partial { "partial_subscribers" } else { "subscribers" };
            dict.insert(key.into(), json!(ids));
        }
        let entry = (channel.name.clone(), Value::Object(dict));
        match subscription {
            Some(sub) if sub.active => subscribed.push(entry),
            _ => unsubscribed.push(entry),
        }
    }
    let sorted = |mut v: Vec<(String, Value)>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(_, d)| d).collect::<Vec<_>>()
    };
    never.sort_by(|a, b| a.0.cmp(b.0));
    (sorted(subscribed), sorted(unsubscribed), json_array(never.into_iter().map(|(_, json)| json)))
}

/// A never-subscribed channel's object, with its subscribers as `include` asks.
fn never_subscribed_json(state: &RealmState, channel: &Channel, include: IncludeSubscribers) -> Arc<str> {
    let shape = match include {
        IncludeSubscribers::No => SHAPE_NEVER,
        IncludeSubscribers::Yes => SHAPE_NEVER_SUBSCRIBERS,
        IncludeSubscribers::Partial => SHAPE_NEVER_PARTIAL,
    };
    state.channel_json(channel.id, shape, || {
        let mut dict = format::never_subscribed_dict(state, channel);
        if include != IncludeSubscribers::No {
            let ids = format::active_subscribers(state, channel.id);
            let key = if include == IncludeSubscribers::Partial { "partial_subscribers" } else { "subscribers" };
            dict.insert(key.into(), json!(ids));
        }
        Value::Object(dict).to_string()
    })
}

/// The shapes of the channel objects this module keeps in the organization's cache.
const SHAPE_STREAM: u8 = 0;
const SHAPE_NEVER: u8 = 1;
const SHAPE_NEVER_SUBSCRIBERS: u8 = 2;
const SHAPE_NEVER_PARTIAL: u8 = 3;

/// A JSON array of objects already written.
fn json_array(items: impl Iterator<Item = Arc<str>>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&item);
    }
    out.push(']');
    out
}

/// `GET /users/me/subscriptions`: the active subscriptions, by name.
pub fn my_subscriptions(state: &RealmState, user: &User, include: IncludeSubscribers) -> Vec<Value> {
    let mut subs: Vec<(&str, Map<String, Value>)> = state
        .subscribed_channels(user.id)
        .filter_map(|id| Some((state.channel(id)?, state.subscription(user.id, id)?)))
        .filter(|(c, _)| !c.is_archived)
        .map(|(c, s)| {
            let mut dict = format::subscription_dict(state, c, s);
            if include != IncludeSubscribers::No {
                let key = if include == IncludeSubscribers::Partial { "partial_subscribers" } else { "subscribers" };
                dict.insert(key.into(), json!(format::active_subscribers(state, c.id)));
            }
            (c.name.as_str(), dict)
        })
        .collect();
    subs.sort_by(|a, b| a.0.cmp(b.0));
    subs.into_iter().map(|(_, d)| Value::Object(d)).collect()
}

/// The `streams` register data set: every channel the user may know of (metadata access),
/// the same set `stream` events reach them for, so that a client's state after a reconnect
/// agrees with the events it received; written as a JSON array, its objects (the same for
/// every user) from the organization's cache.
pub fn register_streams(state: &RealmState, user: &User, include_archived: bool) -> String {
    let filter = StreamFilter { include_all: true, exclude_archived: !include_archived, ..StreamFilter::default() };
    let mut channels: Vec<&Channel> =
        state.visible_channels(user).filter(|c| selected(state, user, c, &filter)).collect();
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    json_array(
        channels.into_iter().map(|c| {
            state.channel_json(c.id, SHAPE_STREAM, || Value::Object(format::stream_dict(state, c)).to_string())
        }),
    )
}

/// `GET /default_streams` (not a route of Zulip's, which offers the same through register's
/// `realm_default_streams` and `GET /streams?include_default=true`): the default channels
/// as channel objects, by name. Guests are not told them, as in Zulip.
pub fn default_streams(state: &RealmState, user: &User) -> Vec<Value> {
    if user.role == Role::Guest {
        return Vec::new();
    }
    let mut channels: Vec<&Channel> = state.default_channels().iter().filter_map(|id| state.channel(*id)).collect();
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    channels.into_iter().map(|c| Value::Object(format::stream_dict(state, c))).collect()
}
