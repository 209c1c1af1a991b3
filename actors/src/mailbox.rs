//! [`CountedAddr`]: an actor's address that counts the messages sent through it and not yet
//! answered, so that the depth of a busy actor's mailbox can be watched (actix does not
//! tell how many messages wait in a mailbox). Organizations' actors are reached through
//! one ([`RealmAddr`]).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::dev::ToEnvelope;
use actix::prelude::*;

use crate::realm::RealmActor;

/// The address of an organization's actor.
pub type RealmAddr = CountedAddr<RealmActor>;

/// An address counting the requests in flight through it (and its clones).
pub struct CountedAddr<A: Actor> {
    addr: Addr<A>,
    pending: Arc<AtomicUsize>,
}

impl<A: Actor> Clone for CountedAddr<A> {
    fn clone(&self) -> Self {
        CountedAddr { addr: self.addr.clone(), pending: Arc::clone(&self.pending) }
    }
}

/// One request in flight: counted from its sending to its answer (or until its caller
/// gives up on it).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(pending: &Arc<AtomicUsize>) -> Self {
        pending.fetch_add(1, Ordering::Relaxed);
        InFlight(Arc::clone(pending))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<A: Actor> CountedAddr<A> {
    /// Counts the requests sent to `addr` through this address.
    pub fn new(addr: Addr<A>) -> Self {
        CountedAddr { addr, pending: Arc::new(AtomicUsize::new(0)) }
    }

    /// Sends a message and waits for its answer, as [`Addr::send`]; the message counts as
    /// in flight until it is answered.
    pub fn send<M>(&self, msg: M) -> impl Future<Output = Result<M::Result, MailboxError>>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
    {
        let in_flight = InFlight::new(&self.pending);
        let request = self.addr.send(msg);
        async move {
            let answer = request.await;
            drop(in_flight);
            answer
        }
    }

    /// Sends a message without waiting for (or counting) an answer, as [`Addr::do_send`].
    pub fn do_send<M>(&self, msg: M)
    where
        M: Message + Send + 'static,
        M::Result: Send,
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
    {
        self.addr.do_send(msg);
    }

    /// Whether the actor is still running.
    pub fn connected(&self) -> bool {
        self.addr.connected()
    }

    /// A recipient of one of the actor's messages (not counted).
    pub fn recipient<M>(&self) -> Recipient<M>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        A: Handler<M>,
        A::Context: ToEnvelope<A, M>,
    {
        self.addr.clone().recipient()
    }

    /// The plain address.
    pub fn addr(&self) -> &Addr<A> {
        &self.addr
    }

    /// Messages sent through this address and not answered yet: waiting in the mailbox or
    /// being handled (a handler that waits for a history read counts until it answers).
    pub fn in_flight(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::oneshot;

    use super::*;

    /// Answers each message when the test says so.
    struct Slow;

    impl Actor for Slow {
        type Context = Context<Self>;
    }

    #[derive(Message)]
    #[rtype(result = "u8")]
    struct Ask(oneshot::Receiver<u8>);

    impl Handler<Ask> for Slow {
        type Result = ResponseFuture<u8>;

        fn handle(&mut self, msg: Ask, _: &mut Self::Context) -> Self::Result {
            Box::pin(async move { msg.0.await.unwrap_or(0) })
        }
    }

    #[actix::test]
    async fn requests_count_until_answered_or_given_up() {
        let addr = CountedAddr::new(Slow.start());
        let (tx1, rx1) = oneshot::channel();
        let (_tx2, rx2) = oneshot::channel();
        let first = addr.send(Ask(rx1));
        let second = addr.clone().send(Ask(rx2));
        assert_eq!(addr.in_flight(), 2);
        tx1.send(7).unwrap();
        assert_eq!(first.await.unwrap(), 7);
        assert_eq!(addr.in_flight(), 1);
        // A caller that gives up (a client gone) stops counting.
        drop(second);
        assert_eq!(addr.in_flight(), 0);
    }
}
