//! Every JSON success the tests receive from `/api/v1/...` (or `/json/...`) is checked against
//! the success schema (`responses."200"`) of its operation in Zulip's OpenAPI description,
//! `tests/data/zulip-openapi-fl420.yaml`: Zulip's clients decode strictly, and the description
//! refuses unknown keys almost everywhere. The events of `GET /events` are checked with it,
//! through the `oneOf` of event types in that operation's schema. Zulip's changes since level
//! 420, up to the level Agora reports, are applied to it first, from
//! `tests/data/zulip-openapi-changes.yaml` (see `changes.rs`).
//!
//! The requests of `helpers.rs` (`app.request`, `app.as_user`, `send`, `post`, `poll`...)
//! are [`ApiRequest`]s, which know the method and path they were sent with; the `/json`
//! calls of `web_sessions.rs`'s `Browser` go through [`check`] (what Chromium asks in the
//! browser tests is not checked). A difference fails the test that met
//! it, unless `tests/data/openapi-allowlist.toml` lists it with its reason; so do successes
//! of endpoints the description lacks (Zulip's undocumented ones, Agora's own), unless that
//! file lists them.
//! `AGORA_OPENAPI=report` logs instead of failing (see `report.rs`).

mod allowlist;
mod changes;
mod mismatch;
mod report;
mod request;
mod schema;
#[cfg(test)]
mod tests;

use std::sync::LazyLock;

use reqwest::Method;
use serde_json::Value;

use allowlist::ALLOWLIST;
use mismatch::Mismatch;
pub use request::ApiRequest;
use schema::Validator;

/// Zulip's description, read once per test binary.
static SPEC: LazyLock<Spec> = LazyLock::new(|| {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zulip-openapi-fl420.yaml");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut doc: Value = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let changes = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zulip-openapi-changes.yaml");
    let text = std::fs::read_to_string(changes).unwrap_or_else(|e| panic!("{changes}: {e}"));
    changes::apply(&mut doc, &text, agora_actors::server_info::FEATURE_LEVEL)
        .unwrap_or_else(|e| panic!("{changes}: {e}"));
    Spec::new(doc)
});

/// The validator of the description's schemas (with what it works out once per schema).
static VALIDATOR: LazyLock<Validator<'static>> = LazyLock::new(|| Validator::new(&SPEC.doc));

/// A mismatch, with the type and op of the event it is in (for `GET /events`).
type InEvent = (Mismatch, Option<String>);

/// A response checked against one operation: the differences the allowlist has, and the
/// others.
struct Outcome {
    operation: String,
    allowed: Vec<InEvent>,
    refused: Vec<InEvent>,
}

/// The description and its operations.
pub struct Spec {
    doc: Value,
    operations: Vec<Operation>,
}

/// One operation of the description: `GET /users/{user_id}` and its success schema.
struct Operation {
    method: Method,
    template: String,
    success: Option<Value>,
}

impl Operation {
    /// `GET /users/{user_id}`, as messages and the allowlist name it.
    fn name(&self) -> String {
        format!("{} {}", self.method, self.template)
    }
}

impl Spec {
    fn new(doc: Value) -> Spec {
        let mut operations = Vec::new();
        for (template, item) in doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("a path item") {
                let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
                let mut success = operation.pointer("/responses/200").cloned();
                if let Some(reference) = success.as_ref().and_then(|r| r["$ref"].as_str()) {
                    success = doc.pointer(reference.trim_start_matches('#')).cloned();
                }
                let success = success.and_then(|r| r.pointer("/content/application~1json/schema").cloned());
                operations.push(Operation { method, template: template.clone(), success });
            }
        }
        Spec { doc, operations }
    }

    /// The operations `method path` may be (the best-matching templates: literal segments
    /// first), or none when the description lacks it.
    fn operations(&self, method: &Method, path: &str) -> Vec<&Operation> {
        let mut best = (0, Vec::new());
        for operation in self.operations.iter().filter(|o| o.method == *method) {
            let Some(literals) = template_matches(&operation.template, path, true) else { continue };
            if literals > best.0 || best.1.is_empty() {
                best = (literals, vec![operation]);
            } else if literals == best.0 {
                best.1.push(operation);
            }
        }
        best.1
    }
}

/// Whether the concrete `path` fits `template` (`/users/{user_id}`), and how many of its
/// segments are literal. With `typed`, `{..._id}` takes only digits and `{email}` only an
/// address, so that `/users/12` and `/users/a@b.c` each name one operation. A last
/// `{filename}` or `{fragment}` takes the rest of the path, slashes included (Zulip's routes
/// take them as paths).
fn template_matches(template: &str, path: &str, typed: bool) -> Option<usize> {
    let (mut wanted, mut got) = (template.split('/').peekable(), path.split('/'));
    let mut literals = 0;
    loop {
        match (wanted.next(), got.next()) {
            (None, None) => return Some(literals),
            (Some(w), Some(g)) => match w.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                Some(_) if g.is_empty() => return None,
                Some("filename" | "fragment") if wanted.peek().is_none() => return Some(literals),
                Some(name) if typed && name.ends_with("_id") && !g.bytes().all(|b| b.is_ascii_digit()) => return None,
                Some("email") if typed && !g.contains('@') && !g.contains("%40") => return None,
                Some(_) => {}
                None if w == g => literals += 1,
                None => return None,
            },
            _ => return None,
        }
    }
}

