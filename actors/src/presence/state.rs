//! [`PresenceState`]: one organization's presence rows, with Zulip's update rule.
//!
//! A row holds when its user was last connected (any ping) and last active (an `active`
//! ping), and the organization-wide `last_update_id` of its last change, which clients use
//! to ask for what changed since (`last_update_id`). The collections are persistent maps,
//! so the actor publishes a copy after each change for a few reference counts.

use std::sync::Arc;

use imbl::{HashMap, OrdMap};

use super::{format, MICROS, OFFLINE_THRESHOLD_SECS, PING_INTERVAL_SECS, UPDATE_MIN_FREQ_SECS};
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;

/// What a client reports (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Idle,
}

impl Status {
    /// `active` or `idle`; anything else is Zulip's "Invalid status: {status}".
    pub fn parse(raw: &str) -> ApiResult<Status> {
        match raw {
            "active" => Ok(Status::Active),
            "idle" => Ok(Status::Idle),
            _ => Err(ApiError::bad_request(format!("Invalid status: {raw}"))),
        }
    }
}

/// One user's presence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub user_id: UserId,
    /// Microseconds since the epoch; `None` if never active.
    pub last_active: Option<i64>,
    /// Microseconds since the epoch; `None` only for rows stored that way.
    pub last_connected: Option<i64>,
    pub update_id: i64,
    /// The user's `date_joined` (Unix seconds), which stands in for a missing time.
    pub date_joined: i64,
    /// The row in the modern format (`"<id>":{"active_timestamp":..,"idle_timestamp":..}`),
    /// written once per change: every incremental fetch sends it.
    modern: Box<str>,
}

impl Row {
    /// A row; its modern form is written here.
    pub fn new(
        user_id: UserId,
        last_active: Option<i64>,
        last_connected: Option<i64>,
        update_id: i64,
        date_joined: i64,
    ) -> Row {
        let mut row = Row { user_id, last_active, last_connected, update_id, date_joined, modern: Box::default() };
        row.modern = format::modern_member(&row).into_boxed_str();
        row
    }

    /// When last active (microseconds), else when the user joined.
    pub fn active_timestamp_micros(&self) -> i64 {
        self.last_active.unwrap_or(self.date_joined.saturating_mul(MICROS))
    }

    /// When last connected (microseconds), else when the user joined.
    pub fn idle_timestamp_micros(&self) -> i64 {
        self.last_connected.unwrap_or(self.date_joined.saturating_mul(MICROS))
    }

    /// `active_timestamp` (Unix seconds).
    pub fn active_timestamp(&self) -> i64 {
        seconds(self.active_timestamp_micros())
    }

    /// `idle_timestamp` (Unix seconds).
    pub fn idle_timestamp(&self) -> i64 {
        seconds(self.idle_timestamp_micros())
    }

    /// The row as a member of a modern `presences` object.
    pub fn modern_member(&self) -> &str {
        &self.modern
    }
}

/// Unix seconds of a time in microseconds (Zulip's `datetime_to_timestamp` truncates).
pub fn seconds(micros: i64) -> i64 {
    micros.div_euclid(MICROS)
}

/// A ping that changed the stored presence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub row: Arc<Row>,
    /// Whether other users should hear of it at once: the user's first presence, or the
    /// user coming back online (Zulip's `creating or became_online`).
    pub notify: bool,
}

/// An organization's presence rows.
#[derive(Debug, Clone, Default)]
pub struct PresenceState {
    rows: HashMap<UserId, Arc<Row>>,
    /// The same rows by `update_id`, for "what changed since".
    by_update: OrdMap<i64, Arc<Row>>,
    /// The last `update_id` handed out (rows may hold smaller ones).
    last_update_id: i64,
}

impl PresenceState {
    /// The rows as loaded; update ids continue after `last_update_id` (at least the largest
    /// row's).
    pub fn new(rows: impl IntoIterator<Item = Row>, last_update_id: i64) -> PresenceState {
        let mut state = PresenceState { last_update_id, ..PresenceState::default() };
        for row in rows {
            state.last_update_id = state.last_update_id.max(row.update_id);
            state.put(Arc::new(row));
        }
        state
    }

