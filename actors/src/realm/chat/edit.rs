//! Editing and moving messages: `PATCH /messages/{message_id}` and the `update_message`
//! event (Zulip's `update_message_backend`, `check_update_message`, `do_update_message`).
//!
//! `send_notification_to_old_thread` / `send_notification_to_new_thread` are accepted but
//! no Notification Bot messages are sent yet.

use std::collections::{BTreeMap, BTreeSet};

use actix::prelude::*;
use serde_json::{json, Map, Value};

use super::changes::{access_message, access_message_to_change, event_recipients};
use super::flag;
use super::format::{flag_names, is_me_message};
use super::render::{render, Rendered};
use super::send::{
    check_mentions, mention_bits, mentioned_group_members, normalize_content, normalize_topic, stripped_topic,
};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::catalog;
use crate::realm::model::{Channel, Role, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::store::messages::{self as db, EditedMessage};
use crate::store::reactions::{self as rows, MessageRow};
use crate::store::Store;

/// Zulip's grace period on the edit and move time limits, in seconds.
const EDIT_LIMIT_BUFFER: i64 = 20;

/// The prefix of resolved topics.
const RESOLVED_PREFIX: &str = "✔ ";

/// Zulip's `check_time_limit_for_change_all_propagate_mode`: moving a whole topic past the
/// (stricter applicable) move limit is refused with how many of its messages may move.
fn check_change_all_limit(
    state: &RealmState,
    messages: &[(i64, i64)],
    topic_edit: bool,
    channel_edit: bool,
    now: i64,
) -> ApiResult<()> {
    let topic_limit = realm_int(state, "move_messages_within_stream_limit_seconds").filter(|_| topic_edit);
    let channel_limit = realm_int(state, "move_messages_between_streams_limit_seconds").filter(|_| channel_edit);
    let Some(limit) = [topic_limit, channel_limit].into_iter().flatten().min() else { return Ok(()) };
    let oldest = now - (limit + EDIT_LIMIT_BUFFER);
    let allowed: Vec<i64> = messages.iter().filter(|(_, sent)| *sent > oldest).map(|(id, _)| *id).collect();
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

/// The mention bits recomputed when content changes.
const MENTION_BITS: i64 =
    flag::MENTIONED | flag::GROUP_MENTIONED | flag::STREAM_WILDCARD_MENTIONED | flag::TOPIC_WILDCARD_MENTIONED;

/// Which messages of the topic an edit of the topic or channel applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagateMode {
    ChangeOne,
    ChangeLater,
    ChangeAll,
}

impl PropagateMode {
    /// Parses Zulip's `propagate_mode` values.
    pub fn parse(value: &str) -> ApiResult<PropagateMode> {
        match value {
            "change_one" => Ok(PropagateMode::ChangeOne),
            "change_later" => Ok(PropagateMode::ChangeLater),
            "change_all" => Ok(PropagateMode::ChangeAll),
            _ => Err(ApiError::bad_request("Invalid propagate_mode")),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            PropagateMode::ChangeOne => "change_one",
            PropagateMode::ChangeLater => "change_later",
            PropagateMode::ChangeAll => "change_all",
        }
    }
}

/// `PATCH /messages/{message_id}`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateMessage {
    pub user_id: UserId,
    pub message_id: i64,
    pub content: Option<String>,
    /// `topic` or its legacy alias `subject`.
    pub topic: Option<String>,
    pub stream_id: Option<i64>,
    pub propagate_mode: PropagateMode,
}

fn no_permission() -> ApiError {
    ApiError::bad_request("You don't have permission to edit this message")
}

/// An optional integer realm setting (`None`: no limit).
fn realm_int(state: &RealmState, name: &str) -> Option<i64> {
    catalog::realm_setting(name).and_then(|s| s.value(&state.realm().settings, Some(state)).as_i64())
}

/// Whether `date_sent` is past the realm limit `name` (plus Zulip's buffer) at `now`.
fn past_limit(state: &RealmState, name: &str, date_sent: i64, now: i64) -> bool {
    realm_int(state, name).is_some_and(|limit| now - date_sent > limit + EDIT_LIMIT_BUFFER)
}

