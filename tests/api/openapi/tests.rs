//! The validator on small schemas, the description's keywords, and the operations found for
//! requests.

use reqwest::Method;
use serde_json::{json, Value};

use super::allowlist::{glob, ALLOWLIST};
use super::mismatch::{Kind, Mismatch};
use super::schema::{Validator, KEYWORDS};
use super::{api_path, event_of, general_path, SPEC};

/// A document whose `#/components/schemas` are `schemas`.
fn doc(schemas: Value) -> Value {
    json!({"components": {"schemas": schemas}})
}

/// The mismatches of `value` against `#/components/schemas/Root` of `doc`, as
/// `(kind, path, schema)`.
fn mismatches(doc: &Value, value: Value) -> Vec<(Kind, String, String)> {
    let root = json!({"$ref": "#/components/schemas/Root"});
    let found: Vec<Mismatch> = Validator::new(doc).validate(&root, &value);
    found.into_iter().map(|m| (m.kind, m.path, m.schema)).collect()
}

fn closed_object() -> Value {
    doc(json!({"Root": {
        "type": "object",
        "additionalProperties": false,
        "required": ["id"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string", "nullable": true}},
    }}))
}

#[test]
fn an_unknown_key_under_additional_properties_false_is_refused() {
    let doc = closed_object();
    assert_eq!(mismatches(&doc, json!({"id": 1, "name": "a"})), vec![]);
    assert_eq!(
        mismatches(&doc, json!({"id": 1, "extra": true})),
        vec![(Kind::Unknown, "$.extra".into(), "Root".into())]
    );
}

#[test]
fn a_missing_required_key_is_refused() {
    assert_eq!(mismatches(&closed_object(), json!({"name": "a"})), vec![(Kind::Missing, "$.id".into(), "Root".into())]);
}

#[test]
fn a_mismatch_says_what_was_expected_and_shows_the_value_cut() {
    let root = json!({"$ref": "#/components/schemas/Root"});
    let found = Validator::new(&closed_object()).validate(&root, &json!({"id": 1, "extra": "x".repeat(500)}));
    assert_eq!(found[0].kind.name(), "unknown property");
    assert_eq!(found[0].expected, "no such property (additionalProperties: false; known: id, name)");
    assert_eq!(found[0].found.chars().count(), 161);
    assert!(found[0].found.starts_with("\"xxx") && found[0].found.ends_with('…'));
}

#[test]
fn wrong_types_are_refused_and_integers_are_written_without_a_fraction() {
    let doc = closed_object();
    assert_eq!(mismatches(&doc, json!({"id": "1"})), vec![(Kind::Type, "$.id".into(), "Root".into())]);
    assert_eq!(mismatches(&doc, json!({"id": 1.0})), vec![(Kind::Type, "$.id".into(), "Root".into())]);
    assert_eq!(mismatches(&doc, json!([1])), vec![(Kind::Type, "$".into(), "Root".into())]);
    let number = self::doc(json!({"Root": {"type": "number"}}));
    assert_eq!(mismatches(&number, json!(3)), vec![]);
    assert_eq!(mismatches(&number, json!(3.5)), vec![]);
}

#[test]
fn null_is_allowed_only_where_nullable() {
    let doc = closed_object();
    assert_eq!(mismatches(&doc, json!({"id": 1, "name": null})), vec![]);
    assert_eq!(mismatches(&doc, json!({"id": null})), vec![(Kind::Type, "$.id".into(), "Root".into())]);
    let found = Validator::new(&doc).validate(&json!({"$ref": "#/components/schemas/Root"}), &json!({"id": null}));
    assert_eq!(found[0].expected, "integer (not nullable)");
}

#[test]
fn one_of_takes_exactly_one_branch_and_reports_the_nearest() {
    let doc = doc(json!({
        "Root": {"type": "array", "items": {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]}},
        "A": {"type": "object", "additionalProperties": false, "required": ["type"],
              "properties": {"type": {"enum": ["a"]}, "x": {"type": "integer"}}},
        "B": {"type": "object", "additionalProperties": false, "required": ["type"],
              "properties": {"type": {"enum": ["b"]}, "y": {"type": "string"}}},
    }));
    assert_eq!(mismatches(&doc, json!([{"type": "a", "x": 1}, {"type": "b", "y": "z"}])), vec![]);
    // Neither fits; B is the one meant (its type is right), so its mismatch is reported.
    assert_eq!(mismatches(&doc, json!([{"type": "b", "y": 5}])), vec![(Kind::Type, "$[0].y".into(), "B".into())]);
    // A type no branch has: each is tried, and the first of the nearest reported.
    assert_eq!(mismatches(&doc, json!([{"type": "c"}])), vec![(Kind::Enum, "$[0].type".into(), "A".into())]);
    let either = self::doc(json!({"Root": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}));
    assert_eq!(mismatches(&either, json!(1.5)), vec![]);
    assert_eq!(mismatches(&either, json!(1)), vec![(Kind::Branches, "$".into(), "Root".into())]);
    let any = self::doc(json!({"Root": {"anyOf": [{"type": "integer"}, {"type": "number"}]}}));
    assert_eq!(mismatches(&any, json!(1)), vec![]);
    assert_eq!(mismatches(&any, json!("1")).len(), 1);
}

