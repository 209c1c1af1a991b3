//! Muted users (Zulip's `POST` and `DELETE /users/me/muted_users/{muted_user_id}`, the
//! `muted_users` data set and event). Muting someone marks their messages read for the
//! muter: those already received when muting, and each new one as it is sent (see
//! `chat::send`).
//!
//! - [`ops`]: muting and unmuting, planned from the state.
//! - [`format`]: a user's mutes as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;

pub use format::muted_users_list;

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /users/me/muted_users/{muted_user_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct MuteUser {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub muted_user_id: i64,
}

/// `DELETE /users/me/muted_users/{muted_user_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UnmuteUser {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub muted_user_id: i64,
}

impl Handler<MuteUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: MuteUser, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_mute(&self.state, msg.user_id, msg.muted_user_id, clock::now())?;
        self.commit(change)
    }
}

impl Handler<UnmuteUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UnmuteUser, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_unmute(&self.state, msg.user_id, msg.muted_user_id)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
