//! An edit or move of a message (and, per `propagate_mode`, of its topic's other
//! messages): planned from the state, checked against the stored message and written in
//! one transaction, applied.
//!
//! Zulip checks access to the stored message first, so nearly every check of an edit
//! needs the message: they run in [`Change::write`], in Zulip's order, against the state
//! the edit was planned with. The plan does what needs no message: the editor, and the new
//! content normalized and rendered (its errors wait for their turn).

use std::collections::BTreeSet;

use rusqlite::{Connection, Transaction};
use serde_json::{json, Map, Value};

use super::checks::{
    check_change_all_limit, check_channel_move, check_content_edit, check_topic_edit, exempt_from_move_limits,
    is_resolve_only, move_target,
};
use super::events::{edit_events, Changed, Edited, Validated};
use super::{PropagateMode, UpdateMessage};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::chat::changes::{access_message, access_message_to_change, event_recipients};
use crate::realm::chat::flag;
use crate::realm::chat::render::{render, Rendered};
use crate::realm::chat::send::mentions::{check_mentions, mention_bits, mentioned_group_members};
use crate::realm::chat::send::{normalize_content, normalize_topic, stripped_topic, topic_creation_refusal};
use crate::realm::model::{Channel, User, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::policy_events;
use crate::realm::uploads_data::claims::{self, Claims};
use crate::realm::{Applied, Change};
use crate::store::messages::{self as db, EditedMessage};
use crate::store::reactions as rows;

/// The mention (and alert word) bits recomputed when content changes.
const MENTION_BITS: i64 = flag::MENTIONED
    | flag::GROUP_MENTIONED
    | flag::STREAM_WILDCARD_MENTIONED
    | flag::TOPIC_WILDCARD_MENTIONED
    | flag::HAS_ALERT_WORD;

/// An edit, planned.
#[derive(Debug, Clone)]
pub struct MessageEdit {
    /// The state the edit was planned against, for the checks that need the message.
    state: RealmState,
    editor: UserId,
    cmd: UpdateMessage,
    now: i64,
    /// The new content, normalized and rendered (or why it is refused).
    content: Option<ApiResult<(String, Rendered)>>,
    /// Set by the write.
    done: Option<Edited>,
    /// The uploads the new content claims and no longer claims, set by the write.
    claims: Claims,
    /// Set by the write, for a move.
    report: Option<MoveReport>,
    /// Set by the write: the topic policies that moved with the topic (rows, event topics).
    policies: Vec<(UserTopic, String)>,
}

/// What a move did, for the notices that tell of it (Zulip's `do_update_message`
/// computes the same before `send_message_moved_breadcrumbs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveReport {
    pub editor: UserId,
    /// The edited message.
    pub message: MessageId,
    pub old_channel: ChannelId,
    pub old_topic: String,
    pub new_channel: ChannelId,
    pub new_topic: String,
    pub channel_changed: bool,
    pub topic_changed: bool,
    pub content_changed: bool,
    /// How many messages moved.
    pub count: usize,
    /// None of the old topic's messages the editor can see stayed behind.
    pub moved_all_visible: bool,
    /// The new topic had no message the editor can see before the move.
    pub new_topic_was_empty: bool,
}

/// Plans an edit: the editor must exist; the new content is normalized (an emptied
/// message becomes "(deleted)", as in Zulip) and rendered.
pub fn plan_edit(state: &RealmState, cmd: UpdateMessage, now: i64) -> ApiResult<MessageEdit> {
    let editor = state.user_or_err(cmd.user_id)?.id;
    let content = cmd.content.as_deref().map(|raw| {
        let content = normalize_content(if raw.trim_end().is_empty() { "(deleted)" } else { raw })?;
        let rendered = render(state, &content);
        Ok((content, rendered))
    });
    Ok(MessageEdit {
        state: state.clone(),
        editor,
        cmd,
        now,
        content,
        done: None,
        report: None,
        claims: Claims::default(),
        policies: Vec::new(),
    })
}

