//! Notification Bot's notices about a channel itself, in its "channel events" topic (Zulip's
//! `maybe_send_channel_events_notice`): renames, description, access and posting
//! permissions, the retention period, the general chat setting, archiving and unarchiving.
//! None when the organization turned `send_channel_events_messages` off (level 434).

use serde_json::Value;

use super::texts::{self, silent_mention};
use super::{bot, notice_topic};
use crate::realm::chat::send::{Notice, NoticeTo};
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, SystemBot, User};
use crate::realm::state::RealmState;

/// Whether the organization posts channel event notices (`send_channel_events_messages`).
pub(super) fn enabled(state: &RealmState) -> bool {
    state.realm().settings.get("send_channel_events_messages").and_then(Value::as_bool) == Some(true)
}

/// A notice in `channel`'s "channel events" topic, allowed there even once it is archived.
fn channel_notice(state: &RealmState, channel: &Channel, content: String) -> Option<Notice> {
    let sender = bot(state, SystemBot::NOTIFICATION_BOT)?;
    let to = NoticeTo::Channel(channel.id, notice_topic(state, channel.id, texts::CHANNEL_EVENTS_TOPIC));
    let mut notice = Notice::new(sender, to, content);
    notice.archived_ok = true;
    Some(notice)
}

/// The notices of `PATCH /streams/{id}` once committed, from the channel `old` to `new`, in
/// the order Zulip's `update_stream_backend` makes the changes: access permissions, retention
/// period, unarchiving, general chat setting, description, name, posting permissions.
pub fn channel_update_notices(state: &RealmState, acting: &User, old: &Channel, new: &Channel) -> Vec<Notice> {
    if !enabled(state) {
        return Vec::new();
    }
    let who = silent_mention(acting);
    let mut contents = Vec::new();
    let (old_policy, new_policy) = (texts::access_policy_name(old), texts::access_policy_name(new));
    if old_policy != new_policy {
        contents.push(texts::access_permissions_changed(&who, old_policy, new_policy));
    }
    if old.message_retention_days != new.message_retention_days {
        let days = |d: Option<i64>| d.unwrap_or_else(|| state.realm_retention_days());
        let (from, to) = (days(old.message_retention_days), days(new.message_retention_days));
        contents.push(texts::retention_changed(&who, from, to));
    }
    if old.is_archived && !new.is_archived {
        contents.push(texts::channel_unarchived(&new.name));
    }
    if old.topics_policy != new.topics_policy {
        contents.push(texts::topics_policy_changed(&who, &old.topics_policy, &new.topics_policy));
    }
    if old.description != new.description {
        contents.push(texts::description_changed(&who, &old.description, &new.description));
    }
    if old.name != new.name {
        contents.push(texts::channel_renamed(&who, &old.name, &new.name));
    }
    let posting = "can_send_message_group";
    let (old_posting, new_posting) = (state.channel_setting(old, posting), state.channel_setting(new, posting));
    if old_posting != new_posting {
        let describe = |v: &GroupSettingValue| with_permission(state, &state.group_setting_api_value(v));
        contents.push(texts::posting_permissions_changed(&who, &describe(&old_posting), &describe(&new_posting)));
    }
    contents.into_iter().filter_map(|content| channel_notice(state, new, content)).collect()
}

/// "Channel #**name** has been archived.", posted unread for nobody.
pub fn channel_archived_notice(state: &RealmState, channel: &Channel) -> Vec<Notice> {
    if !enabled(state) {
        return Vec::new();
    }
    let content = format!("Channel #**{}** has been archived.", channel.name);
    let mut notice = channel_notice(state, channel, content);
    if let Some(notice) = &mut notice {
        notice.unread_only = Some(Default::default());
    }
    notice.into_iter().collect()
}

/// Who a group setting names, as Zulip's `get_users_string_with_permission` writes it: the
/// group, or an anonymous group's subgroups then its members (each by id), silently
/// mentioned.
fn with_permission(state: &RealmState, value: &GroupSettingValue) -> String {
    let group_name = |id| state.group(id).map(|g| format!("@_*{}*", g.name));
    match value {
        GroupSettingValue::Group(id) => group_name(*id).unwrap_or_default(),
        GroupSettingValue::Anonymous { direct_members, direct_subgroups } => {
            let groups = direct_subgroups.iter().filter_map(|id| group_name(*id));
            let users = direct_members.iter().filter_map(|id| state.user(*id)).map(silent_mention);
            groups.chain(users).collect::<Vec<_>>().join(", ")
        }
    }
}
