//! Edits: the rules that need no database (resolving, propagate modes) and the events of
//! an edit built from what it changed.

use super::checks::is_resolve_only;
use super::*;

#[test]
fn resolving_is_adding_or_removing_the_prefix() {
    assert!(is_resolve_only("lunch", "✔ lunch"));
    assert!(is_resolve_only("✔ lunch", "lunch"));
    assert!(!is_resolve_only("lunch", "✔ dinner"));
    assert!(!is_resolve_only("lunch", "dinner"));
}

#[test]
fn propagate_modes_parse() {
    assert_eq!(PropagateMode::parse("change_later").unwrap(), PropagateMode::ChangeLater);
    assert_eq!(PropagateMode::parse("x").unwrap_err().msg, "Invalid propagate_mode");
}