#[test]
fn all_of_parts_allow_each_others_properties() {
    let doc = doc(json!({
        "Base": {"properties": {"result": {"type": "string", "enum": ["success"]}, "msg": {"type": "string"}},
                 "required": ["result", "msg"]},
        "Root": {"allOf": [{"$ref": "#/components/schemas/Base"},
                           {"additionalProperties": false, "type": "object", "properties": {"n": {"type": "integer"}}}]},
    }));
    assert_eq!(mismatches(&doc, json!({"result": "success", "msg": "", "n": 1})), vec![]);
    assert_eq!(
        mismatches(&doc, json!({"result": "error", "n": 1, "other": 2})),
        vec![
            (Kind::Missing, "$.msg".into(), "Base".into()),
            (Kind::Enum, "$.result".into(), "Base".into()),
            (Kind::Unknown, "$.other".into(), "Root".into()),
        ]
    );
}

#[test]
fn maps_check_their_values_and_name_their_keys_in_brackets() {
    let doc = doc(
        json!({"Root": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}),
    );
    assert_eq!(mismatches(&doc, json!({"12": ["a"]})), vec![]);
    assert_eq!(mismatches(&doc, json!({"12": [3]})), vec![(Kind::Type, "$[\"12\"][0]".into(), "Root".into())]);
    assert_eq!(mismatches(&doc, json!({"12": []})), vec![(Kind::Bound, "$[\"12\"]".into(), "Root".into())]);
    assert_eq!(general_path("$[\"12\"][0].a[\"x]\\\"y\"]"), "$[][].a[]");
}

#[test]
fn the_description_uses_no_keyword_the_validator_ignores_and_its_refs_resolve() {
    fn walk(doc: &Value, schema: &Value, at: &str) {
        let Some(rules) = schema.as_object() else { panic!("{at}: not a schema") };
        for (key, sub) in rules {
            assert!(KEYWORDS.contains(&key.as_str()) || key.starts_with("x-"), "{at}: keyword {key} is not handled");
            match key.as_str() {
                "$ref" => assert!(doc.pointer(&sub.as_str().unwrap()[1..]).is_some(), "{at}: $ref {sub}"),
                "properties" => sub.as_object().unwrap().iter().for_each(|(k, s)| walk(doc, s, &format!("{at}/{k}"))),
                "items" => walk(doc, sub, &format!("{at}/items")),
                "additionalProperties" if sub.is_object() => walk(doc, sub, &format!("{at}/additionalProperties")),
                "allOf" | "oneOf" | "anyOf" => sub
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .for_each(|(i, s)| walk(doc, s, &format!("{at}/{key}/{i}"))),
                _ => {}
            }
        }
    }
    let doc = &SPEC.doc;
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        walk(doc, schema, name);
    }
    for operation in &SPEC.operations {
        if let Some(schema) = &operation.success {
            walk(doc, schema, &operation.name());
        }
    }
    assert!(SPEC.operations.iter().filter(|o| o.success.is_some()).count() > 130);
}

