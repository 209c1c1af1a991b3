//! [`QueueIndex`]: a realm's live queues by id, shared with the HTTP workers so that a
//! poll reaches its queue without a hop through the realm actor or the queue's actor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use actix::Addr;

use super::actor::QueueActor;
use super::shared::SharedQueue;
use crate::ids::UserId;

/// A live queue: its owner, its actor and its state (polled without a hop).
#[derive(Clone)]
pub struct QueueEntry {
    pub user_id: UserId,
    pub addr: Addr<QueueActor>,
    pub queue: Arc<SharedQueue>,
}

/// The live queues of one realm.
#[derive(Default)]
pub struct QueueIndex {
    map: RwLock<HashMap<String, QueueEntry>>,
    /// Set while the server saves its queues to stop: a queue that stops answering then is
    /// being saved, not gone.
    closing: AtomicBool,
    /// Long-polls waiting on the realm's queues (counted by the HTTP layer).
    waiting: AtomicUsize,
}

/// A long-poll waiting on one of the realm's queues, counted until dropped.
pub struct WaitingPoll<'a>(&'a AtomicUsize);

impl Drop for WaitingPoll<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
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

    /// How many queues are open.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no queue is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counts a long-poll as waiting until the returned guard is dropped.
    pub fn poll_waiting(&self) -> WaitingPoll<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        WaitingPoll(&self.waiting)
    }

    /// Long-polls waiting now.
    pub fn waiting_polls(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
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
