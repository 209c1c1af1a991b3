//! Personal data the organization keeps for each user and other features read: the status
//! a user set (`user_status`), their alert words (`alert_words`), the users they muted
//! (`muted_users`), their navigation views and saved snippets ([`views`]). A leaf: it
//! imports no feature. The features that change this data (`realm::user_status`,
//! `realm::alert_words`, `realm::muted_users`, `realm::navigation_views`,
//! `realm::saved_snippets`) plan their changes and apply them here once committed; sending
//! reads it for the flags of new messages.

pub mod matcher;
pub mod views;

use std::collections::BTreeSet;
use std::sync::Arc;

use imbl::{HashMap, OrdMap, OrdSet};
use rusqlite::Connection;

pub use matcher::AlertWordMatcher;
pub use views::{NavigationView, SavedSnippet};

use crate::ids::{RealmId, UserId};
use crate::store::{self, StoreResult};

/// `reaction_type` of Unicode emoji (the status emoji's default).
pub const UNICODE_EMOJI: &str = "unicode_emoji";

/// A user's status (Zulip's `UserStatus` row). Empty strings mean "not set"; whether the
/// user is away is their `presence_enabled` setting, not stored here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserStatus {
    pub status_text: String,
    pub emoji_name: String,
    pub emoji_code: String,
    pub reaction_type: String,
    /// When it was last set.
    pub timestamp: i64,
}

impl UserStatus {
    /// The row Zulip creates before applying the first change: nothing set.
    pub fn empty(timestamp: i64) -> Self {
        UserStatus {
            status_text: String::new(),
            emoji_name: String::new(),
            emoji_code: String::new(),
            reaction_type: UNICODE_EMOJI.to_owned(),
            timestamp,
        }
    }

    /// Whether nothing is set (no text, no emoji).
    pub fn is_empty(&self) -> bool {
        self.status_text.is_empty()
            && self.emoji_name.is_empty()
            && self.emoji_code.is_empty()
            && self.reaction_type == UNICODE_EMOJI
    }
}

/// One user muted by another, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mute {
    pub muted_user_id: UserId,
    pub date_muted: i64,
}

/// Every user's status, alert words, mutes, navigation views and saved snippets, with the
/// indexes sending needs.
#[derive(Debug, Clone, Default)]
pub struct UserData {
    statuses: OrdMap<UserId, Arc<UserStatus>>,
    /// Each user's alert words, in the order they were added.
    alert_words: OrdMap<UserId, Arc<Vec<String>>>,
    /// Every alert word of the organization, for matching message content (none: nobody
    /// has alert words). Rebuilt whenever a user's words change.
    matcher: Option<Arc<AlertWordMatcher>>,
    /// Each user's mutes, in the order they were made.
    mutes: OrdMap<UserId, Arc<Vec<Mute>>>,
    /// Who muted each user.
    muters: HashMap<UserId, OrdSet<UserId>>,
    /// Each user's navigation views, in the order they were added.
    navigation_views: OrdMap<UserId, Arc<Vec<NavigationView>>>,
    /// Each user's saved snippets, in the order they were made.
    saved_snippets: OrdMap<UserId, Arc<Vec<SavedSnippet>>>,
}

impl UserData {
    /// Loads the organization's statuses, alert words, mutes, navigation views and saved
    /// snippets.
    pub fn load(conn: &Connection, realm_id: RealmId) -> StoreResult<UserData> {
        let mut data = UserData::default();
        for (user, status) in store::user_data::statuses_in_realm(conn, realm_id)? {
            data.statuses.insert(user, Arc::new(status));
        }
        for (user, word) in store::user_data::alert_words_in_realm(conn, realm_id)? {
            Arc::make_mut(data.alert_words.entry(user).or_default()).push(word);
        }
        data.rebuild_matcher();
        for (user, mute) in store::user_data::mutes_in_realm(conn, realm_id)? {
            data.add_mute(user, mute);
        }
        for (user, view) in store::views::navigation_views_in_realm(conn, realm_id)? {
            data.put_navigation_view(user, view);
        }
        for (user, snippet) in store::views::saved_snippets_in_realm(conn, realm_id)? {
            data.put_saved_snippet(user, snippet);
        }
        Ok(data)
    }

    // --- Statuses. ---

    /// The status `user` set, if they ever set one.
    pub fn status(&self, user: UserId) -> Option<&UserStatus> {
        self.statuses.get(&user).map(|s| &**s)
    }

    /// Every status set, by user id.
    pub fn statuses(&self) -> impl Iterator<Item = (UserId, &UserStatus)> {
        self.statuses.iter().map(|(id, s)| (*id, &**s))
    }

    /// Records `user`'s status (after the database has).
    pub(crate) fn put_status(&mut self, user: UserId, status: UserStatus) {
        self.statuses.insert(user, Arc::new(status));
    }

    // --- Alert words. ---

    /// `user`'s alert words, in the order they were added.
    pub fn alert_words(&self, user: UserId) -> &[String] {
        self.alert_words.get(&user).map_or(&[], |words| words.as_slice())
    }

    /// The users whose alert words `content` (a message's Markdown) contains, as Zulip's
    /// Markdown processor finds them.
    pub fn alerted_users(&self, content: &str) -> BTreeSet<UserId> {
        self.matcher.as_ref().map(|m| m.users_alerted_by(content)).unwrap_or_default()
    }

    /// Replaces `user`'s alert words (after the database has).
    pub(crate) fn set_alert_words(&mut self, user: UserId, words: Vec<String>) {
        if words.is_empty() {
            self.alert_words.remove(&user);
        } else {
            self.alert_words.insert(user, Arc::new(words));
        }
        self.rebuild_matcher();
    }

    fn rebuild_matcher(&mut self) {
        let words = self.alert_words.iter().flat_map(|(user, words)| words.iter().map(move |w| (*user, w.as_str())));
        self.matcher = AlertWordMatcher::new(words).map(Arc::new);
    }

    // --- Mutes. ---

    /// The users `user` muted, in the order they were muted.
    pub fn mutes(&self, user: UserId) -> &[Mute] {
        self.mutes.get(&user).map_or(&[], |list| list.as_slice())
    }

    /// Whether `user` muted `other`.
    pub fn has_muted(&self, user: UserId, other: UserId) -> bool {
        self.muters.get(&other).is_some_and(|set| set.contains(&user))
    }

    /// Records that `user` muted someone (after the database has).
    pub(crate) fn add_mute(&mut self, user: UserId, mute: Mute) {
        self.muters.entry(mute.muted_user_id).or_default().insert(user);
        Arc::make_mut(self.mutes.entry(user).or_default()).push(mute);
    }

    /// Records that `user` unmuted `other` (after the database has).
    pub(crate) fn remove_mute(&mut self, user: UserId, other: UserId) {
        if let Some(set) = self.muters.get_mut(&other) {
            set.remove(&user);
        }
        if let Some(list) = self.mutes.get_mut(&user) {
            Arc::make_mut(list).retain(|m| m.muted_user_id != other);
        }
    }
}

#[cfg(test)]
mod tests;
