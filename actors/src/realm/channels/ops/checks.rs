//! The checks channel changes share, with Zulip's messages: names, descriptions, retention,
//! topics policies, permission settings and the users `principals` name.

use std::collections::BTreeSet;

use rusqlite::Connection;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::catalog;
use crate::realm::channels::access::channel_permission;
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, SystemGroup, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::store;

/// The topics policies a channel may have (spec 2.6).
const TOPICS_POLICIES: [&str; 4] = ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"];

/// The topics policy that needs every message of the channel in the empty topic.
pub const EMPTY_TOPIC_ONLY: &str = "empty_topic_only";

/// Zulip's `check_stream_name`.
pub fn check_channel_name(name: &str) -> ApiResult<()> {
    if name.trim().is_empty() {
        return Err(ApiError::bad_request("Channel name can't be empty."));
    }
    if name.chars().count() > catalog::MAX_STREAM_NAME_LENGTH {
        return Err(ApiError::bad_request(format!(
            "Channel name too long (limit: {} characters).",
            catalog::MAX_STREAM_NAME_LENGTH
        )));
    }
    if let Some(pos) = crate::validate::first_unprintable(name) {
        return Err(ApiError::bad_request(format!("Invalid character in channel name, at position {pos}.")));
    }
    Ok(())
}

/// A description as stored: newlines become spaces; refused when too long.
pub fn clean_description(description: &str) -> ApiResult<String> {
    let cleaned = description.replace("\r\n", " ").replace(['\n', '\r'], " ");
    ApiError::check_length("description", &cleaned, catalog::MAX_STREAM_DESCRIPTION_LENGTH)?;
    Ok(cleaned)
}

/// Zulip's `parse_message_retention_days`: `None` inherits, -1 is unlimited.
pub fn parse_retention(value: &Value) -> ApiResult<Option<i64>> {
    let bad = || ApiError::bad_request(format!("Bad value for 'message_retention_days': {}", display(value)));
    match value {
        Value::String(s) if s == "realm_default" => Ok(None),
        Value::String(s) if s == "unlimited" => Ok(Some(-1)),
        Value::String(s) => s.parse::<i64>().ok().filter(|n| *n > 0).map(Some).ok_or_else(bad),
        Value::Number(n) => n.as_i64().filter(|n| *n > 0).map(Some).ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Zulip's `validate_topics_policy`, the part the state answers: a known policy; anything
/// but `inherit` needs the organization's `can_set_topics_policy_group`. On an existing
/// channel, `empty_topic_only` also needs every message of it in the empty topic, which only
/// the database knows: [`check_only_empty_topic`], inside the write.
pub fn check_topics_policy(state: &RealmState, actor: &User, policy: &str) -> ApiResult<()> {
    if !TOPICS_POLICIES.contains(&policy) {
        return Err(ApiError::bad_request("Invalid topics_policy"));
    }
    if policy != "inherit" && !has_realm_permission(state, "can_set_topics_policy_group", actor.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    Ok(())
}

/// The rest of `validate_topics_policy` for `empty_topic_only` on an existing channel:
/// refused while the channel has a message outside the empty topic. Runs inside the write
/// transaction, so no message can slip in between the check and the change.
pub fn check_only_empty_topic(conn: &Connection, channel: ChannelId) -> ApiResult<()> {
    if store::channels::has_named_topic(conn, channel)? {
        return Err(ApiError::bad_request(
            "To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.",
        ));
    }
    Ok(())
}

/// A channel permission setting's value from the API, validated against its rule.
pub fn check_channel_group_setting(state: &RealmState, name: &str, value: &Value) -> ApiResult<GroupSettingValue> {
    let permission = channel_permission(name).ok_or_else(|| ApiError::bad_request(format!("Invalid {name}")))?;
    let parsed = GroupSettingValue::from_api(name, value)?;
    state.check_group_setting(name, &permission.rule, parsed)
}

/// Users named by `principals`: ids or API emails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principals {
    Ids(Vec<i64>),
    Emails(Vec<String>),
}

/// The users `principals` name (active ones; "No such user" otherwise), or `acting` alone
/// when it names nobody.
pub fn principal_users(state: &RealmState, principals: Option<&Principals>, acting: UserId) -> ApiResult<Vec<UserId>> {
    match principals {
        Some(p @ Principals::Ids(v)) if !v.is_empty() => resolve_principals(state, p),
        Some(p @ Principals::Emails(v)) if !v.is_empty() => resolve_principals(state, p),
        _ => Ok(vec![acting]),
    }
}

/// The users `principals` name (active ones; "No such user" otherwise).
fn resolve_principals(state: &RealmState, principals: &Principals) -> ApiResult<Vec<UserId>> {
    let found: Vec<Option<&User>> = match principals {
        Principals::Ids(ids) => ids.iter().map(|id| state.user(UserId(*id))).collect(),
        Principals::Emails(emails) => emails.iter().map(|e| state.user_by_api_email(e)).collect(),
    };
    let (mut users, mut seen) = (Vec::new(), BTreeSet::new());
    for user in found {
        match user {
            Some(u) if u.is_active => {
                if seen.insert(u.id) {
                    users.push(u.id)
                }
            }
            Some(_) => return Err(ApiError::bad_request("User is deactivated")),
            None => return Err(ApiError::bad_request("No such user")),
        }
    }
    Ok(users)
}

/// FL 441: in a private channel with protected history, everyone may start topics
/// (`can_create_topic_group` is `role:everyone`), as Zulip requires.
pub fn check_topic_creation_with_history(state: &RealmState, channel: &Channel) -> ApiResult<()> {
    if !channel.invite_only || channel.history_public_to_subscribers {
        return Ok(());
    }
    let everyone = state.system_group_id(SystemGroup::EVERYONE).map(GroupSettingValue::Group);
    if Some(state.channel_setting(channel, "can_create_topic_group")) == everyone {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group",
    ))
}
