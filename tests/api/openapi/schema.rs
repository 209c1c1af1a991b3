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
//!
//! It is quick where the description is wide: the branches of a `oneOf` (86 kinds of event)
//! are first narrowed by the `enum`s of their properties (an event's `type` and `op`), then
//! tried stopping at the first mismatch and writing none; only a value no branch fits is
//! checked in full, to report the nearest branch's mismatches.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::mismatch::{distance, list, shown, Kind, Mismatch, Step};

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

/// Validates values against schemas of one document (where `$ref`s point).
pub struct Validator<'a> {
    root: &'a Value,
    /// What each `allOf` declares, by the address of its parts (stable while `root` is
    /// borrowed).
    declared: Cache<HashSet<&'a str>>,
    /// What each `oneOf`/`anyOf` branch limits properties to, by the address of its branches.
    discriminators: Cache<Vec<Discriminators<'a>>>,
}

/// What the validator works out once per schema node.
type Cache<T> = Mutex<HashMap<usize, Arc<T>>>;

/// The properties a branch limits to an `enum` (an event's `type` and `op`), with it: a value
/// whose property is none of them cannot be that branch, which is then not tried.
type Discriminators<'a> = Vec<(&'a str, &'a [Value])>;

/// The cached `T` of the node at `key`, made by `make` the first time.
fn cached<T>(cache: &Cache<T>, key: usize, make: impl FnOnce() -> T) -> Arc<T> {
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Arc::clone(found);
    }
    let made = Arc::new(make());
    Arc::clone(cache.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(made))
}

/// Where a check stands: the value's place and the nearest named schema.
#[derive(Clone, Copy)]
struct At<'p> {
    step: &'p Step<'p>,
    schema: &'p str,
}

/// Where mismatches go: all of them, written out; or, when trying the branches of a
/// `oneOf`, only whether there is one (the check stops at the first, and writes nothing).
struct Sink {
    found: Vec<Mismatch>,
    quick: bool,
    refused: bool,
}

impl Sink {
    fn full() -> Sink {
        Sink { found: Vec::new(), quick: false, refused: false }
    }

    fn quick() -> Sink {
        Sink { found: Vec::new(), quick: true, refused: false }
    }

    fn push(&mut self, mismatch: impl FnOnce() -> Mismatch) {
        self.refused = true;
        if !self.quick {
            self.found.push(mismatch());
        }
    }

    /// Whether checking further is pointless (a quick check has its answer).
    fn done(&self) -> bool {
        self.quick && self.refused
    }
}

impl<'a> Validator<'a> {
    pub fn new(root: &'a Value) -> Validator<'a> {
        Validator { root, declared: Mutex::default(), discriminators: Mutex::default() }
    }

    /// Every way `value` differs from `schema` (empty if it conforms), once per kind and
    /// path (the parts of an `allOf` may each refuse the same key).
    pub fn validate(&self, schema: &'a Value, value: &Value) -> Vec<Mismatch> {
        let mut sink = Sink::full();
        self.check(schema, value, At { step: &Step::Root, schema: "" }, &HashSet::new(), &mut sink);
        let mut seen = HashSet::new();
        sink.found.retain(|m| seen.insert((m.kind, m.path.clone())));
        sink.found
    }

    /// The schema a `$ref` names (`#/components/schemas/User`), and its last name.
    fn follow(&self, reference: &'a str) -> (&'a Value, &'a str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        let target = match reference.strip_prefix("#/components/schemas/") {
            Some(name) => self.root["components"]["schemas"].get(name),
            None => reference.strip_prefix('#').and_then(|pointer| self.root.pointer(pointer)),
        };
        (target.unwrap_or_else(|| panic!("$ref to nothing: {reference}")), name)
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

    /// The property names the parts of an `allOf` declare together.
    fn declared_by(&self, parts: &'a [Value]) -> Arc<HashSet<&'a str>> {
        cached(&self.declared, parts.as_ptr() as usize, || {
            let mut names = HashSet::new();
            for part in parts {
                self.declared(part, &mut names);
            }
            names
        })
    }

    /// The `enum` a schema (or a part of its `allOf`) limits values to.
    fn enum_of(&self, schema: &'a Value) -> Option<&'a [Value]> {
        let (schema, _) = self.resolve(schema, "");
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return Some(values);
        }
        schema.get("allOf")?.as_array()?.iter().find_map(|part| self.enum_of(part))
    }

    /// The properties `schema` limits to an `enum`, through `$ref`s and `allOf`s.
    fn discriminators(&self, schema: &'a Value) -> Discriminators<'a> {
        let (schema, _) = self.resolve(schema, "");
        let mut out = Vec::new();
        for (key, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if let Some(values) = self.enum_of(property) {
                out.push((key.as_str(), values));
            }
        }
        for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            out.extend(self.discriminators(part));
        }
        out
    }

    /// The branches `value` may be: all but those whose `enum`s its properties are outside.
    fn candidates(&self, branches: &'a [Value], value: &Value) -> Vec<usize> {
        let Some(object) = value.as_object() else { return (0..branches.len()).collect() };
        let limits = cached(&self.discriminators, branches.as_ptr() as usize, || {
            branches.iter().map(|branch| self.discriminators(branch)).collect()
        });
        let outside =
            |(key, values): &(&str, &[Value])| object.get(*key).is_some_and(|v| !v.is_null() && !values.contains(v));
        (0..branches.len()).filter(|&i| !limits[i].iter().any(outside)).collect()
    }

    fn check(&self, schema: &'a Value, value: &Value, at: At, allowed: &HashSet<&'a str>, out: &mut Sink) {
        let (schema, name) = self.resolve(schema, "");
        let at = At { step: at.step, schema: if name.is_empty() { at.schema } else { name } };
        let Some(rules) = schema.as_object() else { panic!("a schema that is not an object: {schema}") };
        let mismatch = |kind, expected: String, found: String| Mismatch {
            kind,
            path: at.step.render(),
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
                out.push(|| mismatch(Kind::Type, format!("{wanted}{nullable}"), shown(value)));
                return;
            }
        }
        if let Some(allowed_values) = rules.get("enum").and_then(Value::as_array) {
            if !allowed_values.contains(value) {
                let expected = || format!("one of {}", shown(&Value::from(allowed_values.clone())));
                out.push(|| mismatch(Kind::Enum, expected(), shown(value)));
                return;
            }
        }
        self.check_bounds(rules, value, &mismatch, out);
        match value {
            Value::Array(items) => {
                if let Some(item_schema) = rules.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        if out.done() {
                            return;
                        }
                        let step = Step::Index(at.step, i);
                        self.check(item_schema, item, At { step: &step, ..at }, &HashSet::new(), out);
                    }
                }
            }
            Value::Object(object) => self.check_object(rules, object, at, allowed, out),
            _ => {}
        }
        if let Some(parts) = rules.get("allOf").and_then(Value::as_array) {
            let declared = self.declared_by(parts);
            let union: HashSet<&'a str>;
            let names = if allowed.is_empty() {
                &*declared
            } else {
                union = declared.union(allowed).copied().collect();
                &union
            };
            for part in parts {
                if out.done() {
                    return;
                }
                self.check(part, value, at, names, out);
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
        out: &mut Sink,
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
            out.push(|| mismatch(Kind::Bound, format!("{low} {min}"), shown(value)));
        }
        if let Some(max) = bound(high).filter(|max| size > *max) {
            out.push(|| mismatch(Kind::Bound, format!("{high} {max}"), shown(value)));
        }
    }