    /// A user's row.
    pub fn row(&self, user: UserId) -> Option<&Arc<Row>> {
        self.rows.get(&user)
    }

    /// Every row, by ascending `update_id`.
    pub fn rows(&self) -> impl Iterator<Item = &Arc<Row>> {
        self.by_update.values()
    }

    /// The rows changed after `update_id`, by ascending `update_id`.
    pub fn rows_after(&self, update_id: i64) -> impl Iterator<Item = &Arc<Row>> {
        self.by_update.range(update_id.saturating_add(1)..).map(|(_, row)| row)
    }

    /// The same, by descending `update_id`.
    pub fn rows_after_rev(&self, update_id: i64) -> impl Iterator<Item = &Arc<Row>> {
        self.by_update.range(update_id.saturating_add(1)..).rev().map(|(_, row)| row)
    }

    /// The rows with update ids in `start..end`, by ascending `update_id`.
    pub fn rows_between(&self, start: i64, end: i64) -> impl Iterator<Item = &Arc<Row>> {
        self.by_update.range(start..end.max(start)).map(|(_, row)| row)
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The last `update_id` handed out.
    pub fn last_update_id(&self) -> i64 {
        self.last_update_id
    }

    fn put(&mut self, row: Arc<Row>) {
        if let Some(old) = self.rows.insert(row.user_id, Arc::clone(&row)) {
            self.by_update.remove(&old.update_id);
        }
        self.by_update.insert(row.update_id, row);
    }

    /// Applies a ping of `user` (who joined at `date_joined`) at `now` (microseconds), as
    /// Zulip's `do_update_user_presence` does: a first ping creates the row; later ones move
    /// a timestamp only when it is more than `UPDATE_MIN_FREQ_SECS` old, so a user pinging
    /// every minute changes (and is written) at most once a minute. `None` if nothing
    /// changed.
    /// Replaces a user's row by one never active and last connected at `connected` (Zulip's
    /// row for a user who turned presence off).
    pub fn reset(&mut self, user: UserId, connected: i64, date_joined: i64) -> Changed {
        self.last_update_id += 1;
        let row = Arc::new(Row::new(user, None, Some(connected), self.last_update_id, date_joined));
        self.put(Arc::clone(&row));
        Changed { row, notify: true }
    }

    pub fn ping(&mut self, user: UserId, status: Status, now: i64, date_joined: i64) -> Option<Changed> {
        let active = status == Status::Active;
        let Some(old) = self.rows.get(&user).cloned() else {
            self.last_update_id += 1;
            let row = Row::new(user, active.then_some(now), Some(now), self.last_update_id, date_joined);
            let row = Arc::new(row);
            self.put(Arc::clone(&row));
            return Some(Changed { row, notify: true });
        };
        // A time never reported counts as a day ago: the user is treated as newly online.
        let day = 86_400 * MICROS;
        let since_active = old.last_active.map_or(day, |t| now - t);
        let since_connected = old.last_connected.map_or(day, |t| now - t);
        let min_freq = UPDATE_MIN_FREQ_SECS * MICROS;
        // Missed a couple of pings and at risk of being shown offline before the next one.
        let became_online = active && since_active > (OFFLINE_THRESHOLD_SECS - PING_INTERVAL_SECS - 10) * MICROS;

        let (mut last_active, mut last_connected) = (old.last_active, old.last_connected);
        let mut changed = false;
        if since_connected > min_freq {
            last_connected = Some(now);
            changed = true;
        }
        if active && since_active > min_freq {
            last_active = Some(now);
            if last_connected.is_none_or(|t| now > t) {
                last_connected = Some(now);
            }
            changed = true;
        }
        if !changed {
            return None;
        }
        self.last_update_id += 1;
        let row = Arc::new(Row::new(user, last_active, last_connected, self.last_update_id, date_joined));
        self.put(Arc::clone(&row));
        Some(Changed { row, notify: became_online })
    }
}
