//! Event queues saved across a restart, or handed to the next owner of their organization,
//! in proportion to what is distinct.
//!
//! In memory the queues of an organization share their events: a message to a channel is
//! one [`Event`] held by every queue that takes it. A save keeps it that way: each distinct
//! event (by identity, not content) is written once with a key, and each queue is written
//! as its registration, its position and its slots, which say which key each of its
//! waiting ids holds, as runs of consecutive ids and keys (a queue holding what every
//! other holds is a few bytes however long its backlog). A restore reads each event once,
//! keeps its JSON as it is (parsed only if something asks for its fields), and gives every
//! queue the same shared event back.
//!
//! What a queue holds alone (its own copy of a message with its `local_message_id`, its
//! merged flag events) is a distinct event like any other, held by one queue.
//!
//! Rows saved before slots existed carry a full copy of every event in each queue's JSON;
//! they are read one queue at a time, and the events they hold are shared again by content,
//! so that an upgrade from that format costs no more memory than the queues did.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::buffer::Queued;
use super::spec::QueueSpec;
use crate::events::Event;
use crate::ids::UserId;

/// A queue as saved: its registration, its position and its waiting events (shared with
/// the other queues that hold them).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedQueue {
    pub queue_id: String,
    pub user_id: UserId,
    pub spec: QueueSpec,
    pub next_event_id: i64,
    pub newest_pruned_id: i64,
    /// The unacknowledged events, in id order.
    pub events: Vec<Queued>,
    /// Milliseconds since the last poll started, when saved.
    pub idle_ms: u64,
}

/// An organization's queues as rows to write: every distinct event once, at its key (its
/// index here), and each queue's row.
#[derive(Debug, Default)]
pub struct SavedRows {
    pub events: Vec<Arc<Event>>,
    pub queues: Vec<QueueRow>,
}

/// One queue's row.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub queue_id: String,
    pub user_id: UserId,
    /// Its registration and position, as JSON ([`Header`]).
    pub header: String,
    /// Which event key each waiting id holds (see [`encode_slots`]); `None` in rows saved
    /// before slots, whose header carries the events themselves.
    pub slots: Option<Vec<u8>>,
}

/// A queue's row as read back, with the seconds since it was saved.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredQueue {
    pub row: QueueRow,
    pub saved_secs_ago: u64,
}

/// A queue's registration and position as saved in its row. Rows saved before slots carry
/// `queue_id` and `user_id` here too (ignored: the row's columns say the same) and every
/// event in `events`.
#[derive(Serialize, Deserialize)]
struct Header<'a> {
    spec: QueueSpec,
    next_event_id: i64,
    newest_pruned_id: i64,
    #[serde(default)]
    idle_ms: u64,
    #[serde(default, borrow, skip_serializing_if = "Vec::is_empty")]
    events: Vec<(i64, &'a RawValue)>,
}

/// The rows of a realm's saved queues: each distinct event once (keys in the order the
/// queues first hold them, so that queues holding the same events have long runs).
pub fn encode(queues: &[SavedQueue]) -> Result<SavedRows, serde_json::Error> {
    let mut keys: HashMap<*const Event, u64> = HashMap::new();
    let mut rows = SavedRows::default();
    for queue in queues {
        let slots: Vec<(i64, u64)> = queue
            .events
            .iter()
            .map(|queued| {
                let key = *keys.entry(Arc::as_ptr(&queued.event)).or_insert_with(|| {
                    rows.events.push(Arc::clone(&queued.event));
                    rows.events.len() as u64 - 1
                });
                (queued.id, key)
            })
            .collect();
        let header = Header {
            spec: queue.spec.clone(),
            next_event_id: queue.next_event_id,
            newest_pruned_id: queue.newest_pruned_id,
            idle_ms: queue.idle_ms,
            events: Vec::new(),
        };
        rows.queues.push(QueueRow {
            queue_id: queue.queue_id.clone(),
            user_id: queue.user_id,
            header: serde_json::to_string(&header)?,
            slots: Some(encode_slots(&slots, queue.newest_pruned_id + 1)),
        });
    }
    Ok(rows)
}

/// Rebuilds a realm's saved queues from their rows: the events first ([`Restorer::event`]),
/// then the queues ([`Restorer::queue`]), one at a time.
#[derive(Default)]
pub struct Restorer {
    /// The events of the save, by key.
    events: HashMap<i64, Arc<Event>>,
    /// The events of rows saved before slots, by the hash of their JSON (compared with the
    /// events' own text, so that the text is held once).
    by_hash: HashMap<u64, Vec<Arc<Event>>>,
    queues: Vec<(SavedQueue, u64)>,
    /// Rows that could not be read (their clients register again).
    dropped: usize,
}

impl Restorer {
    /// A saved event: kept as the JSON it was saved as, once checked to be a JSON object
    /// (scanned, not built: a damaged text would break every reply it went into).
    pub fn event(&mut self, key: i64, json: String) {
        match checked_event(json.into_boxed_str()) {
            Some(event) => {
                self.events.insert(key, Arc::new(event));
            }
            None => tracing::warn!(event.key = key, "a saved event is not a JSON object; its queues are dropped"),
        }
    }

