//! Unread aggregation (Zulip's `aggregate_unread_data` and
//! `format_unread_message_details`) and its cost for a user at the 50,000-message limit.

use std::time::Instant;

use rusqlite::params;

use super::*;
use crate::realm::model::Role;
use crate::realm::tests::{add, setup};
use crate::store::user_messages::MessageRef;
use crate::store::Store;

/// No bound: every message so far.
const ALL: MessageId = MessageId(i64::MAX);

fn row(id: i64, dm_key: &str, flags: i64) -> FlaggedMessage {
    let message = MessageRef {
        id: MessageId(id),
        sender_id: UserId(1),
        channel_id: None,
        topic: String::new(),
        dm_key: Some(dm_key.into()),
    };
    FlaggedMessage { message, flags }
}

#[test]
fn direct_and_group_conversations_aggregate_as_zulip() {
    let (_dir, _store, _config, state) = setup();
    let me = UserId(5);
    let rows = vec![
        row(10, "5,9", 0),
        row(11, "3,5,9", flag::MENTIONED),
        row(12, "5", 0),
        row(13, "5,9", flag::STREAM_WILDCARD_MENTIONED),
        row(14, "2,5", 0),
    ];
    let raw = RawUnread::collect(&state, me, rows, false);
    assert_eq!(
        raw.to_json(true),
        json!({
            "pms": [
                {"other_user_id": 2, "sender_id": 2, "unread_message_ids": [14]},
                {"other_user_id": 5, "sender_id": 5, "unread_message_ids": [12]},
                {"other_user_id": 9, "sender_id": 9, "unread_message_ids": [10, 13]},
            ],
            "streams": [],
            "huddles": [{"user_ids_string": "3,5,9", "unread_message_ids": [11]}],
            "mentions": [11, 13],
            "count": 5,
            "old_unreads_missing": false,
        })
    );
    let details = raw.message_details(me);
    let keys: Vec<&str> = details.keys().map(String::as_str).collect();
    assert_eq!(keys, ["10", "12", "13", "14", "11"]);
    assert_eq!(details["12"], json!({"type": "private", "user_ids": []}));
    assert_eq!(details["11"], json!({"type": "private", "user_ids": [3, 9], "mentioned": true}));
}

/// Inserts `n` unread direct messages from `from` to `to` in one transaction.
fn insert_unread(store: &Store, realm: i64, from: UserId, to: UserId, n: usize) {
    let key = format!("{},{}", from.0.min(to.0), from.0.max(to.0));
    store
        .write(|tx| {
            let mut message = tx.prepare(
                "INSERT INTO messages (realm_id, sender_id, content, date_sent, dm_key) VALUES (?1, ?2, 'x', 0, ?3)",
            )?;
            let mut um = tx.prepare("INSERT INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?;
            for _ in 0..n {
                message.execute(params![realm, from, key])?;
                um.execute(params![to, tx.last_insert_rowid(), flag::IS_PRIVATE])?;
            }
            Ok::<_, crate::store::StoreError>(())
        })
        .unwrap();
}

#[test]
fn fifty_thousand_unreads_are_capped_and_flagged_missing() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    insert_unread(&store, state.realm().id.0, bob, alice, MAX_UNREAD_MESSAGES + 1);
    let start = Instant::now();
    let raw = raw_unread(&state, &store.conn().unwrap(), alice, ALL).unwrap();
    let value = raw.to_json(true);
    // Measured, not asserted: about 0.3 s in a debug build, well under 0.1 s in release.
    eprintln!("unread_msgs for {} unread messages: {:?}", MAX_UNREAD_MESSAGES, start.elapsed());
    assert_eq!(value["count"], json!(MAX_UNREAD_MESSAGES));
    assert_eq!(value["old_unreads_missing"], json!(true));
    let ids = value["pms"][0]["unread_message_ids"].as_array().unwrap();
    // The newest ones are kept.
    assert_eq!(ids.len(), MAX_UNREAD_MESSAGES);
    assert!(ids[0].as_i64().unwrap() > 1);
    // Recent conversations look at the newest direct messages only.
    let recent = recent_private_conversations(&store.conn().unwrap(), alice, ALL).unwrap();
    assert_eq!(recent, vec![json!({"max_message_id": ids.last().unwrap(), "user_ids": [bob]})]);
}

/// A register reads its message data sets up to the newest message of the moment its queue
/// was made; those sent since reach the client as events only, never twice.
#[test]
fn message_data_sets_stop_at_the_registers_newest_message() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    insert_unread(&store, state.realm().id.0, bob, alice, 3);
    let conn = store.conn().unwrap();
    conn.execute("UPDATE user_messages SET flags = flags | ?1 WHERE user_id = ?2", params![flag::STARRED, alice])
        .unwrap();
    let ids: Vec<MessageId> = starred_messages(&conn, alice, ALL).unwrap();
    assert_eq!(ids.len(), 3);
    let upto = ids[1];

    let unread = raw_unread(&state, &conn, alice, upto).unwrap().to_json(true);
    assert_eq!(unread["pms"][0]["unread_message_ids"], json!([ids[0], ids[1]]));
    assert_eq!(unread["count"], json!(2));
    assert_eq!(starred_messages(&conn, alice, upto).unwrap(), &ids[..2]);
    assert_eq!(
        recent_private_conversations(&conn, alice, upto).unwrap(),
        vec![json!({"max_message_id": ids[1], "user_ids": [bob]})]
    );
    // A user without messages registers with -1: nothing is read.
    let none = MessageId(-1);
    assert_eq!(raw_unread(&state, &conn, alice, none).unwrap().to_json(true)["count"], json!(0));
    assert!(starred_messages(&conn, alice, none).unwrap().is_empty());
    assert!(recent_private_conversations(&conn, alice, none).unwrap().is_empty());
}
