//! Zulip's OpenAPI description, `tests/data/zulip-openapi-fl420.yaml`, read once per test
//! binary: its operations, found by method and path, with their success schemas
//! (`responses."200"`), and a validator of JSON values against its schemas (`schema.rs`).

mod schema;
#[cfg(test)]
mod tests;

use std::sync::LazyLock;

use reqwest::Method;
use serde_json::Value;

/// Zulip's description, read once per test binary.
static SPEC: LazyLock<Spec> = LazyLock::new(|| {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zulip-openapi-fl420.yaml");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Spec::new(serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
});

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
