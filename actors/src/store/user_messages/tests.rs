//! The flag queries use the partial indexes of `sql/0005_messages.sql`.

use super::*;
use crate::store::Store;

/// The query plan of `sql` (with `?` bound to 1) as one string; preparing fails if a
/// forced index (`INDEXED BY`) cannot serve the query.
fn plan(conn: &Connection, sql: &str, params: usize) -> String {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt.query_map(params_from_iter(std::iter::repeat_n(1, params)), |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

#[test]
fn flag_queries_use_the_partial_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let conn = store.conn().unwrap();
    let unread = "SELECT um.flags, m.id FROM user_messages um INDEXED BY user_messages_unread JOIN messages m ON m.id = um.message_id
         WHERE um.user_id = ? AND (um.flags & 1) = 0 AND (m.channel_id IS NULL OR m.channel_id NOT IN (5))
         ORDER BY um.message_id DESC LIMIT ?";
    assert!(plan(&conn, unread, 2).contains("user_messages_unread"), "{}", plan(&conn, unread, 2));
    let starred = "SELECT message_id FROM user_messages INDEXED BY user_messages_starred
         WHERE user_id = ? AND (flags & 2) != 0 ORDER BY message_id";
    assert!(plan(&conn, starred, 1).contains("user_messages_starred"), "{}", plan(&conn, starred, 1));
    let recent = "SELECT message_id FROM user_messages INDEXED BY user_messages_private WHERE user_id = ? AND (flags & 2048) != 0
         ORDER BY message_id DESC LIMIT ?";
    assert!(plan(&conn, recent, 2).contains("user_messages_private"), "{}", plan(&conn, recent, 2));
    let mark_all = "UPDATE user_messages INDEXED BY user_messages_unread SET flags = flags | 1 WHERE user_id = ? AND (flags & 1) = 0";
    assert!(plan(&conn, mark_all, 1).contains("user_messages_unread"), "{}", plan(&conn, mark_all, 1));
}
