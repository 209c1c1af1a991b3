//! The channel objects of the API, with Zulip's keys in Zulip's order: the stream dict
//! (`GET /streams`, `stream` events), the subscription dict (`subscriptions`, `subscription`
//! add events) and the never-subscribed dict.

use serde_json::{Map, Value};

use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Subscription, SystemGroup};
use crate::realm::state::RealmState;

/// The channel permission settings in the order Zulip's dicts list them.
pub const CHANNEL_GROUP_SETTINGS: [&str; 11] = [
    "can_add_subscribers_group",
    "can_administer_channel_group",
    // FL 441.
    "can_create_topic_group",
    "can_delete_any_message_group",
    "can_delete_own_message_group",
    "can_move_messages_out_of_channel_group",
    "can_move_messages_within_channel_group",
    "can_send_message_group",
    "can_remove_subscribers_group",
    "can_resolve_topics_group",
    "can_subscribe_group",
];

/// `stream_post_policy` derived from `can_send_message_group` as Zulip does: 2 for
/// administrators, 3 for full members, 4 for moderators, otherwise 1 (everyone).
pub fn stream_post_policy(state: &RealmState, channel: &Channel) -> i64 {
    let GroupSettingValue::Group(id) = state.channel_setting(channel, "can_send_message_group") else { return 1 };
    match state.group(id).filter(|g| g.is_system_group).map(|g| g.name.as_str()) {
        Some(SystemGroup::ADMINISTRATORS) => 2,
        Some(SystemGroup::FULL_MEMBERS) => 3,
        Some(SystemGroup::MODERATORS) => 4,
        _ => 1,
    }
}

/// The values every channel object shares, computed once per channel.
/// What every object of a channel shares, computed once per channel.
#[derive(Debug, Clone)]
pub struct Common {
    settings: Vec<(&'static str, Value)>,
    post_policy: i64,
    first_message_id: Value,
    subscriber_count: usize,
}

/// The shared part of a channel's objects.
pub fn common(state: &RealmState, channel: &Channel) -> Common {
    let settings = CHANNEL_GROUP_SETTINGS
        .iter()
        .map(|name| (*name, state.group_setting_api_value(&state.channel_setting(channel, name)).to_json()))
        .collect();
    Common {
        settings,
        post_policy: stream_post_policy(state, channel),
        first_message_id: state.first_message_id(channel.id).map_or(Value::Null, Value::from),
        subscriber_count: state.active_subscriber_ids(channel.id).len(),
    }
}

/// The active users subscribed to a channel (deactivated users keep their rows but are
/// listed nowhere), ascending.
pub fn active_subscribers(state: &RealmState, channel: crate::ids::ChannelId) -> Vec<i64> {
    state.active_subscriber_ids(channel).iter().map(|u| u.0).collect()
}

fn put(map: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    map.insert(key.to_owned(), value.into());
}

fn opt<T: Into<Value>>(value: Option<T>) -> Value {
    value.map_or(Value::Null, Into::into)
}

/// Zulip's `APIStreamDict` (`GET /streams`, `stream` create events), in the key order
/// recorded from Zulip 10.2, with the newer keys where Zulip adds them.
pub fn stream_dict(state: &RealmState, channel: &Channel) -> Map<String, Value> {
    let c = common(state, channel);
    let mut m = Map::new();
    put(&mut m, "is_archived", channel.is_archived);
    for (name, value) in c.settings {
        m.insert(name.to_owned(), value);
    }
    put(&mut m, "creator_id", opt(channel.creator_id.map(|u| u.0)));
    put(&mut m, "date_created", channel.date_created);
    put(&mut m, "description", channel.description.as_str());
    put(&mut m, "first_message_id", c.first_message_id);
    put(&mut m, "folder_id", opt(channel.folder_id.map(|f| f.0)));
    put(&mut m, "is_recently_active", is_recently_active(channel));
    put(&mut m, "history_public_to_subscribers", channel.history_public_to_subscribers);
    put(&mut m, "invite_only", channel.invite_only);
    put(&mut m, "is_web_public", channel.is_web_public);
    put(&mut m, "message_retention_days", opt(channel.message_retention_days));
    put(&mut m, "name", channel.name.as_str());
    put(&mut m, "rendered_description", channel.rendered_description.as_str());
    put(&mut m, "stream_id", channel.id.0);
    put(&mut m, "stream_post_policy", c.post_policy);
    put(&mut m, "is_announcement_only", c.post_policy == 2);
    put(&mut m, "stream_weekly_traffic", Value::Null);
    put(&mut m, "subscriber_count", c.subscriber_count);
    put(&mut m, "topics_policy", channel.topics_policy.as_str());
    m
}

/// Channels are recently active until Agora tracks traffic (Zulip's default for new
/// channels); archived ones are not.
fn is_recently_active(channel: &Channel) -> bool {
    !channel.is_archived
}

/// Zulip's `SubscriptionStreamDict` (`subscriptions`, `unsubscribed`, `subscription` add).
pub fn subscription_dict(state: &RealmState, channel: &Channel, sub: &Subscription) -> Map<String, Value> {
    subscription_dict_with(common(state, channel), channel, sub)
}

/// A subscription object from its channel's shared part (for many users of one channel).
pub fn subscription_dict_with(c: Common, channel: &Channel, sub: &Subscription) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "is_archived", channel.is_archived);
    put(&mut m, "audible_notifications", opt(sub.audible_notifications));
    for (name, value) in c.settings {
        m.insert(name.to_owned(), value);
    }
    put(&mut m, "color", sub.color.as_str());
    put(&mut m, "creator_id", opt(channel.creator_id.map(|u| u.0)));
    put(&mut m, "date_created", channel.date_created);
    put(&mut m, "description", channel.description.as_str());
    put(&mut m, "desktop_notifications", opt(sub.desktop_notifications));
    put(&mut m, "email_notifications", opt(sub.email_notifications));
    put(&mut m, "first_message_id", c.first_message_id);
    put(&mut m, "folder_id", opt(channel.folder_id.map(|f| f.0)));
    put(&mut m, "is_recently_active", is_recently_active(channel));
    put(&mut m, "history_public_to_subscribers", channel.history_public_to_subscribers);
    put(&mut m, "in_home_view", !sub.is_muted);
    put(&mut m, "invite_only", channel.invite_only);
    put(&mut m, "is_announcement_only", c.post_policy == 2);
    put(&mut m, "is_muted", sub.is_muted);
    put(&mut m, "is_web_public", channel.is_web_public);
    put(&mut m, "message_retention_days", opt(channel.message_retention_days));
    put(&mut m, "name", channel.name.as_str());
    put(&mut m, "pin_to_top", sub.pin_to_top);
    put(&mut m, "push_notifications", opt(sub.push_notifications));
    put(&mut m, "rendered_description", channel.rendered_description.as_str());
    put(&mut m, "stream_id", channel.id.0);
    put(&mut m, "stream_post_policy", c.post_policy);
    put(&mut m, "stream_weekly_traffic", Value::Null);
    put(&mut m, "subscriber_count", c.subscriber_count);
    put(&mut m, "topics_policy", channel.topics_policy.as_str());
    put(&mut m, "wildcard_mentions_notify", opt(sub.wildcard_mentions_notify));
    m
}

