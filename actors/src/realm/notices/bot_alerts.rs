//! Zulip's `send_pm_if_empty_stream`: when a bot writes to a channel that does not exist or
//! has no subscribers, Notification Bot tells the bot's owner, so that they can mend the
//! integration; at most once a minute per bot (`BOT_OWNER_STREAM_ALERT_WAITPERIOD`). Zulip
//! keeps the time of the last alert in the bot's `last_reminder`; Agora keeps it in the
//! realm actor's memory, so a restart may let one more alert through.
//!
//! As in Zulip the alert comes before the send is checked further: a message to a missing
//! channel is still refused (or, from an incoming webhook, dropped), one to an empty
//! channel still goes out.

use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::channels::ops::check_channel_name;
use crate::realm::chat::send::{normalize_content, plan_notice, ChannelRef, Notice, NoticeTo, SendTo};
use crate::realm::model::{SystemBot, User};
use crate::realm::state::RealmState;
use crate::validate;

use super::texts::channel_link;

/// Seconds between two alerts about one bot (Zulip's `BOT_OWNER_STREAM_ALERT_WAITPERIOD`,
/// one minute).
pub const ALERT_WAIT_SECS: i64 = 60;

/// What the owner of `sender` is told about a message to `target`, if anything: nothing
/// for humans, bots without an owner, names that are not valid channel names (the send's
/// own error says it) and channels with an active subscriber.
pub fn channel_alert(state: &RealmState, sender: &User, target: &ChannelRef) -> Option<String> {
    if !sender.is_bot || sender.bot_owner_id.is_none() {
        return None;
    }
    let bot = format!("`{}`", sender.delivery_email);
    let channel = match target {
        ChannelRef::Id(id) => match state.channel(ChannelId(*id)) {
            Some(channel) => channel,
            None => {
                return Some(format!(
                    "Your bot {bot} tried to send a message to channel ID {id}, but there is no channel with that ID."
                ))
            }
        },
        ChannelRef::Name(name) => {
            let name = validate::python_strip(name);
            check_channel_name(name).ok()?;
            match state.channel_by_name(name) {
                Some(channel) => channel,
                None => {
                    return Some(format!(
                    "Your bot {bot} tried to send a message to channel #**{name}**, but that channel does not exist. \
                         Click [here](#channels/new) to create it."
                ))
                }
            }
        }
    };
    // Zulip's `num_subscribers_for_stream_id`: active users only.
    state.active_subscriber_ids(channel.id).is_empty().then(|| {
        format!(
            "Your bot {bot} tried to send a message to channel {}. The channel exists but does not have any subscribers.",
            channel_link(channel.id, &channel.name)
        )
    })
}

impl RealmActor {
    /// Before a message from `sender` to `to` with `content` is planned: the alert to the
    /// bot's owner, when there is one to give and the last one about this bot is over a
    /// minute old. As in Zulip the content is checked first: an empty message is refused
    /// without an alert.
    pub(crate) fn alert_bot_owner(&mut self, sender: UserId, to: &SendTo, content: &str) {
        let SendTo::Channel(target) = to else { return };
        // Every send passes here: humans go no further than this lookup.
        let Some(bot) = self.state.user(sender).filter(|u| u.is_bot) else { return };
        if normalize_content(content).is_err() {
            return;
        }
        let (Some(owner), Some(text)) = (bot.bot_owner_id, channel_alert(&self.state, bot, target)) else { return };
        let now = crate::clock::now();
        if self.bot_alerts.get(&sender).is_some_and(|last| now - last <= ALERT_WAIT_SECS) {
            return;
        }
        let Some(notifier) = super::bot(&self.state, SystemBot::NOTIFICATION_BOT) else { return };
        let notice = Notice::new(notifier, NoticeTo::Direct(vec![owner]), text);
        let listeners = self.all_public_streams_listeners();
        match plan_notice(&self.state, notice, &listeners, now).and_then(|change| self.commit(change)) {
            // Only an alert given counts for the minute.
            Ok(_) => {
                self.bot_alerts.insert(sender, now);
            }
            Err(e) => tracing::warn!(user.id = %sender, error = %e, "could not tell a bot's owner of its channel"),
        }
    }
}