/// The path under the API (`/users/12`) of a request's path (`/api/v1/users/12?x=1`).
fn api_path(path: &str) -> Option<&str> {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path.strip_prefix("/api/v1").or_else(|| path.strip_prefix("/json")).filter(|p| p.starts_with('/'))
}

/// Checks the body of a response to `method path` (`path` as sent, with `/api/v1` or
/// `/json`) when it is a JSON success; panics on a difference the allowlist lacks (or
/// logs it, in report mode).
pub fn check(method: &Method, path: &str, status: u16, body: &[u8]) {
    let Some(api) = api_path(path) else { return };
    if !(200..300).contains(&status) {
        return;
    }
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return };
    if value["result"] != "success" {
        return;
    }
    let spec = &*SPEC;
    let candidates: Vec<&Operation> =
        spec.operations(method, api).into_iter().filter(|o| o.success.is_some()).collect();
    if candidates.is_empty() {
        let name = format!("{method} {api}");
        match ALLOWLIST.undocumented(method, api) {
            Some(entry) => report::undocumented(&entry.operation),
            None if report::enabled() => report::undocumented(&name),
            None => panic!(
                "{name} answered a success, but Zulip's OpenAPI description has no such operation: list it under \
                 [[undocumented]] in tests/data/openapi-allowlist.toml with why, or fix the route"
            ),
        }
        return;
    }
    let validator = &*VALIDATOR;
    let mut nearest: Option<Outcome> = None;
    for operation in &candidates {
        let found = validator.validate(operation.success.as_ref().expect("filtered"), &value);
        let name = operation.name();
        let (allowed, refused) = found
            .into_iter()
            .map(|m| {
                let event = event_of(&value, &m.path);
                (m, event)
            })
            .partition(|(m, event)| ALLOWLIST.allows(&name, m, event.as_deref()));
        let outcome = Outcome { operation: name, allowed, refused };
        if outcome.refused.is_empty() {
            report::checked(&outcome.operation, &outcome.allowed);
            return;
        }
        if nearest.as_ref().is_none_or(|n| outcome.refused.len() < n.refused.len()) {
            nearest = Some(outcome);
        }
    }
    let Outcome { operation, allowed, refused } = nearest.expect("a candidate");
    report::checked(&operation, &allowed);
    if report::enabled() {
        report::refused(&operation, &refused);
        return;
    }
    const SHOWN: usize = 20;
    let mut lines: Vec<String> =
        refused.iter().take(SHOWN).map(|(m, event)| format!("  {}", describe(m, event.clone()))).collect();
    if refused.len() > SHOWN {
        lines.push(format!("  … and {} more", refused.len() - SHOWN));
    }
    panic!(
        "Zulip's OpenAPI description refuses this response of {operation} ({method} {path}, {status}):\n{}\n\
         If Agora is right to differ, list the difference in tests/data/openapi-allowlist.toml with why \
         (AGORA_OPENAPI=report shows them all).",
        lines.join("\n")
    );
}

/// `$.user.email (schema User): type: expected string; found 12`, with the event's type
/// when the value is inside one.
fn describe(m: &Mismatch, event: Option<String>) -> String {
    let schema = if m.schema.is_empty() { String::new() } else { format!(" (schema {})", m.schema) };
    let event = event.map(|e| format!(" in a {e} event")).unwrap_or_default();
    format!("{}{schema}{event}: {}: expected {}; found {}", m.path, m.kind.name(), m.expected, m.found)
}

/// `realm_user/update` for a path inside `$.events[i]`: the event's type and op.
fn event_of(body: &Value, path: &str) -> Option<String> {
    let rest = path.strip_prefix("$.events[")?;
    let index: usize = rest[..rest.find(']')?].parse().ok()?;
    let event = body["events"].get(index)?;
    let kind = event["type"].as_str()?;
    Some(match event["op"].as_str() {
        Some(op) => format!("{kind}/{op}"),
        None => kind.to_owned(),
    })
}

/// A path with its array indexes and map keys written `[]`, as the allowlist writes them.
fn general_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '[' {
            continue;
        }
        let mut quoted = false;
        while let Some(d) = chars.next() {
            match d {
                '"' => quoted = !quoted,
                '\\' if quoted => {
                    chars.next();
                }
                ']' if !quoted => break,
                _ => {}
            }
        }
        out.push(']');
    }
    out
}
