//! Narrows of `GET /messages` as SQL: which rows a user may see (their own `user_messages`
//! rows, plus a channel's full history where they may read it) and the conditions of each
//! operator.

use rusqlite::types::Value as Sql;
use serde_json::Value;

use super::flag;
use super::format::dm_key;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, UserId};
use crate::queue::spec::RESOLVED_TOPIC_PREFIX;
use crate::realm::model::{Channel, Role, User};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{FOLLOWED, MUTED};

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

/// A narrow as SQL: `FROM ... WHERE ...` with its arguments. The select list starts with
/// the viewer's flags (NULL where they have no row).
#[derive(Debug, Clone, Default)]
pub struct NarrowQuery {
    pub from: String,
    pub conds: Vec<String>,
    pub args: Vec<Sql>,
    /// The words of the narrow's `search` terms (`None`: no search).
    pub search: Option<Vec<String>>,
    /// The message id column to range over and order by: `um.message_id` over the user's
    /// own rows (so that their primary key gives the order), else `m.id`.
    pub id_col: &'static str,
    /// The user's flags: `um.flags` over their own rows (so that the partial flag indexes
    /// apply), else [`FLAGS`].
    pub flags: &'static str,
}

impl NarrowQuery {
    /// `FROM ... WHERE ...` (no ordering or limit).
    pub fn from_where(&self) -> String {
        format!("{} WHERE {}", self.from, self.conds.join(" AND "))
    }
}

/// The user's flags on a row, `read` + `historical` where they have none.
pub const FLAGS: &str = "COALESCE(um.flags, 1025)";

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

/// Builds the query of `narrow` for `user`.
pub fn build(state: &RealmState, user: &User, narrow: &[NarrowTerm]) -> ApiResult<NarrowQuery> {
    let mut q = NarrowQuery::default();
    let positive_channel = narrow.iter().find(|t| !t.negated && matches!(t.operator.as_str(), "channel" | "stream"));
    let public_channels = narrow.iter().any(|t| {
        !t.negated && matches!(t.operator.as_str(), "channels" | "streams") && t.operand.as_str() == Some("public")
    });
    let by_message_index =
        narrow.iter().any(|t| !t.negated && matches!(t.operator.as_str(), "dm" | "pm-with" | "pm_with" | "sender"));
    // Whole channel history where the narrow names one the user may read (or all public
    // channels); otherwise only the messages the user received.
    let full_history = match positive_channel {
        Some(term) => can_read_history(state, user, channel_operand(state, &term.operand)?).then(String::new),
        None if public_channels => {
            let ids: Vec<String> = state
                .channels()
                .filter(|c| !c.invite_only && can_read_history(state, user, c))
                .map(|c| c.id.0.to_string())
                .collect();
            Some(format!("m.channel_id IN ({})", ids.join(",")))
        }
        None => None,
    };
    q.args.push(Sql::Integer(user.id.0));
    match full_history {
        Some(cond) => {
            q.from = "FROM messages m LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?".into();
            (q.id_col, q.flags) = ("m.id", FLAGS);
            if !cond.is_empty() {
                q.conds.push(cond);
            }
        }
        // A conversation or a sender picks few messages: walk their index and join the
        // user's row.
        None if by_message_index => {
            q.from = "FROM messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ?".into();
            (q.id_col, q.flags) = ("m.id", "um.flags");
        }
        None => {
            q.from = "FROM user_messages um JOIN messages m ON m.id = um.message_id".into();
            q.conds.push("um.user_id = ?".into());
            (q.id_col, q.flags) = ("um.message_id", "um.flags");
        }
    }
    q.conds.push("1".into());
    for term in narrow {
        let (cond, args) = condition(state, user, term, q.flags, &mut q.search)?;
        let Some(cond) = cond else { continue };
        q.conds.push(if term.negated { format!("NOT ({cond})") } else { cond });
        q.args.extend(args);
    }
    Ok(q)
}

