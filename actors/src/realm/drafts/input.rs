//! A draft as a request gives it (Zulip's pydantic `DraftData`, decoded strictly by
//! `typed_endpoint`): the shape is checked here, with Zulip's messages naming the element
//! (`drafts[0]["to"][1] is not an integer`); what it refers to is checked by
//! the plans of `ops`.
//!
//! Pydantic checks the fields in their order (`type`, `to`, `topic`, `content`,
//! `timestamp`), then refuses keys it does not know, and only the first error is reported.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};

/// A draft's addressee kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftKind {
    /// `""`: not addressed yet.
    None,
    /// `"stream"`.
    Channel,
    /// `"private"`.
    Direct,
}

impl DraftKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DraftKind::None => "",
            DraftKind::Channel => "stream",
            DraftKind::Direct => "private",
        }
    }
}

/// A syntactically valid draft.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftData {
    pub kind: DraftKind,
    pub to: Vec<i64>,
    pub topic: String,
    /// Stripped of surrounding whitespace, not blank.
    pub content: String,
    /// Seconds since the epoch (`None`: now).
    pub timestamp: Option<f64>,
}

const FIELDS: [&str; 5] = ["type", "to", "topic", "content", "timestamp"];

/// `drafts` (a JSON list of drafts), as `POST /drafts` takes it.
pub fn parse_drafts(raw: &str) -> ApiResult<Vec<DraftData>> {
    let Value::Array(items) = json("drafts", raw)? else {
        return Err(bad("drafts is not a list"));
    };
    items.iter().enumerate().map(|(i, item)| draft_data(&format!("drafts[{i}]"), item)).collect()
}

/// `draft` (one JSON draft), as `PATCH /drafts/{draft_id}` takes it.
pub fn parse_draft(raw: &str) -> ApiResult<DraftData> {
    draft_data("draft", &json("draft", raw)?)
}

fn json(name: &str, raw: &str) -> ApiResult<Value> {
    serde_json::from_str(raw).map_err(|_| bad(format!("{name} is not valid JSON")))
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::bad_request(msg)
}

/// One draft object named `at` (`drafts[0]`, `draft`).
fn draft_data(at: &str, value: &Value) -> ApiResult<DraftData> {
    let Value::Object(map) = value else {
        return Err(bad(format!("{at} is not a dict")));
    };
    let field = |key: &str| format!("{at}[\"{key}\"]");
    let get = |key: &str| map.get(key).ok_or_else(|| bad(format!("{} field is missing: Field required", field(key))));
    let kind = match get("type")?.as_str() {
        Some("") => DraftKind::None,
        Some("stream") => DraftKind::Channel,
        Some("private") => DraftKind::Direct,
        _ => return Err(bad(format!("Invalid {}", field("type")))),
    };
    let Value::Array(ids) = get("to")? else {
        return Err(bad(format!("{} is not a list", field("to"))));
    };
    let to = ids
        .iter()
        .enumerate()
        .map(|(i, id)| strict_int(id).ok_or_else(|| bad(format!("{}[{i}] is not an integer", field("to")))))
        .collect::<ApiResult<Vec<i64>>>()?;
    let topic = string(get("topic")?, &field("topic"))?;
    // `RequiredStringConstraint`: stripped, then at least one character.
    let content = string(get("content")?, &field("content"))?.trim().to_owned();
    if content.is_empty() {
        return Err(bad(format!("{} cannot be blank", field("content"))));
    }
    let timestamp = timestamp(map.get("timestamp"), &field("timestamp"))?;
    if let Some(extra) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(bad(format!("Argument \"{extra}\" at {} is unexpected", field(extra))));
    }
    Ok(DraftData { kind, to, topic, content, timestamp })
}

/// A JSON integer in pydantic's strict mode: no booleans, no floats.
fn strict_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

fn string(value: &Value, name: &str) -> ApiResult<String> {
    value.as_str().map(str::to_owned).ok_or_else(|| bad(format!("{name} is not a string")))
}

/// `timestamp: int | float | None`: a number or null. The union names its first member in
/// the error, as pydantic does.
fn timestamp(value: Option<&Value>, name: &str) -> ApiResult<Option<f64>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(bad(format!("{name}[\"int\"] is not an integer"))),
    }
}
