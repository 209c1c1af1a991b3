//! Adding and removing alert words (Zulip's `add_alert_words`, `remove_alert_words` and
//! `zerver/lib/alert_words.py`), planned from the state, written, applied.
//!
//! Words are kept as given but compared case-insensitively: a word the user has in any
//! case is not added again, and removing a word removes it in every case. Either change
//! sends the user the `alert_words` event with their whole list, even when nothing
//! changed, as Zulip does.

use rusqlite::Transaction;
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate::python_strip;

/// Zulip's limit on one alert word, in characters (checked before stripping).
pub const MAX_ALERT_WORD_LENGTH: usize = 100;

/// A planned change of a user's alert words.
#[derive(Debug, Clone)]
pub struct AlertWordsChange {
    realm_id: RealmId,
    user_id: UserId,
    added: Vec<String>,
    removed: Vec<String>,
    /// The user's words once changed, in order.
    words: Vec<String>,
}

/// Plans adding `words` to `user_id`'s alert words: each at most 100 characters
/// (`alert_words[i] is too long`), then stripped, empty ones dropped; a word the user has
/// in any case is skipped, and of the new words differing only in case the last spelling
/// is kept, at the place of the first.
pub fn plan_add_alert_words(state: &RealmState, user_id: UserId, words: Vec<String>) -> ApiResult<AlertWordsChange> {
    let user = state.user_or_err(user_id)?;
    for (i, word) in words.iter().enumerate() {
        ApiError::check_length(&format!("alert_words[{i}]"), word, MAX_ALERT_WORD_LENGTH)?;
    }
    let current = state.user_data().alert_words(user.id);
    let existing: Vec<String> = current.iter().map(|w| w.to_lowercase()).collect();
    let mut added: Vec<(String, String)> = Vec::new();
    for word in words.iter().map(|w| python_strip(w)).filter(|w| !w.is_empty()) {
        let lower = word.to_lowercase();
        if existing.contains(&lower) {
            continue;
        }
        match added.iter_mut().find(|(l, _)| *l == lower) {
            Some((_, spelling)) => *spelling = word.to_owned(),
            None => added.push((lower, word.to_owned())),
        }
    }
    let added: Vec<String> = added.into_iter().map(|(_, word)| word).collect();
    let words = current.iter().chain(&added).cloned().collect();
    Ok(AlertWordsChange { realm_id: state.realm().id, user_id: user.id, added, removed: Vec::new(), words })
}

/// Plans removing `words` from `user_id`'s alert words, each compared case-insensitively
/// (as given, not stripped); words the user does not have are ignored.
pub fn plan_remove_alert_words(state: &RealmState, user_id: UserId, words: &[String]) -> ApiResult<AlertWordsChange> {
    let user = state.user_or_err(user_id)?;
    let doomed: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let (removed, kept): (Vec<String>, Vec<String>) =
        state.user_data().alert_words(user.id).iter().cloned().partition(|w| doomed.contains(&w.to_lowercase()));
    Ok(AlertWordsChange { realm_id: state.realm().id, user_id: user.id, added: Vec::new(), removed, words: kept })
}

impl Change for AlertWordsChange {
    type Output = Vec<String>;

    /// Nothing added or removed stores nothing (the event is still sent).
    fn writes(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::user_data::add_alert_words(tx, self.realm_id, self.user_id, &self.added)?;
        store::user_data::remove_alert_words(tx, self.user_id, &self.removed)?;
        Ok(())
    }

    /// The user's words, and the `alert_words` event with them to the user.
    fn apply(self, state: &mut RealmState) -> Applied<Vec<String>> {
        if self.writes() {
            state.user_data_mut().set_alert_words(self.user_id, self.words.clone());
        }
        let event = Event::new("alert_words", json!({ "alert_words": self.words }));
        Applied::new(self.words, vec![Outgoing::to(vec![self.user_id], event)])
    }
}
