//! Each user's navigation views and saved snippets (changed by `realm::navigation_views`
//! and `realm::saved_snippets`), in the order they were made.

use std::sync::Arc;

use super::UserData;
use crate::ids::UserId;

/// A navigation view: the settings of a built-in view (no name) or a custom view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavigationView {
    pub fragment: String,
    pub is_pinned: bool,
    pub name: Option<String>,
}

/// A saved snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedSnippet {
    pub id: i64,
    pub title: String,
    pub content: String,
    /// Seconds since the epoch.
    pub date_created: i64,
}

impl UserData {
    /// `user`'s navigation views, in the order they were added.
    pub fn navigation_views(&self, user: UserId) -> &[NavigationView] {
        self.navigation_views.get(&user).map_or(&[], |views| views.as_slice())
    }

    /// `user`'s view of `fragment`, if they have one.
    pub fn navigation_view(&self, user: UserId, fragment: &str) -> Option<&NavigationView> {
        self.navigation_views(user).iter().find(|v| v.fragment == fragment)
    }

    /// Adds a view of `user`, or replaces the one with its fragment (after the database has).
    pub(crate) fn put_navigation_view(&mut self, user: UserId, view: NavigationView) {
        let views = Arc::make_mut(self.navigation_views.entry(user).or_default());
        match views.iter_mut().find(|v| v.fragment == view.fragment) {
            Some(old) => *old = view,
            None => views.push(view),
        }
    }

    /// Removes `user`'s view of `fragment` (after the database has).
    pub(crate) fn remove_navigation_view(&mut self, user: UserId, fragment: &str) {
        if let Some(views) = self.navigation_views.get_mut(&user) {
            Arc::make_mut(views).retain(|v| v.fragment != fragment);
        }
    }

    /// `user`'s saved snippets, in the order they were made.
    pub fn saved_snippets(&self, user: UserId) -> &[SavedSnippet] {
        self.saved_snippets.get(&user).map_or(&[], |snippets| snippets.as_slice())
    }

    /// Adds a snippet of `user`, or replaces the one with its id (after the database has).
    pub(crate) fn put_saved_snippet(&mut self, user: UserId, snippet: SavedSnippet) {
        let snippets = Arc::make_mut(self.saved_snippets.entry(user).or_default());
        match snippets.iter_mut().find(|s| s.id == snippet.id) {
            Some(old) => *old = snippet,
            None => snippets.push(snippet),
        }
    }

    /// Removes `user`'s snippet `id` (after the database has).
    pub(crate) fn remove_saved_snippet(&mut self, user: UserId, id: i64) {
        if let Some(snippets) = self.saved_snippets.get_mut(&user) {
            Arc::make_mut(snippets).retain(|s| s.id != id);
        }
    }
}
