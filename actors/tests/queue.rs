//! The queue actor on its own, driven by messages, with paused time: events delivered to
//! a waiting poll, heartbeats, expiry, deletion and saving. A recording mailbox stands in
//! for the realm actor that is told when a queue goes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::prelude::*;
use agora_actors::config::QueueConfig;
use agora_actors::events::{Event, PushEvent};
use agora_actors::ids::UserId;
use agora_actors::queue::actor::{CloseQueue, QueueGone, SaveQueue};
use agora_actors::queue::{
    event_cost, GoneReason, Poll, PollOutcome, PollReply, QueueActor, QueueEntry, QueueIndex, QueueSpec,
};
use serde_json::{json, Value};

/// Records which queues told the realm they have gone, and why.
#[derive(Default)]
struct RealmStandIn {
    gone: Arc<Mutex<Vec<String>>>,
    reasons: Arc<Mutex<Vec<GoneReason>>>,
}

impl Actor for RealmStandIn {
    type Context = Context<Self>;
}

impl Handler<QueueGone> for RealmStandIn {
    type Result = ();

    fn handle(&mut self, msg: QueueGone, _: &mut Self::Context) {
        self.gone.lock().unwrap().push(msg.queue_id.to_string());
        self.reasons.lock().unwrap().push(msg.reason);
    }
}

struct Harness {
    queue: Addr<QueueActor>,
    index: Arc<QueueIndex>,
    gone: Arc<Mutex<Vec<String>>>,
    reasons: Arc<Mutex<Vec<GoneReason>>>,
}

fn start(spec: QueueSpec) -> Harness {
    start_with(spec, QueueConfig::default())
}

fn start_with(spec: QueueSpec, config: QueueConfig) -> Harness {
    start_queue("q1", spec, config, Arc::new(QueueIndex::default()))
}

/// A queue `id` in `index` (queues of one realm share theirs).
fn start_queue(id: &str, spec: QueueSpec, config: QueueConfig, index: Arc<QueueIndex>) -> Harness {
    let stand_in = RealmStandIn::default();
    let (gone, reasons) = (Arc::clone(&stand_in.gone), Arc::clone(&stand_in.reasons));
    let realm = stand_in.start().recipient();
    let actor = QueueActor::new(id, UserId(7), spec, config, Arc::clone(&index), Some(realm));
    let shared = Arc::clone(actor.shared());
    let queue = actor.start();
    index.insert(id, QueueEntry { user_id: UserId(7), addr: queue.clone(), queue: shared });
    Harness { queue, index, gone, reasons }
}

fn spec() -> QueueSpec {
    QueueSpec::new(Duration::from_secs(600))
}

fn push(h: &Harness, kind: &str, fields: Value) {
    h.queue.do_send(PushEvent { user_id: UserId(7), event: Arc::new(Event::new(kind, fields)) });
}

async fn poll(h: &Harness, last_event_id: i64, dont_block: bool) -> PollOutcome {
    h.queue.send(Poll { last_event_id, dont_block, new_queue: false }).await.unwrap().unwrap()
}

fn bodies(reply: &PollReply) -> Vec<Value> {
    reply
        .events
        .iter()
        .map(|q| {
            let mut out = String::new();
            q.event.write_with_id(q.id, &mut out);
            serde_json::from_str(&out).unwrap()
        })
        .collect()
}

fn ready(outcome: PollOutcome) -> PollReply {
    match outcome {
        PollOutcome::Ready(reply) => reply,
        PollOutcome::Waiting(_) => panic!("expected an immediate answer"),
    }
}

#[actix_rt::test]
async fn a_waiting_poll_gets_the_next_event() {
    let h = start(spec());
    let PollOutcome::Waiting(waiting) = poll(&h, -1, false).await else { panic!("should wait") };
    push(&h, "realm_user", json!({"op": "update", "person": {"user_id": 3, "full_name": "X"}}));
    let reply = waiting.reply().await.unwrap();
    assert_eq!(reply.queue_id.as_deref(), Some("q1"));
    assert_eq!(
        bodies(&reply),
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": 3, "full_name": "X"}, "id": 0})]
    );
}

