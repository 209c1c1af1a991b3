//! The organization's pending scheduled messages and reminders, kept in memory: the ones
//! not delivered yet (failed ones included, which wait for their sender to reschedule
//! them). A leaf: it imports no feature. `realm::scheduled` plans the changes and applies
//! them here once committed; the realm actor's timer is armed for [`ScheduledData::next_due`].

use std::sync::Arc;

use imbl::OrdMap;
use rusqlite::Connection;

use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::store::{self, StoreResult};

/// Where a scheduled message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduledTarget {
    /// A channel's topic (as it will be stored).
    Channel(ChannelId, String),
    /// A direct message among these participants (the sender included), ascending.
    Direct(Vec<UserId>),
}

/// What makes a reminder of a scheduled message (Zulip's `delivery_type` `REMIND`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReminderOf {
    pub message_id: MessageId,
    /// The note shown in the reminder (empty: none).
    pub note: String,
}

/// One scheduled message or reminder (Zulip's `ScheduledMessage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledItem {
    pub id: i64,
    pub sender: UserId,
    pub target: ScheduledTarget,
    pub content: String,
    pub rendered_content: String,
    /// The client that scheduled (or last edited) it.
    pub client: String,
    /// When it is due (Unix seconds).
    pub deliver_at: i64,
    pub read_by_sender: bool,
    pub failed: bool,
    pub failure_message: Option<String>,
    /// Set for reminders.
    pub reminder: Option<ReminderOf>,
}

impl ScheduledItem {
    /// Whether it is a reminder.
    pub fn is_reminder(&self) -> bool {
        self.reminder.is_some()
    }
}

/// The pending scheduled messages and reminders, by id.
#[derive(Debug, Clone, Default)]
pub struct ScheduledData {
    items: OrdMap<i64, Arc<ScheduledItem>>,
}

impl ScheduledData {
    /// The organization's undelivered rows.
    pub fn load(conn: &Connection, realm: RealmId) -> StoreResult<ScheduledData> {
        let items = store::scheduled::pending_in_realm(conn, realm)?;
        Ok(ScheduledData { items: items.into_iter().map(|i| (i.id, Arc::new(i))).collect() })
    }

    /// A pending item by id.
    pub fn get(&self, id: i64) -> Option<&ScheduledItem> {
        self.items.get(&id).map(AsRef::as_ref)
    }

    /// A user's pending scheduled messages (`reminders` false) or reminders, by due time
    /// then id.
    pub fn of_user(&self, user: UserId, reminders: bool) -> Vec<&ScheduledItem> {
        let mut out: Vec<&ScheduledItem> = self
            .items
            .values()
            .filter(|i| i.sender == user && i.is_reminder() == reminders)
            .map(AsRef::as_ref)
            .collect();
        out.sort_by_key(|i| (i.deliver_at, i.id));
        out
    }

    /// The earliest due time of the items still to try (not failed).
    pub fn next_due(&self) -> Option<i64> {
        self.items.values().filter(|i| !i.failed).map(|i| i.deliver_at).min()
    }

    /// The items to try at `now` (due, not failed), by due time then id.
    pub fn due(&self, now: i64) -> Vec<i64> {
        let mut due: Vec<(i64, i64)> =
            self.items.values().filter(|i| !i.failed && i.deliver_at <= now).map(|i| (i.deliver_at, i.id)).collect();
        due.sort_unstable();
        due.into_iter().map(|(_, id)| id).collect()
    }

    /// Adds or replaces an item.
    pub fn put(&mut self, item: ScheduledItem) {
        self.items.insert(item.id, Arc::new(item));
    }

    /// Removes an item (delivered or deleted).
    pub fn remove(&mut self, id: i64) {
        self.items.remove(&id);
    }
}