/// The SQL condition of one term (`None` for terms that do not filter, like `near`).
fn condition(
    state: &RealmState,
    user: &User,
    term: &NarrowTerm,
    flags: &str,
    search: &mut Option<Vec<String>>,
) -> ApiResult<(Option<String>, Vec<Sql>)> {
    let operand = &term.operand;
    let text = operand_str(operand);
    let one = |cond: &str, arg: Sql| Ok((Some(cond.to_owned()), vec![arg]));
    match term.operator.as_str() {
        "channel" | "stream" => {
            let channel = channel_operand(state, operand)?;
            one("m.channel_id IS ?", Sql::Integer(channel.id.0))
        }
        "channels" | "streams" => match text.as_str() {
            "public" | "web-public" if !term.negated => Ok((None, vec![])),
            _ => Err(bad_narrow(&format!("unknown channels operand {text}"))),
        },
        "topic" => one("(m.channel_id IS NOT NULL AND m.topic = ? COLLATE NOCASE)", Sql::Text(text)),
        "sender" => one("m.sender_id = ?", Sql::Integer(user_operand(state, operand)?.0)),
        "dm" | "pm-with" | "pm_with" => {
            let mut users = users_operand(state, operand)?;
            users.push(user.id);
            one("(m.dm_key IS NOT NULL AND m.dm_key = ?)", Sql::Text(dm_key(&users)))
        }
        "dm-including" | "group-pm-with" => {
            let other = user_operand(state, operand)?;
            one("(m.dm_key IS NOT NULL AND (',' || m.dm_key || ',') LIKE ?)", Sql::Text(format!("%,{other},%")))
        }
        "id" => {
            // Zulip's `str(operand).isdigit()`: no sign, no fraction.
            let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
            let id = text.parse::<i64>().ok().filter(|_| digits).ok_or_else(|| bad_narrow("Invalid message ID"))?;
            one("m.id = ?", Sql::Integer(id))
        }
        "near" | "with" => Ok((None, vec![])),
        "is" => Ok((Some(is_condition(state, user, &text, flags)?), vec![])),
        "has" => Ok((Some(has_condition(&text)?), vec![])),
        "search" => {
            let words = search_words(&text);
            let highlighted = search.get_or_insert_with(Vec::new);
            if !term.negated {
                highlighted.extend(words.iter().cloned());
            }
            match fts_query(&words) {
                Some(query) => {
                    one("m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)", Sql::Text(query))
                }
                // Nothing searchable (control characters only): like an empty text-search
                // query in Zulip, it matches nothing.
                None => Ok((Some("0".to_owned()), vec![])),
            }
        }
        other => Err(bad_narrow(&format!("unknown operator {other}"))),
    }
}

/// The words of a search operand: split at whitespace and at control characters, which
/// the full-text parser Zulip searches with (PostgreSQL's) treats as separators. No word
/// holds a control character, so none holds the NUL that ends an FTS5 query string.
pub fn search_words(operand: &str) -> Vec<String> {
    operand.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// The FTS5 query finding messages with every word: each word an FTS5 string (`"`
/// doubled inside), so that no FTS5 operator or syntax applies; `None` without words.
pub fn fts_query(words: &[String]) -> Option<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect();
    (!quoted.is_empty()).then(|| quoted.join(" "))
}

/// `is:` operands.
fn is_condition(state: &RealmState, user: &User, operand: &str, flags: &str) -> ApiResult<String> {
    let bits = |mask: i64| format!("({flags} & {mask}) != 0");
    Ok(match operand {
        "dm" | "private" => "m.dm_key IS NOT NULL".to_owned(),
        "starred" => bits(flag::STARRED),
        "mentioned" => bits(
            flag::MENTIONED | flag::STREAM_WILDCARD_MENTIONED | flag::TOPIC_WILDCARD_MENTIONED | flag::GROUP_MENTIONED,
        ),
        "alerted" => bits(flag::HAS_ALERT_WORD),
        "unread" => format!("({flags} & {}) = 0", flag::READ),
        "resolved" => format!("(m.channel_id IS NOT NULL AND m.topic LIKE '{RESOLVED_TOPIC_PREFIX}%')"),
        "followed" => topics_condition(state, user, FOLLOWED),
        "muted" => {
            let channels: Vec<String> = state
                .subscriptions_of(user.id)
                .filter(|s| s.active && s.is_muted)
                .map(|s| s.channel_id.0.to_string())
                .collect();
            format!("(m.channel_id IN ({}) OR {})", channels.join(","), topics_condition(state, user, MUTED))
        }
        other => return Err(bad_narrow(&format!("unknown 'is' operand {other}"))),
    })
}

/// Messages in the user's topics with `policy`: a lookup in `user_topics` (one condition,
/// however many topics the user has).
fn topics_condition(_state: &RealmState, user: &User, policy: i64) -> String {
    format!(
        "EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = {} AND ut.channel_id = m.channel_id \
         AND ut.topic = m.topic COLLATE NOCASE AND ut.visibility_policy = {policy})",
        user.id.0
    )
}

/// `has:` operands.
fn has_condition(operand: &str) -> ApiResult<String> {
    Ok(match operand {
        "link" => "m.has_link = 1".to_owned(),
        "image" => "m.has_image = 1".to_owned(),
        "attachment" => "m.has_attachment = 1".to_owned(),
        "reaction" => "EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)".to_owned(),
        other => return Err(bad_narrow(&format!("unknown 'has' operand {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn narrows_parse_in_both_forms() {
        let terms =
            parse_narrow(&json!([["stream", "x"], {"operator": "is", "operand": "starred", "negated": true}])).unwrap();
        assert_eq!(terms[0], NarrowTerm { operator: "stream".into(), operand: json!("x"), negated: false });
        assert!(terms[1].negated);
        assert_eq!(parse_narrow(&json!([3])).unwrap_err().msg, "Invalid narrow[0]");
    }

    #[test]
    fn unknown_operands_are_bad_narrows() {
        assert_eq!(has_condition("nothing").unwrap_err().msg, "Invalid narrow operator: unknown 'has' operand nothing");
    }
}
