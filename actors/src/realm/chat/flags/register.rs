//! This area's register data sets, from storage: `recent_private_conversations`,
//! `starred_messages` and `unread_msgs`. A storage failure fails the register (Zulip's
//! error envelope), never an empty data set.

use serde_json::Value;

use super::unread;
use crate::ids::UserId;
use crate::realm::state::RealmState;
use crate::store::{Store, StoreResult};

/// `recent_private_conversations`: most recent first.
pub fn recent_private_conversations(store: &Store, user: UserId) -> StoreResult<Value> {
    unread::recent_private_conversations(store, user).map(Value::Array)
}

/// `starred_messages`: the ids, ascending.
pub fn starred_messages(store: &Store, user: UserId) -> StoreResult<Value> {
    unread::starred_messages(store, user).map(Value::from)
}

/// `unread_msgs`: the aggregated unread state.
pub fn unread_msgs(state: &RealmState, store: &Store, user: UserId, empty_topic_name: bool) -> StoreResult<Value> {
    unread::raw_unread(state, store, user).map(|raw| raw.to_json(empty_topic_name))
}
