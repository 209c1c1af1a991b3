//! The topic policy sending a message sets for its sender (following or unmuting the
//! topic), planned from the state.

use serde_json::Value;

use crate::ids::ChannelId;
use crate::realm::model::{User, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::UNMUTED;
use crate::realm::topics::policies::{FOLLOWED, INHERIT};

/// The topic policy a send sets for its sender (Zulip's `visibility_policy_for_send_message`
/// over `automatically_follow_topics_policy` and, in a channel they muted,
/// `automatically_unmute_topics_in_muted_streams_policy`: 1 on participation, 2 on send,
/// 3 on initiation, 4 never), planned: whether the message starts the topic is known when
/// written.
#[derive(Debug, Clone, PartialEq)]
pub struct AutomaticFollow {
    /// The policy if the message starts the topic (as the sender can see it).
    pub if_initiated: Option<i64>,
    /// The policy otherwise.
    pub otherwise: Option<i64>,
    /// The sender's policy row once set (the topic spelled as their existing row has it;
    /// `visibility_policy` is the policy if initiated, or else the other).
    pub row: UserTopic,
}

impl AutomaticFollow {
    /// The policy to set, given whether the message started its topic.
    pub fn policy(&self, initiated: bool) -> Option<i64> {
        if initiated {
            self.if_initiated
        } else {
            self.otherwise
        }
    }
}

/// The topic policy a send may set for its sender, if any (Zulip's
/// `visibility_policy_for_send_message` and `should_change_visibility_policy`): never for
/// bots; never lowering a followed topic; nothing when the policy would stay as it is.
pub(super) fn automatic_follow(
    state: &RealmState,
    sender: &User,
    channel: ChannelId,
    topic: &str,
    now: i64,
) -> Option<AutomaticFollow> {
    if sender.is_bot {
        return None;
    }
    let setting = |name: &str, default: i64| sender.settings.get(name).and_then(Value::as_i64).unwrap_or(default);
    let follow = setting("automatically_follow_topics_policy", 3);
    let unmute = setting("automatically_unmute_topics_in_muted_streams_policy", 2);
    let muted = state.subscription(sender.id, channel).is_some_and(|s| s.active && s.is_muted);
    let existing = state.user_topic(sender.id, channel, topic);
    let current = existing.map_or(INHERIT, |t| t.visibility_policy);
    if current == FOLLOWED {
        return None;
    }
    // Participation (1) and sending (2) both apply to a send.
    let policy_for = |when: &[i64]| -> Option<i64> {
        if when.contains(&follow) {
            Some(FOLLOWED)
        } else if muted && when.contains(&unmute) {
            Some(UNMUTED)
        } else {
            None
        }
    };
    let on_send = policy_for(&[1, 2]);
    let (if_initiated, otherwise) = if on_send == Some(FOLLOWED) {
        (on_send, on_send)
    } else if current != INHERIT {
        // A topic with a policy has been started already.
        let policy = on_send.filter(|p| *p != current);
        (policy, policy)
    } else {
        (policy_for(&[3]).max(on_send), on_send)
    };
    let if_initiated = if_initiated.filter(|p| *p != current);
    let otherwise = otherwise.filter(|p| *p != current);
    let visibility_policy = if_initiated.or(otherwise)?;
    let row = UserTopic {
        user_id: sender.id,
        channel_id: channel,
        topic: existing.map_or_else(|| topic.to_owned(), |r| r.topic.clone()),
        visibility_policy,
        last_updated: now,
    };
    Some(AutomaticFollow { if_initiated, otherwise, row })
}
