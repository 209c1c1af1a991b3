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

/// Properties over arbitrary input: no panics, Zulip-shaped 400s, and round trips.
#[cfg(test)]
mod properties {
    use agora_actors::ErrorCode;
    use proptest::prelude::*;

    use super::*;

    /// Whether `err` is a 400 `BAD_REQUEST` naming `name` (or one of its elements) with one
    /// of Zulip's parameter messages, and nothing else in its body.
    fn zulip_shaped(name: &str, err: &ApiError) -> bool {
        let Some(rest) = err.msg.strip_prefix(name) else {
            return false;
        };
        let rest = match rest.strip_prefix('[') {
            Some(indexed) => match indexed.split_once(']') {
                Some((index, rest)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => rest,
                _ => return false,
            },
            None => rest,
        };
        let known = [
            " is not valid JSON",
            " is not a boolean",
            " is not an integer",
            " is not a list",
            " is not a dict",
            " is not a string",
        ];
        err.status == 400 && err.code == Some(ErrorCode::BadRequest) && err.data.is_empty() && known.contains(&rest)
    }

    /// Parameter names as clients send them.
    fn name() -> impl Strategy<Value = String> {
        "[a-z_]{1,20}"
    }

    /// Text that is often nearly JSON: brackets, quotes, digits, words, and anything else.
    fn raw() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[\\[\\]{}\",:0-9a-z .eE+-]{0,24}",
            prop::collection::vec(any::<i64>(), 0..5).prop_map(|v| format!("{v:?}")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_input_decodes_or_is_a_zulip_400(name in name(), raw in raw()) {
            let errors = [
                json(&name, &raw).err(),
                boolean(&name, &raw).err(),
                integer(&name, &raw).err(),
                integer_list(&name, &raw).err(),
                string_list(&name, &raw).err(),
                list(&name, &raw).err(),
                object(&name, &raw).err(),
            ];
            for err in errors.iter().flatten() {
                prop_assert!(zulip_shaped(&name, err), "{:?}", err);
            }
        }

        #[test]
        fn integers_round_trip(name in name(), n in any::<i64>(), spaces in " {0,2}") {
            prop_assert_eq!(integer(&name, &format!("{spaces}{n}{spaces}")).unwrap(), n);
            prop_assert_eq!(as_integer(&name, &Value::from(n)).unwrap(), n);
        }

        #[test]
        fn booleans_round_trip(name in name(), b in any::<bool>()) {
            prop_assert_eq!(boolean(&name, &b.to_string()).unwrap(), b);
            // Numbers and strings are not booleans.
            let not_a_boolean = format!("{name} is not a boolean");
            prop_assert_eq!(boolean(&name, &u8::from(b).to_string()).unwrap_err().msg, not_a_boolean.clone());
            prop_assert_eq!(boolean(&name, &format!("\"{b}\"")).unwrap_err().msg, not_a_boolean);
        }

        #[test]
        fn lists_round_trip(name in name(), ints in prop::collection::vec(any::<i64>(), 0..20), strings in prop::collection::vec(any::<String>(), 0..10)) {
            prop_assert_eq!(integer_list(&name, &serde_json::to_string(&ints).unwrap()).unwrap(), ints);
            prop_assert_eq!(string_list(&name, &serde_json::to_string(&strings).unwrap()).unwrap(), strings);
        }

        #[test]
        fn a_bad_element_is_named_by_its_index(name in name(), ints in prop::collection::vec(any::<i64>(), 0..10), bad in "[a-z]{1,5}") {
            let mut items: Vec<Value> = ints.iter().map(|&i| Value::from(i)).collect();
            let at = items.len();
            items.push(Value::from(bad));
            let err = integer_list(&name, &Value::from(items).to_string()).unwrap_err();
            prop_assert_eq!(err.msg, format!("{name}[{at}] is not an integer"));
        }
    }
}
