//! Channel objects as JSON, written once per version of what they are made of and shared by
//! every register of the organization: a register lists every channel the user may know of
//! (as `streams`, and those they never subscribed to as `never_subscribed`), objects that
//! are the same for every viewer.
//!
//! An object depends on its channel row, its subscribers, who is active (subscriber counts,
//! members of anonymous permission groups) and its first message. An entry holds the very
//! values it was made from, so any change to one of them makes new ones (the state's
//! collections are copied on write), and an entry whose values are the state's is up to
//! date. The organization's system groups, which channel settings also name, never change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use imbl::OrdSet;

use super::RealmState;
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::model::Channel;

/// What an object was made from.
struct Made {
    channel: Arc<Channel>,
    subscribers: Option<OrdSet<UserId>>,
    active: Arc<Vec<UserId>>,
    first_message: Option<MessageId>,
    json: Arc<str>,
}

/// The organization's channel objects as JSON, by channel and shape (shared by every copy of
/// the state).
#[derive(Default)]
pub struct ChannelJsonCache(Mutex<HashMap<(ChannelId, u8), Made>>);

impl std::fmt::Debug for ChannelJsonCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.0.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("ChannelJsonCache").field("entries", &entries).finish()
    }
}

impl RealmState {
    /// The object of `channel` in the shape `shape` (each caller numbers its shapes), from
    /// the cache or made by `make` (which must depend on nothing but what the module's
    /// documentation lists).
    pub fn channel_json(&self, channel: ChannelId, shape: u8, make: impl FnOnce() -> String) -> Arc<str> {
        let active = &self.active_ids;
        let Some(row) = self.channels.by_id.get(&channel) else {
            return Arc::from(make());
        };
        let subscribers = self.channels.subscribers.get(&channel);
        let first_message = self.channels.first_messages.get(&channel).copied();
        let current = |made: &Made| {
            Arc::ptr_eq(&made.channel, row)
                && Arc::ptr_eq(&made.active, active)
                && made.first_message == first_message
                && match (&made.subscribers, subscribers) {
                    (Some(a), Some(b)) => a.ptr_eq(b),
                    (None, None) => true,
                    _ => false,
                }
        };
        let key = (channel, shape);
        if let Some(made) = self.channel_json.0.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            if current(made) {
                return Arc::clone(&made.json);
            }
        }
        let json: Arc<str> = Arc::from(make());
        let made = Made {
            channel: Arc::clone(row),
            subscribers: subscribers.cloned(),
            active: Arc::clone(active),
            first_message,
            json: Arc::clone(&json),
        };
        self.channel_json.0.lock().unwrap_or_else(PoisonError::into_inner).insert(key, made);
        json
    }
}
