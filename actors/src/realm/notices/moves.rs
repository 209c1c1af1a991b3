//! Notification Bot's notices of moved messages and resolved topics (Zulip's
//! `send_message_moved_breadcrumbs` and `maybe_send_resolve_topic_notifications`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::texts::{message_url, silent_mention, topic_link};
use crate::ids::UserId;
use crate::realm::chat::edit::MoveReport;
use crate::realm::chat::send::{Notice, NoticeTo};
use crate::realm::model::SystemBot;
use crate::realm::state::RealmState;
use crate::realm::topics::policies::FOLLOWED;

/// The prefix of resolved topics.
const RESOLVED: &str = "✔ ";

/// Whether the move resolved (`Some(true)`) or unresolved (`Some(false)`) its topic.
fn resolution(report: &MoveReport) -> Option<bool> {
    if !report.topic_changed || report.channel_changed || report.content_changed {
        return None;
    }
    let (old, new) = (report.old_topic.as_str(), report.new_topic.as_str());
    if new.strip_prefix(RESOLVED) == Some(old) && !old.starts_with(RESOLVED) {
        return Some(true);
    }
    if old.trim_start_matches(['✔', ' ']) == new && old.starts_with(RESOLVED) && !new.starts_with(RESOLVED) {
        return Some(false);
    }
    None
}

/// Who gets the resolve notice unread: active human subscribers whose
/// `resolved_topic_notice_auto_read_policy` is `never`, or `except_followed` (the default)
/// while they follow the topic.
fn resolve_unread(state: &RealmState, report: &MoveReport) -> BTreeSet<UserId> {
    state
        .subscribers(report.old_channel)
        .filter_map(|id| state.user(id))
        .filter(|u| u.is_active && !u.is_bot)
        .filter(|u| {
            let policy = u.settings.get("resolved_topic_notice_auto_read_policy").and_then(Value::as_str);
            let follows = [&report.old_topic, &report.new_topic].iter().any(|t| {
                state.user_topic(u.id, report.old_channel, t).is_some_and(|p| p.visibility_policy == FOLLOWED)
            });
            match policy.unwrap_or("except_followed") {
                "never" => true,
                "except_followed" => follows,
                _ => false,
            }
        })
        .map(|u| u.id)
        .collect()
}

/// The notices of a move (or a resolved topic), read for the editor.
pub fn move_notices(
    state: &RealmState,
    realm_url: &str,
    report: &MoveReport,
    to_old_thread: bool,
    to_new_thread: bool,
) -> Vec<Notice> {
    let Some(sender) = state.system_bot(SystemBot::NOTIFICATION_BOT).map(|b| b.id) else { return Vec::new() };
    let Some(editor) = state.user(report.editor) else { return Vec::new() };
    let (Some(old), Some(new)) = (state.channel(report.old_channel), state.channel(report.new_channel)) else {
        return Vec::new();
    };
    let user = silent_mention(editor);
    let mut notices = Vec::new();
    let resolved = resolution(report);
    if let Some(resolved) = resolved {
        let what = if resolved { "resolved" } else { "unresolved" };
        let content = format!("{user} has marked this topic as {what}.");
        let mut notice = Notice::new(sender, NoticeTo::Channel(old.id, report.new_topic.clone()), content);
        notice.unread_only = Some(resolve_unread(state, report));
        notices.push(notice);
    }
    let count = report.count;
    let new_location = topic_link(new.id, &new.name, &report.new_topic);
    let old_location = topic_link(old.id, &old.name, &report.old_topic);
    if to_new_thread && (report.channel_changed || (report.topic_changed && resolved.is_none())) {
        let content = if report.new_topic_was_empty && report.moved_all_visible {
            format!("This topic was moved here from {old_location} by {user}.")
        } else if count == 1 {
            let link = message_url(realm_url, new.id, &new.name, &report.new_topic, report.message);
            format!("[A message]({link}) was moved here from {old_location} by {user}.")
        } else {
            format!("{count} messages were moved here from {old_location} by {user}.")
        };
        notices.push(Notice::new(sender, NoticeTo::Channel(new.id, report.new_topic.clone()), content));
    }
    if to_old_thread {
        let content = if report.moved_all_visible {
            format!("This topic was moved to {new_location} by {user}.")
        } else if count == 1 {
            format!("A message was moved from this topic to {new_location} by {user}.")
        } else {
            format!("{count} messages were moved from this topic to {new_location} by {user}.")
        };
        notices.push(Notice::new(sender, NoticeTo::Channel(old.id, report.old_topic.clone()), content));
    }
    for notice in &mut notices {
        notice.read_for.push(editor.id);
    }
    notices
}
