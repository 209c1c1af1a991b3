//! Which new messages go to users' phones (Zulip's `UserMessageNotificationsData`,
//! `get_push_notification_trigger` and the idle checks of its event queue server), planned
//! with the message and written in its transaction as jobs of the push worker.
//!
//! A recipient is notified when the message would notify them were they away (a direct
//! message, a mention, a wildcard mention, a followed topic, a channel with push
//! notifications on, per their settings; never their own messages, muted senders, muted
//! topics or channels, bots) and they are away: no event queue open, or not active by
//! presence for 140 seconds. A recipient who is active on another client is notified
//! only with `enable_online_push_notifications`; otherwise the job waits for the event queue
//! idle timeout (Zulip notifies when it collects the user's last queue), and is dropped then
//! if they read the message or still have a client open.

pub mod payload;
pub mod text;

use std::collections::HashSet;
use std::sync::Arc;

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::actor::RealmActor;
use super::chat::flag;
use super::chat::send::PlannedMessage;
use super::model::{Subscription, User};
use super::state::RealmState;
use super::{Applied, Change};
use crate::error::ApiResult;
use crate::ids::{ChannelId, UserId};
use crate::presence::PresenceState;
use crate::store::push as db;

/// Zulip's `OFFLINE_THRESHOLD_SECS`: a user not active for this long is idle.
pub const OFFLINE_THRESHOLD_SECS: i64 = 140;

/// Zulip's `NotificationTriggers`, in its order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    DirectMessage,
    Mention,
    TopicWildcardMentionInFollowedTopic,
    StreamWildcardMentionInFollowedTopic,
    TopicWildcardMention,
    StreamWildcardMention,
    FollowedTopic,
    Stream,
}

impl Trigger {
    /// Zulip's name of the trigger.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::DirectMessage => "direct_message",
            Trigger::Mention => "mentioned",
            Trigger::TopicWildcardMentionInFollowedTopic => "topic_wildcard_mentioned_in_followed_topic",
            Trigger::StreamWildcardMentionInFollowedTopic => "stream_wildcard_mentioned_in_followed_topic",
            Trigger::TopicWildcardMention => "topic_wildcard_mentioned",
            Trigger::StreamWildcardMention => "stream_wildcard_mentioned",
            Trigger::FollowedTopic => "followed_topic_push_notify",
            Trigger::Stream => "stream_push_notify",
        }
    }

    /// Whether a wildcard mention triggers it.
    pub fn is_wildcard(self) -> bool {
        matches!(
            self,
            Trigger::TopicWildcardMentionInFollowedTopic
                | Trigger::StreamWildcardMentionInFollowedTopic
                | Trigger::TopicWildcardMention
                | Trigger::StreamWildcardMention
        )
    }
}

/// What the realm actor knows about who is on Zulip when a message is sent.
pub struct PushContext {
    /// Whether the server uses a push notification service at all.
    pub enabled: bool,
    /// Users with an event queue open.
    pub on_zulip: HashSet<UserId>,
    pub presence: Arc<PresenceState>,
    /// Microseconds since the epoch.
    pub now_micros: i64,
    /// How long a notification for a user active elsewhere waits (milliseconds).
    pub defer_ms: i64,
    /// The organization's URL and the server's host, for the payloads.
    pub realm_url: String,
    pub server: String,
}

impl PushContext {
    /// The context of a realm actor now.
    pub fn of(actor: &RealmActor) -> PushContext {
        PushContext {
            enabled: actor.config.push.configured(),
            on_zulip: if actor.config.push.configured() { actor.queues.users() } else { HashSet::new() },
            presence: actor.presence.load_full(),
            now_micros: crate::clock::now_micros(),
            defer_ms: actor.config.queues.default_timeout.as_millis() as i64,
            realm_url: actor.config.realm_url(&actor.state.realm().subdomain),
            server: actor.config.external_host.clone(),
        }
    }

    /// Whether `user` counts as away: no event queue open, or not active lately (presence
    /// counts unless the organization turned it off).
    fn is_idle(&self, state: &RealmState, user: UserId) -> bool {
        if !self.on_zulip.contains(&user) {
            return true;
        }
        if state.realm().presence_disabled() {
            return false;
        }
        let active = self.presence.row(user).and_then(|r| r.last_active);
        active.is_none_or(|t| self.now_micros - t >= OFFLINE_THRESHOLD_SECS * 1_000_000)
    }
}

/// A personal setting as a boolean (its default when unset).
fn setting(user: &User, name: &str) -> bool {
    match super::catalog::user_setting(name) {
        Some(s) => super::catalog::user_value(user, s).as_bool().unwrap_or(false),
        None => false,
    }
}

/// Zulip's `user_allows_notifications_in_StreamTopic`: muted topics (and muted channels
/// unless the topic is unmuted or followed) never notify; otherwise the channel's own
/// setting, or the user's.
fn allows_in_topic(sub: &Subscription, policy: i64, channel_setting: Option<bool>, user_setting: bool) -> bool {
    use super::topics::policies::{FOLLOWED, MUTED};
    if policy == MUTED || (sub.is_muted && policy != FOLLOWED && policy != 2) {
        return false;
    }
    channel_setting.unwrap_or(user_setting)
}