/// Zulip's `NeverSubscribedStreamDict` (`never_subscribed`).
pub fn never_subscribed_dict(state: &RealmState, channel: &Channel) -> Map<String, Value> {
    let c = common(state, channel);
    let mut m = Map::new();
    put(&mut m, "is_archived", channel.is_archived);
    for (name, value) in c.settings {
        m.insert(name.to_owned(), value);
    }
    put(&mut m, "creator_id", opt(channel.creator_id.map(|u| u.0)));
    put(&mut m, "date_created", channel.date_created);
    put(&mut m, "description", channel.description.as_str());
    put(&mut m, "first_message_id", c.first_message_id);
    put(&mut m, "folder_id", opt(channel.folder_id.map(|f| f.0)));
    put(&mut m, "is_recently_active", is_recently_active(channel));
    put(&mut m, "history_public_to_subscribers", channel.history_public_to_subscribers);
    put(&mut m, "invite_only", channel.invite_only);
    put(&mut m, "is_announcement_only", c.post_policy == 2);
    put(&mut m, "is_web_public", channel.is_web_public);
    put(&mut m, "message_retention_days", opt(channel.message_retention_days));
    put(&mut m, "name", channel.name.as_str());
    put(&mut m, "rendered_description", channel.rendered_description.as_str());
    put(&mut m, "stream_id", channel.id.0);
    put(&mut m, "stream_post_policy", c.post_policy);
    put(&mut m, "stream_weekly_traffic", Value::Null);
    put(&mut m, "subscriber_count", c.subscriber_count);
    put(&mut m, "topics_policy", channel.topics_policy.as_str());
    m
}

/// The unarchived channels whose permission settings use `group`, as the objections of
/// a group deactivation (`{"type": "channel", "channel_id": N, "settings": [..]}`).
pub fn channels_using_group(state: &RealmState, group: crate::ids::GroupId) -> Vec<Value> {
    state
        .channels()
        .filter(|c| !c.is_archived)
        .filter_map(|c| {
            let settings: Vec<&str> = CHANNEL_GROUP_SETTINGS
                .iter()
                .copied()
                .filter(|name| c.settings.contains_key(*name) && state.channel_setting(c, name).uses_group(group))
                .collect();
            (!settings.is_empty())
                .then(|| serde_json::json!({"type": "channel", "channel_id": c.id, "settings": settings}))
        })
        .collect()
}

/// The personal notification settings of a subscription and the user settings they
/// inherit from when null.
const NOTIFICATION_DEFAULTS: [(&str, &str); 5] = [
    ("desktop_notifications", "enable_stream_desktop_notifications"),
    ("email_notifications", "enable_stream_email_notifications"),
    ("wildcard_mentions_notify", "wildcard_mentions_notify"),
    ("push_notifications", "enable_stream_push_notifications"),
    ("audible_notifications", "enable_stream_audible_notifications"),
];

/// For clients without `notification_settings_null`: a subscription's null notification
/// settings become the user's own settings (Zulip's `post_process_state`).
pub fn fill_notification_defaults(sub: &mut Value, user_settings: &Map<String, Value>) {
    let Some(sub) = sub.as_object_mut() else { return };
    for (key, setting) in NOTIFICATION_DEFAULTS {
        if sub.get(key).is_some_and(Value::is_null) {
            if let Some(value) = user_settings.get(setting) {
                sub.insert(key.to_owned(), value.clone());
            }
        }
    }
}

/// The body of a `stream` `delete` event for `ids`: since feature level 343 Zulip's `streams`
/// carry only each channel's id (`send_stream_deletion_event`), beside `stream_ids`.
pub fn stream_delete_body(ids: &[crate::ids::ChannelId]) -> Value {
    let streams: Vec<Value> = ids.iter().map(|id| serde_json::json!({"stream_id": id.0})).collect();
    let stream_ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
    serde_json::json!({"op": "delete", "streams": streams, "stream_ids": stream_ids})
}
