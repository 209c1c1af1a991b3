//! Users as JSON, written once per version of a user and per shape (what the viewer may see
//! of them, the options of the request), and shared by every register and user list of the
//! organization, whatever thread writes them. In a large organization these lists are most
//! of a register's reply; writing each user anew for every client scales with the
//! organization, copying the bytes does so much more cheaply.
//!
//! An entry holds the version of the user it was written from (its `Arc`): while the cache
//! holds it, any change to the user makes a new one (the state's users are copied on
//! write), so an entry whose `Arc` is the state's is up to date.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::RealmState;
use crate::ids::UserId;
use crate::realm::format::{can_access_delivery_email, UserDictOptions};
use crate::realm::model::User;

/// Locks a lookup may take (registers on several threads at once rarely meet).
const SHARDS: usize = 16;

type Entries = HashMap<(UserId, u8), (Arc<User>, Arc<str>)>;

/// The organization's users as JSON (shared by every copy of the state).
pub struct UserJsonCache {
    shards: [Mutex<Entries>; SHARDS],
}

impl Default for UserJsonCache {
    fn default() -> Self {
        UserJsonCache { shards: std::array::from_fn(|_| Mutex::default()) }
    }
}

impl std::fmt::Debug for UserJsonCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries: usize = self.shards.iter().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).len()).sum();
        f.debug_struct("UserJsonCache").field("entries", &entries).finish()
    }
}

impl RealmState {
    /// `users` as `viewer` sees them, as a JSON array appended to `out` (each object with
    /// `is_active` if `with_is_active`): the same text as serializing their
    /// [`RealmState::user_view`]s.
    pub fn write_users_json<'a>(
        &self,
        viewer: &User,
        users: impl Iterator<Item = &'a Arc<User>>,
        opts: UserDictOptions,
        with_is_active: bool,
        out: &mut String,
    ) {
        out.push('[');
        for (i, user) in users.enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&self.user_json(viewer, user, opts, with_is_active));
        }
        out.push(']');
    }

    /// One user as `viewer` sees them, as JSON, from the cache or written into it.
    fn user_json(&self, viewer: &User, target: &Arc<User>, opts: UserDictOptions, with_is_active: bool) -> Arc<str> {
        // Everything of the object that depends on the viewer or the request.
        let access = target.is_bot || can_access_delivery_email(viewer, target);
        let shape = u8::from(access)
            | u8::from(opts.client_gravatar) << 1
            | u8::from(opts.include_custom_profile_fields) << 2
            | u8::from(with_is_active) << 3;
        let key = (target.id, shape);
        let shard = &self.user_json.shards[target.id.0.unsigned_abs() as usize % SHARDS];
        if let Some((version, json)) = shard.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            if Arc::ptr_eq(version, target) {
                return Arc::clone(json);
            }
        }
        let mut view = self.user_view(viewer, target, opts);
        if !with_is_active {
            view.is_active = None;
        }
        let json: Arc<str> = serde_json::to_string(&view).map_or_else(|_| Arc::from("{}"), Arc::from);
        shard.lock().unwrap_or_else(PoisonError::into_inner).insert(key, (Arc::clone(target), Arc::clone(&json)));
        json
    }
}