#[actix_rt::test]
async fn events_the_queue_did_not_ask_for_are_dropped() {
    let mut s = spec();
    s.event_types = Some(["user_group".to_owned()].into());
    let h = start(s);
    push(&h, "realm_user", json!({"op": "add"}));
    push(&h, "user_group", json!({"op": "add_members", "group_id": 1, "user_ids": [2]}));
    let reply = ready(poll(&h, -1, true).await);
    let got = bodies(&reply);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0]["type"].clone(), got[0]["id"].clone()), (json!("user_group"), json!(0)));
}

#[actix_rt::test]
async fn flag_events_collapse_while_queued() {
    let h = start(spec());
    for messages in [json!([1]), json!([2, 3])] {
        push(
            &h,
            "update_message_flags",
            json!({"op": "add", "operation": "add", "flag": "read", "messages": messages, "all": false}),
        );
    }
    let reply = ready(poll(&h, -1, true).await);
    let mut written = String::new();
    reply.events[0].event.write_with_id(reply.events[0].id, &mut written);
    assert_eq!(reply.events.len(), 1);
    assert_eq!(
        written,
        r#"{"type":"update_message_flags","op":"add","operation":"add","flag":"read","messages":[1,2,3],"all":false,"id":1}"#
    );
}

#[actix_rt::test]
async fn heartbeat_after_45_to_55_seconds() {
    tokio::time::pause();
    let h = start(spec());
    let PollOutcome::Waiting(waiting) = poll(&h, -1, false).await else { panic!("should wait") };
    // The heartbeat's timer runs in the waiting poll's future, as the HTTP worker awaits it.
    let reply = actix_rt::spawn(waiting.reply());
    tokio::time::sleep(Duration::from_secs(44)).await;
    assert!(!reply.is_finished(), "no heartbeat before 45 s");
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(reply.is_finished(), "a heartbeat by 55 s");
    let reply = reply.await.unwrap().unwrap();
    assert_eq!(bodies(&reply), vec![json!({"type": "heartbeat", "id": 0})]);
}

#[actix_rt::test]
async fn a_replaced_poll_is_answered_once_and_its_heartbeat_goes_nowhere() {
    tokio::time::pause();
    let h = start(spec());
    let PollOutcome::Waiting(first) = poll(&h, -1, false).await else { panic!("should wait") };
    let first = actix_rt::spawn(first.reply());
    tokio::time::sleep(Duration::from_secs(10)).await;
    let PollOutcome::Waiting(second) = poll(&h, -1, false).await else { panic!("should wait") };
    assert!(first.await.unwrap().unwrap().events.is_empty(), "replaced: answered with nothing");
    // The second poll's heartbeat comes 45-55 s after it began, not after the first.
    let second = actix_rt::spawn(second.reply());
    tokio::time::sleep(Duration::from_secs(44)).await;
    assert!(!second.is_finished());
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(bodies(&second.await.unwrap().unwrap()), vec![json!({"type": "heartbeat", "id": 0})]);
}

#[actix_rt::test]
async fn an_idle_queue_expires_after_ten_minutes_checked_every_minute() {
    tokio::time::pause();
    let h = start(spec());
    ready(poll(&h, -1, true).await);
    tokio::time::sleep(Duration::from_secs(590)).await;
    assert!(h.index.get("q1").is_some(), "still alive at 590 s");
    tokio::time::sleep(Duration::from_secs(75)).await;
    assert!(h.index.get("q1").is_none(), "gone by 665 s");
    assert_eq!(*h.gone.lock().unwrap(), vec!["q1".to_owned()]);
    assert!(h.queue.send(Poll { last_event_id: -1, dont_block: true, new_queue: false }).await.is_err());
}

#[actix_rt::test]
async fn a_waiting_poll_keeps_the_queue_alive() {
    tokio::time::pause();
    let mut s = spec();
    s.timeout_ms = 10_000;
    let config = QueueConfig { gc_interval: Duration::from_secs(1), ..QueueConfig::default() };
    let h = start_with(s, config);
    let PollOutcome::Waiting(mut waiting) = poll(&h, -1, false).await else { panic!("should wait") };
    // Checked every second, 30 s past the 10 s timeout: the connected poll keeps it.
    tokio::time::sleep(Duration::from_secs(40)).await;
    assert!(waiting.try_recv().is_err(), "still waiting for the heartbeat");
    assert!(h.index.get("q1").is_some());
    // Once the heartbeat has answered and no poll follows, the timeout applies.
    let reply = waiting.reply().await.unwrap();
    assert_eq!(bodies(&reply)[0]["type"], json!("heartbeat"));
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(h.index.get("q1").is_none());
}

