//! Who may edit or move a message, and when (Zulip's `validate_user_can_edit_message`,
//! `can_resolve_topics`, `can_edit_topic`, `can_move_messages_out_of_channel` and the time
//! limits).

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, MessageId};
use crate::realm::catalog;
use crate::realm::model::{Channel, Role, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::store::reactions::MessageRow;

/// Zulip's grace period on the edit and move time limits, in seconds.
const EDIT_LIMIT_BUFFER: i64 = 20;

/// The prefix of resolved topics.
pub const RESOLVED_PREFIX: &str = "✔ ";

/// Zulip's `check_time_limit_for_change_all_propagate_mode`: moving a whole topic past the
/// (stricter applicable) move limit is refused with how many of its messages may move.
pub fn check_change_all_limit(
    state: &RealmState,
    messages: &[(MessageId, i64)],
    topic_edit: bool,
    channel_edit: bool,
    now: i64,
) -> ApiResult<()> {
    let topic_limit = realm_int(state, "move_messages_within_stream_limit_seconds").filter(|_| topic_edit);
    let channel_limit = realm_int(state, "move_messages_between_streams_limit_seconds").filter(|_| channel_edit);
    let Some(limit) = [topic_limit, channel_limit].into_iter().flatten().min() else { return Ok(()) };
    let oldest = now - (limit + EDIT_LIMIT_BUFFER);
    let allowed: Vec<MessageId> = messages.iter().filter(|(_, sent)| *sent > oldest).map(|(id, _)| *id).collect();
    if allowed.len() == messages.len() {
        return Ok(());
    }
    let msg = format!(
        "You only have permission to move the {}/{} most recent messages in this topic.",
        allowed.len(),
        messages.len()
    );
    let error = ApiError::new(ErrorCode::MoveMessagesTimeLimitExceeded, 400, msg)
        .with("first_message_id_allowed_to_move", allowed.first().copied())
        .with("total_messages_in_topic", messages.len() as i64)
        .with("total_messages_allowed_to_move", allowed.len() as i64);
    Err(error)
}

/// Zulip's refusal of an edit the user may not make.
pub fn no_permission() -> ApiError {
    ApiError::bad_request("You don't have permission to edit this message")
}

/// An optional integer realm setting (`None`: no limit).
pub fn realm_int(state: &RealmState, name: &str) -> Option<i64> {
    catalog::realm_setting(name).and_then(|s| s.value(&state.realm().settings, Some(state)).as_i64())
}

/// Whether `date_sent` is past the realm limit `name` (plus Zulip's buffer) at `now`.
pub fn past_limit(state: &RealmState, name: &str, date_sent: i64, now: i64) -> bool {
    realm_int(state, name).is_some_and(|limit| now - date_sent > limit + EDIT_LIMIT_BUFFER)
}

/// Whether moving between `old` and `new` only adds or removes the resolved prefix.
pub fn is_resolve_only(old: &str, new: &str) -> bool {
    let strip = |t: &str| t.strip_prefix(RESOLVED_PREFIX).map(str::to_owned);
    strip(old).as_deref() == Some(new) || strip(new).as_deref() == Some(old)
}

/// Content edits (Zulip's `validate_user_can_edit_message` for content): the organization
/// allows editing, the user sent the message, within `message_content_edit_limit_seconds`
/// (and Zulip's grace period).
pub fn check_content_edit(state: &RealmState, user: &User, message: &MessageRow, now: i64) -> ApiResult<()> {
    check_content_edit_within(state, user, message, now, EDIT_LIMIT_BUFFER)
}

/// [`check_content_edit`] with `buffer` seconds of grace (none for the typing notifications
/// of an edit, as in Zulip).
pub fn check_content_edit_within(
    state: &RealmState,
    user: &User,
    message: &MessageRow,
    now: i64,
    buffer: i64,
) -> ApiResult<()> {
    let allowed = catalog::realm_setting("allow_message_editing")
        .map(|s| s.value(&state.realm().settings, Some(state)))
        .is_none_or(|v| v.as_bool() != Some(false));
    if !allowed {
        return Err(ApiError::bad_request("Your organization has turned off message editing"));
    }
    if message.sender_id != user.id {
        return Err(no_permission());
    }
    let limit = realm_int(state, "message_content_edit_limit_seconds");
    if limit.is_some_and(|limit| now - message.date_sent > limit + buffer) {
        return Err(ApiError::bad_request("The time limit for editing this message has passed"));
    }
    Ok(())
}

/// Moderators (and above) are exempt from the move time limits (Zulip's `is_moderator`).
pub fn exempt_from_move_limits(user: &User) -> bool {
    matches!(user.role, Role::Owner | Role::Administrator | Role::Moderator)
}

/// Zulip's `can_move_messages_within_channel`: administrators, the channel's
/// administrators and its `can_move_messages_within_channel_group`.
pub fn may_move_within(state: &RealmState, user: &User, channel: &Channel) -> bool {
    user.role.is_admin()
        || state.in_channel_group(channel, "can_administer_channel_group", user)
        || state.in_channel_group(channel, "can_move_messages_within_channel_group", user)
}

/// Topic edits (Zulip's `can_resolve_topics` and `can_edit_topic`): resolving per the
/// organization's or either channel's `can_resolve_topics_group`; other renames per the
/// organization's `can_move_messages_between_topics_group` or [`may_move_within`] either
/// channel (`target` is the channel the message moves to, if it moves), within
/// `move_messages_within_stream_limit_seconds`.
pub fn check_topic_edit(
    state: &RealmState,
    user: &User,
    channel: &Channel,
    target: Option<&Channel>,
    message: &MessageRow,
    new_topic: &str,
    now: i64,
) -> ApiResult<()> {
    let channels = || std::iter::once(channel).chain(target);
    if is_resolve_only(&message.topic, new_topic) {
        if has_realm_permission(state, "can_resolve_topics_group", user.id)
            || channels().any(|c| state.in_channel_group(c, "can_resolve_topics_group", user))
        {
            return Ok(());
        }
        return Err(ApiError::bad_request("You don't have permission to resolve topics in this channel."));
    }
    if !has_realm_permission(state, "can_move_messages_between_topics_group", user.id)
        && !channels().any(|c| may_move_within(state, user, c))
    {
        return Err(no_permission());
    }
    if !exempt_from_move_limits(user)
        && past_limit(state, "move_messages_within_stream_limit_seconds", message.date_sent, now)
    {
        return Err(ApiError::bad_request("The time limit for editing this message's topic has passed."));
    }
    Ok(())
}

/// The channel a message moves to (Zulip's `access_stream_by_id_for_message`): an active
/// channel the user has content access to, else "Invalid channel ID".
pub fn move_target<'a>(state: &'a RealmState, user: &User, new_id: i64) -> ApiResult<&'a Channel> {
    state
        .channel(ChannelId(new_id))
        .filter(|c| !c.is_archived && state.has_content_access(user, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))
}