fn operations_for(method: Method, path: &str) -> Vec<String> {
    SPEC.operations(&method, api_path(path).unwrap()).into_iter().map(|o| o.name()).collect()
}

#[test]
fn requests_find_their_operation() {
    assert_eq!(operations_for(Method::GET, "/api/v1/users/12"), ["GET /users/{user_id}"]);
    assert_eq!(operations_for(Method::GET, "/api/v1/users/a@b.c"), ["GET /users/{email}"]);
    assert_eq!(operations_for(Method::GET, "/json/users/me?x=1"), ["GET /users/me"]);
    assert_eq!(operations_for(Method::POST, "/api/v1/messages/flags"), ["POST /messages/flags"]);
    assert_eq!(operations_for(Method::PATCH, "/api/v1/messages/5"), ["PATCH /messages/{message_id}"]);
    assert_eq!(operations_for(Method::GET, "/api/v1/bots"), Vec::<String>::new());
    assert_eq!(operations_for(Method::GET, "/api/v1/realm/playgrounds"), Vec::<String>::new());
    assert_eq!(
        operations_for(Method::GET, "/api/v1/user_uploads/2/ab/cd/x.png"),
        ["GET /user_uploads/{realm_id_str}/{filename}"]
    );
    assert_eq!(
        operations_for(Method::PATCH, "/api/v1/navigation_views/narrow/is/alerted"),
        ["PATCH /navigation_views/{fragment}"]
    );
    assert_eq!(api_path("/user_uploads/1/x.png"), None);
}

#[test]
fn events_are_checked_through_the_one_of_of_event_types() {
    let schema = SPEC.operations(&Method::GET, "/events")[0].success.clone().unwrap();
    let validator = Validator::new(&SPEC.doc);
    let body = |event: Value| json!({"result": "success", "msg": "", "queue_id": "q", "events": [event]});
    assert_eq!(validator.validate(&schema, &body(json!({"type": "heartbeat", "id": 0}))), vec![]);
    let typing = json!({"type": "typing", "op": "start", "id": 1, "message_type": "direct",
                        "sender": {"user_id": 1, "email": "a@b.c"}, "recipients": [{"user_id": 2, "email": "d@b.c"}]});
    assert_eq!(validator.validate(&schema, &body(typing.clone())), vec![]);
    let mut wrong = typing;
    wrong["sender"]["agora"] = json!(1);
    let found = validator.validate(&schema, &body(wrong.clone()));
    assert_eq!(
        found.iter().map(|m| (m.kind, m.path.as_str())).collect::<Vec<_>>(),
        [(Kind::Unknown, "$.events[0].sender.agora")]
    );
    assert_eq!(event_of(&body(wrong), &found[0].path).as_deref(), Some("typing/start"));
}

#[test]
fn simple_successes_allow_nothing_more() {
    let schema = SPEC.operations(&Method::POST, "/typing")[0].success.clone().unwrap();
    let validator = Validator::new(&SPEC.doc);
    assert_eq!(validator.validate(&schema, &json!({"result": "success", "msg": ""})), vec![]);
    let found = validator.validate(&schema, &json!({"result": "success", "msg": "", "id": 3}));
    assert_eq!(found.iter().map(|m| (m.kind, m.path.as_str())).collect::<Vec<_>>(), [(Kind::Unknown, "$.id")]);
}

#[test]
fn allowlist_patterns() {
    assert!(glob("$.a", "$.a"));
    assert!(!glob("$.a", "$.ab"));
    assert!(glob("$.*.b", "$.x[].b"));
    assert!(glob("*", "$.anything"));
    assert!(!glob("$.*.b", "$.x.c"));
    assert!(ALLOWLIST.differences().iter().count() < 200, "the allowlist loads");
}
