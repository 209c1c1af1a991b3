//! The wire shapes of presence (spec 2.15): the modern format keyed by user id, the legacy
//! one keyed by email with a `website` client entry and `aggregated`, the single-user
//! reply and the `presence` event.

use std::fmt::Write;

use serde_json::{json, Value};

use super::state::Row;
use super::{LEGACY_ACTIVITY_OFFSET_SECS, MICROS, OFFLINE_THRESHOLD_SECS};
use crate::events::Event;
use crate::realm::model::User;

/// The only client name the legacy format still shows (Zulip no longer keeps clients).
const CLIENT: &str = "website";

/// `"<user id>":{"active_timestamp":..,"idle_timestamp":..}`.
pub fn modern_member(row: &Row) -> String {
    let mut out = String::with_capacity(64);
    let _ = write!(
        out,
        r#""{}":{{"active_timestamp":{},"idle_timestamp":{}}}"#,
        row.user_id,
        row.active_timestamp(),
        row.idle_timestamp()
    );
    out
}

/// A row in the modern format, as an object.
pub fn modern_object(row: &Row) -> Value {
    json!({"active_timestamp": row.active_timestamp(), "idle_timestamp": row.idle_timestamp()})
}

/// The legacy status and timestamp of a row (Zulip's `format_legacy_presence_dict`):
/// `active` while last active at most `LEGACY_ACTIVITY_OFFSET_SECS` before last connected,
/// with the time last active; else `idle`, with the time last connected.
pub fn legacy_status(row: &Row) -> (&'static str, i64) {
    let (active, connected) = (row.active_timestamp_micros(), row.idle_timestamp_micros());
    if active + LEGACY_ACTIVITY_OFFSET_SECS * MICROS >= connected {
        ("active", row.active_timestamp())
    } else {
        ("idle", row.idle_timestamp())
    }
}

/// The legacy per-client entry: `{"client":"website","status":..,"timestamp":..,"pushable":false}`.
fn client_entry(row: &Row) -> Value {
    let (status, timestamp) = legacy_status(row);
    json!({"client": CLIENT, "status": status, "timestamp": timestamp, "pushable": false})
}

/// A user's legacy presence: `{"aggregated":{client,status,timestamp},"website":{..,"pushable"}}`.
pub fn legacy_object(row: &Row) -> Value {
    let (status, timestamp) = legacy_status(row);
    json!({
        "aggregated": {"client": CLIENT, "status": status, "timestamp": timestamp},
        CLIENT: client_entry(row),
    })
}

/// `GET /users/{user}/presence`'s `presence` (Zulip 12, feature level 497): the modern fields,
/// then the legacy ones kept for older integrations: `website` and `aggregated` without
/// `client` and `pushable`, `aggregated` marked `offline` when older than
/// `OFFLINE_THRESHOLD_SECS`.
pub fn single(row: &Row, now_secs: i64) -> Value {
    let (status, timestamp) = legacy_status(row);
    let aggregated = if now_secs - timestamp > OFFLINE_THRESHOLD_SECS { "offline" } else { status };
    json!({
        "active_timestamp": row.active_timestamp(),
        "idle_timestamp": row.idle_timestamp(),
        CLIENT: {"status": status, "timestamp": timestamp},
        "aggregated": {"status": aggregated, "timestamp": timestamp},
    })
}

/// `server_timestamp`: seconds as a float, as Python's `time.time()`.
pub fn server_timestamp(now_micros: i64) -> Value {
    Value::from(now_micros as f64 / MICROS as f64)
}

/// The `presence` event of a user whose presence changed: the legacy event (`type`, `email`,
/// `user_id`, `server_timestamp`, `presence`) carrying the modern form in `presences` as
/// well. Each queue keeps the form its client takes (`queue::spec`): the modern one
/// (`type` and `presences`) with `simplified_presence_events`, else the legacy one, without
/// `email` for `slim_presence`.
pub fn event(user: &User, row: &Row, now_micros: i64) -> Event {
    Event::new(
        "presence",
        json!({
            "email": user.email,
            "user_id": user.id,
            "server_timestamp": server_timestamp(now_micros),
            "presence": {CLIENT: client_entry(row)},
            "presences": {user.id.to_string(): modern_object(row)},
        }),
    )
}
