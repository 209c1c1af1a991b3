//! Navigation views (Zulip's `GET`, `POST /navigation_views`, `PATCH` and
//! `DELETE /navigation_views/{fragment}`, the `navigation_views` data set and the
//! `navigation_view` events; spec 2.8, 4.20 and 4.21): a user's settings for the built-in
//! views of the left sidebar and their own named views. Views are personal: another user's
//! fragment is unknown.
//!
//! - [`ops`]: the checks and the changes.
//! - [`format`]: views as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use format::navigation_views_list;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /navigation_views`: the user's views, in the order they were added.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Value>")]
pub struct ListNavigationViews {
    pub user_id: UserId,
}

/// `POST /navigation_views`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct AddNavigationView {
    pub user_id: UserId,
    /// Stripped, not blank.
    pub fragment: String,
    pub is_pinned: bool,
    /// Stripped, not blank.
    pub name: Option<String>,
}

/// `PATCH /navigation_views/{fragment}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateNavigationView {
    pub user_id: UserId,
    /// As in the path (it may hold slashes).
    pub fragment: String,
    pub is_pinned: Option<bool>,
    /// Stripped, not blank.
    pub name: Option<String>,
}

/// `DELETE /navigation_views/{fragment}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveNavigationView {
    pub user_id: UserId,
    /// As in the path (it may hold slashes).
    pub fragment: String,
}

impl Handler<ListNavigationViews> for RealmActor {
    type Result = ApiResult<Value>;

    fn handle(&mut self, msg: ListNavigationViews, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        Ok(navigation_views_list(&self.state, user.id))
    }
}

impl Handler<AddNavigationView> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddNavigationView, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add(&self.state, msg.user_id, msg.fragment, msg.is_pinned, msg.name)?;
        self.commit(change)
    }
}

impl Handler<UpdateNavigationView> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateNavigationView, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, msg.user_id, &msg.fragment, msg.is_pinned, msg.name)?;
        self.commit(change)
    }
}

impl Handler<RemoveNavigationView> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveNavigationView, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove(&self.state, msg.user_id, &msg.fragment)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