/// Checks an edit in Zulip's order (`check_update_message`): access, the content
/// permission, a topic equal to the current one dropped, then the payload
/// (`validate_message_edit_payload`), the content's mentions, then topic and channel
/// permissions and, for a topic's messages, the move time limit.
fn validate(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    msg: &UpdateMessage,
    content: Option<ApiResult<(String, Rendered)>>,
    now: i64,
) -> ApiResult<Validated> {
    let message = access_message_to_change(state, conn, user, msg.message_id)?.message;
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
    if msg.content.is_some() && crate::store::submessages::exists_for(conn, message.id)? {
        return Err(ApiError::bad_request("Widgets cannot be edited."));
    }
    // Zulip checks the hash whatever the edit changes (a client's conflict check).
    if let Some(expected) = &msg.prev_content_sha256 {
        if *expected != sha256_hex(&message.content) {
            return Err(ApiError::new(
                ErrorCode::ExpectationMismatch,
                400,
                "'prev_content_sha256' value does not match the expected value.",
            ));
        }
    }
    let content = match content.transpose()? {
        None => None,
        Some((content, rendered)) => {
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
            let dated: Vec<(MessageId, i64)> = db::topic_message_ids(conn, channel.id, &message.topic, from)?
                .into_iter()
                .filter(|(id, _)| access_message(state, conn, user, *id).is_ok())
                .collect();
            let resolving = topic.as_deref().is_some_and(|t| is_resolve_only(&message.topic, t));
            if msg.propagate_mode == PropagateMode::ChangeAll && !resolving && !exempt_from_move_limits(user) {
                check_change_all_limit(state, &dated, topic.is_some(), target.is_some(), now)?;
            }
            ids = dated.into_iter().map(|(id, _)| id).collect();
        }
        // A move (but resolving or unresolving a topic) may not start a topic the editor
        // may not start by sending (FL 441).
        if topic.is_some() || target.is_some() {
            let to = target.unwrap_or(channel);
            let to_topic = topic.as_deref().unwrap_or(&message.topic);
            if !topic.as_deref().is_some_and(|t| is_resolve_only(&message.topic, t)) {
                if let Some(refusal) = topic_creation_refusal(state, user, to) {
                    if !db::topic_has_messages(conn, to.id, to_topic)? {
                        return Err(refusal);
                    }
                }
            }
        }
    }
    Ok(Validated { message, content, topic, target: target.map(|c| c.id), ids })
}

