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

#[test]
fn marking_a_channel_read_needs_access_to_it_when_planned() {
    use crate::ids::ChannelId;
    use crate::realm::chat::fixture_tests::{channel, realm, user};
    use crate::realm::model::Role;
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let secret = channel(&mut state, "secret", true, &[alice]);
    let refused = plan_mark_channel_read(&state, bob, secret, None).unwrap_err();
    assert_eq!(refused.msg, "Invalid channel ID");
    assert_eq!(plan_mark_channel_read(&state, alice, ChannelId(999), None).unwrap_err().msg, "Invalid channel ID");
    // An empty topic is the whole channel.
    let whole = plan_mark_channel_read(&state, alice, secret, Some(String::new())).unwrap();
    assert_eq!(whole, plan_mark_channel_read(&state, alice, secret, None).unwrap());
}
