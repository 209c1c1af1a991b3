//! The per-user data and its indexes, changed as the features apply their changes.

use super::*;

#[test]
fn mutes_keep_their_order_and_index_who_muted_whom() {
    let mut data = UserData::default();
    let (a, b, c) = (UserId(1), UserId(2), UserId(3));
    data.add_mute(a, Mute { muted_user_id: c, date_muted: 20 });
    data.add_mute(a, Mute { muted_user_id: b, date_muted: 30 });
    data.add_mute(b, Mute { muted_user_id: c, date_muted: 40 });
    let muted: Vec<(UserId, i64)> = data.mutes(a).iter().map(|m| (m.muted_user_id, m.date_muted)).collect();
    assert_eq!(muted, [(c, 20), (b, 30)]);
    assert!(data.has_muted(a, c) && data.has_muted(b, c) && data.has_muted(a, b));
    assert!(!data.has_muted(c, a) && !data.has_muted(b, a));
    data.remove_mute(a, c);
    assert!(!data.has_muted(a, c) && data.has_muted(b, c));
    assert_eq!(data.mutes(a).len(), 1);
    assert!(data.mutes(c).is_empty());
}

#[test]
fn alert_words_feed_one_matcher_for_everyone() {
    let mut data = UserData::default();
    let (a, b) = (UserId(1), UserId(2));
    assert!(data.alerted_users("anything").is_empty());
    data.set_alert_words(a, vec!["Rust".into(), "tea time".into()]);
    data.set_alert_words(b, vec!["rust".into()]);
    assert_eq!(data.alert_words(a), ["Rust", "tea time"]);
    assert_eq!(data.alerted_users("I like RUST."), BTreeSet::from([a, b]));
    assert_eq!(data.alerted_users("It is tea time!"), BTreeSet::from([a]));
    data.set_alert_words(a, Vec::new());
    assert!(data.alert_words(a).is_empty());
    assert_eq!(data.alerted_users("rust and tea time"), BTreeSet::from([b]));
}

#[test]
fn a_status_is_empty_until_something_is_set() {
    let mut status = UserStatus::empty(5);
    assert!(status.is_empty());
    status.reaction_type = "realm_emoji".into();
    assert!(!status.is_empty());
    let mut data = UserData::default();
    assert_eq!(data.status(UserId(1)), None);
    data.put_status(UserId(1), UserStatus { status_text: "busy".into(), ..UserStatus::empty(7) });
    assert_eq!(data.status(UserId(1)).map(|s| s.status_text.as_str()), Some("busy"));
    assert_eq!(data.statuses().count(), 1);
}