/// The lowercase hex SHA-256 of a message's raw content (Zulip's `sha256_hash`).
fn sha256_hex(content: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(content.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes one message's edit: its row and search entry, its history entry, its rows in a
/// move, and the recomputed mention flags when the content changes.
fn write_one(
    state: &RealmState,
    tx: &Transaction<'_>,
    editor: UserId,
    edit: &Validated,
    before: rows::MessageRow,
    now: i64,
) -> ApiResult<Changed> {
    let id = before.id;
    let edited = before.id == edit.message.id;
    let mut entry = Map::new();
    entry.insert("user_id".into(), json!(editor));
    entry.insert("timestamp".into(), json!(now));
    let (content, rendered) = match (&edit.content, edited) {
        (Some((content, rendered)), true) => {
            entry.insert("prev_content".into(), json!(before.content));
            entry.insert("prev_rendered_content".into(), json!(before.rendered_content));
            (content.as_str(), rendered.html.as_str())
        }
        _ => (before.content.as_str(), before.rendered_content.as_str()),
    };
    if let Some(topic) = &edit.topic {
        entry.insert("prev_topic".into(), json!(before.topic));
        entry.insert("topic".into(), json!(topic));
    }
    if let (Some(target), Some(old)) = (edit.target, before.channel_id) {
        entry.insert("prev_stream".into(), json!(old));
        entry.insert("stream".into(), json!(target));
    }
    let mut history: Vec<Value> =
        before.edit_history.as_deref().and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
    history.insert(0, Value::Object(entry));
    let history = Value::Array(history).to_string();
    let moved = edit.topic.is_some() || edit.target.is_some();
    db::update_edited(
        tx,
        &EditedMessage {
            id,
            old_content: &before.content,
            old_topic: &before.topic,
            channel_id: edit.target.or(edit.message.channel_id),
            topic: edit.topic.as_deref().unwrap_or(&before.topic),
            content,
            rendered_content: rendered,
            last_edit_time: edit.content.as_ref().filter(|_| edited).map(|_| now),
            last_moved_time: moved.then_some(now),
            edit_history: &history,
        },
    )?;
    let lost = match edit.target.and_then(|c| state.channel(c)) {
        Some(target) => move_rows(state, tx, target, id)?,
        None => Vec::new(),
    };
    let mut flags = db::message_flags(tx, id)?;
    if let (Some((_, rendered)), true) = (&edit.content, edited) {
        let participants: BTreeSet<UserId> = match before.channel_id {
            Some(channel) if rendered.topic_wildcard => {
                db::topic_participants(tx, channel, &before.topic)?.into_iter().collect()
            }
            _ => BTreeSet::new(),
        };
        let group_members = mentioned_group_members(state, rendered);
        for (user_id, bits) in flags.iter_mut() {
            let new = (*bits & !MENTION_BITS) | mention_bits(*user_id, rendered, &group_members, &participants);
            if new != *bits {
                db::set_flags(tx, *user_id, id, new)?;
                *bits = new;
            }
        }
    }
    Ok(Changed { before, flags, lost })
}

/// Gives the target channel's subscribers who lack one a (read) row for a moved message
/// and removes the rows of everyone not subscribed to it, as Zulip does; returns those of
/// them who cannot read the message there any more (they get `delete_message`).
fn move_rows(state: &RealmState, conn: &Connection, target: &Channel, message: MessageId) -> ApiResult<Vec<UserId>> {
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

/// What a move did, read in the edit's transaction: whether the editor can still see any
/// message in the old topic, and could see any in the new one before.
fn move_report(
    state: &RealmState,
    conn: &Connection,
    user: &User,
    edit: &Validated,
    count: usize,
) -> ApiResult<Option<MoveReport>> {
    let Some(old_channel) = edit.message.channel_id else { return Ok(None) };
    if edit.topic.is_none() && edit.target.is_none() {
        return Ok(None);
    }
    let new_channel = edit.target.unwrap_or(old_channel);
    let old_topic = edit.message.topic.clone();
    let new_topic = edit.topic.clone().unwrap_or_else(|| old_topic.clone());
    let visible = |channel, topic: &str| -> ApiResult<Vec<MessageId>> {
        Ok(db::topic_message_ids(conn, channel, topic, None)?
            .into_iter()
            .map(|(id, _)| id)
            .filter(|id| !edit.ids.contains(id) && access_message(state, conn, user, *id).is_ok())
            .collect())
    };
    let moved_all_visible = visible(old_channel, &old_topic)?.is_empty();
    let new_topic_was_empty = visible(new_channel, &new_topic)?.is_empty();
    Ok(Some(MoveReport {
        editor: user.id,
        message: edit.message.id,
        old_channel,
        old_topic,
        new_channel,
        new_topic,
        channel_changed: edit.target.is_some(),
        topic_changed: edit.topic.is_some(),
        content_changed: edit.content.is_some(),
        count,
        moved_all_visible,
        new_topic_was_empty,
    }))
}

impl Change for MessageEdit {
    /// What a move did (for its notices), and Zulip's `detached_uploads`: attachments the
    /// edit left unclaimed.
    type Output = (Option<MoveReport>, Vec<Value>);

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let content = self.content.take();
        let state = &self.state;
        let user = state.user_or_err(self.editor)?;
        let edit = validate(state, tx, user, &self.cmd, content, self.now)?;
        if !edit.changes_anything() {
            return Ok(());
        }
        let old_audience = event_recipients(state, tx, &edit.message)?;
        let target_had_messages = match (edit.message.channel_id, edit.topic.is_some() || edit.target.is_some()) {
            (Some(channel), true) => db::topic_has_messages(
                tx,
                edit.target.unwrap_or(channel),
                edit.topic.as_deref().unwrap_or(&edit.message.topic),
            )?,
            _ => false,
        };
        let mut changed = Vec::with_capacity(edit.ids.len());
        for id in &edit.ids {
            if let Some(before) = rows::message(tx, *id)? {
                changed.push(write_one(state, tx, self.editor, &edit, before, self.now)?);
            }
        }
        if let (Some((content, _)), Some(sender)) = (&edit.content, state.user(edit.message.sender_id)) {
            let channel = edit.message.channel_id.and_then(|c| state.channel(c));
            self.claims = claims::plan_edit(state, sender, &edit.message.content, content, channel);
            self.claims.write(tx, edit.message.id)?;
        }
        let new_audience = match rows::message(tx, edit.message.id)? {
            Some(row) => event_recipients(state, tx, &row)?,
            None => Vec::new(),
        };
        self.report = move_report(state, tx, user, &edit, changed.len())?;
        if let Some(report) = &self.report {
            let lost: BTreeSet<UserId> = changed.iter().flat_map(|c| c.lost.iter().copied()).collect();
            self.policies = super::topics::moved_policies(state, report, &lost, target_had_messages, self.now);
            for (row, _) in &self.policies {
                crate::store::channels::put_user_topic(tx, row)?;
            }
        }
        self.done = Some(Edited { edit, changed, old_audience, new_audience });
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<(Option<MoveReport>, Vec<Value>)> {
        let MessageEdit { state: planned, editor, cmd, now, done, report, claims, policies, .. } = self;
        // The plan's copy of the state shares its maps with `state`: let go of it first.
        drop(planned);
        let Some(done) = done else { return Applied::new((None, Vec::new()), Vec::new()) };
        let mut events = edit_events(state, editor, &done, cmd.propagate_mode, now);
        for (row, topic) in policies {
            state.put_user_topic(row.clone());
            events.extend(policy_events(state, &row, &topic));
        }
        let detached = claims.detached(state);
        events.extend(claims.apply(state));
        if let Some(target) = done.edit.target {
            for changed in &done.changed {
                state.note_channel_message(target, changed.before.id);
            }
        }
        Applied::new((report, detached), events)
    }
}