#[actix_rt::test]
async fn closing_answers_the_poll_and_removes_the_queue() {
    let h = start(spec());
    let PollOutcome::Waiting(waiting) = poll(&h, -1, false).await else { panic!("should wait") };
    h.queue.send(CloseQueue).await.unwrap();
    let reply = waiting.reply().await.unwrap();
    assert!(reply.events.is_empty());
    assert!(h.index.get("q1").is_none());
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(*h.gone.lock().unwrap(), vec!["q1".to_owned()]);
}

#[actix_rt::test]
async fn saving_hands_back_what_a_restart_needs() {
    let h = start(spec());
    push(&h, "realm_user", json!({"op": "add"}));
    push(&h, "realm_user", json!({"op": "update"}));
    ready(poll(&h, 0, true).await);
    let PollOutcome::Waiting(waiting) = poll(&h, 1, false).await else { panic!("should wait") };
    let saved = h.queue.send(SaveQueue).await.unwrap().unwrap();
    assert!(waiting.reply().await.is_err(), "the waiting poll is released unanswered");
    assert_eq!((saved.next_event_id, saved.newest_pruned_id, saved.events.len()), (2, 1, 0));
    assert_eq!(saved.queue_id, "q1");

    // Restored, it numbers on and keeps its registration.
    let index = Arc::new(QueueIndex::default());
    let restored = QueueActor::restore(saved, QueueConfig::default(), Arc::clone(&index), None).start();
    restored.do_send(PushEvent { user_id: UserId(7), event: Arc::new(Event::new("heartbeat", json!({}))) });
    let PollOutcome::Ready(reply) =
        restored.send(Poll { last_event_id: 1, dont_block: true, new_queue: false }).await.unwrap().unwrap()
    else {
        panic!("ready")
    };
    assert_eq!(reply.events.iter().map(|q| q.id).collect::<Vec<_>>(), vec![2]);
}

// --- Limits: what a queue holds and what one reply carries. ---

/// Limits small enough to reach in a test.
fn limits(max_backlog_events: usize, max_backlog_bytes: usize, max_reply_events: usize) -> QueueConfig {
    QueueConfig { max_backlog_events, max_backlog_bytes, max_reply_events, ..QueueConfig::default() }
}

fn ids(reply: &PollReply) -> Vec<i64> {
    reply.events.iter().map(|q| q.id).collect()
}

/// The events of `n` realm_user updates, as a queue delivers them.
fn updates(n: usize) -> Vec<Arc<Event>> {
    (0..n).map(|i| Arc::new(Event::new("realm_user", json!({"op": "update", "person": {"user_id": i}})))).collect()
}

#[actix_rt::test]
async fn a_queue_past_its_event_backlog_is_removed() {
    let h = start_with(spec(), limits(3, usize::MAX, 1000));
    for event in updates(3) {
        h.queue.do_send(PushEvent { user_id: UserId(7), event });
    }
    // Acknowledging makes room again.
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0, 1, 2]);
    assert_eq!(ids(&ready(poll(&h, 1, true).await)), vec![2]);
    for event in updates(2) {
        h.queue.do_send(PushEvent { user_id: UserId(7), event });
    }
    assert_eq!(ids(&ready(poll(&h, 1, true).await)), vec![2, 3, 4]);
    assert!(h.index.get("q1").is_some());
    // A fourth waiting event is one too many.
    push(&h, "realm_user", json!({"op": "add"}));
    assert!(h.queue.send(Poll { last_event_id: 1, dont_block: true, new_queue: false }).await.is_err());
    assert!(h.index.get("q1").is_none(), "the next poll is told BAD_EVENT_QUEUE_ID");
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(*h.gone.lock().unwrap(), vec!["q1".to_owned()]);
    let bytes = updates(3).iter().map(|e| event_cost(e)).sum::<usize>();
    assert_eq!(*h.reasons.lock().unwrap(), vec![GoneReason::Overflow { events: 4, bytes }]);
}

