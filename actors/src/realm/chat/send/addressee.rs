//! Where a message goes, as `POST /messages` names it (`type` and `to`).

use serde_json::Value;

use crate::error::{ApiError, ApiResult};

/// A channel named in `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelRef {
    Id(i64),
    Name(String),
}

/// Direct-message recipients named in `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectRef {
    Ids(Vec<i64>),
    Emails(Vec<String>),
}

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendTo {
    Channel(ChannelRef),
    Direct(DirectRef),
}

impl SendTo {
    /// Parses `type` and `to` as Zulip does: a channel is a JSON int (id), a JSON string or
    /// one-element list, or a raw name; direct recipients are a JSON list of ids or of
    /// emails, or comma-separated emails.
    pub fn parse(kind: &str, to: &str) -> ApiResult<SendTo> {
        let parsed = serde_json::from_str::<Value>(to).ok();
        match kind {
            "stream" | "channel" => Ok(SendTo::Channel(parse_channel(parsed, to)?)),
            "private" | "direct" => Ok(SendTo::Direct(parse_direct(parsed, to)?)),
            _ => Err(ApiError::bad_request("Invalid message type")),
        }
    }
}

fn parse_channel(parsed: Option<Value>, raw: &str) -> ApiResult<ChannelRef> {
    let value = match parsed {
        None => return Ok(ChannelRef::Name(raw.to_owned())),
        Some(Value::Array(items)) => match <[Value; 1]>::try_from(items) {
            Ok([only]) => only,
            Err(_) => return Err(ApiError::bad_request("Expected exactly one channel")),
        },
        Some(other) => other,
    };
    match value {
        Value::String(name) => Ok(ChannelRef::Name(name)),
        Value::Number(n) => {
            n.as_i64().map(ChannelRef::Id).ok_or_else(|| ApiError::bad_request("Invalid data type for channel"))
        }
        _ => Err(ApiError::bad_request("Invalid data type for channel")),
    }
}

fn parse_direct(parsed: Option<Value>, raw: &str) -> ApiResult<DirectRef> {
    let split = |text: &str| -> Vec<String> {
        text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
    };
    let items = match parsed {
        None => return Ok(DirectRef::Emails(split(raw))),
        Some(Value::String(text)) => return Ok(DirectRef::Emails(split(&text))),
        Some(Value::Number(n)) => vec![Value::Number(n)],
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ApiError::bad_request("Invalid data type for recipients")),
    };
    if items.iter().all(Value::is_i64) {
        return Ok(DirectRef::Ids(items.iter().filter_map(Value::as_i64).collect()));
    }
    if items.iter().all(Value::is_string) {
        return Ok(DirectRef::Emails(items.iter().filter_map(Value::as_str).map(str::to_owned).collect()));
    }
    if items.iter().all(|v| v.is_i64() || v.is_string()) {
        return Err(ApiError::bad_request("Recipient lists may contain emails or user IDs, but not both."));
    }
    Err(ApiError::bad_request("Invalid data type for recipients"))
}
