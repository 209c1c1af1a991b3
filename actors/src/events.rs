//! Events: what a committed change tells the clients that can see it.
//!
//! A mutation of the realm state produces [`Outgoing`] events, each with the users who
//! may receive it. After the change is committed the realm actor wraps each event in an
//! [`Arc`] once and hands a [`PushEvent`] to every listener (a client queue) of those
//! users; queues assign their own consecutive `id`s. An event is serialized at most once,
//! however many queues deliver it, and each form a queue reshapes it into (rendered or raw
//! message content, a deletion split per message, ...) is made once and shared by every
//! queue registered with the same options.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use actix::prelude::*;
use serde_json::{Map, Value};

use crate::ids::UserId;

/// One event as Zulip sends it, without the per-queue `id`.
///
/// It holds its fields, its JSON, or both: an event made here starts from its fields and
/// writes its JSON on first delivery; an event restored from a saved queue starts from the
/// JSON it was saved as and parses its fields only if something asks for them (a restored
/// queue only ever delivers it), so a restart costs the JSON and no more.
#[derive(Debug)]
pub struct Event {
    body: OnceLock<Map<String, Value>>,
    /// The body as JSON, made on first use and shared by every queue holding the event.
    json: OnceLock<Box<str>>,
    /// The forms queues reshaped this event into, by the key of the options that decided
    /// the shape; each made by the first queue that needs it. Never holds the event itself
    /// (that would be a cycle): only events built from it.
    forms: Mutex<Vec<(u8, Forms)>>,
}

/// An event as one kind of queue stores it: usually one event, several when it is split.
pub type Forms = Arc<[Arc<Event>]>;

impl Clone for Event {
    /// A copy of the body and its JSON (whichever are made); the reshaped forms are not
    /// carried over.
    fn clone(&self) -> Self {
        Event { body: self.body.clone(), json: self.json.clone(), forms: Mutex::default() }
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.body() == other.body()
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
        Event::of_body(body)
    }

    fn of_body(body: Map<String, Value>) -> Self {
        Event { body: OnceLock::from(body), json: OnceLock::new(), forms: Mutex::default() }
    }

    /// An event from a whole object; `None` unless it has a string `type`.
    pub fn from_body(body: Map<String, Value>) -> Option<Self> {
        body.get("type").and_then(Value::as_str)?;
        Some(Event::of_body(body))
    }

    /// An event from the JSON it was saved as ([`Event::json`] of an event), kept as it is
    /// and parsed only when its fields are asked for; `None` unless the text is braced as
    /// an object (what [`Event::write_with_id`] needs). The check reads the ends of the text
    /// and does not parse it: the text is what this server wrote.
    pub fn from_json(json: Box<str>) -> Option<Self> {
        let object = json.starts_with('{') && json.ends_with('}');
        object.then(|| Event { body: OnceLock::new(), json: OnceLock::from(json), forms: Mutex::default() })
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.body().get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The event's `op`, if it has one.
    pub fn op(&self) -> Option<&str> {
        self.body().get("op").and_then(Value::as_str)
    }

    /// The whole event object (parsed from its JSON on first use if it was restored; a
    /// JSON text that is not an object reads as an empty one).
    pub fn body(&self) -> &Map<String, Value> {
        self.body.get_or_init(|| parse(self.json.get().map(|json| &**json)))
    }

    /// Changes the event's fields with `f`; its cached JSON and forms are dropped.
    pub fn edit(&mut self, f: impl FnOnce(&mut Map<String, Value>)) {
        let mut body = match self.body.take() {
            Some(body) => body,
            None => parse(self.json.get().map(|json| &**json)),
        };
        f(&mut body);
        self.body = OnceLock::from(body);
        self.json = OnceLock::new();
        self.forms = Mutex::default();
    }

    /// A field of the event.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.body().get(key)
    }

    /// The event as a JSON object, serialized once.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| Value::Object(self.body().clone()).to_string().into_boxed_str())
    }

    /// Whether the event's fields have been parsed or made (a restored event's are not
    /// until asked for).
    pub fn has_body(&self) -> bool {
        self.body.get().is_some()
    }

    /// The form of this event for queues whose options give `key`, built by `build` on first
    /// use and shared afterwards. `build` must return new events, never this one.
    pub fn reshaped(&self, key: u8, build: impl FnOnce(&Event) -> Vec<Event>) -> Forms {
        let mut forms = self.forms.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, made)) = forms.iter().find(|(k, _)| *k == key) {
            return Arc::clone(made);
        }
        let made: Forms = build(self).into_iter().map(Arc::new).collect();
        forms.push((key, Arc::clone(&made)));
        made
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

/// The fields of an event's JSON; none if it is missing or not an object.
fn parse(json: Option<&str>) -> Map<String, Value> {
    json.and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default()
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
