//! This area's register data sets, from storage: `recent_private_conversations`,
//! `starred_messages` and `unread_msgs`. A storage failure fails the register (Zulip's
//! error envelope), never an empty data set.

use serde_json::Value;

use super::unread;
use rusqlite::Connection;

use crate::ids::{MessageId, UserId};
use crate::realm::state::RealmState;
use crate::store::StoreResult;

/// `recent_private_conversations`: most recent first, among messages up to `upto`.
pub fn recent_private_conversations(conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<Value> {
    unread::recent_private_conversations(conn, user, upto).map(Value::Array)
}

/// `starred_messages`: the ids up to `upto`, ascending.
pub fn starred_messages(conn: &Connection, user: UserId, upto: MessageId) -> StoreResult<Value> {
    unread::starred_messages(conn, user, upto).map(Value::from)
}

/// `unread_msgs`: the aggregated unread state of the messages up to `upto`.
pub fn unread_msgs(
    state: &RealmState,
    conn: &Connection,
    user: UserId,
    upto: MessageId,
    empty_topic_name: bool,
) -> StoreResult<Value> {
    unread::raw_unread(state, conn, user, upto).map(|raw| raw.to_json(empty_topic_name))
}
