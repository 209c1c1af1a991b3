//! Who is active: the sorted list of active users the state keeps, and what it answers
//! without a walk over every user (organization-wide audiences, active subscribers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use imbl::OrdSet;

use super::RealmState;
use crate::ids::{ChannelId, UserId};

/// Each channel's active subscribers, as last listed: an entry stands while the channel's
/// subscribers and the active users are the very ones it was made from (it holds them, so
/// any change to either makes new ones). Every register and channel listing asks for every
/// channel's count, and for the large channels' lists.
#[derive(Default)]
pub struct SubscriberCache(Mutex<HashMap<ChannelId, Listed>>);

struct Listed {
    subscribers: OrdSet<UserId>,
    active: Arc<Vec<UserId>>,
    ids: Arc<[UserId]>,
}

impl std::fmt::Debug for SubscriberCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.0.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("SubscriberCache").field("entries", &entries).finish()
    }
}

impl RealmState {
    /// Ids of active users, ascending.
    pub fn active_user_ids(&self) -> Vec<UserId> {
        self.active_ids.to_vec()
    }

    /// Keeps the list of active users up to date with a user put in the state.
    pub(super) fn note_active(&mut self, id: UserId, active: bool) {
        let ids = &mut self.active_ids;
        match (ids.binary_search(&id), active) {
            (Err(at), true) => Arc::make_mut(ids).insert(at, id),
            (Ok(at), false) => {
                Arc::make_mut(ids).remove(at);
            }
            _ => {}
        }
    }

    /// Activates or deactivates an account (the one way `is_active` changes, so the list of
    /// active users follows at once).
    pub(crate) fn set_user_active(&mut self, id: UserId, active: bool) {
        if let Some(user) = self.users.get_mut(&id).map(Arc::make_mut) {
            user.is_active = active;
            self.note_active(id, active);
        }
    }

    /// Whether `id` is an active user of the organization (a search of a sorted list, not a
    /// walk down the users' tree).
    pub fn is_active_user(&self, id: UserId) -> bool {
        self.active_ids.binary_search(&id).is_ok()
    }

    /// The subscribers of a channel who are active users, ascending (deactivated users keep
    /// their subscriptions but are listed nowhere).
    pub fn active_subscribers(&self, channel: ChannelId) -> Vec<UserId> {
        self.active_subscriber_ids(channel).to_vec()
    }

    /// The same, shared (listed once while nothing changes).
    pub fn active_subscriber_ids(&self, channel: ChannelId) -> Arc<[UserId]> {
        let active = &self.active_ids;
        let Some(subscribers) = self.channels.subscribers.get(&channel) else {
            return self.list_active_subscribers(channel).into();
        };
        let mut cache = self.subscriber_cache.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(listed) = cache.get(&channel) {
            if listed.subscribers.ptr_eq(subscribers) && Arc::ptr_eq(&listed.active, active) {
                return Arc::clone(&listed.ids);
            }
        }
        let ids: Arc<[UserId]> = self.list_active_subscribers(channel).into();
        let listed = Listed { subscribers: subscribers.clone(), active: Arc::clone(active), ids: Arc::clone(&ids) };
        cache.insert(channel, listed);
        ids
    }

    fn list_active_subscribers(&self, channel: ChannelId) -> Vec<UserId> {
        let active = &self.active_ids;
        let Some(subscribers) = self.channels.subscribers.get(&channel) else { return Vec::new() };
        // Both ascending: a few subscribers are looked up, many are merged with the list.
        if subscribers.len().saturating_mul(16) < active.len() {
            return subscribers.iter().filter(|u| active.binary_search(u).is_ok()).copied().collect();
        }
        let mut out = Vec::with_capacity(subscribers.len());
        let mut rest = active.as_slice();
        for user in subscribers {
            while let Some((first, tail)) = rest.split_first() {
                if first >= user {
                    break;
                }
                rest = tail;
            }
            if rest.first() == Some(user) {
                out.push(*user);
            }
        }
        out
    }
}
