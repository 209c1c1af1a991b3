//! The widget a message starts (Zulip's `get_widget_data`): `/poll` and `/todo` messages get
//! a `widget` submessage when sent, with the question and options, or the title and tasks,
//! the rest of the content gives; its JSON is written as Python's `json.dumps` writes it.

use serde_json::{json, Value};

/// The `widget` submessage content for a message, if it starts a widget.
pub fn widget_content(content: &str) -> Option<String> {
    // Zulip's first token: up to the first whitespace.
    let first = content.split(char::is_whitespace).next().unwrap_or("");
    let kind = first.strip_prefix('/')?;
    if kind != "poll" && kind != "todo" {
        return None;
    }
    let rest = content.replacen(first, "", 1);
    let extra_data = if kind == "poll" { poll_data(&rest) } else { todo_data(&rest) };
    Some(python_json(&json!({"widget_type": kind, "extra_data": extra_data})))
}

/// Python's `str.splitlines()` over the line breaks a message can hold ("\r\n" counts
/// once; a trailing break ends the last line rather than starting an empty one).
fn lines(text: &str) -> Vec<String> {
    const BREAKS: [char; 10] =
        ['\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}'];
    let text = text.replace("\r\n", "\n");
    let mut out: Vec<String> = text.split(BREAKS).map(str::to_owned).collect();
    if text.ends_with(BREAKS) {
        out.pop();
    }
    out
}

/// A list item's text without its `-` or `*` marker (Zulip's `re.sub(r"(\s*[-*]?\s*)", "", ...)`).
fn item(line: &str) -> &str {
    let line = line.trim();
    line.strip_prefix(['-', '*']).map_or(line, str::trim_start)
}

/// The first line (the question or title) and the non-empty items after it.
fn head_and_items(content: &str) -> (String, Vec<String>) {
    let mut lines = lines(content);
    let head = match lines.first() {
        Some(first) if !first.is_empty() => lines.remove(0).trim().to_owned(),
        _ => String::new(),
    };
    (head, lines.iter().map(|l| item(l).to_owned()).filter(|i| !i.is_empty()).collect())
}

/// Zulip's `parse_poll_extra_data`.
fn poll_data(content: &str) -> Value {
    let (question, options) = head_and_items(content);
    json!({"question": question, "options": options})
}

/// Zulip's `parse_todo_extra_data`: a task and its description are separated by the first
/// `": "`.
fn todo_data(content: &str) -> Value {
    let (title, items) = head_and_items(content);
    let tasks: Vec<Value> = items
        .into_iter()
        .map(|task| match task.split_once(": ") {
            Some((task, desc)) => json!({"task": task.trim(), "desc": desc.trim()}),
            None => json!({"task": task.trim(), "desc": ""}),
        })
        .collect();
    json!({"task_list_title": title, "tasks": tasks})
}

/// `value` as Python's `json.dumps` writes it: `", "` and `": "` separators, every
/// non-ASCII character escaped.
pub fn python_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_take_the_question_and_options() {
        assert_eq!(
            widget_content("/poll Lunch?\n- pizza\n* tacos\n\n  sushi  ").as_deref(),
            Some(
                r#"{"widget_type": "poll", "extra_data": {"question": "Lunch?", "options": ["pizza", "tacos", "sushi"]}}"#
            )
        );
        assert_eq!(
            widget_content("/poll").as_deref(),
            Some(r#"{"widget_type": "poll", "extra_data": {"question": "", "options": []}}"#)
        );
        assert_eq!(
            widget_content("/poll\nA\nB").as_deref(),
            Some(r#"{"widget_type": "poll", "extra_data": {"question": "", "options": ["A", "B"]}}"#)
        );
    }

    #[test]
    fn todo_lists_take_the_title_and_tasks() {
        assert_eq!(
            widget_content("/todo Chores\n- dishes: before noon\n- laundry").as_deref(),
            Some(
                r#"{"widget_type": "todo", "extra_data": {"task_list_title": "Chores", "tasks": [{"task": "dishes", "desc": "before noon"}, {"task": "laundry", "desc": ""}]}}"#
            )
        );
    }

    #[test]
    fn other_messages_start_no_widget() {
        assert_eq!(widget_content("hello /poll"), None);
        assert_eq!(widget_content("/polls x"), None);
        assert_eq!(widget_content("/me waves"), None);
    }

    #[test]
    fn json_is_written_as_python_does() {
        assert_eq!(
            python_json(&json!({"a": ["é", 1, true, null], "b": "\"\n😀"})),
            r#"{"a": ["\u00e9", 1, true, null], "b": "\"\n\ud83d\ude00"}"#
        );
    }
}
