//! Report mode: with `AGORA_OPENAPI=report` the check fails no test; it writes one JSON line
//! per checked response, allowed or refused difference and undocumented endpoint to
//! `AGORA_OPENAPI_REPORT` (default `target/tmp/openapi-report.jsonl`). Then
//! `cargo test --test api openapi::report::summary -- --ignored --nocapture` groups them:
//!
//! ```sh
//! AGORA_OPENAPI=report cargo test --test api
//! cargo test --test api openapi::report::summary -- --ignored --nocapture
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::sync::{LazyLock, Mutex};

use serde_json::{json, Value};

use super::allowlist::ALLOWLIST;
use super::mismatch::{Kind, Mismatch};
use super::{describe, general_path, InEvent, SPEC};

fn report_path() -> String {
    std::env::var("AGORA_OPENAPI_REPORT")
        .unwrap_or_else(|_| concat!(env!("CARGO_TARGET_TMPDIR"), "/openapi-report.jsonl").to_owned())
}

/// The report being written, in report mode.
static REPORT: LazyLock<Option<Mutex<File>>> = LazyLock::new(|| {
    let mode = std::env::var("AGORA_OPENAPI").unwrap_or_default();
    match mode.as_str() {
        "" | "check" => None,
        "report" => {
            let path = report_path();
            Some(Mutex::new(File::create(&path).unwrap_or_else(|e| panic!("{path}: {e}"))))
        }
        other => panic!("AGORA_OPENAPI={other:?}: say check (the default) or report"),
    }
});

/// Whether differences are logged rather than failing.
pub fn enabled() -> bool {
    REPORT.is_some()
}

fn write(mut record: Value) {
    let Some(file) = REPORT.as_ref() else { return };
    record["test"] = json!(std::thread::current().name().unwrap_or("?"));
    let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
    writeln!(file, "{record}").expect("the report is writable");
}

fn mismatch_record(what: &str, operation: &str, m: &Mismatch, event: Option<String>) -> Value {
    json!({
        "what": what, "operation": operation, "event": event, "kind": m.kind.name(), "path": m.path,
        "schema": m.schema, "expected": m.expected, "found": m.found,
    })
}

/// A response of `operation` was checked; `allowed` are its listed differences.
pub fn checked(operation: &str, allowed: &[InEvent]) {
    write(json!({"what": "checked", "operation": operation}));
    for (m, event) in allowed {
        write(mismatch_record("allowed", operation, m, event.clone()));
    }
}

/// A success of an endpoint the description lacks.
pub fn undocumented(operation: &str) {
    write(json!({"what": "undocumented", "operation": operation}));
}

/// Differences the allowlist lacks.
pub fn refused(operation: &str, refused: &[InEvent]) {
    for (m, event) in refused {
        write(mismatch_record("refused", operation, m, event.clone()));
    }
}

fn kind_named(name: &str) -> Kind {
    [Kind::Unknown, Kind::Missing, Kind::Type, Kind::Enum, Kind::Bound, Kind::Branches]
        .into_iter()
        .find(|k| k.name() == name)
        .expect("a kind")
}

/// Groups the last report: the refused differences (by operation, event, kind, path and
/// schema, with a count, the tests and a sample), the allowlist entries nothing used, the
/// undocumented endpoints met, and the description's operations no test reached.
#[test]
#[ignore = "reads the report of an AGORA_OPENAPI=report run"]
fn summary() {
    let path = report_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut undocumented: BTreeMap<String, usize> = BTreeMap::new();
    type Group = (usize, BTreeSet<String>, String);
    let mut groups: BTreeMap<(String, String, String, String, String), Group> = BTreeMap::new();
    let mut used = BTreeSet::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("a report line");
        let field = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
        let operation = field("operation");
        match r["what"].as_str() {
            Some("checked") => *checked.entry(operation).or_default() += 1,
            Some("undocumented") => *undocumented.entry(operation).or_default() += 1,
            Some(what) => {
                let m = Mismatch {
                    kind: kind_named(&field("kind")),
                    path: field("path"),
                    schema: field("schema"),
                    expected: field("expected"),
                    found: field("found"),
                };
                let event = r["event"].as_str().map(str::to_owned);
                if what == "allowed" {
                    used.extend(ALLOWLIST.matching(&operation, &m, event.as_deref()));
                    continue;
                }
                let key = (operation, field("event"), field("kind"), general_path(&m.path), m.schema.clone());
                let group = groups.entry(key).or_insert_with(|| (0, BTreeSet::new(), describe(&m, event)));
                group.0 += 1;
                group.1.insert(field("test"));
            }
            None => panic!("a report line without what: {line}"),
        }
    }
    println!("# Refused differences: {} groups", groups.len());
    for ((operation, event, kind, path, schema), (count, tests, sample)) in &groups {
        let event = if event.is_empty() { String::new() } else { format!(" [{event}]") };
        let some_tests: Vec<&String> = tests.iter().take(3).collect();
        println!(
            "- {operation}{event} {kind} at {path} (schema {schema}): {count} times, {} tests, e.g. {some_tests:?}",
            tests.len()
        );
        println!("    {sample}");
    }
    println!("\n# Allowlist entries nothing used");
    for (i, entry) in ALLOWLIST.differences().iter().enumerate() {
        if !used.contains(&i) {
            println!("- {entry:?}");
        }
    }
    println!("\n# Undocumented endpoints answered with a success");
    for (operation, count) in &undocumented {
        println!("- {operation}: {count}");
    }
    println!("\n# Operations of the description checked: {} of {}", checked.len(), SPEC.operations.len());
    for operation in &SPEC.operations {
        let name = operation.name();
        match checked.get(&name) {
            Some(count) => println!("- {name}: {count}"),
            None => println!("- {name}: never"),
        }
    }
}
