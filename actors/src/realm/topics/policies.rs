//! Topic visibility policies (`POST /user_topics`) and the legacy topic muting (`PATCH
//! /users/me/subscriptions/muted_topics`); Zulip's `update_user_topic`,
//! `update_muted_topic` and `do_set_user_topic_visibility_policy`.
//!
//! Setting a policy a topic already has, or clearing one it does not have, changes nothing
//! and sends nothing. A change sends the legacy `muted_topics` event (the full list of
//! muted topics) and then `user_topic`, both to the user alone.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::accessible_channel;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::model::{Channel, User, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Visibility policy 0: none (inherit).
pub const INHERIT: i64 = 0;
/// Visibility policy 1: muted.
pub const MUTED: i64 = 1;
/// Visibility policy 2: unmuted (in a muted channel).
pub const UNMUTED: i64 = 2;
/// Visibility policy 3: followed (the largest valid policy).
pub const FOLLOWED: i64 = 3;

/// How a request names its channel (the muting endpoint takes either form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicChannel {
    Id(i64),
    Name(String),
}

/// The user's policies in channels that are not archived, in (channel, topic) order.
fn live_topics<'a>(state: &'a RealmState, user: UserId) -> impl Iterator<Item = (&'a Channel, &'a UserTopic)> + 'a {
    state
        .user_topics_of(user)
        .filter_map(move |t| state.channel(t.channel_id).filter(|c| !c.is_archived).map(|c| (c, t)))
}

/// The `user_topics` register data: every policy of the user in channels that are not
/// archived; with `empty_topic_name` false the empty topic is shown by its display name.
pub fn user_topics_list(state: &RealmState, user: UserId, empty_topic_name: bool) -> Vec<Value> {
    live_topics(state, user)
        .map(|(_, t)| {
            let name = if t.topic.is_empty() && !empty_topic_name { EMPTY_TOPIC_DISPLAY_NAME } else { &t.topic };
            json!({
                "stream_id": t.channel_id,
                "topic_name": name,
                "visibility_policy": t.visibility_policy,
                "last_updated": t.last_updated,
            })
        })
        .collect()
}

/// The legacy `muted_topics` list: `[channel name, topic, last_updated]` for each muted
/// topic in a channel that is not archived.
pub fn muted_topics_list(state: &RealmState, user: UserId) -> Vec<Value> {
    live_topics(state, user)
        .filter(|(_, t)| t.visibility_policy == MUTED)
        .map(|(c, t)| json!([c.name, t.topic, t.last_updated]))
        .collect()
}

/// Zulip's `access_stream_to_remove_visibility_policy_by_*`: clearing a policy needs only
/// a channel of the organization (archived or inaccessible ones included, so that a user
/// who lost access can still clear their policies). A channel the user may not know of
/// and holds no policy in is answered as if it did not exist, so that its existence does
/// not leak.
fn channel_to_clear<'a>(
    state: &'a RealmState,
    user: &User,
    channel: &TopicChannel,
    error: &str,
) -> ApiResult<&'a Channel> {
    let found = match channel {
        TopicChannel::Id(id) => state.channel(ChannelId(*id)),
        TopicChannel::Name(name) => state.channel_by_name(name),
    };
    found
        .filter(|c| state.has_metadata_access(user, c) || state.user_topics_of(user.id).any(|t| t.channel_id == c.id))
        .ok_or_else(|| ApiError::bad_request(error))
}

/// Zulip's `access_stream_by_id` / `access_stream_by_name`: setting a policy needs content
/// access.
fn channel_to_set<'a>(state: &'a RealmState, user: &User, channel: &TopicChannel) -> ApiResult<&'a Channel> {
    match channel {
        TopicChannel::Id(id) => accessible_channel(state, user, ChannelId(*id)),
        TopicChannel::Name(name) => state
            .channel_by_name(name)
            .filter(|c| !c.is_archived && state.has_content_access(user, c))
            .ok_or_else(|| ApiError::bad_request(format!("Invalid channel name '{name}'"))),
    }
}

