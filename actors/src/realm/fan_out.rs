//! After a commit: the events to the listeners of the users allowed to see them.
//!
//! Event queues take an event straight into their shared state (no message to their
//! actors); their waiting polls are answered afterwards ([`RealmActor::wake_queues`]), so
//! that a group commit can answer its senders first: otherwise a sender's reply would wait
//! on the HTTP worker behind the delivery of its message to every long-poll (40 ms with
//! 1,000 of them), while the events are already in the queues for any poll that comes.

use std::sync::Arc;

use crate::events::{Outgoing, PushEvent};
use crate::ids::distinct;
use crate::queue::actor::CloseQueue;
use crate::realm::actor::RealmActor;

impl RealmActor {
    /// Hands each event to every live listener of its users, once per listener however
    /// often a user is named. The event is shared, not copied, between listeners. A queue
    /// that takes it is to be woken; one the event takes past its backlog limits is removed.
    pub(crate) fn fan_out(&mut self, events: Vec<Outgoing>) {
        let mut overflowed = Vec::new();
        for out in events {
            let event = Arc::new(out.event);
            for user_id in distinct(out.users) {
                let Some(list) = self.listeners.get_mut(&user_id) else { continue };
                list.retain(|l| l.recipient.connected());
                for listener in list.iter() {
                    match &listener.queue {
                        Some(entry) => match entry.queue.add(&event) {
                            Ok(true) => self.to_wake.push(Arc::clone(&entry.queue)),
                            Ok(false) => {}
                            Err(_) => overflowed.push(entry.clone()),
                        },
                        None => listener.recipient.do_send(PushEvent { user_id, event: Arc::clone(&event) }),
                    }
                }
            }
        }
        // Their actors close them and tell this actor why (it logs the overflow then).
        for entry in overflowed {
            self.queues.remove(entry.queue.id());
            entry.addr.do_send(CloseQueue);
        }
    }

    /// Answers the waiting polls of the queues that took events.
    pub(crate) fn wake_queues(&mut self) {
        for queue in std::mem::take(&mut self.to_wake) {
            queue.wake();
        }
    }
}