/// Whether moving between `old` and `new` only adds or removes the resolved prefix.
fn is_resolve_only(old: &str, new: &str) -> bool {
    let strip = |t: &str| t.strip_prefix(RESOLVED_PREFIX).map(str::to_owned);
    strip(old).as_deref() == Some(new) || strip(new).as_deref() == Some(old)
}

/// Content edits (Zulip's `validate_user_can_edit_message` for content): the organization
/// allows editing, the user sent the message, within `message_content_edit_limit_seconds`.
fn check_content_edit(state: &RealmState, user: &User, message: &MessageRow, now: i64) -> ApiResult<()> {
    let allowed = catalog::realm_setting("allow_message_editing")
        .map(|s| s.value(&state.realm().settings, Some(state)))
        .is_none_or(|v| v.as_bool() != Some(false));
    if !allowed {
        return Err(ApiError::bad_request("Your organization has turned off message editing"));
    }
    if message.sender_id != user.id {
        return Err(no_permission());
    }
    if past_limit(state, "message_content_edit_limit_seconds", message.date_sent, now) {
        return Err(ApiError::bad_request("The time limit for editing this message has passed"));
    }
    Ok(())
}

/// Moderators (and above) are exempt from the move time limits (Zulip's `is_moderator`).
fn exempt_from_move_limits(user: &User) -> bool {
    matches!(user.role, Role::Owner | Role::Administrator | Role::Moderator)
}

/// Zulip's `can_move_messages_within_channel`: administrators, the channel's
/// administrators and its `can_move_messages_within_channel_group`.
fn may_move_within(state: &RealmState, user: &User, channel: &Channel) -> bool {
    user.role.is_admin()
        || state.in_channel_group(channel, "can_administer_channel_group", user)
        || state.in_channel_group(channel, "can_move_messages_within_channel_group", user)
}

/// Topic edits (Zulip's `can_resolve_topics` and `can_edit_topic`): resolving per the
/// organization's or either channel's `can_resolve_topics_group`; other renames per the
/// organization's `can_move_messages_between_topics_group` or [`may_move_within`] either
/// channel (`target` is the channel the message moves to, if it moves), within
/// `move_messages_within_stream_limit_seconds`.
fn check_topic_edit(
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
fn move_target<'a>(state: &'a RealmState, user: &User, new_id: i64) -> ApiResult<&'a Channel> {
    state
        .channel(ChannelId(new_id))
        .filter(|c| !c.is_archived && state.has_content_access(user, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))
}

/// Channel moves (Zulip's `can_move_messages_out_of_channel`): administrators, the
/// organization's `can_move_messages_between_channels_group`, the channel's administrators
/// and its `can_move_messages_out_of_channel_group`; into a channel whose
/// `can_send_message_group` has the user, within `move_messages_between_streams_limit_seconds`.
fn check_channel_move(
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

/// The validated change.
struct Plan<'a> {
    message: MessageRow,
    content: Option<(String, Rendered)>,
    topic: Option<String>,
    target: Option<&'a Channel>,
    ids: Vec<i64>,
}

