//! Events: what a committed change tells the clients that can see it.
//!
//! A mutation of the realm state produces [`Outgoing`] events, each with the users who
//! may receive it. After the change is committed the realm actor wraps each event in an
//! [`Arc`] once and hands a [`PushEvent`] to every listener (a client queue) of those
//! users; queues assign their own consecutive `id`s. An event is serialized at most once,
//! however many queues deliver it.

use std::sync::{Arc, OnceLock};

use actix::prelude::*;
use serde_json::{Map, Value};

use crate::ids::UserId;

/// One event as Zulip sends it, without the per-queue `id`.
#[derive(Debug, Clone)]
pub struct Event {
    body: Map<String, Value>,
    /// The body as JSON, made on first use and shared by every queue holding the event.
    json: OnceLock<Box<str>>,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.body == other.body
    }
}

impl Event {
    /// An event of type `kind` with the given fields (an object; other values add nothing).
    pub fn new(kind: &str, fields: Value) -> Self {
        let mut body = Map::new();
        body.insert("type".to_owned(), Value::from(kind));
        if let Value::Object(map) = fields {
            body.extend(map);
        }
        Event { body, json: OnceLock::new() }
    }

    /// An event from a whole object (as saved); `None` unless it has a string `type`.
    pub fn from_body(body: Map<String, Value>) -> Option<Self> {
        body.get("type").and_then(Value::as_str)?;
        Some(Event { body, json: OnceLock::new() })
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

    /// The event object for changing; its cached JSON is dropped.
    pub fn body_mut(&mut self) -> &mut Map<String, Value> {
        self.json = OnceLock::new();
        &mut self.body
    }

    /// A field of the event.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.body.get(key)
    }

    /// The event as a JSON object, serialized once.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| Value::Object(self.body.clone()).to_string().into_boxed_str())
    }

    /// Writes the event as delivered by a queue: its fields followed by `"id": id`.
    pub fn write_with_id(&self, id: i64, out: &mut String) {
        let json = self.json();
        // `json` is an object: `{...}`, with at least the `type` field.
        out.push_str(&json[..json.len() - 1]);
        out.push_str(",\"id\":");
        out.push_str(&id.to_string());
        out.push('}');
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_is_written_with_its_queue_id_last() {
        let event = Event::new("realm_user", json!({"op": "update", "person": {"user_id": 5}}));
        let mut out = String::new();
        event.write_with_id(7, &mut out);
        assert_eq!(out, r#"{"type":"realm_user","op":"update","person":{"user_id":5},"id":7}"#);
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["id"], json!(7));
    }
}