#[actix_rt::test]
async fn a_queue_past_its_byte_backlog_is_removed() {
    let events = updates(3);
    let two = event_cost(&events[0]) + event_cost(&events[1]);
    let h = start_with(spec(), limits(1000, two, 1000));
    let PollOutcome::Waiting(waiting) = poll(&h, -1, false).await else { panic!("should wait") };
    h.queue.do_send(PushEvent { user_id: UserId(7), event: Arc::clone(&events[0]) });
    assert_eq!(ids(&waiting.reply().await.unwrap()), vec![0]);
    h.queue.do_send(PushEvent { user_id: UserId(7), event: Arc::clone(&events[1]) });
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0, 1]);
    // While a poll waits (everything acknowledged, so it does), one event larger than the
    // whole allowance: the poll is dropped unanswered, so its client hears
    // BAD_EVENT_QUEUE_ID like the next poll.
    let PollOutcome::Waiting(waiting) = poll(&h, 1, false).await else { panic!("should wait") };
    push(&h, "realm_user", json!({"op": "update", "person": {"full_name": "x".repeat(two)}}));
    assert!(waiting.reply().await.is_err(), "released without an answer");
    assert!(h.index.get("q1").is_none());
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    let reasons = h.reasons.lock().unwrap().clone();
    assert!(matches!(reasons[..], [GoneReason::Overflow { events: 1, bytes }] if bytes > two), "{reasons:?}");
}

#[actix_rt::test]
async fn the_realms_direct_path_delivers_polls_and_removes_an_overflowing_queue() {
    // As the realm actor and the HTTP workers use a queue: through its shared state.
    let h = start_with(spec(), limits(2, usize::MAX, 1000));
    let shared = h.index.get("q1").unwrap().queue;
    let Some(Ok(PollOutcome::Waiting(waiting))) =
        shared.poll(Poll { last_event_id: -1, dont_block: false, new_queue: false })
    else {
        panic!("should wait")
    };
    let events = updates(3);
    assert_eq!(shared.push(&events[0]), None);
    assert_eq!(ids(&waiting.reply().await.unwrap()), vec![0]);
    assert_eq!(shared.push(&events[1]), None);
    // A third unacknowledged event is one too many: the queue goes at once.
    let bytes = event_cost(&events[0]) + event_cost(&events[1]);
    assert_eq!(shared.push(&events[2]), Some(GoneReason::Overflow { events: 3, bytes }));
    assert!(shared.poll(Poll { last_event_id: 0, dont_block: true, new_queue: false }).is_none());
    // The realm then closes its actor, which reports the overflow.
    h.queue.send(CloseQueue).await.unwrap();
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(*h.reasons.lock().unwrap(), vec![GoneReason::Overflow { events: 3, bytes }]);
    assert!(h.index.get("q1").is_none());
}

#[actix_rt::test]
async fn a_deletion_split_past_the_backlog_removes_the_queue() {
    // A client without bulk_message_deletion gets one event per deleted message.
    let h = start_with(spec(), limits(3, usize::MAX, 1000));
    push(&h, "delete_message", json!({"message_type": "private", "message_ids": [1, 2, 3]}));
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0, 1, 2]);
    // Two waiting, and two more from one deletion: one too many.
    ready(poll(&h, 0, true).await);
    push(&h, "delete_message", json!({"message_type": "private", "message_ids": [4, 5]}));
    assert!(h.queue.send(Poll { last_event_id: 0, dont_block: true, new_queue: false }).await.is_err());
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    let reasons = h.reasons.lock().unwrap().clone();
    assert!(matches!(reasons[..], [GoneReason::Overflow { events: 4, .. }]), "{reasons:?}");
}

