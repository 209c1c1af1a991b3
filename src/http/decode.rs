//! Zulip's typed parameter decoding (zerver/lib/typed_endpoint.py), as pure functions.
//!
//! Strings are taken raw. Booleans, integers, lists and objects are JSON text, validated
//! strictly: only `true`/`false` are booleans, `1` is not. Error messages are Zulip's.

use agora_actors::ApiError;
use serde_json::{Map, Value};

/// `{name} is not valid JSON` unless `raw` is JSON.
pub fn json(name: &str, raw: &str) -> Result<Value, ApiError> {
    serde_json::from_str(raw).map_err(|_| ApiError::bad_request(format!("{name} is not valid JSON")))
}

/// A JSON boolean.
pub fn boolean(name: &str, raw: &str) -> Result<bool, ApiError> {
    json(name, raw)?.as_bool().ok_or_else(|| not_a(name, "a boolean"))
}

/// A JSON integer (no fractions, no booleans, no quoted numbers).
pub fn integer(name: &str, raw: &str) -> Result<i64, ApiError> {
    as_integer(name, &json(name, raw)?)
}

/// A JSON list of integers; element errors name the element (`user_ids[2]`).
pub fn integer_list(name: &str, raw: &str) -> Result<Vec<i64>, ApiError> {
    list(name, raw)?.iter().enumerate().map(|(i, v)| as_integer(&format!("{name}[{i}]"), v)).collect()
}

/// A JSON list of strings.
pub fn string_list(name: &str, raw: &str) -> Result<Vec<String>, ApiError> {
    list(name, raw)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(s),
            _ => Err(not_a(&format!("{name}[{i}]"), "a string")),
        })
        .collect()
}

/// A JSON list of anything.
pub fn list(name: &str, raw: &str) -> Result<Vec<Value>, ApiError> {
    match json(name, raw)? {
        Value::Array(items) => Ok(items),
        _ => Err(not_a(name, "a list")),
    }
}

/// A JSON object.
pub fn object(name: &str, raw: &str) -> Result<Map<String, Value>, ApiError> {
    match json(name, raw)? {
        Value::Object(map) => Ok(map),
        _ => Err(not_a(name, "a dict")),
    }
}

/// An already-decoded JSON value as an integer.
pub fn as_integer(name: &str, value: &Value) -> Result<i64, ApiError> {
    value.as_i64().ok_or_else(|| not_a(name, "an integer"))
}

fn not_a(name: &str, what: &str) -> ApiError {
    ApiError::bad_request(format!("{name} is not {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(r: Result<impl std::fmt::Debug, ApiError>) -> String {
        r.unwrap_err().msg
    }

    #[test]
    fn booleans_are_strict_json() {
        assert!(boolean("flag", "true").unwrap());
        assert!(!boolean("flag", " false ").unwrap());
        assert_eq!(msg(boolean("flag", "True")), "flag is not valid JSON");
        assert_eq!(msg(boolean("flag", "")), "flag is not valid JSON");
        assert_eq!(msg(boolean("flag", "1")), "flag is not a boolean");
        assert_eq!(msg(boolean("flag", "\"true\"")), "flag is not a boolean");
    }

    #[test]
    fn integers_are_strict_json() {
        assert_eq!(integer("n", "42").unwrap(), 42);
        assert_eq!(integer("n", "-1").unwrap(), -1);
        assert_eq!(msg(integer("n", "4.5")), "n is not an integer");
        assert_eq!(msg(integer("n", "true")), "n is not an integer");
        assert_eq!(msg(integer("n", "\"4\"")), "n is not an integer");
        assert_eq!(msg(integer("n", "four")), "n is not valid JSON");
    }

    #[test]
    fn lists_and_objects() {
        assert_eq!(integer_list("ids", "[1, 2]").unwrap(), vec![1, 2]);
        assert_eq!(msg(integer_list("ids", "1")), "ids is not a list");
        assert_eq!(msg(integer_list("ids", "[1, \"x\"]")), "ids[1] is not an integer");
        assert_eq!(string_list("names", "[\"a\"]").unwrap(), vec!["a".to_owned()]);
        assert_eq!(msg(string_list("names", "[3]")), "names[0] is not a string");
        assert_eq!(object("caps", "{\"a\": true}").unwrap()["a"], Value::Bool(true));
        assert_eq!(msg(object("caps", "[]")), "caps is not a dict");
    }
}
