//! What a check reports: the kind of rule broken, where (the JSON path of the value, the
//! nearest named schema), what the schema expected and the value found.

use serde_json::Value;

/// What kind of rule a value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A key `additionalProperties: false` does not allow.
    Unknown,
    /// A required key is absent.
    Missing,
    /// The wrong JSON type (`null` where the schema is not nullable included).
    Type,
    /// A value outside the schema's `enum`.
    Enum,
    /// A length, count or bound.
    Bound,
    /// No branch of a `oneOf`/`anyOf` came near, or several `oneOf` branches matched.
    Branches,
}

impl Kind {
    /// The name allowlist entries use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Unknown => "unknown property",
            Kind::Missing => "missing property",
            Kind::Type => "type",
            Kind::Enum => "enum",
            Kind::Bound => "bound",
            Kind::Branches => "branches",
        }
    }
}

/// One way a value differs from its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub kind: Kind,
    /// The JSON path of the offending value: `$.events[3].user_id`; keys of a map (ids,
    /// names) are written `["..."]`.
    pub path: String,
    /// The nearest named schema (`User` for `#/components/schemas/User`), "" if none.
    pub schema: String,
    /// What the schema expected.
    pub expected: String,
    /// The value found, compact JSON cut at `FOUND_CHARS` characters ("(absent)" if missing).
    pub found: String,
}

/// How much of an offending value a message shows.
const FOUND_CHARS: usize = 160;

/// A value as a message shows it.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(FOUND_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A value's place, built as the check descends and written out only for a mismatch.
#[derive(Clone, Copy)]
pub enum Step<'p> {
    Root,
    /// A property: `.key`.
    Key(&'p Step<'p>, &'p str),
    /// A key of a map (`additionalProperties` with a schema): `["key"]`.
    Entry(&'p Step<'p>, &'p str),
    Index(&'p Step<'p>, usize),
}

impl Step<'_> {
    pub fn render(&self) -> String {
        match self {
            Step::Root => "$".to_owned(),
            Step::Key(up, key) => up.render() + &property_segment(key),
            Step::Entry(up, key) => up.render() + &map_key_segment(key),
            Step::Index(up, i) => format!("{}[{i}]", up.render()),
        }
    }
}

/// How far a branch's mismatches are from fitting: a branch refused at its own level by
/// type or enum (a different `type`/`op` of event, an object where a number is) is far;
/// otherwise the fewer mismatches the nearer, and the deeper the first one the nearer.
pub fn distance(found: &[Mismatch], path: &str) -> (usize, usize, std::cmp::Reverse<usize>) {
    let depth = |p: &str| p.len().saturating_sub(path.len());
    let discriminating = found
        .iter()
        .filter(|m| matches!(m.kind, Kind::Type | Kind::Enum) && !m.path[path.len()..].contains(['.', '[']))
        .count()
        + found.iter().filter(|m| m.kind == Kind::Enum && matches!(&m.path[path.len()..], ".type" | ".op")).count();
    (discriminating, found.len(), std::cmp::Reverse(found.first().map_or(0, |m| depth(&m.path))))
}

/// `.key` for a plain key, `["key"]` otherwise.
pub fn property_segment(key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!(".{key}")
    } else {
        map_key_segment(key)
    }
}

/// `["key"]`: a key of a map (an id, a name), which allowlist paths write `[]`.
pub fn map_key_segment(key: &str) -> String {
    format!("[{}]", Value::from(key))
}

/// Names, cut after a dozen.
pub fn list(names: &[&str]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!("{}, … ({} in all)", names[..SHOWN].join(", "), names.len())
    }
}