/// Validates the change in Zulip's order (`check_update_message`): access, the content
/// permission, a topic equal to the current one dropped, then the payload
/// (`validate_message_edit_payload`), then topic and channel permissions.
fn plan<'a>(state: &'a RealmState, store: &Store, user: &User, msg: &UpdateMessage, now: i64) -> ApiResult<Plan<'a>> {
    let conn = store.conn()?;
    let message = access_message_to_change(state, &conn, user, msg.message_id)?.message;
    if msg.content.is_some() {
        check_content_edit(state, user, &message, now)?;
    }
    let topic = msg.topic.as_deref().map(normalize_topic).filter(|t| *t != message.topic);
    if msg.content.is_none() && topic.is_none() && msg.stream_id.is_none() {
        return Err(ApiError::bad_request("Nothing to change"));
    }
    let channel = message.channel_id.and_then(|id| state.channel(id));
    if channel.is_none() {
        if msg.stream_id.is_some() {
            return Err(ApiError::bad_request("Direct messages cannot be moved to channels."));
        }
        if topic.is_some() {
            return Err(ApiError::bad_request("Direct messages cannot have topics."));
        }
    }
    if msg.propagate_mode != PropagateMode::ChangeOne && topic.is_none() && msg.stream_id.is_none() {
        return Err(ApiError::bad_request("Invalid propagate_mode without topic edit"));
    }
    if let (Some(raw), Some(_)) = (&msg.topic, &topic) {
        crate::validate::check_topic(stripped_topic(raw))?;
    }
    if msg.content.is_some() && msg.stream_id.is_some() {
        return Err(ApiError::bad_request("Cannot change message content while changing channel"));
    }
    let content = match &msg.content {
        None => None,
        Some(raw) => {
            // Zulip turns an emptied message into "(deleted)".
            let content = normalize_content(if raw.trim_end().is_empty() { "(deleted)" } else { raw })?;
            let rendered = render(state, &content);
            check_mentions(state, user, &rendered, channel)?;
            Some((content, rendered))
        }
    };
    let mut ids = vec![message.id];
    let mut target = None;
    if let Some(channel) = channel {
        target = msg.stream_id.filter(|id| *id != channel.id.0).map(|id| move_target(state, user, id)).transpose()?;
        if let Some(topic) = &topic {
            check_topic_edit(state, user, channel, target, &message, topic, now)?;
        }
        if let Some(target) = target {
            check_channel_move(state, user, channel, target, &message, now)?;
        }
        if (topic.is_some() || target.is_some()) && msg.propagate_mode != PropagateMode::ChangeOne {
            let from = (msg.propagate_mode == PropagateMode::ChangeLater).then_some(message.id);
            let dated: Vec<(i64, i64)> = db::topic_message_ids(&conn, channel.id, &message.topic, from)?
                .into_iter()
                .filter(|(id, _)| access_message(state, &conn, user, *id).is_ok())
                .collect();
            let resolving = topic.as_deref().is_some_and(|t| is_resolve_only(&message.topic, t));
            if msg.propagate_mode == PropagateMode::ChangeAll && !resolving && !exempt_from_move_limits(user) {
                check_change_all_limit(state, &dated, topic.is_some(), target.is_some(), now)?;
            }
            ids = dated.into_iter().map(|(id, _)| id).collect();
        }
    }
    Ok(Plan { message, content, topic, target, ids })
}

/// One message's change: its stored row before, its recipients' flags after, and the
/// users who lost access to it in a move.
struct Changed {
    before: MessageRow,
    flags: Vec<(UserId, i64)>,
    lost: Vec<UserId>,
}

