//! Agora's core: the actors, their messages, the domain state and its storage.
//!
//! Nothing here speaks HTTP. The server crate authenticates requests, decodes parameters
//! and sends one typed message to an actor of this crate; the actor validates against its
//! in-memory state, commits to SQLite, updates memory, pushes events and replies.
//!
//! - [`registry::RealmRegistry`] supervises one [`realm::RealmActor`] per organization.
//! - [`realm::RealmState`] is the plain state of an organization, changed only through
//!   planned [`realm::Change`]s that the realm actor writes, then applies.
//! - [`reader`] runs history reads on threads of their own against a state snapshot.
//! - [`store::Store`] is the SQLite database with its migrations.
//! - [`events`] defines what a committed change tells client queues (the event-queue and
//!   presence actors attach here as `Recipient<PushEvent>` listeners).

pub mod auth;
pub mod clock;
pub mod config;
pub mod emoji;
pub mod error;
pub mod events;
pub mod ids;
pub mod login;
pub mod mail;
pub mod mailbox;
pub mod markdown;
pub mod outgoing_webhooks;
pub mod presence;
pub mod push;
pub mod queue;
pub mod ratelimit;
pub mod reader;
pub mod realm;
pub mod registry;
pub mod secrets;
pub mod server_info;
pub mod sessions;
pub mod stats;
pub mod store;
pub mod thumbnailer;
pub mod transfer;
pub mod uploads;
pub mod validate;
pub mod worker_thread;

pub use error::{ApiError, ApiResult, ErrorCode};

/// The map of a JSON object value (built with `json!({...})`); anything else is empty.
pub fn json_object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}
