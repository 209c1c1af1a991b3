//! User status (spec 2.15; Zulip's `POST /users/me/status`, `GET` and `POST
//! /users/{user_id}/status`, the `user_status` data set and event): a short text and an emoji a user shows next to
//! their name, and the deprecated `away` (the inverse of their `presence_enabled` setting).
//!
//! - [`ops`]: the change, planned from the state (`check_update_user_status`).
//! - [`format`]: statuses as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use ops::{StatusRequest, MAX_STATUS_TEXT_LENGTH};

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;
use crate::presence::audience::presence_enabled;

/// `POST /users/me/status`: `user_id` sets (parts of) their own status.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOwnStatus {
    pub user_id: UserId,
    /// The parameters, or the error parsing them gave (reported after the bot check).
    pub request: ApiResult<StatusRequest>,
}

/// `POST /users/{user_id}/status`: `acting`, an administrator, sets (parts of) the status
/// of `user_id` (`away` is no parameter of it).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUserStatus {
    pub acting: UserId,
    pub user_id: UserId,
    pub request: StatusRequest,
}

/// `GET /users/{user_id}/status`: the status of `user_id` as `viewer` sees it (`{}` when
/// none is set).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Value>")]
pub struct GetUserStatus {
    pub viewer: UserId,
    pub user_id: UserId,
}

impl Handler<UpdateOwnStatus> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOwnStatus, _: &mut Self::Context) -> Self::Result {
        let presence_before = self.state.user(msg.user_id).is_some_and(presence_enabled);
        let change = ops::plan_update_status(&self.state, msg.user_id, msg.request, clock::now())?;
        self.commit(change)?;
        // `away` is the inverse of `presence_enabled`.
        self.presence_setting_changed(msg.user_id, presence_before);
        Ok(())
    }
}

impl Handler<UpdateUserStatus> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUserStatus, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update_status_for(&self.state, msg.acting, msg.user_id, msg.request, clock::now())?;
        self.commit(change)
    }
}

impl Handler<GetUserStatus> for RealmActor {
    type Result = ApiResult<Value>;

    fn handle(&mut self, msg: GetUserStatus, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        format::status_of(&self.state, viewer, msg.user_id)
    }
}

#[cfg(test)]
mod tests;