    fn check_object(
        &self,
        rules: &'a Map<String, Value>,
        object: &Map<String, Value>,
        at: At,
        allowed: &HashSet<&'a str>,
        out: &mut Sink,
    ) {
        let properties = rules.get("properties").and_then(Value::as_object);
        for key in rules.get("required").and_then(Value::as_array).into_iter().flatten() {
            let key = key.as_str().unwrap_or_default();
            if !object.contains_key(key) {
                out.push(|| Mismatch {
                    kind: Kind::Missing,
                    path: Step::Key(at.step, key).render(),
                    schema: at.schema.to_owned(),
                    expected: "a required property".into(),
                    found: "(absent)".into(),
                });
            }
        }
        for (key, item) in object {
            if out.done() {
                return;
            }
            let declared = properties.and_then(|p| p.get(key));
            if let Some(property_schema) = declared {
                let step = Step::Key(at.step, key);
                self.check(property_schema, item, At { step: &step, ..at }, &HashSet::new(), out);
                continue;
            }
            if allowed.contains(key.as_str()) {
                continue;
            }
            match rules.get("additionalProperties") {
                Some(Value::Bool(false)) => out.push(|| {
                    let mut known: Vec<&str> = properties.into_iter().flatten().map(|(k, _)| k.as_str()).collect();
                    known.extend(allowed.iter().copied());
                    known.sort_unstable();
                    known.dedup();
                    Mismatch {
                        kind: Kind::Unknown,
                        path: Step::Key(at.step, key).render(),
                        schema: at.schema.to_owned(),
                        expected: format!("no such property (additionalProperties: false; known: {})", list(&known)),
                        found: shown(item),
                    }
                }),
                Some(extra @ Value::Object(_)) => {
                    let step = Step::Entry(at.step, key);
                    self.check(extra, item, At { step: &step, ..at }, &HashSet::new(), out);
                }
                _ => {}
            }
        }
    }

    /// `oneOf` (exactly one branch conforms) or `anyOf` (at least one). The branches the
    /// value may be are tried quickly; only when none conforms are they checked in full (all
    /// of them if the value may be none), and the mismatches of the nearest reported.
    fn check_branches(
        &self,
        branches: &'a [Value],
        exactly_one: bool,
        value: &Value,
        at: At,
        allowed: &HashSet<&'a str>,
        out: &mut Sink,
    ) {
        let candidates = self.candidates(branches, value);
        let passing: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&i| {
                let mut sink = Sink::quick();
                self.check(&branches[i], value, at, allowed, &mut sink);
                !sink.refused
            })
            .collect();
        match passing.len() {
            1 => {}
            _ if !exactly_one && !passing.is_empty() => {}
            0 if out.quick => out.push(|| unreachable!("a quick check writes nothing")),
            0 => {
                let base = at.step.render();
                let tried = if candidates.is_empty() { (0..branches.len()).collect() } else { candidates };
                let nearest = tried
                    .into_iter()
                    .map(|i| {
                        let mut sink = Sink::full();
                        self.check(&branches[i], value, at, allowed, &mut sink);
                        sink.found
                    })
                    .min_by_key(|found| distance(found, &base))
                    .unwrap_or_default();
                out.found.extend(nearest);
                out.refused = true;
            }
            _ => {
                let names: Vec<String> = passing.iter().map(|&i| self.branch_name(&branches[i], i)).collect();
                out.push(|| Mismatch {
                    kind: Kind::Branches,
                    path: at.step.render(),
                    schema: at.schema.to_owned(),
                    expected: format!("exactly one branch of oneOf to match, but {} did", names.join(", ")),
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
