//! Events: what a committed change tells the clients that can see it.
//!
//! A mutation of the realm state produces [`Outgoing`] events, each with the users who
//! may receive it. After the change is committed the realm actor wraps each event in an
//! [`Arc`] once and hands a [`PushEvent`] to every listener (a client queue) of those
//! users; queues assign their own consecutive `id`s.

use std::sync::Arc;

use actix::prelude::*;
use serde_json::{Map, Value};

use crate::ids::UserId;

/// One event as Zulip sends it, without the per-queue `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    body: Map<String, Value>,
}

impl Event {
    /// An event of type `kind` with the given fields (an object; other values add nothing).
    pub fn new(kind: &str, fields: Value) -> Self {
        let mut body = Map::new();
        body.insert("type".to_owned(), Value::from(kind));
        if let Value::Object(map) = fields {
            body.extend(map);
        }
        Event { body }
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.body.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The event's `op`, if it has one.
    pub fn op(&self) -> Option<&str> {
        self.body.get("op").and_then(Value::as_str)
    }

    /// The whole event object.
    pub fn body(&self) -> &Map<String, Value> {
        &self.body
    }
}

/// An event and the users allowed to receive it, produced by a state change.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub event: Event,
    pub users: Vec<UserId>,
}

impl Outgoing {
    /// `event` for `users`.
    pub fn to(users: Vec<UserId>, event: Event) -> Self {
        Outgoing { event, users }
    }
}

/// Delivery of one event to one listener. Listeners are client event queues (or, in tests,
/// a recording actor); they are held as `Recipient<PushEvent>` so either works.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct PushEvent {
    pub user_id: UserId,
    pub event: Arc<Event>,
}
