//! Narrow SQL: values are always bound, the anchored window and the id lists return what
//! Zulip's fetch does, and the queries walk the indexes they are shaped for.

use rusqlite::params;

use super::*;
use crate::store::Store;

const VIEWER: UserId = UserId(7);

fn filter(scope: Scope, conditions: Vec<Condition>) -> Filter {
    let terms = conditions.into_iter().map(|condition| Term { condition, negated: false }).collect();
    Filter { viewer: VIEWER, scope, terms, upto: MessageId(i64::MAX) }
}

/// Every condition, each holding a value that would be recognisable in the SQL text.
fn every_condition() -> Vec<Condition> {
    vec![
        Condition::Channel(ChannelId(424_201)),
        Condition::Topic("secret topic'; DROP TABLE messages; --".into()),
        Condition::TopicStartsWith("100%_off".into()),
        Condition::Sender(UserId(424_202)),
        Condition::Conversation("424203,424204".into()),
        Condition::Including(UserId(424_205)),
        Condition::Id(MessageId(424_206)),
        Condition::Direct,
        Condition::Starred,
        Condition::Mentioned,
        Condition::Alerted,
        Condition::Unread,
        Condition::TopicPolicy(424_207),
        Condition::Muted { channels: vec![ChannelId(424_208), ChannelId(424_209)], topic_policy: 424_210 },
        Condition::HasLink,
        Condition::HasImage,
        Condition::HasAttachment,
        Condition::HasReaction,
        Condition::Search(vec!["needle\"".into(), "haystack".into()]),
        Condition::Search(Vec::new()),
    ]
}

#[test]
fn values_are_bound_and_never_written_into_the_sql() {
    let scopes =
        [Scope::History(Some(vec![ChannelId(424_211)])), Scope::History(None), Scope::Conversation, Scope::Received];
    for scope in scopes {
        let f = filter(scope.clone(), every_condition());
        let q = f.query("um.flags");
        for value in ["4242", "secret", "DROP", "100%", "needle", "haystack"] {
            assert!(!q.sql.contains(value), "{value} in {}", q.sql);
        }
        assert!(!q.sql.contains(&VIEWER.0.to_string()), "{}", q.sql);
        assert_eq!(q.sql.matches('?').count(), q.args.len(), "{scope:?}: {}", q.sql);
        // The statement is valid SQL against the schema, whatever the values.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn().unwrap();
        assert!(around(&conn, &f, MessageId(5), 2, true, 2).is_ok(), "{scope:?}");
        assert_eq!(first_unread(&conn, &f).unwrap(), None);
    }
}

/// A database with messages 1..=n, all in one channel, all received by the viewer (odd
/// ones read), and no foreign rows (checks off for this connection).
fn messages(conn: &Connection, n: i64) {
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for id in 1..=n {
        conn.execute(
            "INSERT INTO messages (id, realm_id, sender_id, channel_id, topic, content, date_sent) \
             VALUES (?1, 1, 2, 3, 't', 'x', 0)",
            [id],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)",
            params![VIEWER, id, id % 2],
        )
        .unwrap();
    }
}

fn ids(rows: &[FetchedRow]) -> Vec<i64> {
    rows.iter().map(|(row, _)| row.id.0).collect()
}

#[test]
fn the_window_holds_the_closest_messages_on_each_side_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = store.conn().unwrap();
    messages(&conn, 10);
    for scope in [Scope::Received, Scope::History(None), Scope::Conversation] {
        let f = filter(scope, vec![Condition::Channel(ChannelId(3))]);
        let around = around(&conn, &f, MessageId(5), 2, true, 3).unwrap();
        assert_eq!(ids(&around.before), [3, 4]);
        assert_eq!(around.at.as_ref().map(|(row, flags)| (row.id.0, *flags)), Some((5, Some(1))));
        assert_eq!(ids(&around.after), [6, 7, 8]);
        assert_eq!(first_unread(&conn, &f).unwrap(), Some(MessageId(2)));
        let unread = filter(f.scope.clone(), vec![Condition::Unread]);
        let around = super::around(&conn, &unread, MessageId(5), 10, false, 0).unwrap();
        assert_eq!(ids(&around.before), [2, 4]);
    }
}