/// Channel moves (Zulip's `can_move_messages_out_of_channel`): administrators, the
/// organization's `can_move_messages_between_channels_group`, the channel's administrators
/// and its `can_move_messages_out_of_channel_group`; into a channel whose
/// `can_send_message_group` has the user, within `move_messages_between_streams_limit_seconds`.
pub fn check_channel_move(
    state: &RealmState,
    user: &User,
    channel: &Channel,
    target: &Channel,
    message: &MessageRow,
    now: i64,
) -> ApiResult<()> {
    if !user.role.is_admin()
        && !has_realm_permission(state, "can_move_messages_between_channels_group", user.id)
        && !state.in_channel_group(channel, "can_administer_channel_group", user)
        && !state.in_channel_group(channel, "can_move_messages_out_of_channel_group", user)
    {
        return Err(ApiError::bad_request("You don't have permission to move this message"));
    }
    if !state.in_channel_group(target, "can_send_message_group", user) {
        return Err(ApiError::bad_request("You do not have permission to post in this channel."));
    }
    if !exempt_from_move_limits(user)
        && past_limit(state, "move_messages_between_streams_limit_seconds", message.date_sent, now)
    {
        return Err(ApiError::bad_request("The time limit for editing this message's channel has passed"));
    }
    Ok(())
}
