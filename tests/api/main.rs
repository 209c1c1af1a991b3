//! Integration tests over real HTTP: one test binary, one server per test.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod auth;
mod avatars;
mod bodies;
mod channels;
mod cli;
mod emoji;
mod errors;
mod events;
mod fetch_api_key;
mod folders;
mod groups;
mod helpers;
mod limits;
mod message_changes;
mod message_edits;
mod message_flags;
mod message_rules;
mod messages;
mod params;
mod personal;
mod presence;
mod previews;
mod profile_fields;
mod rate_limits;
mod realm_emoji;
mod realms;
mod register_golden;
mod restart;
mod server_settings;
mod settings;
mod topics;
mod uploads;
mod users;