/// Edits or moves a message (and, per `propagate_mode`, its topic's other messages) in
/// one transaction, and returns the `update_message` events (with each user's flags) and,
/// for users who lose access on a move, `delete_message`.
pub fn update_message(
    state: &mut RealmState,
    store: &Store,
    msg: &UpdateMessage,
    now: i64,
) -> ApiResult<Vec<Outgoing>> {
    let user = state.user_or_err(msg.user_id)?;
    let plan = plan(state, store, user, msg, now)?;
    if plan.content.is_none() && plan.topic.is_none() && plan.target.is_none() {
        return Ok(Vec::new());
    }
    let old_audience = {
        let conn = store.conn()?;
        event_recipients(state, &conn, &plan.message)?
    };
    let group_members = plan.content.as_ref().map(|(_, r)| mentioned_group_members(state, r)).unwrap_or_default();
    let new_channel = plan.target.map(|c| c.id).or(plan.message.channel_id);
    let changed = store.write(|tx| {
        let mut changed = Vec::with_capacity(plan.ids.len());
        for id in &plan.ids {
            let Some(before) = rows::message(tx, *id)? else { continue };
            let mut entry = Map::new();
            entry.insert("user_id".into(), json!(user.id));
            entry.insert("timestamp".into(), json!(now));
            let (content, rendered) = match (&plan.content, before.id == plan.message.id) {
                (Some((content, rendered)), true) => {
                    entry.insert("prev_content".into(), json!(before.content));
                    entry.insert("prev_rendered_content".into(), json!(before.rendered_content));
                    (content.as_str(), rendered.html.as_str())
                }
                _ => (before.content.as_str(), before.rendered_content.as_str()),
            };
            if let Some(topic) = &plan.topic {
                entry.insert("prev_topic".into(), json!(before.topic));
                entry.insert("topic".into(), json!(topic));
            }
            if let (Some(target), Some(old)) = (plan.target, before.channel_id) {
                entry.insert("prev_stream".into(), json!(old));
                entry.insert("stream".into(), json!(target.id));
            }
            let mut history: Vec<Value> =
                before.edit_history.as_deref().and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
            history.insert(0, Value::Object(entry));
            let history = Value::Array(history).to_string();
            let moved = plan.topic.is_some() || plan.target.is_some();
            db::update_edited(
                tx,
                &EditedMessage {
                    id: *id,
                    old_content: &before.content,
                    old_topic: &before.topic,
                    channel_id: new_channel,
                    topic: plan.topic.as_deref().unwrap_or(&before.topic),
                    content,
                    rendered_content: rendered,
                    last_edit_time: plan.content.as_ref().filter(|_| before.id == plan.message.id).map(|_| now),
                    last_moved_time: moved.then_some(now),
                    edit_history: &history,
                },
            )?;
            let lost = match plan.target {
                Some(target) => move_rows(state, tx, target, *id)?,
                None => Vec::new(),
            };
            let mut flags = db::message_flags(tx, *id)?;
            if let (Some((_, rendered)), true) = (&plan.content, before.id == plan.message.id) {
                let participants: BTreeSet<UserId> = match before.channel_id {
                    Some(channel) if rendered.topic_wildcard => {
                        db::topic_participants(tx, channel, &before.topic)?.into_iter().collect()
                    }
                    _ => BTreeSet::new(),
                };
                for (user_id, bits) in flags.iter_mut() {
                    let new = (*bits & !MENTION_BITS) | mention_bits(*user_id, rendered, &group_members, &participants);
                    if new != *bits {
                        db::set_flags(tx, *user_id, *id, new)?;
                        *bits = new;
                    }
                }
            }
            changed.push(Changed { before, flags, lost });
        }
        Ok::<_, ApiError>(changed)
    })?;
    let new_audience = {
        let conn = store.conn()?;
        match rows::message(&conn, plan.message.id)? {
            Some(row) => event_recipients(state, &conn, &row)?,
            None => Vec::new(),
        }
    };
    let out = events(state, user.id, &plan, msg, &changed, &old_audience, &new_audience, now);
    let moved: Vec<i64> = changed.iter().map(|c| c.before.id).collect();
    if let Some(target) = plan.target.map(|c| c.id) {
        for id in moved {
            state.note_channel_message(target, id);
        }
    }
    Ok(out)
}

/// Gives the target channel's subscribers who lack one a (read) row for a moved message
/// and removes the rows of everyone not subscribed to it, as Zulip does; returns those of
/// them who cannot read the message there any more (they get `delete_message`).
fn move_rows(
    state: &RealmState,
    conn: &rusqlite::Connection,
    target: &Channel,
    message: i64,
) -> ApiResult<Vec<UserId>> {
    let mut lost = Vec::new();
    for (user_id, _) in db::message_flags(conn, message)? {
        if state.is_subscribed(user_id, target.id) {
            continue;
        }
        db::remove_user_message(conn, user_id, message)?;
        if !state.user(user_id).is_some_and(|u| state.has_content_access(u, target)) {
            lost.push(user_id);
        }
    }
    for subscriber in state.subscribers(target.id) {
        rows::ensure_user_message(conn, subscriber, message, flag::READ)?;
    }
    Ok(lost)
}

