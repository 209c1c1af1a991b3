//! `tests/data/openapi-allowlist.toml`: the differences from Zulip's description that Agora
//! has today, each with its reason, and Agora's endpoints the description lacks.

use std::sync::LazyLock;

use reqwest::Method;
use serde::Deserialize;

use super::mismatch::Mismatch;
use super::{general_path, template_matches};

pub static ALLOWLIST: LazyLock<Allowlist> = LazyLock::new(|| {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/openapi-allowlist.toml");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Allowlist = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    list.validate();
    list
});

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    #[serde(default)]
    difference: Vec<Difference>,
    #[serde(default)]
    undocumented: Vec<Undocumented>,
}

/// A known difference: the mismatches it covers, and why it is there.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    /// `POST /register`; absent: any operation.
    operation: Option<String>,
    /// The nearest named schema of the value (`User`); absent: any.
    schema: Option<String>,
    /// For events: `realm_user` or `realm_user/update`; absent: any.
    event: Option<String>,
    /// The JSON path with `[]` for indexes and map keys; `*` stands for any characters.
    path: String,
    /// `unknown property`, `missing property`, `type`, `enum`, `bound` or `branches`.
    kind: String,
    why: String,
}

/// An endpoint of Agora's that Zulip's description lacks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undocumented {
    /// `GET /export/realm/{export_id}`.
    pub operation: String,
    why: String,
}

const KINDS: &[&str] = &["unknown property", "missing property", "type", "enum", "bound", "branches"];

impl Allowlist {
    fn validate(&self) {
        for d in &self.difference {
            assert!(!d.why.trim().is_empty(), "an allowlisted difference without why: {d:?}");
            assert!(KINDS.contains(&d.kind.as_str()), "kind {:?} is none of {KINDS:?}", d.kind);
            assert!(d.path.starts_with(['$', '*']), "path {:?} starts with neither $ nor *", d.path);
        }
        for u in &self.undocumented {
            assert!(!u.why.trim().is_empty(), "an undocumented endpoint without why: {u:?}");
            assert!(u.operation.split_once(' ').is_some_and(|(_, p)| p.starts_with('/')), "{:?}", u.operation);
        }
    }

    /// Whether a mismatch in a response of `operation` is a listed difference (`event`: the
    /// type and op of the event it is in, if any).
    pub fn allows(&self, operation: &str, m: &Mismatch, event: Option<&str>) -> bool {
        self.matching(operation, m, event).is_some()
    }

    /// The index of the first listed difference that covers a mismatch.
    pub fn matching(&self, operation: &str, m: &Mismatch, event: Option<&str>) -> Option<usize> {
        let path = general_path(&m.path);
        self.difference.iter().position(|d| {
            d.kind == m.kind.name()
                && d.operation.as_ref().is_none_or(|o| o == operation)
                && d.schema.as_ref().is_none_or(|s| *s == m.schema)
                && d.event.as_ref().is_none_or(|e| event.is_some_and(|got| event_matches(e, got)))
                && glob(&d.path, &path)
        })
    }

    /// The listed differences.
    pub fn differences(&self) -> &[Difference] {
        &self.difference
    }

    /// The listed endpoint `method path` is, if any.
    pub fn undocumented(&self, method: &Method, path: &str) -> Option<&Undocumented> {
        self.undocumented.iter().find(|u| {
            let (m, template) = u.operation.split_once(' ').unwrap_or_default();
            m == method.as_str() && template_matches(template, path, false).is_some()
        })
    }
}

/// `realm_user` matches any op of that type; `realm_user/update` that op alone.
fn event_matches(wanted: &str, got: &str) -> bool {
    wanted == got || (!wanted.contains('/') && got.split('/').next() == Some(wanted))
}

/// Whether `text` fits `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}
