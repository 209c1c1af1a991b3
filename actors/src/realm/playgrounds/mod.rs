//! Code playgrounds (Zulip's `POST /realm/playgrounds`, `DELETE
//! /realm/playgrounds/{playground_id}`, the `realm_playgrounds` data set and event): external
//! sites that code blocks of a language can be opened in. Administrators manage them; the
//! clients show them on code blocks.
//!
//! - [`ops`]: the checks and the changes.
//! - [`format`]: playgrounds as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;

pub use format::register_data;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /realm/playgrounds`: replies with the new playground's id. The parameters as
/// given (stripped and checked here, as Zulip does).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct AddPlayground {
    pub acting: UserId,
    pub name: String,
    pub pygments_language: String,
    /// `None` when absent: Zulip checks `pygments_language` before it finds it missing.
    pub url_template: Option<String>,
}

/// `DELETE /realm/playgrounds/{playground_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemovePlayground {
    pub acting: UserId,
    /// The id in the path (any number).
    pub id: i64,
}

impl Handler<AddPlayground> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: AddPlayground, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add(&self.state, msg)?;
        self.commit(change)
    }
}

impl Handler<RemovePlayground> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemovePlayground, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove(&self.state, msg.acting, msg.id)?;
        self.commit(change).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
