//! Parsing narrows and resolving their operators.

use super::*;
use serde_json::json;

#[test]
fn narrows_parse_in_both_forms() {
    let terms =
        parse_narrow(&json!([["stream", "x"], {"operator": "is", "operand": "starred", "negated": true}])).unwrap();
    assert_eq!(terms[0], NarrowTerm { operator: "stream".into(), operand: json!("x"), negated: false });
    assert!(terms[1].negated);
    assert_eq!(parse_narrow(&json!([3])).unwrap_err().msg, "Invalid narrow[0]");
}

#[test]
fn unknown_operands_are_bad_narrows() {
    assert_eq!(has_condition("nothing").unwrap_err().msg, "Invalid narrow operator: unknown 'has' operand nothing");
}
