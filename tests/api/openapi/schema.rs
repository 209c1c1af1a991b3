//! A validator of JSON values against the OpenAPI 3.0 schemas of Zulip's description: the
//! keywords it uses and no others (`KEYWORDS`; a test walks the whole file for strangers).
//!
//! Two readings are deliberate:
//! - `allOf` composes: `additionalProperties: false` in one part allows the properties the
//!   other parts declare. The description we keep is openapi-generator's normalized form,
//!   which dropped the `result: {}`-style re-declarations upstream's parts carry, so the plain
//!   JSON Schema reading would refuse `result` and `msg` in every response.
//! - `integer` is a number written without a fraction or exponent (`1.0` is not one): the
//!   clients decode into typed fields, where `1.0` fails as an integer.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// What a schema says, and what is only commentary for a reader.
pub const KEYWORDS: &[&str] = &[
    "$ref",
    "type",
    "nullable",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    // Commentary: not checked.
    "description",
    "example",
    "examples",
    "default",
    "deprecated",
    "format",
    "title",
];

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

/// Validates values against schemas of one document (where `$ref`s point).
pub struct Validator<'a> {
    root: &'a Value,
}

/// Where a check stands: the value's path and the nearest named schema.
#[derive(Clone, Copy)]
struct At<'p> {
    path: &'p str,
    schema: &'p str,
}

impl<'a> Validator<'a> {
    pub fn new(root: &'a Value) -> Validator<'a> {
        Validator { root }
    }

    /// Every way `value` differs from `schema` (empty if it conforms), once per kind and
    /// path (the parts of an `allOf` may each refuse the same key).
    pub fn validate(&self, schema: &'a Value, value: &Value) -> Vec<Mismatch> {
        let mut out = Vec::new();
        self.check(schema, value, At { path: "$", schema: "" }, &HashSet::new(), &mut out);
        let mut seen = HashSet::new();
        out.retain(|m| seen.insert((m.kind, m.path.clone())));
        out
    }

    /// The schema a `$ref` names (`#/components/schemas/User`), and its last name.
    fn follow(&self, reference: &'a str) -> (&'a Value, &'a str) {
        let pointer = reference.strip_prefix('#').unwrap_or_else(|| panic!("not a local $ref: {reference}"));
        let target = self.root.pointer(pointer).unwrap_or_else(|| panic!("$ref to nothing: {reference}"));
        (target, reference.rsplit('/').next().unwrap_or(reference))
    }

    /// `schema` with its `$ref`s followed, and the last name met (or `name`).
    pub fn resolve(&self, mut schema: &'a Value, mut name: &'a str) -> (&'a Value, &'a str) {
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            (schema, name) = self.follow(reference);
        }
        (schema, name)
    }

