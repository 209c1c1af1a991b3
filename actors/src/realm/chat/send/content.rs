//! The content and topic rules of a new message (Zulip's `normalize_body`,
//! `truncate_content`, `Addressee.for_stream` and the topics policies), and which clients
//! mark their own messages read.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::realm::catalog::{MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH};
use crate::realm::model::Channel;
use crate::realm::state::RealmState;
use crate::validate;

/// Clients for which Zulip marks a sent message read by default.
const READ_BY_SENDER_CLIENTS: [&str; 10] = [
    "website",
    "zulipmobile",
    "zulipelectron",
    "zulipterminal",
    "zulipflutter",
    "zulipdesktop",
    "zulipandroid",
    "zulipios",
    "android",
    "ios",
];

/// Zulip's `Client.default_read_by_sender`: full UI clients mark their own messages read
/// (integrations using a person's key do not).
pub fn default_read_by_sender(client: &str) -> bool {
    let client = client.to_lowercase();
    READ_BY_SENDER_CLIENTS.contains(&client.as_str())
        || client == "snipe"
        || client.contains("desktop app")
        || client.contains("test suite")
}

/// Zulip's `normalize_body`: trailing whitespace and leading newlines removed, not empty,
/// no null bytes, truncated to the maximum length.
pub fn normalize_content(content: &str) -> ApiResult<String> {
    let body = content.trim_end().trim_start_matches('\n');
    if body.is_empty() {
        return Err(ApiError::bad_request("Message must not be empty"));
    }
    if body.contains('\0') {
        return Err(ApiError::bad_request("Message must not contain null bytes"));
    }
    Ok(truncate(body, MAX_MESSAGE_LENGTH, "\n[message truncated]"))
}

/// Zulip's `truncate_content`: the first characters and `suffix`, within `max` characters.
pub fn truncate(text: &str, max: usize, suffix: &str) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(suffix.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(suffix);
    out
}

/// A topic as sent: stripped, `(no topic)` read as the empty topic, truncated with `...`.
pub fn normalize_topic(topic: &str) -> String {
    truncate(stripped_topic(topic), MAX_TOPIC_LENGTH, "...")
}

/// A topic stripped as Zulip strips it, `(no topic)` read as the empty topic: what Zulip
/// checks for invalid characters, before truncating it.
pub fn stripped_topic(topic: &str) -> &str {
    let topic = validate::python_strip(topic);
    if topic == "(no topic)" {
        ""
    } else {
        topic
    }
}

/// The topic of a channel message (Zulip's `Addressee.for_stream`): given ("Missing
/// topic"), without characters Zulip refuses, normalized.
pub fn addressed_topic(topic: Option<&str>) -> ApiResult<String> {
    let topic = stripped_topic(topic.ok_or_else(|| ApiError::bad_request("Missing topic"))?);
    validate::check_topic(topic)?;
    Ok(truncate(topic, MAX_TOPIC_LENGTH, "..."))
}

/// The channel's and the organization's topic policies for `topic`.
pub fn check_topics_policy(state: &RealmState, channel: &Channel, topic: String) -> ApiResult<String> {
    let realm_policy =
        state.realm().settings.get("topics_policy").and_then(Value::as_str).unwrap_or("allow_empty_topic");
    match channel.topics_policy.as_str() {
        "empty_topic_only" if !topic.is_empty() => {
            Err(ApiError::bad_request("Only the general chat topic is allowed in this channel."))
        }
        "disable_empty_topic" if topic.is_empty() => {
            Err(ApiError::bad_request("Sending messages to the general chat is not allowed in this channel."))
        }
        "inherit" if topic.is_empty() && realm_policy == "disable_empty_topic" => {
            Err(ApiError::bad_request("Topics are required in this organization"))
        }
        _ => Ok(topic),
    }
}
