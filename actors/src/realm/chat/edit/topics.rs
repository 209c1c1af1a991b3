//! Topic policies follow a moved topic (Zulip's `do_update_message`, "Migrate 'topic with
//! visibility_policy' configuration"): when the editor moved every message of the topic
//! they can see, each user's followed, unmuted or muted setting moves with it, merged with
//! the one they had for the destination if it already had messages; users who cannot read
//! the destination lose theirs.

use std::collections::BTreeSet;

use super::ops::MoveReport;
use crate::ids::UserId;
use crate::realm::model::UserTopic;
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{FOLLOWED, INHERIT, MUTED, UNMUTED};

/// Zulip's `get_visibility_policy_after_merge`: the more visible of the two.
fn merged(orig: i64, target: i64) -> i64 {
    let both = [orig, target];
    if both.contains(&FOLLOWED) {
        FOLLOWED
    } else if both.contains(&UNMUTED) {
        UNMUTED
    } else if both.contains(&INHERIT) {
        INHERIT
    } else {
        MUTED
    }
}

/// The policy rows a move writes, in order, each with the topic its event names: the old
/// topic's rows cleared, the new topic's set. `lost` are the users who cannot read the
/// messages where they went; `target_had_messages` whether the new topic had messages
/// before the move.
pub fn moved_policies(
    state: &RealmState,
    report: &MoveReport,
    lost: &BTreeSet<UserId>,
    target_had_messages: bool,
    now: i64,
) -> Vec<(UserTopic, String)> {
    let mut out = Vec::new();
    if !report.moved_all_visible {
        return out;
    }
    let row = |user: UserId, channel, topic: &str, policy| UserTopic {
        user_id: user,
        channel_id: channel,
        topic: topic.to_owned(),
        visibility_policy: policy,
        last_updated: now,
    };
    for user in state.users() {
        let orig = state.user_topic(user.id, report.old_channel, &report.old_topic);
        let target = state.user_topic(user.id, report.new_channel, &report.new_topic);
        if orig.is_none() && target.is_none() {
            continue;
        }
        let orig_policy = orig.map_or(INHERIT, |t| t.visibility_policy);
        let target_policy = target.map_or(INHERIT, |t| t.visibility_policy);
        if let Some(orig) = orig {
            let topic = orig.topic.clone();
            out.push((row(user.id, report.old_channel, &topic, INHERIT), report.old_topic.clone()));
        }
        if report.channel_changed && lost.contains(&user.id) {
            continue;
        }
        let new = if target_had_messages { merged(orig_policy, target_policy) } else { orig_policy };
        if new != target_policy {
            let topic = target.map_or_else(|| report.new_topic.clone(), |t| t.topic.clone());
            out.push((row(user.id, report.new_channel, &topic, new), report.new_topic.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_the_more_visible_policy() {
        assert_eq!(merged(MUTED, FOLLOWED), FOLLOWED);
        assert_eq!(merged(UNMUTED, MUTED), UNMUTED);
        assert_eq!(merged(MUTED, INHERIT), INHERIT);
        assert_eq!(merged(MUTED, MUTED), MUTED);
    }
}
