//! Messages: sending and rendering (`send`), fetching with narrows (`fetch`), per-user
//! flags and unread counts (`flags`), edits, deletion, reactions and typing (`changes`).
//! Messages live in SQLite (table `messages`, per-user rows in `user_messages`), not in
//! the realm state: the realm actor validates against the state, writes in one
//! transaction and fans out after the commit.

pub mod changes;
pub mod edit;
pub mod fetch;
pub mod flags;
pub mod format;
pub mod highlight;
pub mod narrow;
pub mod render;
pub mod send;
#[cfg(test)]
mod tests;

/// Zulip's `UserMessage` flag bits.
pub mod flag {
    pub const READ: i64 = 1;
    pub const STARRED: i64 = 2;
    pub const COLLAPSED: i64 = 4;
    pub const MENTIONED: i64 = 8;
    pub const STREAM_WILDCARD_MENTIONED: i64 = 16;
    pub const HAS_ALERT_WORD: i64 = 512;
    pub const HISTORICAL: i64 = 1024;
    pub const IS_PRIVATE: i64 = 2048;
    pub const TOPIC_WILDCARD_MENTIONED: i64 = 8192;
    pub const GROUP_MENTIONED: i64 = 16384;
}
