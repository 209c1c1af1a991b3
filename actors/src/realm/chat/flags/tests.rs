//! Checking flag changes (Zulip's order of errors) and which rows they change.

use super::ops::*;
use crate::error::ApiResult;
use crate::realm::chat::flag;

fn msg(result: ApiResult<FlagChange>) -> String {
    result.err().map(|e| e.msg).unwrap_or_default()
}

#[test]
fn flags_are_checked_in_zulips_order() {
    assert_eq!(msg(FlagChange::parse("bogus", "bad")), "Invalid flag: 'bogus'");
    assert_eq!(msg(FlagChange::parse("is_private", "add")), "Invalid flag: 'is_private'");
    assert_eq!(msg(FlagChange::parse("wildcard_mentioned", "add")), "Invalid flag: 'wildcard_mentioned'");
    assert_eq!(msg(FlagChange::parse("mentioned", "bad")), "Flag not editable: 'mentioned'");
    assert_eq!(msg(FlagChange::parse("read", "toggle")), "Invalid message flag operation: 'toggle'");
    let change = FlagChange::parse("starred", "remove").unwrap();
    assert_eq!(change, FlagChange { name: "starred", bit: flag::STARRED, op: FlagOp::Remove });
}

#[test]
fn only_rows_whose_flag_differs_change() {
    let add_read = FlagChange::parse("read", "add").unwrap();
    assert!(add_read.changes(0) && !add_read.changes(flag::READ | flag::STARRED));
    // A message without a row counts as read and historical.
    assert!(!add_read.changes(DEFAULT_HISTORICAL_FLAGS));
    let unread = FlagChange::parse("read", "remove").unwrap();
    assert!(unread.is_mark_unread() && unread.changes(DEFAULT_HISTORICAL_FLAGS));
    let star = FlagChange::parse("starred", "add").unwrap();
    assert!(star.changes(DEFAULT_HISTORICAL_FLAGS) && !star.is_mark_unread());
}
