//! A user's `presence_enabled` setting changed: the presence actor records it as Zulip's
//! `do_change_user_setting` does.

use actix::prelude::*;

use super::actor::PresenceActor;
use super::audience;
use super::state::Status;
use super::{MICROS, OFFLINE_THRESHOLD_SECS};
use crate::ids::UserId;

/// A user's `presence_enabled` setting changed (sent by the realm actor after the commit).
/// As Zulip's `do_change_user_setting`: turned on, the user is active now; turned off, the
/// user's presence is replaced by one last connected a little over the offline threshold
/// ago, so everyone sees them offline for as long as it stays off. Everyone is told either
/// way.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct PresenceEnabledChanged {
    pub user_id: UserId,
    pub enabled: bool,
    /// Microseconds since the epoch.
    pub now: i64,
}

/// How far past the offline threshold a user who turned presence off was last seen (Zulip
/// adds two minutes for clock skew).
const DISABLED_EXTRA_SECS: i64 = 120;

impl Handler<PresenceEnabledChanged> for PresenceActor {
    type Result = ();

    fn handle(&mut self, msg: PresenceEnabledChanged, _: &mut Self::Context) {
        let realm = self.realm_state.load_full();
        let Some(user) = realm.user(msg.user_id).filter(|u| audience::is_reported(u)) else { return };
        let before = self.state.row(user.id).map(|row| row.update_id);
        let changed = if msg.enabled {
            self.state.ping(user.id, Status::Active, msg.now, user.date_joined)
        } else {
            let seen = msg.now - (OFFLINE_THRESHOLD_SECS + DISABLED_EXTRA_SECS) * MICROS;
            Some(self.state.reset(user.id, seen, user.date_joined))
        };
        if let Some(changed) = changed {
            self.changed(&realm, user, before, changed, true, msg.now);
        }
    }
}