    /// An event of a row saved before slots, shared with every equal one already read.
    fn shared_by_content(&mut self, json: &str) -> Option<Arc<Event>> {
        let hash = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            json.hash(&mut hasher);
            hasher.finish()
        };
        let same = self.by_hash.entry(hash).or_default();
        if let Some(event) = same.iter().find(|e| e.json() == json) {
            return Some(Arc::clone(event));
        }
        let event = Arc::new(checked_event(json.into())?);
        same.push(Arc::clone(&event));
        Some(event)
    }

    /// A saved queue, with the events its slots name (or, in a row saved before slots, the
    /// events it carries, shared with every equal event already read). A row that cannot
    /// be read is dropped with a warning: its client registers again, as after any lost
    /// queue.
    pub fn queue(&mut self, stored: StoredQueue) {
        let queue_id = stored.row.queue_id.clone();
        match self.read(stored.row) {
            Ok(queue) => self.queues.push((queue, stored.saved_secs_ago)),
            Err(why) => {
                self.dropped += 1;
                tracing::warn!(queue.id = %queue_id, why, "dropping a saved event queue that cannot be read");
            }
        }
    }

    fn read(&mut self, row: QueueRow) -> Result<SavedQueue, String> {
        let header: Header<'_> = serde_json::from_str(&row.header).map_err(|e| e.to_string())?;
        let events = match &row.slots {
            Some(slots) => {
                let slots = decode_slots(slots, header.newest_pruned_id + 1, header.next_event_id)
                    .ok_or("its slots do not decode")?;
                let mut events = Vec::with_capacity(slots.len());
                for (id, key) in slots {
                    let event = self.events.get(&key).ok_or_else(|| format!("its event {key} was not saved"))?;
                    events.push(Queued { id, event: Arc::clone(event) });
                }
                events
            }
            None => header
                .events
                .iter()
                .map(|(id, raw)| {
                    let event = self.shared_by_content(raw.get()).ok_or("an event is not an object")?;
                    Ok(Queued { id: *id, event })
                })
                .collect::<Result<_, String>>()?,
        };
        let ordered = events.windows(2).all(|w| w[0].id < w[1].id)
            && events.first().is_none_or(|q| q.id > header.newest_pruned_id)
            && events.last().is_none_or(|q| q.id < header.next_event_id);
        if !ordered {
            return Err("its event ids are out of order".into());
        }
        Ok(SavedQueue {
            queue_id: row.queue_id,
            user_id: row.user_id,
            spec: header.spec,
            next_event_id: header.next_event_id,
            newest_pruned_id: header.newest_pruned_id,
            events,
            idle_ms: header.idle_ms,
        })
    }

    /// The queues read, each with the seconds since it was saved, and how many rows were
    /// dropped.
    pub fn finish(self) -> (Vec<(SavedQueue, u64)>, usize) {
        (self.queues, self.dropped)
    }
}

/// A saved event's text as an event, if it is a JSON object.
fn checked_event(json: Box<str>) -> Option<Event> {
    serde_json::from_str::<serde::de::IgnoredAny>(&json).ok()?;
    Event::from_json(json)
}

/// `(id, key)` pairs in increasing id order as runs of consecutive ids and keys, each run
/// three varints: the gap since the id the previous run would have continued with (from
/// `first_id`), the key's signed difference from the key it would have continued with
/// (from 0), and the run's length less one.
pub fn encode_slots(slots: &[(i64, u64)], first_id: i64) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut next_id, mut next_key) = (first_id, 0i64);
    let mut i = 0;
    while i < slots.len() {
        let (id, key) = (slots[i].0, slots[i].1 as i64);
        let mut len = 1;
        while i + len < slots.len() && slots[i + len] == (id + len as i64, (key + len as i64) as u64) {
            len += 1;
        }
        write_varint(&mut out, (id - next_id) as u64);
        write_varint(&mut out, zigzag(key - next_key));
        write_varint(&mut out, len as u64 - 1);
        (next_id, next_key) = (id + len as i64, key + len as i64);
        i += len;
    }
    out
}

/// The pairs of [`encode_slots`], every id below `end_id` (the queue's next id); `None` if
/// the bytes are not such runs. The bound is checked before a run is expanded, so a
/// damaged row can never ask for more than the queue's own range of ids.
pub fn decode_slots(mut bytes: &[u8], first_id: i64, end_id: i64) -> Option<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    let (mut next_id, mut next_key) = (first_id, 0i64);
    while !bytes.is_empty() {
        let gap = i64::try_from(read_varint(&mut bytes)?).ok()?;
        let key_shift = unzigzag(read_varint(&mut bytes)?);
        let len = i64::try_from(read_varint(&mut bytes)?).ok()?.checked_add(1)?;
        let (id, key) = (next_id.checked_add(gap)?, next_key.checked_add(key_shift)?);
        let (end, key_end) = (id.checked_add(len)?, key.checked_add(len)?);
        if end > end_id {
            return None;
        }
        out.extend((0..len).map(|k| (id + k, key + k)));
        (next_id, next_key) = (end, key_end);
    }
    Some(out)
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn read_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
#[path = "saved_tests.rs"]
mod tests;
