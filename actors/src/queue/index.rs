//! [`QueueIndex`]: a realm's live queues by id, shared with the HTTP workers so that a
//! poll reaches its queue actor without a hop through the realm actor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{PoisonError, RwLock};

use actix::Addr;

use super::actor::QueueActor;
use crate::ids::UserId;

/// A live queue: its owner and its actor.
#[derive(Clone)]
pub struct QueueEntry {
    pub user_id: UserId,
    pub addr: Addr<QueueActor>,
}

/// The live queues of one realm.
#[derive(Default)]
pub struct QueueIndex {
    map: RwLock<HashMap<String, QueueEntry>>,
    /// Set while the server saves its queues to stop: a queue that stops answering then is
    /// being saved, not gone.
    closing: AtomicBool,
}

impl QueueIndex {
    /// The queue with this id.
    pub fn get(&self, queue_id: &str) -> Option<QueueEntry> {
        self.map.read().unwrap_or_else(PoisonError::into_inner).get(queue_id).cloned()
    }

    /// Records a queue.
    pub fn insert(&self, queue_id: &str, entry: QueueEntry) {
        self.map.write().unwrap_or_else(PoisonError::into_inner).insert(queue_id.to_owned(), entry);
    }

    /// Forgets a queue.
    pub fn remove(&self, queue_id: &str) {
        self.map.write().unwrap_or_else(PoisonError::into_inner).remove(queue_id);
    }

    /// The users with a queue open.
    pub fn users(&self) -> std::collections::HashSet<UserId> {
        self.map.read().unwrap_or_else(PoisonError::into_inner).values().map(|e| e.user_id).collect()
    }

    /// Marks the realm's queues as being saved for a restart.
    pub fn set_closing(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// Whether the queues are being saved for a restart.
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }
}
