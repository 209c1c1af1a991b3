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

/// A queued event and what it counts for in the queue's byte total.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    queued: Queued,
    bytes: usize,
}

/// What one waiting event costs besides its JSON: its `"id"` and its place in the queue.
const SLOT_OVERHEAD: usize = 32;

/// The bytes an event counts for: its JSON as delivered, and the slot.
pub fn event_cost(event: &Event) -> usize {
    event.json().len() + SLOT_OVERHEAD
}

/// The events of one queue that its client has not acknowledged yet.
#[derive(Debug, Clone, PartialEq)]
pub struct EventBuffer {
    queue: VecDeque<Slot>,
    /// Collapsible flag events by their full type; each holds the id of the last event
    /// merged into it and the union of their messages.
    virtual_events: BTreeMap<String, Slot>,
    next_event_id: i64,
    newest_pruned_id: i64,
    /// What the waiting events count for: each one's JSON as delivered (a merged flag event
    /// counts every event merged into it).
    bytes: usize,
}

impl Default for EventBuffer {
    fn default() -> Self {
        EventBuffer {
            queue: VecDeque::new(),
            virtual_events: BTreeMap::new(),
            next_event_id: 0,
            newest_pruned_id: -1,
            bytes: 0,
        }
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
        let queue: VecDeque<Slot> =
            events.into_iter().map(|queued| Slot { bytes: event_cost(&queued.event), queued }).collect();
        let bytes = queue.iter().map(|slot| slot.bytes).sum();
        EventBuffer { queue, virtual_events: BTreeMap::new(), next_event_id, newest_pruned_id, bytes }
    }

    /// How many events are waiting.
    pub fn len(&self) -> usize {
        self.queue.len() + self.virtual_events.len()
    }

    /// What the waiting events count for, in bytes (see [`event_cost`]).
    pub fn bytes(&self) -> usize {
        self.bytes
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
        let bytes = event_cost(&event);
        let id = self.next_event_id;
        self.next_event_id += 1;
        self.bytes += bytes;
        match virtual_key(&event) {
            None => self.queue.push_back(Slot { queued: Queued { id, event }, bytes }),
            Some(key) => match self.virtual_events.get_mut(&key) {
                None => {
                    self.virtual_events.insert(key, Slot { queued: Queued { id, event }, bytes });
                }
                Some(Slot { queued: merged, bytes: merged_bytes }) => {
                    *merged_bytes += bytes;
                    // Copied only the first time (the event is shared with other queues);
                    // later merges append in place.
                    let extra = event.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                    let timestamp = event.get("timestamp").cloned();
                    Arc::make_mut(&mut merged.event).edit(|body| {
                        match body.get_mut("messages") {
                            Some(Value::Array(messages)) => messages.extend(extra),
                            _ => {
                                body.insert("messages".into(), Value::Array(extra));
                            }
                        }
                        if let Some(ts) = timestamp {
                            body.insert("timestamp".into(), ts);
                        }
                    });
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
        let mut all: Vec<Slot> = self.queue.drain(..).collect();
        all.extend(std::mem::take(&mut self.virtual_events).into_values());
        all.sort_by_key(|slot| slot.queued.id);
        self.queue = all.into();
    }

    /// Every waiting event, in id order.
    pub fn contents(&mut self) -> Vec<Queued> {
        self.settle();
        self.queue.iter().map(|slot| slot.queued.clone()).collect()
    }

    /// The oldest waiting events, in id order: at most `max_events`, and no more than
    /// `max_bytes` together unless the first alone is larger (it is still given, so a
    /// client always gets on). A client acknowledges what it got and polls again for the
    /// rest, as Zulip's clients do (they continue from the highest id they received).
    pub fn first(&mut self, max_events: usize, max_bytes: usize) -> Vec<Queued> {
        self.settle();
        let mut total = 0;
        let mut out = Vec::new();
        for slot in self.queue.iter().take(max_events.max(1)) {
            total += slot.bytes;
            if total > max_bytes && !out.is_empty() {
                break;
            }
            out.push(slot.queued.clone());
        }
        out
    }

    /// Acknowledges every event up to `last_event_id`, with Zulip's errors for an id
    /// already pruned or never in the queue.
    pub fn prune(&mut self, last_event_id: i64) -> ApiResult<()> {
        if last_event_id < self.newest_pruned_id {
            return Err(ApiError::bad_request(format!("An event newer than {last_event_id} has already been pruned!")));
        }
        self.settle();
        while self.queue.front().is_some_and(|slot| slot.queued.id <= last_event_id) {
            if let Some(slot) = self.queue.pop_front() {
                self.newest_pruned_id = slot.queued.id;
                self.bytes = self.bytes.saturating_sub(slot.bytes);
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
    fn a_waiting_event_costs_a_queue_24_bytes() {
        // Its id, the shared event and what it counts for (docs/operations.md's figure for an
        // abandoned queue).
        assert_eq!(std::mem::size_of::<Slot>(), 24);
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

    #[test]
    fn bytes_count_what_waits_merges_included() {
        let mut buf = EventBuffer::default();
        let update = Arc::new(Event::new("realm_user", json!({"op": "update"})));
        let (a, b) = (flags("add", "read", json!([1])), flags("add", "read", json!([2])));
        let costs = [event_cost(&update), event_cost(&a), event_cost(&b)];
        buf.push(Arc::clone(&update));
        buf.push(a);
        buf.push(b);
        assert_eq!((buf.len(), buf.bytes()), (2, costs.iter().sum()));
        buf.prune(0).unwrap();
        assert_eq!((buf.len(), buf.bytes()), (1, costs[1] + costs[2]));
        buf.prune(2).unwrap();
        assert_eq!((buf.len(), buf.bytes()), (0, 0));
        let restored = EventBuffer::restore(vec![Queued { id: 3, event: update }], 4, 2);
        assert_eq!((restored.len(), restored.bytes()), (1, costs[0]));
    }

    #[test]
    fn first_gives_a_bounded_prefix() {
        let mut buf = EventBuffer::default();
        for i in 0..4 {
            buf.push(Arc::new(Event::new("realm_user", json!({"op": "update", "i": i}))));
        }
        let one = buf.bytes() / 4;
        let prefix = |buf: &mut EventBuffer, events, bytes| -> Vec<i64> {
            buf.first(events, bytes).iter().map(|q| q.id).collect()
        };
        assert_eq!(prefix(&mut buf, 3, usize::MAX), vec![0, 1, 2]);
        assert_eq!(prefix(&mut buf, 10, 2 * one), vec![0, 1]);
        assert_eq!(prefix(&mut buf, 10, 2 * one - 1), vec![0]);
        assert_eq!(prefix(&mut buf, 10, 1), vec![0], "one event always goes out");
        assert_eq!(buf.len(), 4, "nothing is taken out");
    }
}
