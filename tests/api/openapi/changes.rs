//! Zulip's changes to its description after level 420, as `tests/data/zulip-openapi-changes.yaml`
//! records them: each change is the feature level that made it, the changelog's words for it,
//! and JSON Patch operations (RFC 6902: `add`, `remove`, `replace`; a path ending in `/-`
//! appends to an array) on the level-420 description. They are applied in the order of
//! levels (those of one level in the file's order), once,
//! before any response is checked, so the description the tests check against is that of the
//! level Agora reports (the changes past it are left out).

use serde::Deserialize;
use serde_json::Value;

/// One change of the API, from the changelog.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub level: i64,
    /// The changelog's entry, in short.
    #[allow(dead_code)]
    pub change: String,
    pub patch: Vec<Operation>,
}

/// A JSON Patch operation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, tag = "op", rename_all = "lowercase")]
pub enum Operation {
    Add { path: String, value: Value },
    Remove { path: String },
    Replace { path: String, value: Value },
}

/// The changes of `text` up to `level`, applied to `doc`; an error names the change and the
/// path that does not fit.
pub fn apply(doc: &mut Value, text: &str, level: i64) -> Result<(), String> {
    let mut changes: Vec<Change> = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    // In the order of levels (those of one level in the file's order).
    changes.sort_by_key(|change| change.level);
    for change in changes {
        if change.level > level {
            continue;
        }
        for operation in &change.patch {
            apply_one(doc, operation).map_err(|e| format!("level {}: {e}", change.level))?;
        }
    }
    Ok(())
}

fn apply_one(doc: &mut Value, operation: &Operation) -> Result<(), String> {
    match operation {
        Operation::Add { path, value } => {
            let (parent, last) = parent_of(doc, path)?;
            match parent {
                Value::Object(map) => {
                    map.insert(last, value.clone());
                }
                Value::Array(items) if last == "-" => items.push(value.clone()),
                Value::Array(items) => {
                    let at = index(&last, items.len() + 1, path)?;
                    items.insert(at, value.clone());
                }
                _ => return Err(format!("add {path}: the parent is neither an object nor an array")),
            }
        }
        Operation::Remove { path } => {
            let (parent, last) = parent_of(doc, path)?;
            let removed = match parent {
                Value::Object(map) => map.remove(&last).is_some(),
                Value::Array(items) => {
                    let at = index(&last, items.len(), path)?;
                    items.remove(at);
                    true
                }
                _ => false,
            };
            if !removed {
                return Err(format!("remove {path}: nothing there"));
            }
        }
        Operation::Replace { path, value } => {
            let target = doc.pointer_mut(path).ok_or_else(|| format!("replace {path}: nothing there"))?;
            *target = value.clone();
        }
    }
    Ok(())
}

/// The container `path` ends in, and its last segment (unescaped).
fn parent_of<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    let (parent, last) = path.rsplit_once('/').ok_or_else(|| format!("{path}: not a JSON pointer"))?;
    let container = doc.pointer_mut(parent).ok_or_else(|| format!("{path}: {parent} is not there"))?;
    Ok((container, last.replace("~1", "/").replace("~0", "~")))
}

fn index(segment: &str, bound: usize, path: &str) -> Result<usize, String> {
    segment.parse::<usize>().ok().filter(|i| *i < bound).ok_or_else(|| format!("{path}: no index {segment}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::apply;

    #[test]
    fn changes_up_to_the_level_are_applied_in_the_order_of_levels() {
        let mut doc = json!({"a": {"b": 1, "list": [1, 2]}, "c/d": 0});
        let text = r#"
- level: 430
  change: one
  patch:
    - {op: add, path: /a/new, value: {type: string}}
    - {op: add, path: /a/list/-, value: 3}
    - {op: remove, path: /c~1d}
- level: 440
  change: two
  patch:
    - {op: replace, path: /a/b, value: 2}
"#;
        apply(&mut doc, text, 435).unwrap();
        assert_eq!(doc, json!({"a": {"b": 1, "new": {"type": "string"}, "list": [1, 2, 3]}}));
        let mut doc = json!({"a": {"b": 1}});
        assert_eq!(
            apply(&mut doc, "- {level: 1, change: x, patch: [{op: remove, path: /a/zz}]}", 5).unwrap_err(),
            "level 1: remove /a/zz: nothing there"
        );
        let mut doc = json!({"a": 0});
        let text = "- {level: 5, change: x, patch: [{op: replace, path: /a, value: 5}]}
- {level: 4, change: y, patch: [{op: replace, path: /a, value: 4}]}";
        apply(&mut doc, text, 5).unwrap();
        assert_eq!(doc, json!({"a": 5}), "level 4's change comes first");
    }
}
