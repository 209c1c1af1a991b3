//! Who a message may go to (Zulip's `access_stream_for_send_message`,
//! `validate_recipient_user_profiles`, `check_can_send_direct_message`).

use std::collections::BTreeSet;

use super::addressee::{ChannelRef, DirectRef};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, UserId};
use crate::realm::channels::ops::check_channel_name;
use crate::realm::chat::format::dm_key;
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Role, SystemGroup, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::validate;

/// The channel a message goes to, with Zulip's errors: a name is stripped and must be a
/// valid channel name (`validate_stream_name_with_pm_notification`), then
/// [`check_can_send_to_channel`].
pub fn channel_for_send<'a>(state: &'a RealmState, sender: &User, target: &ChannelRef) -> ApiResult<&'a Channel> {
    let channel = match target {
        ChannelRef::Id(id) => state.channel(ChannelId(*id)).ok_or_else(|| {
            ApiError::new(ErrorCode::StreamDoesNotExist, 400, format!("Channel with ID '{id}' does not exist"))
                .with("stream_id", *id)
        })?,
        ChannelRef::Name(name) => {
            let name = validate::python_strip(name);
            check_channel_name(name)?;
            state.channel_by_name(name).ok_or_else(|| {
                ApiError::new(ErrorCode::StreamDoesNotExist, 400, format!("Channel '{name}' does not exist"))
                    .with("stream", name)
            })?
        }
    };
    check_can_send_to_channel(state, sender, channel)?;
    Ok(channel)
}

/// Whether `user` is in the channel's `can_send_message_group`, or is a bot whose owner is
/// (Zulip's `check_stream_access_based_on_can_send_message_group` as
/// `access_stream_for_send_message` applies it).
fn may_post_by_group(state: &RealmState, user: &User, channel: &Channel) -> bool {
    let may_post = |user: &User| state.in_channel_group(channel, "can_send_message_group", user);
    let owner = user.bot_owner_id.and_then(|id| state.user(id)).filter(|_| user.is_bot);
    may_post(user) || owner.is_some_and(may_post)
}

/// Whether `sender` may post to `channel` (Zulip's `access_stream_for_send_message`):
/// `can_send_message_group` (a bot also through its owner), never to an archived
/// channel; anyone to a web-public channel, non-guests to a public one; otherwise only
/// subscribers, bots whose owner is subscribed, and (non-guest) members of the groups
/// granting content access to a channel whose history is shared with subscribers. The
/// rest is "Not authorized to send to channel '…'".
pub fn check_can_send_to_channel(state: &RealmState, sender: &User, channel: &Channel) -> ApiResult<()> {
    if !may_post_by_group(state, sender, channel) {
        return Err(ApiError::bad_request("You do not have permission to post in this channel."));
    }
    let not_authorized = || ApiError::bad_request(format!("Not authorized to send to channel '{}'", channel.name));
    if channel.is_archived {
        return Err(not_authorized());
    }
    let guest = sender.role == Role::Guest;
    let owner_subscribed =
        sender.is_bot && sender.bot_owner_id.is_some_and(|owner| state.is_subscribed(owner, channel.id));
    let by_group = !guest
        && channel.history_public_to_subscribers
        && (state.in_channel_group(channel, "can_subscribe_group", sender)
            || state.in_channel_group(channel, "can_add_subscribers_group", sender));
    if channel.is_web_public
        || !(channel.invite_only || guest)
        || state.is_subscribed(sender.id, channel.id)
        || owner_subscribed
        || by_group
    {
        return Ok(());
    }
    Err(not_authorized())
}

/// Zulip's `check_for_can_create_topic_group_violation`, but for the topic's existence,
/// which needs storage: the refusal `sender` gets if the topic has no message yet, or
/// `None` if they may start topics in `channel` (system bots; anyone when the setting is
/// `role:everyone`; members of `can_create_topic_group`, or a bot whose owner is one).
pub fn topic_creation_refusal(state: &RealmState, sender: &User, channel: &Channel) -> Option<ApiError> {
    const SETTING: &str = "can_create_topic_group";
    let everyone = state.system_group_id(SystemGroup::EVERYONE).map(GroupSettingValue::Group);
    if sender.is_system_bot() || Some(state.channel_setting(channel, SETTING)) == everyone {
        return None;
    }
    let may_start = |user: &User| state.in_channel_group(channel, SETTING, user);
    let owner = sender.bot_owner_id.and_then(|id| state.user(id)).filter(|_| sender.is_bot);
    if may_start(sender) || owner.is_some_and(may_start) {
        return None;
    }
    Some(ApiError::bad_request("You do not have permission to create new topics in this channel."))
}

