use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn event(kind: &str, n: i64) -> Arc<Event> {
    Arc::new(Event::new(kind, json!({"op": "update", "n": n})))
}

fn queue(id: &str, user: i64, pruned: i64, events: &[(i64, &Arc<Event>)]) -> SavedQueue {
    let next = events.last().map_or(pruned + 1, |(id, _)| id + 1);
    SavedQueue {
        queue_id: id.to_owned(),
        user_id: UserId(user),
        spec: QueueSpec::default(),
        next_event_id: next,
        newest_pruned_id: pruned,
        events: events.iter().map(|(id, e)| Queued { id: *id, event: Arc::clone(e) }).collect(),
        idle_ms: 1234,
    }
}

/// Reads rows back as the store hands them over: events first, then the queues.
fn restore(rows: &SavedRows) -> (Vec<SavedQueue>, usize) {
    let mut restorer = Restorer::default();
    for (key, event) in rows.events.iter().enumerate() {
        restorer.event(key as i64, event.json().to_owned());
    }
    for row in &rows.queues {
        restorer.queue(StoredQueue { row: row.clone(), saved_secs_ago: 5 });
    }
    let (queues, dropped) = restorer.finish();
    (queues.into_iter().map(|(q, _)| q).collect(), dropped)
}

fn bodies(queue: &SavedQueue) -> Vec<(i64, String)> {
    queue.events.iter().map(|q| (q.id, q.event.json().to_owned())).collect()
}

#[test]
fn shared_events_are_saved_once_and_shared_again() {
    let shared: Vec<Arc<Event>> = (0..100).map(|n| event("realm_user", n)).collect();
    let own = event("update_message_flags", 7);
    // Three queues hold the same hundred events at different positions; one also holds
    // an event of its own, one has acknowledged half.
    let a: Vec<(i64, &Arc<Event>)> = shared.iter().enumerate().map(|(i, e)| (i as i64, e)).collect();
    let mut held: Vec<&Arc<Event>> = shared.iter().collect();
    held.insert(50, &own);
    let b: Vec<(i64, &Arc<Event>)> = held.into_iter().enumerate().map(|(i, e)| (i as i64 + 10, e)).collect();
    let c: Vec<(i64, &Arc<Event>)> = shared.iter().enumerate().skip(50).map(|(i, e)| (i as i64 + 3, e)).collect();
    let queues = vec![queue("a", 1, -1, &a), queue("b", 2, 9, &b), queue("c", 1, 52, &c)];

    let rows = encode(&queues).unwrap();
    assert_eq!(rows.events.len(), 101, "each distinct event once");
    // Runs: a queue holding what the first holds is a few bytes, not a hundred slots.
    let sizes: Vec<usize> = rows.queues.iter().map(|r| r.slots.as_ref().unwrap().len()).collect();
    assert!(sizes.iter().all(|&n| n <= 12), "{sizes:?}");

    let (restored, dropped) = restore(&rows);
    assert_eq!(dropped, 0);
    assert_eq!(restored.len(), 3);
    for (before, after) in queues.iter().zip(&restored) {
        assert_eq!(bodies(after), bodies(before));
        assert_eq!(
            (&after.queue_id, after.user_id, after.next_event_id, after.newest_pruned_id, after.idle_ms),
            (&before.queue_id, before.user_id, before.next_event_id, before.newest_pruned_id, before.idle_ms)
        );
    }
    // One copy of each event in memory: the queues hold the same allocations.
    let distinct: HashSet<*const Event> =
        restored.iter().flat_map(|q| q.events.iter().map(|e| Arc::as_ptr(&e.event))).collect();
    assert_eq!(distinct.len(), 101);
    let first_shared = &restored[0].events[60].event;
    assert!(Arc::ptr_eq(first_shared, &restored[2].events[10].event));
    assert_eq!(Arc::strong_count(first_shared), 3, "held by the three queues and nothing else");
    // Kept as the JSON they were saved as, parsed only when asked.
    assert!(!first_shared.has_body());
    assert_eq!(first_shared.get("n"), Some(&json!(60)));
}

