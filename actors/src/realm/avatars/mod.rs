//! Avatars (Zulip's `set_avatar_backend`, `delete_avatar_backend` and
//! `do_change_avatar_fields`): `POST` and `DELETE /users/me/avatar`. The images (100 and
//! 500 pixels, PNG) are made and stored by the HTTP handler, which first asks
//! [`ops::check_may_change`] of the published state so that a refused request overwrites
//! nothing; the change here bumps `avatar_version` and tells everyone (`realm_user`
//! `update`).

pub mod ops;

use actix::prelude::*;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /users/me/avatar` once its images are stored (`uploaded`), or `DELETE
/// /users/me/avatar` (back to the gravatar). Replies with the new `avatar_url`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct ChangeAvatar {
    pub user_id: UserId,
    pub uploaded: bool,
}

impl Handler<ChangeAvatar> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: ChangeAvatar, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_change(&self.state, msg.user_id, msg.uploaded)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
