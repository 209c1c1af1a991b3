//! The time, read in one place: handlers read it once and pass it to the plans, which never
//! read a clock themselves (so tests give them any time they like).

/// The current time in Unix seconds.
pub fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The current time in microseconds since the Unix epoch (presence keeps Zulip's precision).
pub fn now_micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}
