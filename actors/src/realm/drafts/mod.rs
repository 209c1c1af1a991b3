//! Drafts synchronized between a user's clients (Zulip's `GET`, `POST /drafts`, `PATCH`,
//! `DELETE /drafts/{draft_id}`, the `drafts` data set and events; spec 2.11 and 4.12).
//!
//! Drafts live in the database only (there may be many, each as long as a message); the
//! state decides who may be addressed. A user who turns `enable_drafts_synchronization`
//! off loses their stored drafts (see `settings::personal`) and is refused by every
//! endpoint here.
//!
//! - [`input`]: a draft's shape, as the request gives it.
//! - [`ops`]: the checks and the changes.
//! - [`reads`]: listing drafts, and the register data set.
//! - [`format`]: a draft as the API shows it.

pub mod format;
pub mod input;
pub mod ops;
pub mod reads;

use actix::prelude::*;

pub use input::{parse_draft, parse_drafts, DraftData};
pub use reads::{register_drafts, ListDrafts};

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /drafts`: replies with the new drafts' ids, in the order given.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<i64>>")]
pub struct CreateDrafts {
    pub user_id: UserId,
    /// The `drafts` parameter as decoded ([`parse_drafts`]); its error, if any, comes after
    /// the check that the user synchronizes drafts, as in Zulip.
    pub drafts: ApiResult<Vec<DraftData>>,
}

/// `PATCH /drafts/{draft_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct EditDraft {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub draft_id: i64,
    /// The `draft` parameter as decoded ([`parse_draft`]).
    pub draft: ApiResult<DraftData>,
}

/// `DELETE /drafts/{draft_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteDraft {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub draft_id: i64,
}

impl Handler<CreateDrafts> for RealmActor {
    type Result = ApiResult<Vec<i64>>;

    fn handle(&mut self, msg: CreateDrafts, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.user_id, msg.drafts, clock::now_micros())?;
        self.commit(change)
    }
}

impl Handler<EditDraft> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: EditDraft, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_edit(&self.state, msg.user_id, msg.draft_id, msg.draft, clock::now_micros())?;
        self.commit(change)
    }
}

impl Handler<DeleteDraft> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteDraft, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_delete(&self.state, msg.user_id, msg.draft_id)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
