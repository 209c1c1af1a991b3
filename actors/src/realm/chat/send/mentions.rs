//! Mentions: who may use wildcard and group mentions, and the flags they give each
//! recipient of a message (sending and editing).

use std::collections::BTreeSet;

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::UserId;
use crate::realm::chat::flag;
use crate::realm::chat::render::Rendered;
use crate::realm::model::{Channel, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;

/// Zulip's `Stream.wildcard_mention_threshold`: wildcard mentions reaching more people
/// need `can_mention_many_users_group`.
pub const WILDCARD_MENTION_THRESHOLD: usize = 15;

/// Whether `user` may use wildcard mentions reaching any number of people.
pub fn may_mention_anyone(state: &RealmState, user: UserId) -> bool {
    has_realm_permission(state, "can_mention_many_users_group", user)
}

/// Whether a wildcard mention reaching `count` people is allowed (`anyone`: see
/// [`may_mention_anyone`]).
pub fn may_mention(count: usize, anyone: bool) -> bool {
    count <= WILDCARD_MENTION_THRESHOLD || anyone
}

/// Zulip's refusal of a topic wildcard mention reaching too many people.
pub fn topic_wildcard_refused() -> ApiError {
    ApiError::new(
        ErrorCode::TopicWildcardMentionNotAllowed,
        400,
        "You do not have permission to use topic wildcard mentions in this topic.",
    )
}

/// The mention permissions: channel wildcards in big channels, and each (non-silently)
/// mentioned group's `can_mention_group`.
pub fn check_mentions(
    state: &RealmState,
    sender: &User,
    rendered: &Rendered,
    channel: Option<&Channel>,
) -> ApiResult<()> {
    if let Some(channel) = channel {
        let count = state.subscriber_count(channel.id);
        if rendered.stream_wildcard && !(count <= WILDCARD_MENTION_THRESHOLD || may_mention_anyone(state, sender.id)) {
            return Err(ApiError::new(
                ErrorCode::StreamWildcardMentionNotAllowed,
                400,
                "You do not have permission to use channel wildcard mentions in this channel.",
            ));
        }
    }
    for group in rendered.mentioned_groups.iter().filter_map(|id| state.group(*id)) {
        let allowed = state.group_setting_of(group, "can_mention_group");
        if !state.group_setting_has(&allowed, sender.id) {
            return Err(ApiError::bad_request(format!("You are not allowed to mention user group '{}'.", group.name)));
        }
    }
    Ok(())
}

/// The per-user flags of a new message: `base` (the direct-message bit), the mention bits
/// and, for the sender when `read_by_sender`, `read`.
pub fn recipient_flags(
    sender: UserId,
    recipients: &[UserId],
    rendered: &Rendered,
    group_members: &BTreeSet<UserId>,
    topic_participants: &BTreeSet<UserId>,
    base: i64,
    read_by_sender: bool,
) -> Vec<(UserId, i64)> {
    recipients
        .iter()
        .map(|&user| {
            let mut bits = base | mention_bits(user, rendered, group_members, topic_participants);
            if user == sender && read_by_sender {
                bits |= flag::READ;
            }
            (user, bits)
        })
        .collect()
}

/// The mention bits of one recipient for rendered content, and `has_alert_word` when it
/// holds one of their alert words (sending and editing).
pub fn mention_bits(
    user: UserId,
    rendered: &Rendered,
    group_members: &BTreeSet<UserId>,
    topic_participants: &BTreeSet<UserId>,
) -> i64 {
    let mut bits = 0;
    if rendered.mentioned_users.contains(&user) {
        bits |= flag::MENTIONED;
    } else if group_members.contains(&user) {
        bits |= flag::GROUP_MENTIONED;
    }
    if rendered.stream_wildcard {
        bits |= flag::STREAM_WILDCARD_MENTIONED;
    }
    if rendered.topic_wildcard && topic_participants.contains(&user) {
        bits |= flag::TOPIC_WILDCARD_MENTIONED;
    }
    if rendered.alert_word_users.contains(&user) {
        bits |= flag::HAS_ALERT_WORD;
    }
    bits
}

/// Everyone in the (non-silently) mentioned groups.
pub fn mentioned_group_members(state: &RealmState, rendered: &Rendered) -> BTreeSet<UserId> {
    if rendered.mentioned_groups.is_empty() {
        return BTreeSet::new();
    }
    state
        .users()
        .filter(|u| rendered.mentioned_groups.iter().any(|g| state.is_member_recursive(*g, u.id)))
        .map(|u| u.id)
        .collect()
}