/// The trigger of `user`'s notification for a message with `bits`, were they away;
/// `None` if it would not notify them.
pub fn trigger_for(
    state: &RealmState,
    sender: UserId,
    channel: Option<(ChannelId, &str)>,
    user: &User,
    bits: i64,
) -> Option<Trigger> {
    if user.id == sender || user.is_bot || !user.is_active || state.user_data().has_muted(user.id, sender) {
        return None;
    }
    let offline_push = setting(user, "enable_offline_push_notifications");
    if bits & flag::IS_PRIVATE != 0 {
        return offline_push.then_some(Trigger::DirectMessage);
    }
    if offline_push && bits & (flag::MENTIONED | flag::GROUP_MENTIONED | flag::HAS_ALERT_WORD) != 0 {
        return Some(Trigger::Mention);
    }
    let (channel, topic) = channel?;
    let sub = state.subscription(user.id, channel).filter(|s| s.active)?;
    let policy = state.user_topic(user.id, channel, topic).map_or(0, |t| t.visibility_policy);
    let followed = policy == super::topics::policies::FOLLOWED;
    let wildcard_notify =
        allows_in_topic(sub, policy, sub.wildcard_mentions_notify, setting(user, "wildcard_mentions_notify"));
    let followed_wildcard = followed && setting(user, "enable_followed_topic_wildcard_mentions_notify");
    let topic_wildcard = offline_push && bits & flag::TOPIC_WILDCARD_MENTIONED != 0;
    let stream_wildcard = offline_push && bits & flag::STREAM_WILDCARD_MENTIONED != 0;
    if topic_wildcard && followed_wildcard {
        Some(Trigger::TopicWildcardMentionInFollowedTopic)
    } else if stream_wildcard && followed_wildcard {
        Some(Trigger::StreamWildcardMentionInFollowedTopic)
    } else if topic_wildcard && wildcard_notify {
        Some(Trigger::TopicWildcardMention)
    } else if stream_wildcard && wildcard_notify {
        Some(Trigger::StreamWildcardMention)
    } else if followed && setting(user, "enable_followed_topic_push_notifications") {
        Some(Trigger::FollowedTopic)
    } else if allows_in_topic(sub, policy, sub.push_notifications, setting(user, "enable_stream_push_notifications")) {
        Some(Trigger::Stream)
    } else {
        None
    }
}

/// One planned notification: its job, and when it is due.
#[derive(Debug, Clone)]
struct Planned {
    user: UserId,
    job: Value,
    /// Milliseconds after the send (0: now).
    delay_ms: i64,
}

/// A message send with its notifications: the message is written, then (in the same
/// transaction) a job for each recipient to notify who has a device.
pub struct WithPush {
    message: PlannedMessage,
    state: Option<RealmState>,
    context: PushContext,
}

/// Plans the notifications of a message (nothing when the server has no push service).
pub fn with_push(state: &RealmState, message: PlannedMessage, context: PushContext) -> WithPush {
    let state = context.enabled.then(|| state.clone());
    WithPush { message, state, context }
}

impl WithPush {
    /// The message.
    pub fn message(&self) -> &PlannedMessage {
        &self.message
    }

    /// The notifications, from the message as written (its id and final flags).
    fn plan(&self, state: &RealmState) -> Vec<Planned> {
        let m = &self.message;
        let channel = m.channel_id().map(|c| (c, m.topic()));
        let mut out = Vec::new();
        for (user_id, bits) in m.flags() {
            let Some(user) = state.user(*user_id) else { continue };
            let Some(trigger) = trigger_for(state, m.sender(), channel, user, *bits) else { continue };
            let idle = self.context.is_idle(state, user.id);
            let online_push = setting(user, "enable_online_push_notifications");
            let Some(job) = payload::message_job(state, &self.context, m, user, trigger) else { continue };
            let delay_ms = if idle || online_push { 0 } else { self.context.defer_ms };
            let mut job = job;
            job["if_off_zulip"] = json!(delay_ms > 0);
            out.push(Planned { user: user.id, job, delay_ms });
        }
        out
    }
}

impl Change for WithPush {
    type Output = <PlannedMessage as Change>::Output;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.message.write(tx)?;
        let Some(state) = &self.state else { return Ok(()) };
        let planned = self.plan(state);
        if planned.is_empty() {
            return Ok(());
        }
        let users: Vec<UserId> = planned.iter().map(|p| p.user).collect();
        let with_devices: HashSet<UserId> = db::users_with_devices(tx, &users)?.into_iter().collect();
        let now_ms = self.context.now_micros / 1000;
        for p in planned.into_iter().filter(|p| with_devices.contains(&p.user)) {
            db::enqueue(tx, state.realm().id, p.user, "message", &p.job, now_ms, now_ms + p.delay_ms)?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<Self::Output> {
        self.message.apply(state)
    }
}

#[cfg(test)]
mod tests;