/// A user's new policy for one topic (none: the topic already has it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicPolicy {
    /// The row to write; `None` when nothing changes.
    row: Option<UserTopic>,
    /// The topic as the request spelled it (the event carries it).
    topic: String,
}

impl TopicPolicy {
    /// Whether the policy changes nothing (then nothing is written or sent).
    pub fn changes_nothing(&self) -> bool {
        self.row.is_none()
    }
}

/// Plans `user`'s policy for a topic of `channel` (0 clears it), with no access check (the
/// callers make theirs). An existing row keeps the topic's spelling as first written; the
/// event carries the request's.
pub fn plan_policy(
    state: &RealmState,
    user: UserId,
    channel: ChannelId,
    topic: &str,
    policy: i64,
    now: i64,
) -> TopicPolicy {
    let existing = state.user_topic(user, channel, topic);
    let unchanged = match existing {
        Some(row) => row.visibility_policy == policy,
        None => policy == INHERIT,
    };
    let row = (!unchanged).then(|| UserTopic {
        user_id: user,
        channel_id: channel,
        topic: existing.map_or_else(|| topic.to_owned(), |r| r.topic.clone()),
        visibility_policy: policy,
        last_updated: now,
    });
    TopicPolicy { row, topic: topic.to_owned() }
}

impl Change for TopicPolicy {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(row) = &self.row {
            store::channels::put_user_topic(tx, row)?;
        }
        Ok(())
    }

    /// Setting the policy a topic already has stores nothing.
    fn writes(&self) -> bool {
        self.row.is_some()
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let Some(row) = self.row else { return Applied::events(Vec::new()) };
        state.put_user_topic(row.clone());
        Applied::events(policy_events(state, &row, &self.topic))
    }
}

/// The events of a topic policy just set (Zulip's `do_set_user_topic_visibility_policy`):
/// the legacy `muted_topics` list, then `user_topic` with the topic as the request named
/// it, both to the user alone.
pub fn policy_events(state: &RealmState, row: &UserTopic, topic: &str) -> Vec<Outgoing> {
    let user = row.user_id;
    let muted = Event::new("muted_topics", json!({ "muted_topics": muted_topics_list(state, user) }));
    let user_topic = Event::new(
        "user_topic",
        json!({"stream_id": row.channel_id, "topic_name": topic, "last_updated": row.last_updated,
               "visibility_policy": row.visibility_policy}),
    );
    vec![Outgoing::to(vec![user], muted), Outgoing::to(vec![user], user_topic)]
}

/// Plans `POST /user_topics`: `policy` is 0 to 3 (the route checks it); the empty topic's
/// display name means the empty topic.
pub fn plan_set_user_topic(
    state: &RealmState,
    acting: UserId,
    channel: i64,
    topic: &str,
    policy: i64,
    now: i64,
) -> ApiResult<TopicPolicy> {
    let user = state.user_or_err(acting)?;
    let target = TopicChannel::Id(channel);
    let channel = if policy == INHERIT {
        channel_to_clear(state, user, &target, "Invalid channel ID")?
    } else {
        channel_to_set(state, user, &target)?
    };
    let topic = if topic == EMPTY_TOPIC_DISPLAY_NAME { "" } else { topic };
    Ok(plan_policy(state, acting, channel.id, topic, policy, now))
}

/// Plans `PATCH /users/me/subscriptions/muted_topics`: `mute` true mutes the topic, false
/// clears its policy (whatever it was). Since feature level 169 neither is an error when
/// there is nothing to do; an unknown channel when unmuting is "Topic is not muted".
pub fn plan_mute_topic(
    state: &RealmState,
    acting: UserId,
    channel: &TopicChannel,
    topic: &str,
    mute: bool,
    now: i64,
) -> ApiResult<TopicPolicy> {
    let user = state.user_or_err(acting)?;
    let (channel, policy) = if mute {
        (channel_to_set(state, user, channel)?, MUTED)
    } else {
        (channel_to_clear(state, user, channel, "Topic is not muted")?, INHERIT)
    };
    Ok(plan_policy(state, acting, channel.id, topic, policy, now))
}
