//! [`Reader`]: the threads that answer history reads (message fetches, search, edit
//! history), so that no read of the database ever runs on a realm or queue actor's thread.
//!
//! Readers are sync actors on an actix [`SyncArbiter`], each with a read-only connection of
//! its own, shared by every organization. A read takes, when it starts, the snapshot of its
//! organization's state that the realm actor published after its last commit
//! ([`RealmState`] clones cheaply), so it decides access and formats its answer without a
//! round trip through the realm actor. It sees no message newer than that snapshot (whose
//! channel's rules the snapshot may not know), so it may miss a message committed a moment
//! after it began, as with Zulip, but never shows one it should not.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use actix::prelude::*;
use arc_swap::ArcSwap;
use rusqlite::Connection;

use crate::error::{ApiError, ApiResult};
use crate::realm::RealmState;
use crate::store::Store;

/// A read of an organization's history: plain data in, its answer out.
pub trait HistoryRead: Send + 'static {
    /// What the read answers.
    type Output: Send + 'static;

    /// Runs the read against `state` (the snapshot it was sent with) and the database.
    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<Self::Output>;
}

/// A [`HistoryRead`] on its way to a reader, with where its organization publishes its
/// state: the reader takes the latest snapshot when the read starts (not when it was sent,
/// which may be long before behind slow searches).
pub struct Read<Q> {
    pub state: Arc<ArcSwap<RealmState>>,
    pub query: Q,
}

impl<Q: HistoryRead> Message for Read<Q> {
    type Result = ApiResult<Q::Output>;
}

/// One reader thread and its connection (opened on first use, dropped after a failure so
/// that the next read opens a fresh one).
pub struct Reader {
    store: Store,
    conn: Option<Connection>,
}

impl Actor for Reader {
    type Context = SyncContext<Self>;
}

impl<Q: HistoryRead> Handler<Read<Q>> for Reader {
    type Result = ApiResult<Q::Output>;

    /// Runs the read. A panic in it is caught and answered with the generic 500 (and the
    /// connection dropped): a reader thread is shared by every organization, and nothing
    /// would start another one.
    fn handle(&mut self, msg: Read<Q>, _: &mut Self::Context) -> Self::Result {
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.store.read_connection().map_err(ApiError::from)?,
        };
        let (state, query) = (msg.state.load_full(), msg.query);
        let out = catch_unwind(AssertUnwindSafe(|| query.run(&state, &conn)));
        match out {
            Ok(Ok(answer)) => {
                self.conn = Some(conn);
                Ok(answer)
            }
            Ok(Err(e)) => {
                // A storage failure may have left the connection unusable; refusals did not.
                if e.status < 500 {
                    self.conn = Some(conn);
                }
                Err(e)
            }
            Err(_) => {
                tracing::error!(realm.id = %state.realm().id, "a history read panicked");
                Err(ApiError::internal())
            }
        }
    }
}

/// The reader threads, shared by every organization of the server.
pub type Readers = Addr<Reader>;

/// Starts `threads` readers over `store` (at least one). Call inside an actix system.
pub fn start(store: Store, threads: usize) -> Readers {
    SyncArbiter::start(threads.max(1), move || Reader { store: store.clone(), conn: None })
}
