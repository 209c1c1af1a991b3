//! The organization's icon (Zulip's `upload_icon` and `delete_icon_backend`,
//! `do_change_icon_source`): `POST` and `DELETE /realm/icon`, administrators only. The
//! 100-pixel PNG is made and stored by the HTTP handler (after [`ops::check_may_change`] on
//! the published state); the change records the source and bumps the version in the
//! organization's settings and tells everyone (`realm` `update_dict` of `icon`).

pub mod ops;

use actix::prelude::*;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /realm/icon` once its image is stored (`uploaded`), or `DELETE /realm/icon`.
/// Replies with the new `icon_url`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct ChangeRealmIcon {
    pub user_id: UserId,
    pub uploaded: bool,
}

impl Handler<ChangeRealmIcon> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: ChangeRealmIcon, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_change(&self.state, msg.user_id, msg.uploaded)?;
        self.commit(change)
    }
}
