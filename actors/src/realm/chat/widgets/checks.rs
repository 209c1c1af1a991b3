//! What a poll or to-do list accepts as a submessage (Zulip's `validate_poll_data` and
//! `validate_todo_data`, with the messages of its `check_dict` validators).

use serde_json::{Map, Value};

/// Zulip's `MAX_IDX` (the clients' limit on option and task indexes).
const MAX_IDX: i64 = 1000;

/// One expected key and its check.
type Field = (&'static str, Check);

#[derive(Clone, Copy)]
enum Check {
    String,
    Bool,
    /// An integer among these.
    IntIn(&'static [i64]),
    /// An integer in `0..=MAX_IDX`.
    Index,
}

/// Python's `isinstance(v, int)` (booleans are integers there).
fn as_int(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| value.as_bool().map(i64::from))
}

fn check_value(name: &str, value: &Value, check: Check) -> Result<(), String> {
    match check {
        Check::String if value.is_string() => Ok(()),
        Check::String => Err(format!("{name} is not a string")),
        Check::Bool if value.is_boolean() => Ok(()),
        Check::Bool => Err(format!("{name} is not a boolean")),
        Check::IntIn(allowed) => match as_int(value) {
            None => Err(format!("{name} is not an integer")),
            Some(n) if allowed.contains(&n) => Ok(()),
            Some(_) => Err(format!("Invalid {name}")),
        },
        Check::Index => match as_int(value) {
            None => Err(format!("{name} is not an integer")),
            Some(n) if n < 0 => Err(format!("{name} is too small")),
            Some(n) if n > MAX_IDX => Err(format!("{name} is too large")),
            Some(_) => Ok(()),
        },
    }
}

/// Zulip's `check_dict` (`only`: `check_dict_only`, no other keys).
fn check_dict(var: &str, value: &Value, fields: &[Field], only: bool) -> Result<(), String> {
    let Some(map) = value.as_object() else { return Err(format!("{var} is not a dict")) };
    for (key, check) in fields {
        let Some(item) = map.get(*key) else { return Err(format!("{key} key is missing from {var}")) };
        check_value(&format!("{var}[\"{key}\"]"), item, *check)?;
    }
    if only {
        let mut extra: Vec<&str> =
            map.keys().map(String::as_str).filter(|k| !fields.iter().any(|(f, _)| f == k)).collect();
        if !extra.is_empty() {
            extra.sort_unstable();
            return Err(format!("Unexpected arguments: {}", extra.join(", ")));
        }
    }
    Ok(())
}

fn kind<'a>(var: &str, data: &'a Value) -> Result<&'a str, String> {
    check_dict(var, data, &[("type", Check::String)], false)?;
    Ok(data.as_object().and_then(|m: &Map<String, Value>| m.get("type")).and_then(Value::as_str).unwrap_or(""))
}

/// Zulip's `validate_poll_data`.
pub fn check_poll(data: &Value, is_author: bool) -> Result<(), String> {
    const VAR: &str = "poll data";
    match kind(VAR, data)? {
        "vote" => check_dict(
            VAR,
            data,
            &[("type", Check::String), ("key", Check::String), ("vote", Check::IntIn(&[1, -1]))],
            true,
        ),
        "question" => {
            if !is_author {
                return Err("You can't edit a question unless you are the author.".into());
            }
            check_dict(VAR, data, &[("type", Check::String), ("question", Check::String)], true)
        }
        "new_option" => {
            check_dict(VAR, data, &[("type", Check::String), ("option", Check::String), ("idx", Check::Index)], true)
        }
        other => Err(format!("Unknown type for poll data: {other}")),
    }
}

/// Zulip's `validate_todo_data`.
pub fn check_todo(data: &Value, is_author: bool) -> Result<(), String> {
    const VAR: &str = "todo data";
    match kind(VAR, data)? {
        "new_task" => check_dict(
            VAR,
            data,
            &[
                ("type", Check::String),
                ("key", Check::Index),
                ("task", Check::String),
                ("desc", Check::String),
                ("completed", Check::Bool),
            ],
            true,
        ),
        "strike" => check_dict(VAR, data, &[("type", Check::String), ("key", Check::String)], true),
        "new_task_list_title" => {
            if !is_author {
                return Err("You can't edit the task list title unless you are the author.".into());
            }
            check_dict(VAR, data, &[("type", Check::String), ("title", Check::String)], true)
        }
        other => Err(format!("Unknown type for todo data: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn polls_take_votes_options_and_the_authors_question() {
        assert_eq!(check_poll(&json!({"type": "vote", "key": "canned,1", "vote": 1}), false), Ok(()));
        assert_eq!(check_poll(&json!({"type": "new_option", "option": "tea", "idx": 3}), false), Ok(()));
        assert_eq!(check_poll(&json!({"type": "question", "question": "Why?"}), true), Ok(()));
        assert_eq!(
            check_poll(&json!({"type": "question", "question": "Why?"}), false),
            Err("You can't edit a question unless you are the author.".into())
        );
        assert_eq!(
            check_poll(&json!({"type": "vote", "key": "x", "vote": 2}), false),
            Err("Invalid poll data[\"vote\"]".into())
        );
        assert_eq!(
            check_poll(&json!({"type": "vote", "vote": 1}), false),
            Err("key key is missing from poll data".into())
        );
        assert_eq!(
            check_poll(&json!({"type": "vote", "key": "x", "vote": 1, "z": 0, "a": 1}), false),
            Err("Unexpected arguments: a, z".into())
        );
        assert_eq!(
            check_poll(&json!({"type": "new_option", "option": "t", "idx": 1001}), false),
            Err("poll data[\"idx\"] is too large".into())
        );
        assert_eq!(check_poll(&json!({"type": "bogus"}), false), Err("Unknown type for poll data: bogus".into()));
        assert_eq!(check_poll(&json!([1]), false), Err("poll data is not a dict".into()));
        assert_eq!(check_poll(&json!({}), false), Err("type key is missing from poll data".into()));
    }

    #[test]
    fn todo_lists_take_tasks_strikes_and_the_authors_title() {
        let task = json!({"type": "new_task", "key": 2, "task": "milk", "desc": "", "completed": false});
        assert_eq!(check_todo(&task, false), Ok(()));
        assert_eq!(check_todo(&json!({"type": "strike", "key": "2,7"}), false), Ok(()));
        assert_eq!(
            check_todo(&json!({"type": "new_task_list_title", "title": "T"}), false),
            Err("You can't edit the task list title unless you are the author.".into())
        );
        assert_eq!(
            check_todo(&json!({"type": "new_task", "key": 2, "task": "milk", "desc": "", "completed": "no"}), false),
            Err("todo data[\"completed\"] is not a boolean".into())
        );
    }
}
