//! Narrows of `GET /messages`: the `narrow` parameter parsed, then resolved against the
//! organization's state into a typed filter for the viewer (which history they may read,
//! channel and user ids, conversation keys, flags, search words). The store turns the
//! filter into SQL ([`crate::store::narrow`]).

use serde_json::Value;

use super::format::dm_key;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::queue::spec::RESOLVED_TOPIC_PREFIX;
use crate::realm::model::{Channel, Role, User};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{FOLLOWED, MUTED};
use crate::store::narrow::{Condition, Filter, Scope, Term};

/// One narrow term: `{operator, operand, negated}` or the legacy `[operator, operand]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NarrowTerm {
    pub operator: String,
    pub operand: Value,
    pub negated: bool,
}

/// Parses the `narrow` parameter's JSON.
pub fn parse_narrow(value: &Value) -> ApiResult<Vec<NarrowTerm>> {
    let Value::Array(items) = value else {
        return Err(ApiError::bad_request("narrow is not a list"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let invalid = || ApiError::bad_request(format!("Invalid narrow[{i}]"));
            match item {
                Value::Array(pair) => match pair.as_slice() {
                    [Value::String(op), operand] => {
                        Ok(NarrowTerm { operator: op.clone(), operand: operand.clone(), negated: false })
                    }
                    _ => Err(invalid()),
                },
                Value::Object(obj) => {
                    let operator = obj.get("operator").and_then(Value::as_str).ok_or_else(invalid)?;
                    let operand = obj.get("operand").cloned().ok_or_else(invalid)?;
                    let negated = obj.get("negated").and_then(Value::as_bool).unwrap_or(false);
                    Ok(NarrowTerm { operator: operator.to_owned(), operand, negated })
                }
                _ => Err(invalid()),
            }
            .and_then(check_operand)
        })
        .collect()
}

/// Zulip's operand validation of `search` (`check_required_string`): a string that is not
/// blank.
fn check_operand(term: NarrowTerm) -> ApiResult<NarrowTerm> {
    if term.operator == "search" {
        let Value::String(text) = &term.operand else {
            return Err(ApiError::bad_request("operand is not a string"));
        };
        if crate::validate::python_strip(text).is_empty() {
            return Err(ApiError::bad_request("operand cannot be blank."));
        }
    }
    Ok(term)
}

/// Zulip's `BadNarrowOperatorError`.
pub fn bad_narrow(desc: &str) -> ApiError {
    ApiError::new(ErrorCode::BadNarrow, 400, format!("Invalid narrow operator: {desc}"))
}

/// A narrow resolved for a viewer: the filter the store runs, and the words of its
/// `search` terms for highlighting (`None`: no search).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrow {
    pub filter: Filter,
    pub search: Option<Vec<String>>,
}

/// Whether `user` may read a channel's whole history, not only the messages they received
/// (Zulip's `can_access_stream_history`).
pub fn can_read_history(state: &RealmState, user: &User, channel: &Channel) -> bool {
    if channel.is_web_public {
        return true;
    }
    if !channel.history_public_to_subscribers {
        return false;
    }
    if !channel.invite_only && user.role != Role::Guest {
        return true;
    }
    !channel.is_archived && state.has_content_access(user, channel)
}

/// The channel a channel operand names (name or id).
fn channel_operand<'a>(state: &'a RealmState, operand: &Value) -> ApiResult<&'a Channel> {
    let found = match operand {
        Value::Number(n) => n.as_i64().and_then(|id| state.channel(ChannelId(id))),
        Value::String(s) => {
            state.channel_by_name(s).or_else(|| s.parse().ok().and_then(|id| state.channel(ChannelId(id))))
        }
        _ => None,
    };
    found.ok_or_else(|| bad_narrow("unknown channel"))
}

/// A user named by email or id.
fn user_operand(state: &RealmState, operand: &Value) -> ApiResult<UserId> {
    let found = match operand {
        Value::Number(n) => n.as_i64().and_then(|id| state.user(UserId(id))),
        Value::String(s) => state.user_by_api_email(s.trim()).or_else(|| state.user_by_delivery_email(s.trim())),
        _ => None,
    };
    found.map(|u| u.id).ok_or_else(|| bad_narrow("unknown user"))
}

/// Users named by a list of ids, a list of emails or comma-separated emails.
fn users_operand(state: &RealmState, operand: &Value) -> ApiResult<Vec<UserId>> {
    match operand {
        Value::Array(items) => items.iter().map(|v| user_operand(state, v)).collect(),
        Value::String(s) => {
            s.split(',').filter(|e| !e.trim().is_empty()).map(|e| user_operand(state, &Value::from(e))).collect()
        }
        other => Ok(vec![user_operand(state, other)?]),
    }
}

