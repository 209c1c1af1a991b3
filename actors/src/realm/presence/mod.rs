//! Presence as the realm actor sees it: the events the organization's presence actor
//! (`crate::presence`) hands over, fanned out to the event queues like any other. The
//! presence actor owns the rows; the register data set reads its published snapshot.

use actix::prelude::*;

use crate::presence::PresenceEvents;
use crate::realm::actor::RealmActor;

impl Handler<PresenceEvents> for RealmActor {
    type Result = ();

    fn handle(&mut self, msg: PresenceEvents, _: &mut Self::Context) {
        self.fan_out(msg.0);
        self.wake_queues();
    }
}
