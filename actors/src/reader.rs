//! [`Reader`]: the threads that answer history reads (message fetches, search, edit
//! history), so that no read of the database ever runs on a realm or queue actor's thread.
//!
//! Readers are sync actors on an actix [`SyncArbiter`], each with a read-only connection of
//! its own, shared by every organization. A read carries the snapshot of its organization's
//! state that the realm actor published after its last commit ([`RealmState`] clones
//! cheaply), so it decides access and formats its answer without a round trip through the
//! realm actor. A read may miss a message committed a moment after it began, as with Zulip.

use std::sync::Arc;

use actix::prelude::*;
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

/// A [`HistoryRead`] with the organization's snapshot, on its way to a reader.
pub struct Read<Q> {
    pub state: Arc<RealmState>,
    pub query: Q,
}

impl<Q: HistoryRead> Message for Read<Q> {
    type Result = ApiResult<Q::Output>;
}

/// One reader thread and its connection (opened on first use, reopened after a failure).
pub struct Reader {
    store: Store,
    conn: Option<Connection>,
}

impl Actor for Reader {
    type Context = SyncContext<Self>;
}

impl<Q: HistoryRead> Handler<Read<Q>> for Reader {
    type Result = ApiResult<Q::Output>;

    fn handle(&mut self, msg: Read<Q>, _: &mut Self::Context) -> Self::Result {
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.store.read_connection().map_err(ApiError::from)?,
        };
        let out = msg.query.run(&msg.state, &conn);
        self.conn = Some(conn);
        out
    }
}

/// The reader threads, shared by every organization of the server.
pub type Readers = Addr<Reader>;

/// Starts `threads` readers over `store` (at least one). Call inside an actix system.
pub fn start(store: Store, threads: usize) -> Readers {
    SyncArbiter::start(threads.max(1), move || Reader { store: store.clone(), conn: None })
}