#[test]
fn rows_saved_before_slots_are_shared_by_content() {
    // The old format: every queue's JSON carries its events in full.
    let old = |queue_id: &str, ids: std::ops::Range<i64>| QueueRow {
        queue_id: queue_id.to_owned(),
        user_id: UserId(3),
        header: json!({
            "queue_id": queue_id, "user_id": 3, "spec": QueueSpec::default(),
            "next_event_id": ids.end, "newest_pruned_id": ids.start - 1, "idle_ms": 10,
            "events": ids.map(|i| json!([i, {"type": "realm_user", "op": "update", "n": i % 5}])).collect::<Vec<_>>(),
        })
        .to_string(),
        slots: None,
    };
    let mut restorer = Restorer::default();
    restorer.queue(StoredQueue { row: old("q1", 0..10), saved_secs_ago: 1 });
    restorer.queue(StoredQueue { row: old("q2", 4..8), saved_secs_ago: 1 });
    let (queues, dropped) = restorer.finish();
    assert_eq!((queues.len(), dropped), (2, 0));
    let (q1, q2) = (&queues[0].0, &queues[1].0);
    assert_eq!(q1.events.iter().map(|q| q.id).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    assert_eq!((q1.next_event_id, q1.newest_pruned_id, q1.idle_ms), (10, -1, 10));
    assert_eq!(q1.events[3].event.json(), r#"{"type":"realm_user","op":"update","n":3}"#);
    let distinct: HashSet<*const Event> =
        queues.iter().flat_map(|(q, _)| q.events.iter().map(|e| Arc::as_ptr(&e.event))).collect();
    assert_eq!(distinct.len(), 5, "equal events are one");
    assert!(Arc::ptr_eq(&q1.events[4].event, &q2.events[0].event));
}

#[test]
fn unreadable_rows_are_dropped_alone() {
    let e = event("realm_user", 1);
    let rows = encode(&[queue("good", 1, -1, &[(0, &e)]), queue("bad", 1, -1, &[(0, &e)])]).unwrap();
    let mut restorer = Restorer::default();
    restorer.event(0, e.json().to_owned());
    restorer.event(1, "not json".to_owned());
    restorer.event(2, "{\"type\":\"broken\",}".to_owned());
    restorer.queue(StoredQueue { row: rows.queues[0].clone(), saved_secs_ago: 0 });
    // Slots naming an event that was not saved, slots that do not decode, a header that
    // does not parse.
    let mut missing = rows.queues[1].clone();
    missing.slots = Some(encode_slots(&[(0, 1)], 0));
    restorer.queue(StoredQueue { row: missing, saved_secs_ago: 0 });
    let mut truncated = rows.queues[1].clone();
    truncated.slots = Some(vec![0x80]);
    restorer.queue(StoredQueue { row: truncated, saved_secs_ago: 0 });
    let mut garbled = rows.queues[1].clone();
    garbled.header = "{".into();
    restorer.queue(StoredQueue { row: garbled, saved_secs_ago: 0 });
    // An event whose text is braced but not JSON was not kept either.
    let mut broken = rows.queues[1].clone();
    broken.slots = Some(encode_slots(&[(0, 2)], 0));
    restorer.queue(StoredQueue { row: broken, saved_secs_ago: 0 });
    let (queues, dropped) = restorer.finish();
    assert_eq!(queues.iter().map(|(q, _)| q.queue_id.as_str()).collect::<Vec<_>>(), ["good"]);
    assert_eq!(dropped, 4);
}

#[test]
fn slots_in_runs() {
    assert_eq!(encode_slots(&[], 0), Vec::<u8>::new());
    // One run of a thousand: three bytes or so.
    let run: Vec<(i64, u64)> = (0..1000).map(|i| (i + 5, i as u64 + 7)).collect();
    let bytes = encode_slots(&run, 5);
    assert_eq!(bytes, vec![0, 14, 0xe7, 0x07]);
    assert_eq!(decode_slots(&bytes, 5, 1005).unwrap(), run.iter().map(|&(i, k)| (i, k as i64)).collect::<Vec<_>>());
    // Keys going back and ids with gaps.
    let jumpy = [(3, 10), (4, 11), (9, 2), (10, 0), (11, 1)];
    let bytes = encode_slots(&jumpy, 0);
    assert_eq!(decode_slots(&bytes, 0, 12).unwrap(), jumpy.iter().map(|&(i, k)| (i, k as i64)).collect::<Vec<_>>());
    assert_eq!(decode_slots(&[0xff], 0, 10), None, "a varint cut short");
    // Runs past the queue's next id, however long or far, are refused before expanding.
    assert_eq!(decode_slots(&bytes, 0, 11), None);
    let mut huge = Vec::new();
    for value in [0u64, 0, u64::MAX >> 2] {
        write_varint(&mut huge, value);
    }
    assert_eq!(decode_slots(&huge, 0, 10), None);
    let mut far = Vec::new();
    for value in [i64::MAX as u64, 0, 0] {
        write_varint(&mut far, value);
    }
    assert_eq!(decode_slots(&far, 1, i64::MAX), None, "no overflow");
}

proptest! {
    #[test]
    fn slots_decode_to_what_was_encoded(
        first in -1i64..1000,
        steps in proptest::collection::vec((1i64..4, 0u64..50), 0..200),
    ) {
        let mut id = first;
        let slots: Vec<(i64, u64)> = steps.iter().map(|&(gap, key)| { id += gap; (id, key) }).collect();
        let decoded = decode_slots(&encode_slots(&slots, first + 1), first + 1, id + 1).unwrap();
        prop_assert_eq!(decoded, slots.iter().map(|&(i, k)| (i, k as i64)).collect::<Vec<_>>());
    }
}
