//! [`EventBuffer`]: the events of one queue, with Zulip's ids, pruning and collapsing
//! (zerver/tornado/event_queue.py `EventQueue`), as plain data.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::events::Event;

/// An event in a queue, with the id the queue gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub id: i64,
    pub event: Arc<Event>,
}

/// The events of one queue that its client has not acknowledged yet.
#[derive(Debug, Clone, PartialEq)]
pub struct EventBuffer {
    queue: VecDeque<Queued>,
    /// Collapsible flag events by their full type; each holds the id of the last event
    /// merged into it and the union of their messages.
    virtual_events: BTreeMap<String, Queued>,
    next_event_id: i64,
    newest_pruned_id: i64,
}

impl Default for EventBuffer {
    fn default() -> Self {
        EventBuffer { queue: VecDeque::new(), virtual_events: BTreeMap::new(), next_event_id: 0, newest_pruned_id: -1 }
    }
}

/// The key under which a flags event collapses, if it does: every `update_message_flags`
/// event for specific messages except marking unread (which carries `message_details`).
fn virtual_key(event: &Event) -> Option<String> {
    if event.kind() != "update_message_flags" || event.get("all").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let operation = event.get("operation").or_else(|| event.get("op")).and_then(Value::as_str)?;
    let flag = event.get("flag").and_then(Value::as_str)?;
    (!(operation == "remove" && flag == "read")).then(|| format!("flags/{operation}/{flag}"))
}

impl EventBuffer {
    /// A buffer restored from saved parts (events already in id order).
    pub fn restore(events: Vec<Queued>, next_event_id: i64, newest_pruned_id: i64) -> Self {
        EventBuffer { queue: events.into(), virtual_events: BTreeMap::new(), next_event_id, newest_pruned_id }
    }

    /// The id the next event gets.
    pub fn next_event_id(&self) -> i64 {
        self.next_event_id
    }

    /// The id of the last acknowledged event (-1 before any).
    pub fn newest_pruned_id(&self) -> i64 {
        self.newest_pruned_id
    }

    /// Whether no event is waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.virtual_events.is_empty()
    }

    /// Adds an event with the next id, merging flag events into their virtual event.
    pub fn push(&mut self, event: Arc<Event>) -> i64 {
        let id = self.next_event_id;
        self.next_event_id += 1;
        match virtual_key(&event) {
            None => self.queue.push_back(Queued { id, event }),
            Some(key) => match self.virtual_events.get_mut(&key) {
                None => {
                    self.virtual_events.insert(key, Queued { id, event });
                }
                Some(merged) => {
                    // Copied only the first time (the event is shared with other queues);
                    // later merges append in place.
                    let body = Arc::make_mut(&mut merged.event).body_mut();
                    let extra = event.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                    match body.get_mut("messages") {
                        Some(Value::Array(messages)) => messages.extend(extra),
                        _ => {
                            body.insert("messages".into(), Value::Array(extra));
                        }
                    }
                    if let Some(ts) = event.get("timestamp") {
                        body.insert("timestamp".into(), ts.clone());
                    }
                    merged.id = id;
                }
            },
        }
        id
    }

    /// Folds the virtual events into the queue in id order.
    fn settle(&mut self) {
        if self.virtual_events.is_empty() {
            return;
        }
        let mut all: Vec<Queued> = self.queue.drain(..).collect();
        all.extend(std::mem::take(&mut self.virtual_events).into_values());
        all.sort_by_key(|q| q.id);
        self.queue = all.into();
    }

    /// Every waiting event, in id order.
    pub fn contents(&mut self) -> Vec<Queued> {
        self.settle();
        self.queue.iter().cloned().collect()
    }

    /// Acknowledges every event up to `last_event_id`, with Zulip's errors for an id
    /// already pruned or never in the queue.
    pub fn prune(&mut self, last_event_id: i64) -> ApiResult<()> {
        if last_event_id < self.newest_pruned_id {
            return Err(ApiError::bad_request(format!("An event newer than {last_event_id} has already been pruned!")));
        }
        self.settle();
        while self.queue.front().is_some_and(|q| q.id <= last_event_id) {
            if let Some(q) = self.queue.pop_front() {
                self.newest_pruned_id = q.id;
            }
        }
        if self.newest_pruned_id != last_event_id {
            return Err(ApiError::bad_request(format!("Event {last_event_id} was not in this queue")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flags(op: &str, flag: &str, messages: Value) -> Arc<Event> {
        Arc::new(Event::new(
            "update_message_flags",
            json!({"op": op, "operation": op, "flag": flag, "messages": messages, "all": false}),
        ))
    }

    fn ids(buf: &mut EventBuffer) -> Vec<i64> {
        buf.contents().iter().map(|q| q.id).collect()
    }

    #[test]
    fn ids_are_consecutive_and_pruning_acknowledges() {
        let mut buf = EventBuffer::default();
        for _ in 0..3 {
            buf.push(Arc::new(Event::new("heartbeat", json!({}))));
        }
        assert_eq!(ids(&mut buf), vec![0, 1, 2]);
        buf.prune(-1).unwrap();
        buf.prune(1).unwrap();
        assert_eq!(ids(&mut buf), vec![2]);
        assert_eq!(buf.prune(0).unwrap_err().msg, "An event newer than 0 has already been pruned!");
        assert_eq!(buf.prune(5).unwrap_err().msg, "Event 5 was not in this queue");
        // The failed prune still acknowledged what it could (as Zulip does).
        assert!(buf.is_empty());
        assert_eq!(buf.newest_pruned_id(), 2);
    }

    #[test]
    fn a_fresh_queue_accepts_minus_one_only() {
        let mut buf = EventBuffer::default();
        buf.prune(-1).unwrap();
        assert_eq!(buf.prune(0).unwrap_err().msg, "Event 0 was not in this queue");
    }

    #[test]
    fn flag_events_collapse_into_the_latest_id() {
        let mut buf = EventBuffer::default();
        buf.push(flags("add", "read", json!([1, 2])));
        buf.push(Arc::new(Event::new("realm_user", json!({"op": "update"}))));
        buf.push(flags("add", "read", json!([3])));
        buf.push(flags("add", "starred", json!([9])));
        buf.push(flags("remove", "read", json!([4])));
        buf.push(flags("remove", "read", json!([5])));
        let contents = buf.contents();
        let shape: Vec<(i64, Value)> =
            contents.iter().map(|q| (q.id, q.event.get("messages").cloned().unwrap_or(Value::Null))).collect();
        assert_eq!(
            shape,
            vec![(1, Value::Null), (2, json!([1, 2, 3])), (3, json!([9])), (4, json!([4])), (5, json!([5])),]
        );
        buf.prune(2).unwrap();
        assert_eq!(ids(&mut buf), vec![3, 4, 5]);
    }
}