fn operand_str(operand: &Value) -> String {
    match operand {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Resolves `narrow` for `user`.
pub fn build(state: &RealmState, user: &User, narrow: &[NarrowTerm]) -> ApiResult<Narrow> {
    let positive_channel = narrow.iter().find(|t| !t.negated && matches!(t.operator.as_str(), "channel" | "stream"));
    let public_channels = narrow.iter().any(|t| {
        !t.negated && matches!(t.operator.as_str(), "channels" | "streams") && t.operand.as_str() == Some("public")
    });
    let by_message_index =
        narrow.iter().any(|t| !t.negated && matches!(t.operator.as_str(), "dm" | "pm-with" | "pm_with" | "sender"));
    // Whole channel history where the narrow names one the user may read (or all public
    // channels); otherwise only the messages the user received.
    let history = match positive_channel {
        Some(term) => can_read_history(state, user, channel_operand(state, &term.operand)?).then_some(None),
        None if public_channels => Some(Some(
            state.channels().filter(|c| !c.invite_only && can_read_history(state, user, c)).map(|c| c.id).collect(),
        )),
        None => None,
    };
    let scope = match history {
        Some(channels) => Scope::History(channels),
        // A conversation or a sender picks few messages: walk their index and join the
        // user's row.
        None if by_message_index => Scope::Conversation,
        None => Scope::Received,
    };
    let mut search = None;
    let mut terms = Vec::with_capacity(narrow.len());
    for term in narrow {
        if let Some(condition) = condition(state, user, term, &mut search)? {
            terms.push(Term { condition, negated: term.negated });
        }
    }
    Ok(Narrow { filter: Filter { viewer: user.id, scope, terms, upto: state.last_message_id() }, search })
}

/// The condition of one term (`None` for terms that do not filter, like `near`).
fn condition(
    state: &RealmState,
    user: &User,
    term: &NarrowTerm,
    search: &mut Option<Vec<String>>,
) -> ApiResult<Option<Condition>> {
    let operand = &term.operand;
    let text = operand_str(operand);
    Ok(Some(match term.operator.as_str() {
        "channel" | "stream" => Condition::Channel(channel_operand(state, operand)?.id),
        "channels" | "streams" => match text.as_str() {
            "public" | "web-public" if !term.negated => return Ok(None),
            // FL 489: the messages the user received in archived channels (negated: in
            // the others).
            "archived" => Condition::ChannelIn(state.channels().filter(|c| c.is_archived).map(|c| c.id).collect()),
            _ => return Err(bad_narrow(&format!("unknown channels operand {text}"))),
        },
        "topic" => Condition::Topic(text),
        "sender" => Condition::Sender(user_operand(state, operand)?),
        "dm" | "pm-with" | "pm_with" => {
            let mut users = users_operand(state, operand)?;
            users.push(user.id);
            Condition::Conversation(dm_key(&users))
        }
        "dm-including" | "group-pm-with" => Condition::Including(user_operand(state, operand)?),
        // FL 446: a direct, visible (not silent) mention of the user.
        "mentions" => Condition::MentionsUser(user_operand(state, operand)?),
        "id" => {
            // Zulip's `str(operand).isdigit()`: no sign, no fraction.
            let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
            let id = text.parse::<i64>().ok().filter(|_| digits).ok_or_else(|| bad_narrow("Invalid message ID"))?;
            Condition::Id(MessageId(id))
        }
        "near" | "with" => return Ok(None),
        "is" => is_condition(state, user, &text)?,
        "has" => has_condition(&text)?,
        "search" => {
            let words = search_words(&text);
            let highlighted = search.get_or_insert_with(Vec::new);
            if !term.negated {
                highlighted.extend(words.iter().cloned());
            }
            Condition::Search(words)
        }
        other => return Err(bad_narrow(&format!("unknown operator {other}"))),
    }))
}

/// The words of a search operand: split at whitespace and at control characters, which
/// the full-text parser Zulip searches with (PostgreSQL's) treats as separators. No word
/// holds a control character, so none holds the NUL that ends an FTS5 query string.
pub fn search_words(operand: &str) -> Vec<String> {
    operand.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// `is:` operands.
fn is_condition(state: &RealmState, user: &User, operand: &str) -> ApiResult<Condition> {
    Ok(match operand {
        "dm" | "private" => Condition::Direct,
        "starred" => Condition::Starred,
        "mentioned" => Condition::Mentioned,
        "alerted" => Condition::Alerted,
        "unread" => Condition::Unread,
        "resolved" => Condition::TopicStartsWith(RESOLVED_TOPIC_PREFIX.to_owned()),
        "followed" => Condition::TopicPolicy(FOLLOWED),
        "muted" => Condition::Muted {
            channels: state
                .subscriptions_of(user.id)
                .filter(|s| s.active && s.is_muted)
                .map(|s| s.channel_id)
                .collect::<Vec<ChannelId>>(),
            topic_policy: MUTED,
        },
        other => return Err(bad_narrow(&format!("unknown 'is' operand {other}"))),
    })
}

/// `has:` operands.
fn has_condition(operand: &str) -> ApiResult<Condition> {
    Ok(match operand {
        "link" => Condition::HasLink,
        "image" => Condition::HasImage,
        "attachment" => Condition::HasAttachment,
        "reaction" => Condition::HasReaction,
        other => return Err(bad_narrow(&format!("unknown 'has' operand {other}"))),
    })
}

#[cfg(test)]
mod tests;
