//! Messages a realm actor answers. Reads are served from memory; every mutation is
//! validated, committed to SQLite, applied to memory and fanned out as events before the
//! reply, in mailbox order.

use actix::prelude::*;
use serde_json::{Map, Value};

use super::ops::{CreatedUser, NewUser};
use super::register::FetchOptions;
use crate::error::ApiResult;
use crate::events::PushEvent;
use crate::ids::UserId;
use crate::queue::QueueSpec;

/// A user as named in a request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserRef {
    Id(UserId),
    /// An API email, or a real email the viewer may see.
    Email(String),
}

/// Creates an account (its password already hashed by the caller).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateUser(pub NewUser);

/// `POST /users`: `acting` creates an account (its password already hashed).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateUserAs {
    pub acting: UserId,
    pub new: NewUser,
    /// The password failed the strength check (then it was not hashed): refused after
    /// the other checks, as Zulip orders them.
    pub password_too_weak: bool,
}

/// Replaces a user's API key and returns the new one.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct RegenerateApiKey {
    pub user_id: UserId,
}

/// `POST /users/me/api_key/regenerate`: humans replace their own key.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct RegenerateOwnApiKey {
    pub user_id: UserId,
}

/// `GET /server_settings` at this organization's host.
#[derive(Message, Debug)]
#[rtype(result = "Map<String, Value>")]
pub struct GetServerSettings {
    pub is_incompatible: bool,
}

/// Deactivates (`active: false`) or reactivates an account.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetUserActive {
    pub user_id: UserId,
    pub active: bool,
}

/// Deactivates (`true`) or reactivates the organization.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetRealmDeactivated(pub bool);

/// Identifies a registered listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(pub u64);

/// Registers a listener (an event queue) for the events `user_id` may receive.
#[derive(Message)]
#[rtype(result = "ListenerId")]
pub struct AddListener {
    pub user_id: UserId,
    pub recipient: Recipient<PushEvent>,
}

/// Removes a listener; unknown ids are ignored.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct RemoveListener(pub ListenerId);

/// Stops the actor (the registry starts a fresh one from the database on next use).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopRealm;

/// `POST /register`: creates an event queue for the user and returns the initial state
/// (with `queue_id` and `last_event_id`), both as of the same moment, as the JSON members
/// of the response.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct Register {
    pub user_id: UserId,
    pub spec: QueueSpec,
    pub fetch: FetchOptions,
}

/// `GET /events` without a `queue_id` (and with `dont_block`): creates a queue without an
/// initial state and returns its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct AllocateQueue {
    pub user_id: UserId,
    pub spec: QueueSpec,
}

/// Saves every queue of the realm for a restart and stops them; replies with how many.
#[derive(Message, Debug)]
#[rtype(result = "usize")]
pub struct SaveQueues;
