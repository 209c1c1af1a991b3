//! Creating, editing and deleting saved snippets (Zulip's `zerver/actions/saved_snippets.py`),
//! planned from the state, written, applied. Titles and contents arrive stripped, not blank
//! and within [`MAX_TITLE_LENGTH`] and [`MAX_MESSAGE_LENGTH`](crate::realm::catalog::MAX_MESSAGE_LENGTH)
//! (the request's checks, which strip Unicode whitespace); they are stripped again as
//! Python strips, as Zulip does before storing them.

use rusqlite::Transaction;
use serde_json::json;

use super::format::saved_snippet_dict;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::user_data::SavedSnippet;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate::python_strip;

/// The longest title, in characters (Zulip's `SavedSnippet.MAX_TITLE_LENGTH`).
pub const MAX_TITLE_LENGTH: usize = 60;

/// A planned change of one of a user's snippets.
#[derive(Debug, Clone)]
pub enum SnippetChange {
    /// The snippet's id is set by the write.
    Create {
        realm_id: RealmId,
        user_id: UserId,
        snippet: SavedSnippet,
    },
    Edit {
        user_id: UserId,
        snippet: SavedSnippet,
    },
    Delete {
        user_id: UserId,
        id: i64,
    },
}

/// "Saved snippet does not exist." (404, code `BAD_REQUEST`).
fn no_such_snippet() -> ApiError {
    ApiError::resource_not_found("Saved snippet does not exist.")
}

/// `user`'s snippet `id`.
fn own_snippet(state: &RealmState, user: UserId, id: i64) -> ApiResult<&SavedSnippet> {
    state.user_data().saved_snippets(user).iter().find(|s| s.id == id).ok_or_else(no_such_snippet)
}

/// Plans `POST /saved_snippets`, made `now`.
pub fn plan_create(
    state: &RealmState,
    user_id: UserId,
    title: String,
    content: String,
    now: i64,
) -> ApiResult<SnippetChange> {
    let user = state.user_or_err(user_id)?;
    let (title, content) = (python_strip(&title).to_owned(), python_strip(&content).to_owned());
    let snippet = SavedSnippet { id: 0, title, content, date_created: now };
    Ok(SnippetChange::Create { realm_id: state.realm().id, user_id: user.id, snippet })
}

/// Plans `PATCH /saved_snippets/{id}` with at least one of `title` and `content` (without
/// either Zulip answers at once, without looking the snippet up): one of the user's.
pub fn plan_edit(
    state: &RealmState,
    user_id: UserId,
    id: i64,
    title: Option<String>,
    content: Option<String>,
) -> ApiResult<SnippetChange> {
    let user = state.user_or_err(user_id)?;
    let mut snippet = own_snippet(state, user.id, id)?.clone();
    if let Some(title) = title {
        snippet.title = python_strip(&title).to_owned();
    }
    if let Some(content) = content {
        snippet.content = python_strip(&content).to_owned();
    }
    Ok(SnippetChange::Edit { user_id: user.id, snippet })
}

/// Plans `DELETE /saved_snippets/{id}`: one of the user's.
pub fn plan_delete(state: &RealmState, user_id: UserId, id: i64) -> ApiResult<SnippetChange> {
    let user = state.user_or_err(user_id)?;
    let snippet = own_snippet(state, user.id, id)?;
    Ok(SnippetChange::Delete { user_id: user.id, id: snippet.id })
}

impl Change for SnippetChange {
    /// The snippet's id.
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match self {
            SnippetChange::Create { realm_id, user_id, snippet } => {
                snippet.id = store::views::add_saved_snippet(tx, *realm_id, *user_id, snippet)?;
            }
            SnippetChange::Edit { user_id, snippet } => store::views::update_saved_snippet(tx, *user_id, snippet)?,
            SnippetChange::Delete { user_id, id } => store::views::remove_saved_snippet(tx, *user_id, *id)?,
        }
        Ok(())
    }

    /// The `saved_snippets` event, to the user.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let (user_id, id, fields) = match self {
            SnippetChange::Create { user_id, snippet, .. } => {
                let fields = json!({"op": "add", "saved_snippet": saved_snippet_dict(&snippet)});
                let id = snippet.id;
                state.user_data_mut().put_saved_snippet(user_id, snippet);
                (user_id, id, fields)
            }
            SnippetChange::Edit { user_id, snippet } => {
                let fields = json!({"op": "update", "saved_snippet": saved_snippet_dict(&snippet)});
                let id = snippet.id;
                state.user_data_mut().put_saved_snippet(user_id, snippet);
                (user_id, id, fields)
            }
            SnippetChange::Delete { user_id, id } => {
                state.user_data_mut().remove_saved_snippet(user_id, id);
                (user_id, id, json!({"op": "remove", "saved_snippet_id": id}))
            }
        };
        Applied::new(id, vec![Outgoing::to(vec![user_id], Event::new("saved_snippets", fields))])
    }
}
