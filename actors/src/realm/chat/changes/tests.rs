//! Message changes: who may delete, and that deleting leaves no row behind (against a
//! real, temporary database); typing notifications (planned from a state in memory).

use crate::events::Outgoing;
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::channels::ops::{self, ChannelOptions, SubscribeRequest};
use crate::realm::chat::fixture_tests as fixture;
use crate::realm::model::{Role, Subscription};
use crate::realm::state::RealmState;
use crate::realm::tests::{add, setup};
use crate::realm::{commit, Change};
use crate::store::reactions::{self as store, Reaction};
use crate::store::{self as stores, Store};

use super::delete::{check_can_delete, plan_delete};
use super::typing::{plan_typing, SetTyping, TypingTo};
use super::{access_message, event_recipients};

const T0: i64 = 1_795_238_460;

/// The public channel "c" (created if needed) with `members` subscribed.
fn channel(state: &mut RealmState, store: &Store, owner: UserId, members: &[UserId]) -> ChannelId {
    let req = SubscribeRequest {
        channels: vec![("c".to_owned(), None)],
        colors: Default::default(),
        principals: Some(ops::Principals::Ids(members.iter().map(|u| u.0).collect())),
        authorization_errors_fatal: true,
        send_new_subscription_messages: false,
        announce: false,
        options: ChannelOptions::default(),
    };
    ops::subscribe(state, store, owner, req, T0).unwrap();
    state.channel_by_name("c").unwrap().id
}

/// A message of `sender` in `channel`, received by its subscribers and indexed.
fn message(state: &mut RealmState, store: &Store, sender: UserId, channel: ChannelId, date_sent: i64) -> MessageId {
    let recipients: Vec<UserId> = state.subscribers(channel).collect();
    store
        .write(|tx| {
            let id = stores::channels::insert_message(tx, state.realm().id, sender, channel, "t", "hello", date_sent)?;
            stores::channels::insert_user_messages(tx, id, &recipients)?;
            let id = MessageId(id);
            store::index_message(tx, id, "hello", "t")?;
            Ok::<_, stores::StoreError>(id)
        })
        // Written behind the state's back: it must know the message exists.
        .inspect(|id| state.note_message(*id))
        .unwrap()
}

/// The events of a typing notification, planned and applied without a database.
fn set_typing(state: &RealmState, user_id: UserId, op: &str, to: TypingTo) -> crate::error::ApiResult<Vec<Outgoing>> {
    let notice = plan_typing(state, SetTyping { user_id, op: op.to_owned(), to })?;
    Ok(notice.apply(&mut state.clone()).events)
}

#[test]
fn deletion_follows_roles_and_the_time_limit() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    let admin = add(&mut state, &store, &config, "admin@acme.test", Role::Administrator);
    let c = channel(&mut state, &store, owner, &[alice, bob]);
    let id = message(&mut state, &store, alice, c, T0);
    let row = store::message(&store.conn().unwrap(), id).unwrap().unwrap();
    let user = |id: UserId| state.user(id).unwrap().clone();

    assert!(check_can_delete(&state, &user(alice), &row, T0 + 600).is_ok());
    let late = check_can_delete(&state, &user(alice), &row, T0 + 601).unwrap_err();
    assert_eq!(late.msg, "The time limit for deleting this message has passed");
    let other = check_can_delete(&state, &user(bob), &row, T0).unwrap_err();
    assert_eq!(other.msg, "You don't have permission to delete this message");
    assert!(check_can_delete(&state, &user(admin), &row, T0 + 100_000).is_ok());
}