    /// The property names `schema` declares for its instance, through `$ref`s and `allOf`s.
    fn declared(&self, schema: &'a Value, names: &mut HashSet<&'a str>) {
        let (schema, _) = self.resolve(schema, "");
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            names.extend(properties.keys().map(String::as_str));
        }
        for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            self.declared(part, names);
        }
    }

    fn check(&self, schema: &'a Value, value: &Value, at: At, allowed: &HashSet<&'a str>, out: &mut Vec<Mismatch>) {
        let (schema, name) = self.resolve(schema, "");
        let at = At { path: at.path, schema: if name.is_empty() { at.schema } else { name } };
        let Some(rules) = schema.as_object() else { panic!("a schema that is not an object at {}", at.path) };
        let mismatch = |kind, expected: String, found: String| Mismatch {
            kind,
            path: at.path.to_owned(),
            schema: at.schema.to_owned(),
            expected,
            found,
        };
        if value.is_null() && rules.get("nullable") == Some(&Value::Bool(true)) {
            return;
        }
        if let Some(wanted) = rules.get("type").and_then(Value::as_str) {
            if !has_type(value, wanted) {
                let nullable = if value.is_null() { " (not nullable)" } else { "" };
                out.push(mismatch(Kind::Type, format!("{wanted}{nullable}"), shown(value)));
                return;
            }
        }
        if let Some(allowed_values) = rules.get("enum").and_then(Value::as_array) {
            if !allowed_values.contains(value) {
                out.push(mismatch(
                    Kind::Enum,
                    format!("one of {}", shown(&Value::from(allowed_values.clone()))),
                    shown(value),
                ));
                return;
            }
        }
        self.check_bounds(rules, value, &mismatch, out);
        match value {
            Value::Array(items) => {
                if let Some(item_schema) = rules.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        let path = format!("{}[{i}]", at.path);
                        self.check(item_schema, item, At { path: &path, ..at }, &HashSet::new(), out);
                    }
                }
            }
            Value::Object(object) => self.check_object(rules, object, at, allowed, out),
            _ => {}
        }
        if let Some(parts) = rules.get("allOf").and_then(Value::as_array) {
            let mut names = allowed.clone();
            for part in parts {
                self.declared(part, &mut names);
            }
            for part in parts {
                self.check(part, value, at, &names, out);
            }
        }
        if let Some(branches) = rules.get("oneOf").and_then(Value::as_array) {
            self.check_branches(branches, true, value, at, allowed, out);
        }
        if let Some(branches) = rules.get("anyOf").and_then(Value::as_array) {
            self.check_branches(branches, false, value, at, allowed, out);
        }
    }

    fn check_bounds(
        &self,
        rules: &Map<String, Value>,
        value: &Value,
        mismatch: &dyn Fn(Kind, String, String) -> Mismatch,
        out: &mut Vec<Mismatch>,
    ) {
        let bound = |key: &str| rules.get(key).and_then(Value::as_f64);
        let size = match value {
            Value::String(s) => Some((s.chars().count() as f64, "minLength", "maxLength")),
            Value::Array(a) => Some((a.len() as f64, "minItems", "maxItems")),
            Value::Number(n) => n.as_f64().map(|n| (n, "minimum", "maximum")),
            _ => None,
        };
        let Some((size, low, high)) = size else { return };
        if let Some(min) = bound(low).filter(|min| size < *min) {
            out.push(mismatch(Kind::Bound, format!("{low} {min}"), shown(value)));
        }
        if let Some(max) = bound(high).filter(|max| size > *max) {
            out.push(mismatch(Kind::Bound, format!("{high} {max}"), shown(value)));
        }
    }

    fn check_object(
        &self,
        rules: &Map<String, Value>,
        object: &Map<String, Value>,
        at: At,
        allowed: &HashSet<&'a str>,
        out: &mut Vec<Mismatch>,
    ) {
        let properties = rules.get("properties").and_then(Value::as_object);
        for key in rules.get("required").and_then(Value::as_array).into_iter().flatten() {
            let key = key.as_str().unwrap_or_default();
            if !object.contains_key(key) {
                out.push(Mismatch {
                    kind: Kind::Missing,
                    path: format!("{}{}", at.path, property_segment(key)),
                    schema: at.schema.to_owned(),
                    expected: "a required property".into(),
                    found: "(absent)".into(),
                });
            }
        }
        for (key, item) in object {
            let declared = properties.and_then(|p| p.get(key));
            if let Some(property_schema) = declared {
                let path = format!("{}{}", at.path, property_segment(key));
                self.check(property_schema, item, At { path: &path, ..at }, &HashSet::new(), out);
                continue;
            }
            if allowed.contains(key.as_str()) {
                continue;
            }
            match rules.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let mut known: Vec<&str> = properties.into_iter().flatten().map(|(k, _)| k.as_str()).collect();
                    known.extend(allowed.iter().copied());
                    known.sort_unstable();
                    known.dedup();
                    out.push(Mismatch {
                        kind: Kind::Unknown,
                        path: format!("{}{}", at.path, property_segment(key)),
                        schema: at.schema.to_owned(),
                        expected: format!("no such property (additionalProperties: false; known: {})", list(&known)),
                        found: shown(item),
                    });
                }
                Some(extra @ Value::Object(_)) => {
                    let path = format!("{}{}", at.path, map_key_segment(key));
                    self.check(extra, item, At { path: &path, ..at }, &HashSet::new(), out);
                }
                _ => {}
            }
        }
    }

    /// `oneOf` (exactly one branch conforms) or `anyOf` (at least one). When none does,
    /// the mismatches of the nearest branch are reported.
    fn check_branches(
        &self,
        branches: &'a [Value],
        exactly_one: bool,
        value: &Value,
        at: At,
        allowed: &HashSet<&'a str>,
        out: &mut Vec<Mismatch>,
    ) {
        let mut results = Vec::with_capacity(branches.len());
        for branch in branches {
            let mut found = Vec::new();
            self.check(branch, value, at, allowed, &mut found);
            results.push(found);
        }
        let passing: Vec<usize> = (0..branches.len()).filter(|&i| results[i].is_empty()).collect();
        let keyword = if exactly_one { "oneOf" } else { "anyOf" };
        match passing.len() {
            0 => {
                let nearest = results.into_iter().min_by_key(|found| distance(found, at.path)).unwrap_or_default();
                out.extend(nearest);
            }
            1 => {}
            _ if !exactly_one => {}
            _ => {
                let names: Vec<String> = passing.iter().map(|&i| self.branch_name(&branches[i], i)).collect();
                out.push(Mismatch {
                    kind: Kind::Branches,
                    path: at.path.to_owned(),
                    schema: at.schema.to_owned(),
                    expected: format!("exactly one branch of {keyword} to match, but {} did", names.join(", ")),
                    found: shown(value),
                });
            }
        }
    }

    fn branch_name(&self, branch: &'a Value, index: usize) -> String {
        match self.resolve(branch, "") {
            (_, "") => format!("#{index}"),
            (_, name) => format!("#{index} ({name})"),
        }
    }
}

/// How far a branch's mismatches are from fitting: a branch refused at its own level by
/// type or enum (a different `type`/`op` of event, an object where a number is) is far;
/// otherwise the fewer mismatches the nearer, and the deeper the first one the nearer.
fn distance(found: &[Mismatch], path: &str) -> (usize, usize, std::cmp::Reverse<usize>) {
    let depth = |p: &str| p.len().saturating_sub(path.len());
    let discriminating = found
        .iter()
        .filter(|m| matches!(m.kind, Kind::Type | Kind::Enum) && !m.path[path.len()..].contains(['.', '[']))
        .count()
        + found.iter().filter(|m| m.kind == Kind::Enum && matches!(&m.path[path.len()..], ".type" | ".op")).count();
    (discriminating, found.len(), std::cmp::Reverse(found.first().map_or(0, |m| depth(&m.path))))
}

fn has_type(value: &Value, wanted: &str) -> bool {
    match wanted {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        other => panic!("unknown type {other:?} in the description"),
    }
}

/// `.key` for a plain key, `["key"]` otherwise.
fn property_segment(key: &str) -> String {
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
fn map_key_segment(key: &str) -> String {
    format!("[{}]", Value::from(key))
}

/// Names, cut after a dozen.
fn list(names: &[&str]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!("{}, … ({} in all)", names[..SHOWN].join(", "), names.len())
    }
}
