//! Linkifiers (Zulip's `GET /realm/linkifiers`, `POST /realm/filters`, `PATCH` and
//! `DELETE /realm/filters/{filter_id}`, `PATCH /realm/linkifiers`; the `realm_linkifiers`
//! and legacy `realm_filters` data sets and the `realm_linkifiers` event): patterns whose
//! matches in messages and topics become links. Administrators manage them; rendering
//! (`chat::render`) and `topic_links` (`Linkifiers::topic_links_json`) apply them. Messages already
//! rendered keep their HTML when the linkifiers change, as in Zulip.
//!
//! - [`ops`]: the checks and the changes.
//! - [`format`]: linkifiers as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use format::register_data;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /realm/linkifiers`: the linkifiers in their order (any user).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Value>")]
pub struct ListLinkifiers {
    pub user_id: UserId,
}

/// `POST /realm/filters`: replies with the new linkifier's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct AddLinkifier {
    pub acting: UserId,
    /// As given (stripped here, as Zulip does).
    pub pattern: String,
    pub url_template: String,
    pub extras: ops::Extras,
}

/// `PATCH /realm/filters/{filter_id}`: both fields are required.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateLinkifier {
    pub acting: UserId,
    /// The id in the path (any number).
    pub id: i64,
    pub pattern: String,
    pub url_template: String,
    /// Fields not given keep their values.
    pub extras: ops::Extras,
}

/// `DELETE /realm/filters/{filter_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveLinkifier {
    pub acting: UserId,
    /// The id in the path (any number).
    pub id: i64,
}

/// `PATCH /realm/linkifiers`: `ordered_linkifier_ids` lists every linkifier once.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReorderLinkifiers {
    pub acting: UserId,
    pub ids: Vec<i64>,
}

impl Handler<ListLinkifiers> for RealmActor {
    type Result = ApiResult<Value>;

    fn handle(&mut self, msg: ListLinkifiers, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        Ok(format::linkifiers_list(self.state.linkifiers()))
    }
}

impl Handler<AddLinkifier> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: AddLinkifier, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add(&self.state, msg.acting, &msg.pattern, &msg.url_template, msg.extras)?;
        self.commit(change)
    }
}

impl Handler<UpdateLinkifier> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateLinkifier, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, msg.acting, msg.id, &msg.pattern, &msg.url_template, msg.extras)?;
        self.commit(change).map(|_| ())
    }
}

impl Handler<RemoveLinkifier> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveLinkifier, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove(&self.state, msg.acting, msg.id)?;
        self.commit(change).map(|_| ())
    }
}

impl Handler<ReorderLinkifiers> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReorderLinkifiers, _: &mut Self::Context) -> Self::Result {
        match ops::plan_reorder(&self.state, msg.acting, msg.ids)? {
            Some(change) => self.commit(change).map(|_| ()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
