//! Saved snippets (Zulip's `GET`, `POST /saved_snippets`, `PATCH` and
//! `DELETE /saved_snippets/{saved_snippet_id}`, the `saved_snippets` data set and events;
//! spec 2.9): texts a user keeps to insert into messages. Snippets are personal: another
//! user's snippet does not exist.
//!
//! - [`ops`]: the checks and the changes.
//! - [`format`]: snippets as the API shows them.

pub mod format;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use format::saved_snippets_list;
pub use ops::MAX_TITLE_LENGTH;

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /saved_snippets`: the user's snippets, in the order they were made.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Value>")]
pub struct ListSavedSnippets {
    pub user_id: UserId,
}

/// `POST /saved_snippets`: replies with the new snippet's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct CreateSavedSnippet {
    pub user_id: UserId,
    /// Stripped, not blank, at most [`MAX_TITLE_LENGTH`] characters.
    pub title: String,
    /// Stripped, not blank, at most a message's length.
    pub content: String,
}

/// `PATCH /saved_snippets/{saved_snippet_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct EditSavedSnippet {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub saved_snippet_id: i64,
    /// As [`CreateSavedSnippet`]'s, when given.
    pub title: Option<String>,
    pub content: Option<String>,
}

/// `DELETE /saved_snippets/{saved_snippet_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteSavedSnippet {
    pub user_id: UserId,
    /// The id in the path (any number).
    pub saved_snippet_id: i64,
}

impl Handler<ListSavedSnippets> for RealmActor {
    type Result = ApiResult<Value>;

    fn handle(&mut self, msg: ListSavedSnippets, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        Ok(saved_snippets_list(&self.state, user.id))
    }
}

impl Handler<CreateSavedSnippet> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: CreateSavedSnippet, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.user_id, msg.title, msg.content, clock::now())?;
        self.commit(change)
    }
}

impl Handler<EditSavedSnippet> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: EditSavedSnippet, _: &mut Self::Context) -> Self::Result {
        if msg.title.is_none() && msg.content.is_none() {
            // Nothing to change: Zulip answers at once, sending no event.
            self.viewer(msg.user_id)?;
            return Ok(());
        }
        let change = ops::plan_edit(&self.state, msg.user_id, msg.saved_snippet_id, msg.title, msg.content)?;
        self.commit(change).map(|_| ())
    }
}

impl Handler<DeleteSavedSnippet> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteSavedSnippet, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_delete(&self.state, msg.user_id, msg.saved_snippet_id)?;
        self.commit(change).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
