//! Presence (spec 4.7 and 2.15): who is online, kept by one [`PresenceActor`] per
//! organization.
//!
//! Every client pings `POST /users/me/presence` once a minute, so presence is by far the
//! most frequent write of a busy organization. It therefore lives outside the realm actor:
//! the presence actor owns the rows in memory ([`PresenceState`]), learns what it needs of
//! users from the realm's published state snapshot, answers each ping without touching the
//! database, and writes the rows that changed in one transaction every few seconds, off its
//! thread. It publishes its own snapshot for `POST /register` (read by the realm actor) and
//! hands the rare presence events (a user coming online) to the realm actor, which fans
//! them out to its event queues.
//!
//! - [`state`]: the rows and Zulip's update rule (`do_update_user_presence`).
//! - [`audience`]: whose presence is reported to whom.
//! - [`reads`]: the replies of the three endpoints and the register data set.
//! - [`blocks`]: the modern rows' JSON in blocks, reused by every incremental reply.
//! - [`format`]: the wire shapes (modern, legacy, events).
//! - [`actor`]: the actor, its messages and the batched writes.
//! - [`enabled`]: a user turning `presence_enabled` off or on.

pub mod actor;
pub mod audience;
pub mod blocks;
pub mod enabled;
pub mod format;
pub mod reads;
pub mod state;

pub use actor::{
    FlushPresence, GetPresenceStats, GetRealmPresence, GetUserPresence, PresenceActor, PresenceEvents, PresenceStats,
    Rebind, UpdatePresence,
};
pub use enabled::PresenceEnabledChanged;
pub use reads::{Fields, PresenceQuery};
pub use state::{PresenceState, Row, Status};

/// Zulip's `OFFLINE_THRESHOLD_SECS`: a user not heard from for this long is offline.
pub const OFFLINE_THRESHOLD_SECS: i64 = 200;
/// Zulip's `PRESENCE_PING_INTERVAL_SECS`: how often clients ping.
pub const PING_INTERVAL_SECS: i64 = 60;
/// Zulip's `PRESENCE_UPDATE_MIN_FREQ_SECONDS`: a timestamp newer than this is not moved
/// (several open windows of one user ping without each one causing a write).
pub const UPDATE_MIN_FREQ_SECS: i64 = 55;
/// Zulip's `PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS`: in the legacy format a user
/// counts as active while last active at most this long before last connected.
pub const LEGACY_ACTIVITY_OFFSET_SECS: i64 = 70;
/// Days of presence history returned when the client names none.
pub const DEFAULT_HISTORY_DAYS: i64 = 14;

/// Microseconds in a second.
pub(crate) const MICROS: i64 = 1_000_000;

#[cfg(test)]
mod tests;
