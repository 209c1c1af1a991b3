//! The payloads of a message notification, as Zulip builds them (`get_message_payload`,
//! `get_message_payload_apns`, `get_message_payload_gcm`, and the end-to-end encrypted
//! format of Zulip 11): built when the message is sent, kept in the push worker's job.

use serde_json::{json, Map, Value};

use super::{PushContext, Trigger};
use crate::realm::chat::flag;
use crate::realm::chat::send::PlannedMessage;
use crate::realm::format::avatar_url;
use crate::realm::model::User;
use crate::realm::state::RealmState;

/// Zulip truncates notification content to this many characters, with an ellipsis.
const MAX_CONTENT_CHARS: usize = 200;

/// `content` truncated as Zulip's `truncate_content`, and whether it was.
pub fn truncate_content(content: &str) -> (String, bool) {
    match content.char_indices().nth(MAX_CONTENT_CHARS) {
        None => (content.to_owned(), false),
        Some((at, _)) => (format!("{}…", &content[..at]), true),
    }
}

/// Fields every payload has (Zulip's `get_base_payload`).
pub fn base_payload(state: &RealmState, context: &PushContext, user: &User) -> Map<String, Value> {
    let realm = state.realm();
    crate::json_object(json!({
        "server": context.server,
        "realm_id": realm.id,
        "realm_name": realm.name,
        "realm_uri": context.realm_url,
        "realm_url": context.realm_url,
        "user_id": user.id,
    }))
}

/// The smallest mentioned group `user` is in, when a group mention is what mentioned them
/// (Zulip's `get_mentioned_user_group`).
fn mentioned_group(state: &RealmState, m: &PlannedMessage, user: &User, bits: i64) -> Option<(i64, String)> {
    if bits & flag::MENTIONED != 0 || bits & flag::GROUP_MENTIONED == 0 {
        return None;
    }
    m.mentioned_groups()
        .iter()
        .filter(|g| state.is_member_recursive(**g, user.id))
        .filter_map(|g| state.group(*g))
        .min_by_key(|g| state.recursive_members([g.id]).len())
        .map(|g| (g.id.0, g.name.clone()))
}

/// The job of a message notification for `user`: the legacy payloads (FCM and APNs, the
/// bouncer delivers them to the user's tokens) and the end-to-end encrypted one (sealed
/// per device by the worker). `None` if the sender is unknown.
pub fn message_job(
    state: &RealmState,
    context: &PushContext,
    m: &PlannedMessage,
    user: &User,
    trigger: Trigger,
) -> Option<Value> {
    let sender = state.user(m.sender())?;
    let bits = m.flags().iter().find(|(u, _)| *u == user.id).map_or(0, |(_, b)| *b);
    let group = mentioned_group(state, m, user, bits).filter(|_| trigger == Trigger::Mention);
    let channel = m.channel_id().and_then(|c| state.channel(c));
    let recipients: Vec<i64> = m.recipients().iter().map(|u| u.0).collect();
    let group_dm = channel.is_none() && recipients.len() > 2;
    let pm_users = recipients.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let text = super::text::mobile_push_content(m.rendered_html());
    let (content, truncated) = truncate_content(&text);
    // Absolute, as Zulip's `absolute_avatar_url`: the app shows it without a base.
    let avatar = match avatar_url(sender) {
        relative if relative.starts_with('/') => format!("{}{relative}", context.realm_url),
        absolute => absolute,
    };

    let mut data = base_payload(state, context, user);
    data.insert("sender_id".into(), json!(sender.id));
    data.insert("sender_email".into(), json!(sender.email));
    data.insert("time".into(), json!(m.date_sent()));
    if let Some((id, name)) = &group {
        data.insert("mentioned_user_group_id".into(), json!(id));
        data.insert("mentioned_user_group_name".into(), json!(name));
    }
    match channel {
        Some(c) => {
            data.insert("recipient_type".into(), json!("stream"));
            data.insert("stream".into(), json!(c.name));
            data.insert("stream_id".into(), json!(c.id));
            data.insert("topic".into(), json!(m.topic()));
        }
        None => {
            data.insert("recipient_type".into(), json!("private"));
            if group_dm {
                data.insert("pm_users".into(), json!(pm_users));
            }
        }
    }

    let mut gcm = data.clone();
    gcm.insert("event".into(), json!("message"));
    gcm.insert("zulip_message_id".into(), json!(m.id()));
    gcm.insert("content".into(), json!(content));
    gcm.insert("content_truncated".into(), json!(truncated));
    gcm.insert("sender_full_name".into(), json!(sender.full_name));
    gcm.insert("sender_avatar_url".into(), json!(avatar));

    let mut zulip = data;
    zulip.insert("message_ids".into(), json!([m.id()]));
    let title = match channel {
        Some(c) => format!("#{} > {}", c.name, m.topic()),
        None if group_dm => {
            let mut names: Vec<&str> =
                m.recipients().iter().filter_map(|u| state.user(*u)).map(|u| u.full_name.as_str()).collect();
            names.sort_unstable();
            names.join(", ")
        }
        None => sender.full_name.clone(),
    };
    let subtitle = match (trigger, &group) {
        (Trigger::Mention, Some((_, name))) => format!("{} mentioned @{name}:", sender.full_name),
        (Trigger::Mention, None) => format!("{} mentioned you:", sender.full_name),
        (t, _) if t.is_wildcard() => format!("{} mentioned everyone:", sender.full_name),
        _ if channel.is_none() && !group_dm => String::new(),
        _ => format!("{}:", sender.full_name),
    };
    let apns = json!({
        "alert": {"title": title, "subtitle": subtitle, "body": content},
        "sound": "default",
        "badge": 0,
        "custom": {"zulip": zulip},
    });

    let realm = state.realm();
    let mut e2ee = crate::json_object(json!({
        "realm_name": realm.name,
        "realm_url": context.realm_url,
        "user_id": user.id,
        "type": "message",
        "message_id": m.id(),
        "time": m.date_sent(),
        "sender_id": sender.id,
        "sender_full_name": sender.full_name,
        "sender_avatar_url": avatar,
        "content": content,
    }));
    if let Some((id, name)) = &group {
        e2ee.insert("mentioned_user_group_id".into(), json!(id));
        e2ee.insert("mentioned_user_group_name".into(), json!(name));
    }
    match channel {
        Some(c) => {
            e2ee.insert("recipient_type".into(), json!("channel"));
            e2ee.insert("channel_id".into(), json!(c.id));
            e2ee.insert("channel_name".into(), json!(c.name));
            e2ee.insert("topic".into(), json!(m.topic()));
        }
        None => {
            // Zulip 12 (feature level 429): every user of the conversation, sorted, for 1:1
            // and group conversations alike (it was `pm_users`, for groups only).
            let mut everyone = recipients.clone();
            everyone.extend([sender.id.0, user.id.0]);
            everyone.sort_unstable();
            everyone.dedup();
            e2ee.insert("recipient_type".into(), json!("direct"));
            e2ee.insert("recipient_user_ids".into(), json!(everyone));
        }
    }
    Some(json!({
        "message_id": m.id(),
        "trigger": trigger.as_str(),
        "gcm": gcm,
        "gcm_options": {"priority": "high"},
        "apns": apns,
        "e2ee": e2ee,
    }))
}
