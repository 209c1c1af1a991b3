//! Muting and unmuting a user (Zulip's `mute_user`, `unmute_user`, `do_mute_user`,
//! `do_unmute_user`), planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::json;

use super::format::muted_users_list;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{MessageId, RealmId, UserId};
use crate::realm::chat::flag;
use crate::realm::state::RealmState;
use crate::realm::user_data::Mute;
use crate::realm::users::ops::{access_user, Access, UserRef};
use crate::realm::{Applied, Change};
use crate::store;

/// Who may be muted: anyone of the organization, bots and deactivated users included
/// (Zulip's `access_user_by_id_including_cross_realm` as `mute_user` calls it).
const MUTABLE: Access = Access { allow_deactivated: true, allow_bots: true, for_admin: false };

/// A planned mute or unmute.
#[derive(Debug, Clone)]
pub enum MuteChange {
    Mute {
        realm_id: RealmId,
        user_id: UserId,
        mute: Mute,
        /// Set by the write: the muted user's messages this marked read.
        marked: Vec<MessageId>,
    },
    Unmute {
        user_id: UserId,
        muted_user_id: UserId,
    },
}

/// Plans `user_id` muting `muted_user_id`, with Zulip's checks in its order: not
/// themselves, a user of the organization, not muted yet.
pub fn plan_mute(state: &RealmState, user_id: UserId, muted_user_id: i64, now: i64) -> ApiResult<MuteChange> {
    let user = state.user_or_err(user_id)?;
    if user.id.0 == muted_user_id {
        return Err(ApiError::bad_request("Cannot mute self"));
    }
    let muted = access_user(state, user, &UserRef::Id(UserId(muted_user_id)), MUTABLE)?;
    if state.user_data().has_muted(user.id, muted.id) {
        return Err(ApiError::bad_request("User already muted"));
    }
    let mute = Mute { muted_user_id: muted.id, date_muted: now };
    Ok(MuteChange::Mute { realm_id: state.realm().id, user_id: user.id, mute, marked: Vec::new() })
}

/// Plans `user_id` unmuting `muted_user_id`: a user of the organization they muted.
pub fn plan_unmute(state: &RealmState, user_id: UserId, muted_user_id: i64) -> ApiResult<MuteChange> {
    let user = state.user_or_err(user_id)?;
    let muted = access_user(state, user, &UserRef::Id(UserId(muted_user_id)), MUTABLE)?;
    if !state.user_data().has_muted(user.id, muted.id) {
        return Err(ApiError::bad_request("User is not muted"));
    }
    Ok(MuteChange::Unmute { user_id: user.id, muted_user_id: muted.id })
}

impl Change for MuteChange {
    type Output = ();

    /// A mute also marks the muted user's messages read for the muter
    /// (`do_mark_muted_user_messages_as_read`).
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match self {
            MuteChange::Mute { realm_id, user_id, mute, marked } => {
                store::user_data::add_mute(tx, *realm_id, *user_id, mute)?;
                *marked = store::user_data::unread_from(tx, *user_id, mute.muted_user_id)?;
                store::user_messages::set_flag(tx, *user_id, marked, flag::READ, true)?;
            }
            MuteChange::Unmute { user_id, muted_user_id } => {
                store::user_data::remove_mute(tx, *user_id, *muted_user_id)?;
            }
        }
        Ok(())
    }

    /// To the user: `update_message_flags` for the messages a mute marked read (if any),
    /// then `muted_users` with the whole list.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = Vec::new();
        let user_id = match self {
            MuteChange::Mute { user_id, mute, marked, .. } => {
                state.user_data_mut().add_mute(user_id, mute);
                if !marked.is_empty() {
                    let fields =
                        json!({"op": "add", "operation": "add", "flag": "read", "messages": marked, "all": false});
                    events.push(Outgoing::to(vec![user_id], Event::new("update_message_flags", fields)));
                }
                user_id
            }
            MuteChange::Unmute { user_id, muted_user_id } => {
                state.user_data_mut().remove_mute(user_id, muted_user_id);
                user_id
            }
        };
        let event = Event::new("muted_users", json!({ "muted_users": muted_users_list(state, user_id) }));
        events.push(Outgoing::to(vec![user_id], event));
        Applied::events(events)
    }
}