#[test]
fn deleting_removes_every_row_and_tells_the_subscribers() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    let carol = add(&mut state, &store, &config, "carol@acme.test", Role::Member);
    let c = channel(&mut state, &store, owner, &[alice, bob]);
    let id = message(&mut state, &store, alice, c, T0);
    let smile =
        Reaction { emoji_name: "smile".into(), emoji_code: "1f604".into(), reaction_type: "unicode_emoji".into() };
    store.write(|tx| store::insert_reaction(tx, id, bob, &smile)).unwrap();

    let conn = store.conn().unwrap();
    let carol_user = state.user(carol).unwrap().clone();
    // A public channel's message is readable without a row.
    assert!(!access_message(&state, &conn, &carol_user, id).unwrap().has_user_message);
    let row = store::message(&conn, id).unwrap().unwrap();
    assert_eq!(event_recipients(&state, &conn, &row).unwrap(), vec![alice, bob]);

    let change = plan_delete(&state, alice, id, T0 + 1).unwrap();
    let events = commit(&mut state, &store, change).unwrap().events;
    assert_eq!(events[0].users, vec![alice, bob]);
    let count = |sql: &str| conn.query_row(sql, [id], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM messages WHERE id = ?1"), 0);
    assert_eq!(count("SELECT COUNT(*) FROM user_messages WHERE message_id = ?1"), 0);
    assert_eq!(count("SELECT COUNT(*) FROM reactions WHERE message_id = ?1"), 0);
    // (Welcome Bot's greeting says hello too.)
    let found = count("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'hello' AND rowid = ?1");
    assert_eq!(found, 0);
    assert_eq!(access_message(&state, &conn, &carol_user, id).unwrap_err().msg, "Invalid message(s)");
}

#[test]
fn channels_past_the_typing_size_limit_get_no_typing_events() {
    use super::typing::MAX_CHANNEL_SIZE_FOR_TYPING;
    let mut state = fixture::realm();
    let users: Vec<UserId> =
        (0..=MAX_CHANNEL_SIZE_FOR_TYPING).map(|i| fixture::user(&mut state, &format!("u{i}"), Role::Member)).collect();
    let c = fixture::channel(&mut state, "c", false, &users[..MAX_CHANNEL_SIZE_FOR_TYPING]);
    let sender = users[0];
    let to = || TypingTo::Channel { stream_id: Some(c.0), topic: Some("t".into()) };
    let events = set_typing(&state, sender, "start", to()).unwrap();
    assert_eq!(events[0].users.len(), MAX_CHANNEL_SIZE_FOR_TYPING);
    let last = users[MAX_CHANNEL_SIZE_FOR_TYPING];
    state.put_subscription(Subscription::new(last, c, "#c2c2c2".into()));
    let events = set_typing(&state, sender, "start", to()).unwrap();
    assert!(events[0].users.is_empty());
}

#[test]
fn direct_typing_names_each_person_once_in_the_order_given() {
    let mut state = fixture::realm();
    let alice = fixture::user(&mut state, "alice", Role::Member);
    let bob = fixture::user(&mut state, "bob", Role::Member);
    let carol = fixture::user(&mut state, "carol", Role::Member);
    let sender = alice;
    let mut to: Vec<i64> = [carol, bob, alice].iter().cycle().take(30_000).map(|u| u.0).collect();
    to.push(carol.0);
    let events = set_typing(&state, sender, "start", TypingTo::Direct(Some(to))).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].users, vec![carol, bob, alice]);
    let person = |id: UserId| serde_json::json!({"user_id": id, "email": state.user(id).unwrap().email});
    assert_eq!(
        events[0].event.get("recipients"),
        Some(&serde_json::json!([person(carol), person(bob), person(alice)]))
    );
}

/// Zulip checks access to the message before the emoji: an unknown emoji is found when
/// planned, and refused only once the message is known to be readable.
#[test]
fn reactions_check_the_message_before_the_emoji() {
    use super::reactions::{plan_add_reaction, AddReaction};
    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let c = channel(&mut state, &store, owner, &[alice]);
    let id = message(&mut state, &store, alice, c, T0);
    let react = |message_id: MessageId, emoji_name: &str| AddReaction {
        user_id: alice,
        message_id,
        emoji_name: emoji_name.into(),
        emoji_code: None,
        reaction_type: None,
    };
    let planned = plan_add_reaction(&state, react(MessageId(999), "not_an_emoji")).unwrap();
    assert_eq!(commit(&mut state, &store, planned).unwrap_err().msg, "Invalid message(s)");
    let planned = plan_add_reaction(&state, react(id, "not_an_emoji")).unwrap();
    assert_eq!(commit(&mut state, &store, planned).unwrap_err().msg, "Emoji 'not_an_emoji' does not exist");
    let planned = plan_add_reaction(&state, react(id, "smile")).unwrap();
    let events = commit(&mut state, &store, planned).unwrap().events;
    assert_eq!(events[0].users, vec![alice]);
}
