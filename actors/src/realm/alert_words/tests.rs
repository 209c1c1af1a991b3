//! Alert word changes planned and applied on an organization built in memory, and the
//! `has_alert_word` flag they give new messages.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::ops::{plan_add_alert_words, plan_remove_alert_words};
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{channel, realm, user, T0};
use crate::realm::chat::flag;
use crate::realm::chat::send::{plan_send, ChannelRef, SendMessage, SendTo};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

/// Adds words; the reply and the events as (body, users).
fn add(state: &mut RealmState, user: UserId, list: &[&str]) -> (Vec<String>, Vec<(Value, Vec<UserId>)>) {
    let applied = plan_add_alert_words(state, user, words(list)).unwrap().apply(state);
    (applied.output, applied.events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect())
}

fn remove(state: &mut RealmState, user: UserId, list: &[&str]) -> Vec<String> {
    plan_remove_alert_words(state, user, &words(list)).unwrap().apply(state).output
}

#[test]
fn words_are_stripped_kept_once_in_any_case_and_announced_to_their_owner() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let (reply, events) = add(&mut state, hamlet, &["  milk ", "", "  ", "Tea", "coffee", "TEA"]);
    // Of new words differing in case, the last spelling takes the place of the first.
    assert_eq!(reply, ["milk", "TEA", "coffee"]);
    assert_eq!(events, vec![(json!({"type": "alert_words", "alert_words": ["milk", "TEA", "coffee"]}), vec![hamlet])]);
    // Words the user has in any case are skipped; the event comes even when nothing changed.
    let change = plan_add_alert_words(&state, hamlet, words(&["MILK", "tea"])).unwrap();
    assert!(!change.writes());
    let (reply, events) = add(&mut state, hamlet, &["MILK", "tea"]);
    assert_eq!(reply, ["milk", "TEA", "coffee"]);
    assert_eq!(events.len(), 1);
    // Removal compares case-insensitively and ignores unknown words (not stripped).
    assert_eq!(remove(&mut state, hamlet, &["tea", "Milk ", "water"]), ["milk", "coffee"]);
    assert_eq!(remove(&mut state, hamlet, &["MILK"]), ["coffee"]);
    assert_eq!(state.user_data().alert_words(hamlet), ["coffee"]);
}

#[test]
fn each_word_is_at_most_100_characters_before_stripping() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let ok = "é".repeat(100);
    assert!(plan_add_alert_words(&state, hamlet, vec![ok]).is_ok());
    let long = format!("{} ", "x".repeat(100));
    let err = plan_add_alert_words(&state, hamlet, vec!["fine".into(), long]).unwrap_err();
    assert_eq!(err.msg, "alert_words[1] is too long (limit: 100 characters)");
    assert_eq!((err.status, err.code.map(|c| c.as_str())), (400, Some("BAD_REQUEST")));
}

#[test]
fn new_messages_flag_the_recipients_whose_words_they_contain() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let iago = user(&mut state, "iago", Role::Member);
    let outsider = user(&mut state, "outsider", Role::Member);
    let general = channel(&mut state, "general", false, &[hamlet, othello, iago]);
    add(&mut state, othello, &["deploy"]);
    add(&mut state, hamlet, &["Deploy", "lunch"]);
    add(&mut state, outsider, &["deploy"]);
    let send = |content: &str| SendMessage {
        sender: iago,
        to: SendTo::Channel(ChannelRef::Id(general.0)),
        topic: Some("ops".into()),
        content: content.into(),
        client: "test".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: Some(false),
    };
    let planned = plan_send(&state, send("We DEPLOY today."), &BTreeSet::new(), T0).unwrap();
    let alert = flag::HAS_ALERT_WORD;
    assert_eq!(planned.flags(), [(hamlet, alert), (othello, alert), (iago, 0)]);
    let planned = plan_send(&state, send("redeploy at lunch"), &BTreeSet::new(), T0).unwrap();
    assert_eq!(planned.flags(), [(hamlet, alert), (othello, 0), (iago, 0)]);
    let planned = plan_send(&state, send("```\ndeploy\n```"), &BTreeSet::new(), T0).unwrap();
    assert_eq!(planned.flags(), [(hamlet, 0), (othello, 0), (iago, 0)]);
}
