//! Saved snippets as the API shows them (Zulip's `SavedSnippet.to_api_dict`).

use serde_json::{json, Value};

use crate::ids::UserId;
use crate::realm::state::RealmState;
use crate::realm::user_data::SavedSnippet;

/// `{id, title, content, date_created}`.
pub fn saved_snippet_dict(snippet: &SavedSnippet) -> Value {
    json!({"id": snippet.id, "title": snippet.title, "content": snippet.content, "date_created": snippet.date_created})
}

/// `user`'s snippets, in the order they were made: `GET /saved_snippets` and the
/// `saved_snippets` data set.
pub fn saved_snippets_list(state: &RealmState, user: UserId) -> Value {
    state.user_data().saved_snippets(user).iter().map(saved_snippet_dict).collect()
}