/// A list of ids is one parameter, however long: longer than SQLite's limit of parameters
/// per statement (32,766), and with repeats, it still finds the messages once each.
#[test]
fn a_long_list_of_ids_is_one_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = store.conn().unwrap();
    messages(&conn, 5);
    let mut list: Vec<MessageId> = (1000..41_000).map(MessageId).collect();
    list.extend([MessageId(4), MessageId(2), MessageId(4)]);
    for scope in [Scope::Received, Scope::History(Some(vec![ChannelId(3)]))] {
        assert_eq!(ids(&among(&conn, &filter(scope, Vec::new()), &list).unwrap()), [2, 4]);
    }
    let none = filter(Scope::History(Some(Vec::new())), Vec::new());
    assert!(among(&conn, &none, &list).unwrap().is_empty());
}

/// The query plan of the filter's newest-first fetch.
fn plan(conn: &Connection, f: &Filter) -> String {
    let mut q = f.query(&format!("um.flags, {MESSAGE_COLUMNS}"));
    q.push(&format!(" AND {} < ? ORDER BY {} DESC LIMIT ?", f.id_col(), f.id_col()));
    q.args.push(Sql::Integer(i64::MAX));
    q.args.push(Sql::Integer(10));
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", q.sql)).unwrap();
    let rows = stmt.query_map(params_from_iter(q.args.iter()), |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

#[test]
fn narrows_walk_the_indexes_they_are_shaped_for() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = store.conn().unwrap();
    let dm = plan(&conn, &filter(Scope::Conversation, vec![Condition::Conversation("3,7".into())]));
    assert!(dm.contains("messages_dm"), "{dm}");
    let topic = filter(Scope::History(None), vec![Condition::Channel(ChannelId(3)), Condition::Topic("t".into())]);
    let topic = plan(&conn, &topic);
    assert!(topic.contains("messages_channel"), "{topic}");
    let search = plan(&conn, &filter(Scope::Received, vec![Condition::Search(vec!["x".into()])]));
    assert!(search.contains("messages_fts"), "{search}");
    let received = plan(&conn, &filter(Scope::Received, Vec::new()));
    assert!(received.contains("SEARCH um USING PRIMARY KEY (user_id=? AND message_id<?)"), "{received}");
}

#[test]
fn prefixes_match_literally_and_search_words_are_fts5_strings() {
    assert_eq!(starts_with_pattern("✔ "), "✔ %");
    assert_eq!(starts_with_pattern("100%_\\"), "100\\%\\_\\\\%");
    assert_eq!(fts_query(&["a\"b".into(), "OR".into()]).as_deref(), Some("\"a\"\"b\" \"OR\""));
    assert_eq!(fts_query(&[]), None);
    assert_eq!(json_ids([3, -1, 40].into_iter()), "[3,-1,40]");
    assert_eq!(json_ids(std::iter::empty()), "[]");
}

#[test]
fn the_window_below_an_anchor_has_one_upper_bound_and_keeps_to_upto() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = store.conn().unwrap();
    messages(&conn, 10);
    for scope in [Scope::Received, Scope::History(None), Scope::Conversation] {
        // A snapshot as of message 7, an anchor past it: only 6 and 7 come below it.
        let f = Filter { upto: MessageId(7), ..filter(scope, vec![Condition::Channel(ChannelId(3))]) };
        let window = around(&conn, &f, MessageId(9), 2, true, 2).unwrap();
        assert_eq!((ids(&window.before), window.at.is_none(), ids(&window.after)), (vec![6, 7], true, vec![]));
        let window = around(&conn, &f, MessageId(4), 2, false, 5).unwrap();
        assert_eq!((ids(&window.before), ids(&window.after)), (vec![2, 3], vec![5, 6, 7]));
        // The side below names the id column in one upper bound only.
        assert!(!f.query_upto("um.flags", false).sql.contains("<= ?"));
    }
}
