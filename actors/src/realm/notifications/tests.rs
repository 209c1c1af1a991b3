//! Which messages would notify whom (Zulip's `get_push_notification_trigger` cases), on an
//! organization built in memory.

use serde_json::json;

use super::{trigger_for, Trigger};
use crate::ids::{ChannelId, UserId};
use crate::realm::chat::flag;
use crate::realm::fixture_tests::{self, organization, T0};
use crate::realm::model::{Role, Subscription, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::user_data::Mute;

const SENDER: UserId = UserId(10);
const HAMLET: UserId = UserId(11);
const CHANNEL: ChannelId = ChannelId(3);

fn state() -> RealmState {
    let mut s = organization();
    fixture_tests::human(&mut s, SENDER, "s@acme.test", "Sender", "k1", Role::Member);
    fixture_tests::human(&mut s, HAMLET, "h@acme.test", "Hamlet", "k2", Role::Member);
    s.put_channel(fixture_tests::channel(CHANNEL, "denmark", false, true));
    for user in [SENDER, HAMLET] {
        s.put_subscription(Subscription::new(user, CHANNEL, "#c2c2c2".into()));
    }
    s
}

fn set(s: &mut RealmState, name: &str, value: bool) {
    s.user_mut(HAMLET).unwrap().settings.insert(name.into(), json!(value));
}

fn topic_policy(s: &mut RealmState, policy: i64) {
    let row = UserTopic {
        user_id: HAMLET,
        channel_id: CHANNEL,
        topic: "t".into(),
        visibility_policy: policy,
        last_updated: T0,
    };
    s.put_user_topic(row);
}

fn trigger(s: &RealmState, channel: bool, bits: i64) -> Option<Trigger> {
    let where_ = channel.then_some((CHANNEL, "t"));
    trigger_for(s, SENDER, where_, s.user(HAMLET).unwrap(), bits)
}

#[test]
fn direct_messages_and_mentions_follow_the_offline_setting() {
    let mut s = state();
    assert_eq!(trigger(&s, false, flag::IS_PRIVATE), Some(Trigger::DirectMessage));
    assert_eq!(trigger(&s, true, flag::MENTIONED), Some(Trigger::Mention));
    assert_eq!(trigger(&s, true, flag::GROUP_MENTIONED), Some(Trigger::Mention));
    assert_eq!(trigger(&s, true, 0), None, "channel push is off by default");
    // The sender is never notified of their own message.
    assert_eq!(trigger_for(&s, SENDER, None, s.user(SENDER).unwrap(), flag::IS_PRIVATE), None);
    set(&mut s, "enable_offline_push_notifications", false);
    assert_eq!(trigger(&s, false, flag::IS_PRIVATE), None);
    assert_eq!(trigger(&s, true, flag::MENTIONED), None);
}

#[test]
fn muted_senders_send_nothing() {
    let mut s = state();
    s.user_data_mut().add_mute(HAMLET, Mute { muted_user_id: SENDER, date_muted: T0 });
    assert_eq!(trigger(&s, false, flag::IS_PRIVATE), None);
}

#[test]
fn channel_push_follows_the_channel_then_the_user_and_muting() {
    let mut s = state();
    set(&mut s, "enable_stream_push_notifications", true);
    assert_eq!(trigger(&s, true, 0), Some(Trigger::Stream));
    topic_policy(&mut s, 1);
    assert_eq!(trigger(&s, true, 0), None, "muted topic");
    assert_eq!(trigger(&s, true, flag::MENTIONED), Some(Trigger::Mention), "mentions still notify");
    topic_policy(&mut s, 0);
    let mut sub = s.subscription(HAMLET, CHANNEL).unwrap().clone();
    sub.push_notifications = Some(false);
    s.put_subscription(sub.clone());
    assert_eq!(trigger(&s, true, 0), None, "the channel's own setting wins");
    sub.push_notifications = Some(true);
    sub.is_muted = true;
    s.put_subscription(sub);
    assert_eq!(trigger(&s, true, 0), None, "muted channel");
    topic_policy(&mut s, 2);
    assert_eq!(trigger(&s, true, 0), Some(Trigger::Stream), "unmuted topic in a muted channel");
}

#[test]
fn followed_topics_and_wildcards_take_zulips_order() {
    let mut s = state();
    assert_eq!(trigger(&s, true, flag::STREAM_WILDCARD_MENTIONED), Some(Trigger::StreamWildcardMention));
    assert_eq!(trigger(&s, true, flag::TOPIC_WILDCARD_MENTIONED), Some(Trigger::TopicWildcardMention));
    topic_policy(&mut s, 3);
    assert_eq!(trigger(&s, true, 0), Some(Trigger::FollowedTopic));
    assert_eq!(trigger(&s, true, flag::STREAM_WILDCARD_MENTIONED), Some(Trigger::StreamWildcardMentionInFollowedTopic));
    set(&mut s, "wildcard_mentions_notify", false);
    set(&mut s, "enable_followed_topic_wildcard_mentions_notify", false);
    assert_eq!(trigger(&s, true, flag::STREAM_WILDCARD_MENTIONED), Some(Trigger::FollowedTopic));
    set(&mut s, "enable_followed_topic_push_notifications", false);
    assert_eq!(trigger(&s, true, flag::STREAM_WILDCARD_MENTIONED), None);
}
