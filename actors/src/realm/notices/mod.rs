//! What the system bots say (Zulip's Notification Bot and Welcome Bot messages): the
//! new-channel announcement, "subscribed you" direct messages, topic and channel move
//! notices, the welcome messages (and an administrator's test of the custom one), the
//! inviter's notice and the signup announcement.
//!
//! Each situation gives [`Notice`]s planned from the state; the realm actor posts them after
//! the change they report is committed ([`RealmActor::post_notices`]), each as a real
//! message with its events and unread counts. A notice that cannot be posted (its channel
//! is gone) is logged and skipped: it never fails what it reports.

pub mod bot_alerts;
pub mod channel_events;
pub mod moves;
pub mod reports;
pub mod texts;
pub mod welcome_test;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::chat::send::{plan_notice, Notice, NoticeTo};
use crate::realm::invite_data::Invite;
use crate::realm::model::{SystemBot, User};
use crate::realm::state::RealmState;

/// Zulip's `MAX_BULK_NEW_SUBSCRIPTION_MESSAGES`: past this many users subscribed by someone
/// else, nobody gets a "subscribed you" message.
pub use crate::realm::catalog::MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;

/// A channel setting naming a channel (`-1` or unknown: none), if it names a live one.
fn setting_channel(state: &RealmState, setting: &str) -> Option<ChannelId> {
    let id = state.realm().settings.get(setting).and_then(Value::as_i64)?;
    state.channel(ChannelId(id)).filter(|c| !c.is_archived).map(|c| c.id)
}

/// The topic a notice goes to in `channel`: `topic`, or the empty topic in a channel that
/// allows only that.
fn notice_topic(state: &RealmState, channel: ChannelId, topic: &str) -> String {
    match state.channel(channel) {
        Some(c) if c.topics_policy == "empty_topic_only" => String::new(),
        _ => topic.to_owned(),
    }
}

fn bot(state: &RealmState, email: &str) -> Option<UserId> {
    let bot = state.system_bot(email).map(|b| b.id);
    if bot.is_none() {
        tracing::error!(realm.id = %state.realm().id, bot = email, "the organization has no such system bot");
    }
    bot
}

/// After a subscription request by `acting`: the "subscribed you" messages (for `subscribed`
/// users other than `acting` and bots, about existing channels only) when `send_dms`, and
/// the announcement of `created` channels when `announce`. Read for `acting`.
pub fn subscription_notices(
    state: &RealmState,
    acting: &User,
    subscribed: &BTreeMap<UserId, Vec<String>>,
    created: &[ChannelId],
    announce: bool,
    send_dms: bool,
) -> Vec<Notice> {
    let Some(sender) = bot(state, SystemBot::NOTIFICATION_BOT) else { return Vec::new() };
    let created_names: BTreeSet<String> =
        created.iter().filter_map(|id| state.channel(*id)).map(|c| c.name.clone()).collect();
    let mut notices = Vec::new();
    if send_dms {
        for (user, names) in subscribed {
            if *user == acting.id || state.user(*user).is_none_or(|u| u.is_bot) {
                continue;
            }
            let mut names: Vec<String> = names.iter().filter(|n| !created_names.contains(*n)).cloned().collect();
            if names.is_empty() {
                continue;
            }
            names.sort();
            names.dedup();
            let content = texts::you_were_subscribed(acting, &names);
            notices.push(Notice::new(sender, NoticeTo::Direct(vec![*user]), content));
        }
    }
    if announce && !created.is_empty() {
        if let Some(channel) = setting_channel(state, "new_stream_announcements_stream_id") {
            let links: Vec<String> = created
                .iter()
                .filter_map(|id| state.channel(*id))
                .map(|c| texts::channel_link(c.id, &c.name))
                .collect();
            let to = NoticeTo::Channel(channel, notice_topic(state, channel, "new channels"));
            notices.push(Notice::new(sender, to, texts::new_channels(acting, &links)));
        }
    }
    // Each new channel's first message says who created it, what kind it is and its
    // description (public channels with protected history get none, as in Zulip), when
    // the organization sends channel event notices (`send_channel_events_messages`).
    let channel_events = channel_events::enabled(state);
    for channel in created.iter().filter_map(|id| state.channel(*id)).filter(|_| channel_events) {
        let Some(content) = texts::channel_created(acting, channel) else { continue };
        let to = NoticeTo::Channel(channel.id, notice_topic(state, channel.id, texts::CHANNEL_EVENTS_TOPIC));
        notices.push(Notice::new(sender, to, content));
    }
    for notice in &mut notices {
        notice.read_for.push(acting.id);
    }
    notices
}

/// After a new human account is created: the inviter's notice (if the invitation asks for
/// it), the signup announcement (unless it is the first user) and Welcome Bot's messages,
/// starred for the new user.
pub fn new_user_notices(state: &RealmState, user: &User, invite: Option<&Invite>) -> Vec<Notice> {
    let mut notices = Vec::new();
    if let Some(sender) = bot(state, SystemBot::NOTIFICATION_BOT) {
        let referrer = invite.filter(|i| i.notify_referrer_on_join).and_then(|i| state.user(i.referred_by));
        if let Some(referrer) = referrer.filter(|r| r.is_active) {
            let to = NoticeTo::Direct(vec![referrer.id]);
            notices.push(Notice::new(sender, to, texts::accepted_invitation(user)));
        }
        let humans = state.users().filter(|u| u.is_active && !u.is_bot).count();
        if humans > 1 {
            if let Some(channel) = setting_channel(state, "signup_announcements_stream_id") {
                let to = NoticeTo::Channel(channel, notice_topic(state, channel, "signups"));
                notices.push(Notice::new(sender, to, texts::joined(user)));
            }
        }
    }
    if let Some(sender) = bot(state, SystemBot::WELCOME_BOT) {
        let org_type = state.realm().settings.get("org_type").and_then(Value::as_i64).unwrap_or(0);
        // Zulip's `ORG_TYPES` ids of "education (non-profit)" and "education (for-profit)".
        let education = matches!(org_type, 30 | 35);
        let realm_text = state.realm().settings.get("welcome_message_custom_text").and_then(Value::as_str);
        let custom = invite.and_then(|i| i.welcome_message_custom_text.as_deref()).or(realm_text).unwrap_or("");
        let mut contents = vec![texts::welcome_intro(user, education)];
        if !custom.is_empty() {
            contents.push(texts::welcome_custom(custom));
        }
        for content in contents {
            let mut notice = Notice::new(sender, NoticeTo::Direct(vec![user.id]), content);
            notice.starred_for.push(user.id);
            notices.push(notice);
        }
    }
    notices
}

impl RealmActor {
    /// Posts notices, each as its own committed message (with its events); one that cannot
    /// be posted is logged and skipped.
    pub(crate) fn post_notices(&mut self, notices: Vec<Notice>) {
        for notice in notices {
            let listeners = self.all_public_streams_listeners();
            let planned = plan_notice(&self.state, notice, &listeners, crate::clock::now());
            if let Err(e) = planned.and_then(|change| self.commit(change)) {
                tracing::warn!(realm.id = %self.state.realm().id, error = %e, "could not post a notice");
            }
        }
    }
}

#[cfg(test)]
mod tests;