#[actix_rt::test]
async fn a_reply_carries_a_bounded_prefix_and_the_next_poll_the_rest() {
    let h = start_with(spec(), limits(1000, usize::MAX, 2));
    for event in updates(5) {
        h.queue.do_send(PushEvent { user_id: UserId(7), event });
    }
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0, 1]);
    // A retry without acknowledging gets the same events.
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0, 1]);
    assert_eq!(ids(&ready(poll(&h, 1, true).await)), vec![2, 3]);
    assert_eq!(ids(&ready(poll(&h, 3, false).await)), vec![4]);
    // A waiting poll is answered within the same bound: a deletion of three messages
    // split for this client is three events.
    let PollOutcome::Waiting(waiting) = poll(&h, 4, false).await else { panic!("should wait") };
    push(&h, "delete_message", json!({"message_type": "private", "message_ids": [7, 8, 9]}));
    let reply = waiting.reply().await.unwrap();
    assert_eq!(bodies(&reply).iter().map(|b| b["message_id"].clone()).collect::<Vec<_>>(), vec![json!(7), json!(8)]);
    assert_eq!(ids(&ready(poll(&h, 6, true).await)), vec![7]);
}

#[actix_rt::test]
async fn a_reply_stops_before_its_byte_bound_but_always_carries_one_event() {
    let events = updates(3);
    let config = QueueConfig { max_reply_bytes: event_cost(&events[0]) + 1, ..QueueConfig::default() };
    let h = start_with(spec(), config);
    for event in events {
        h.queue.do_send(PushEvent { user_id: UserId(7), event });
    }
    push(&h, "realm_user", json!({"op": "update", "person": {"full_name": "x".repeat(1000)}}));
    assert_eq!(ids(&ready(poll(&h, -1, true).await)), vec![0]);
    assert_eq!(ids(&ready(poll(&h, 0, true).await)), vec![1]);
    assert_eq!(ids(&ready(poll(&h, 1, true).await)), vec![2]);
    // Larger than the bound on its own: it goes out alone.
    assert_eq!(ids(&ready(poll(&h, 2, true).await)), vec![3]);
}

// --- Sharing: queues with the same options hold the same reshaped event. ---

/// A message event as the realm actor sends it, from the queue `q1`'s client.
fn message_event() -> Arc<Event> {
    Arc::new(Event::new(
        "message",
        json!({
            "message": {"id": 1, "type": "stream", "subject": "t", "content": "**hi**",
                "rendered_content": "<p><strong>hi</strong></p>", "avatar_url": "https://x", "avatar_computable": true},
            "flags": [], "sender_queue_id": "q1", "local_id": "7.01",
        }),
    ))
}

#[actix_rt::test]
async fn queues_with_the_same_options_share_one_reshaped_message() {
    let index = Arc::new(QueueIndex::default());
    let sender = start_queue("q1", spec(), QueueConfig::default(), Arc::clone(&index));
    let a = start_queue("q2", spec(), QueueConfig::default(), Arc::clone(&index));
    let b = start_queue("q3", spec(), QueueConfig::default(), Arc::clone(&index));
    let mut html = spec();
    html.apply_markdown = true;
    let c = start_queue("q4", html.clone(), QueueConfig::default(), Arc::clone(&index));
    let d = start_queue("q5", html, QueueConfig::default(), Arc::clone(&index));
    let event = message_event();
    for h in [&sender, &a, &b, &c, &d] {
        h.queue.do_send(PushEvent { user_id: UserId(7), event: Arc::clone(&event) });
    }
    let mut held = Vec::new();
    for h in [&sender, &a, &b, &c, &d] {
        held.push(Arc::clone(&ready(poll(h, -1, true).await).events[0].event));
    }
    assert!(Arc::ptr_eq(&held[1], &held[2]), "raw Markdown: one event for both queues");
    assert!(Arc::ptr_eq(&held[3], &held[4]), "rendered HTML: one event for both queues");
    assert!(!Arc::ptr_eq(&held[1], &held[3]));
    assert!(!Arc::ptr_eq(&held[0], &held[1]), "the sender's queue has its own copy");
    assert_eq!(held[0].get("local_message_id"), Some(&json!("7.01")));
    assert_eq!(held[1].get("local_message_id"), None);
    assert_eq!(held[1].get("message").unwrap()["content"], json!("**hi**"));
    assert_eq!(held[3].get("message").unwrap()["content"], json!("<p><strong>hi</strong></p>"));
    // The shared event's own copy is released once every queue has shaped it.
    drop(event);
    assert_eq!(Arc::strong_count(&held[1]), 4, "held by the two queues and the two handles here");
}