/// The `update_message` events, one per distinct flag set of the edited message, to
/// everyone who had or has the message, and `delete_message` to users who lost it.
#[allow(clippy::too_many_arguments)] // reason: the pieces of one change, gathered once
fn events(
    state: &RealmState,
    editor: UserId,
    plan: &Plan<'_>,
    msg: &UpdateMessage,
    changed: &[Changed],
    old_audience: &[UserId],
    new_audience: &[UserId],
    now: i64,
) -> Vec<Outgoing> {
    let message = &plan.message;
    let mut body = Map::new();
    body.insert("user_id".into(), json!(editor));
    body.insert("edit_timestamp".into(), json!(now));
    body.insert("message_id".into(), json!(message.id));
    body.insert("rendering_only".into(), json!(false));
    if let Some(channel) = message.channel_id.and_then(|id| state.channel(id)) {
        body.insert("stream_name".into(), json!(channel.name));
        body.insert("stream_id".into(), json!(channel.id));
    }
    if let Some((content, rendered)) = &plan.content {
        body.insert("orig_content".into(), json!(message.content));
        body.insert("orig_rendered_content".into(), json!(message.rendered_content));
        body.insert("content".into(), json!(content));
        body.insert("rendered_content".into(), json!(rendered.html));
        body.insert("is_me_message".into(), json!(is_me_message(content)));
    }
    if plan.topic.is_some() || plan.target.is_some() {
        body.insert("propagate_mode".into(), json!(msg.propagate_mode.as_str()));
        if let Some(target) = plan.target {
            body.insert("new_stream_id".into(), json!(target.id));
        }
        body.insert("orig_subject".into(), json!(message.topic));
        if let Some(topic) = &plan.topic {
            body.insert("subject".into(), json!(topic));
            body.insert("topic_links".into(), json!([]));
        }
    }
    let ids: Vec<i64> = changed.iter().map(|c| c.before.id).collect();
    body.insert("message_ids".into(), json!(ids));
    let flags: BTreeMap<UserId, i64> = changed
        .iter()
        .find(|c| c.before.id == message.id)
        .map(|c| c.flags.iter().copied().collect())
        .unwrap_or_default();
    let lost: BTreeSet<UserId> = changed.iter().flat_map(|c| c.lost.iter().copied()).collect();
    let audience: BTreeSet<UserId> =
        old_audience.iter().chain(new_audience).copied().filter(|u| !lost.contains(u)).collect();
    let mut groups: BTreeMap<Vec<&'static str>, Vec<UserId>> = BTreeMap::new();
    for user in audience {
        let names = flags.get(&user).map(|bits| flag_names(*bits)).unwrap_or_default();
        groups.entry(names).or_default().push(user);
    }
    let mut out: Vec<Outgoing> = groups
        .into_iter()
        .map(|(names, users)| {
            let mut fields = body.clone();
            fields.insert("flags".into(), json!(names));
            Outgoing::to(users, Event::new("update_message", Value::Object(fields)))
        })
        .collect();
    if !lost.is_empty() {
        let fields = json!({"message_ids": ids, "message_type": "stream", "stream_id": message.channel_id,
                            "topic": message.topic});
        out.push(Outgoing::to(lost.into_iter().collect(), Event::new("delete_message", fields)));
    }
    out
}

impl Handler<UpdateMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateMessage, _: &mut Self::Context) -> Self::Result {
        let events = update_message(&mut self.state, &self.store, &msg, crate::clock::now())?;
        self.committed(events);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolving_is_adding_or_removing_the_prefix() {
        assert!(is_resolve_only("lunch", "✔ lunch"));
        assert!(is_resolve_only("✔ lunch", "lunch"));
        assert!(!is_resolve_only("lunch", "✔ dinner"));
        assert!(!is_resolve_only("lunch", "dinner"));
    }

    #[test]
    fn propagate_modes_parse() {
        assert_eq!(PropagateMode::parse("change_later").unwrap(), PropagateMode::ChangeLater);
        assert_eq!(PropagateMode::parse("x").unwrap_err().msg, "Invalid propagate_mode");
    }
}