/// The recipients a direct message names, with Zulip's errors for unknown ones.
pub fn direct_recipients<'s>(state: &'s RealmState, target: &DirectRef) -> ApiResult<Vec<&'s User>> {
    let mut users: Vec<&User> = Vec::new();
    match target {
        DirectRef::Ids(ids) => {
            for id in ids {
                let user =
                    state.user(UserId(*id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID {id}")))?;
                users.push(user);
            }
        }
        DirectRef::Emails(emails) => {
            for email in emails {
                let user = state
                    .user_by_api_email(email)
                    .or_else(|| state.user_by_delivery_email(email))
                    .ok_or_else(|| ApiError::bad_request(format!("Invalid email '{email}'")))?;
                users.push(user);
            }
        }
    }
    if users.is_empty() {
        return Err(ApiError::bad_request("Message must have recipients"));
    }
    Ok(users)
}

/// A direct message's participants (the sender included), and the conversation that must
/// already have messages for the sender to write to it (see
/// [`check_can_send_direct_message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participants {
    pub ids: Vec<UserId>,
    pub needs_conversation: Option<String>,
}

/// The participants of a direct message (the sender included): no deactivated recipient
/// (bots included, as in Zulip's `validate_recipient_user_profiles`), and the
/// organization's direct-message permissions ([`check_can_send_direct_message`]).
pub fn direct_participants(state: &RealmState, sender: &User, users: &[&User]) -> ApiResult<Participants> {
    if let Some(gone) = users.iter().find(|u| !u.is_active) {
        return Err(ApiError::bad_request(format!("'{}' is no longer using Zulip.", gone.email)));
    }
    let mut ids: BTreeSet<UserId> = users.iter().map(|u| u.id).collect();
    ids.insert(sender.id);
    let ids: Vec<UserId> = ids.into_iter().collect();
    let needs_conversation = check_can_send_direct_message(state, sender, users, &ids)?;
    Ok(Participants { ids, needs_conversation })
}

/// Zulip's `check_can_send_direct_message`: bots, and conversations with only bots or
/// oneself, are exempt; otherwise someone in the conversation must be in the
/// organization's `direct_message_permission_group`, and the sender must be in its
/// `direct_message_initiator_group` unless the conversation already has messages. That
/// last condition needs storage: it is returned (the conversation's key) for the write to
/// check ([`initiation_refused`] when it has none).
pub fn check_can_send_direct_message(
    state: &RealmState,
    sender: &User,
    recipients: &[&User],
    participants: &[UserId],
) -> ApiResult<Option<String>> {
    if sender.is_bot || recipients.iter().all(|u| u.is_bot || u.id == sender.id) {
        return Ok(None);
    }
    if !participants.iter().any(|u| has_realm_permission(state, "direct_message_permission_group", *u)) {
        let nobody = crate::realm::catalog::realm_setting("direct_message_permission_group")
            .and_then(|s| GroupSettingValue::from_json(&s.value(&state.realm().settings, Some(state))))
            == Some(GroupSettingValue::Group(state.nobody_group_id()));
        return Err(ApiError::bad_request(if nobody {
            "Direct messages are disabled in this organization."
        } else {
            "This conversation does not include any users who can authorize it."
        }));
    }
    if has_realm_permission(state, "direct_message_initiator_group", sender.id) {
        return Ok(None);
    }
    Ok(Some(dm_key(participants)))
}

/// The refusal of a direct message that would start a conversation the sender may not
/// initiate.
pub fn initiation_refused() -> ApiError {
    ApiError::bad_request("You do not have permission to initiate direct message conversations.")
}
