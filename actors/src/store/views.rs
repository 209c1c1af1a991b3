//! Navigation views and saved snippets of
//! `sql/0010_drafts_navigation_views_saved_snippets.sql`, loaded with the organization and
//! written by `realm::navigation_views` and `realm::saved_snippets`.

use rusqlite::{params, Connection};

use super::StoreResult;
use crate::ids::{RealmId, UserId};
use crate::realm::user_data::{NavigationView, SavedSnippet};

/// Every navigation view of `realm` with its user, in the order they were added.
pub fn navigation_views_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(UserId, NavigationView)>> {
    let mut stmt = conn
        .prepare("SELECT user_id, fragment, is_pinned, name FROM navigation_views WHERE realm_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([realm], |r| {
        Ok((r.get(0)?, NavigationView { fragment: r.get(1)?, is_pinned: r.get(2)?, name: r.get(3)? }))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Adds a navigation view of `user`.
pub fn add_navigation_view(conn: &Connection, realm: RealmId, user: UserId, view: &NavigationView) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO navigation_views (realm_id, user_id, fragment, is_pinned, name) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![realm, user, view.fragment, view.is_pinned, view.name])?;
    Ok(())
}

/// Saves the pin and name of `user`'s view of `view.fragment`.
pub fn update_navigation_view(conn: &Connection, user: UserId, view: &NavigationView) -> StoreResult<()> {
    conn.prepare_cached("UPDATE navigation_views SET is_pinned = ?3, name = ?4 WHERE user_id = ?1 AND fragment = ?2")?
        .execute(params![user, view.fragment, view.is_pinned, view.name])?;
    Ok(())
}

/// Removes `user`'s view of `fragment`.
pub fn remove_navigation_view(conn: &Connection, user: UserId, fragment: &str) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM navigation_views WHERE user_id = ?1 AND fragment = ?2")?
        .execute(params![user, fragment])?;
    Ok(())
}

/// Every saved snippet of `realm` with its user, in the order they were made.
pub fn saved_snippets_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<(UserId, SavedSnippet)>> {
    let mut stmt = conn.prepare(
        "SELECT user_id, id, title, content, date_created FROM saved_snippets WHERE realm_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([realm], |r| {
        let snippet = SavedSnippet { id: r.get(1)?, title: r.get(2)?, content: r.get(3)?, date_created: r.get(4)? };
        Ok((r.get(0)?, snippet))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Stores a new snippet of `user` (its `id` is ignored); the id it gets.
pub fn add_saved_snippet(conn: &Connection, realm: RealmId, user: UserId, snippet: &SavedSnippet) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO saved_snippets (realm_id, user_id, title, content, date_created) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![realm, user, snippet.title, snippet.content, snippet.date_created])?;
    Ok(conn.last_insert_rowid())
}

/// Saves the title and content of `user`'s snippet `snippet.id`.
pub fn update_saved_snippet(conn: &Connection, user: UserId, snippet: &SavedSnippet) -> StoreResult<()> {
    conn.prepare_cached("UPDATE saved_snippets SET title = ?3, content = ?4 WHERE id = ?1 AND user_id = ?2")?
        .execute(params![snippet.id, user, snippet.title, snippet.content])?;
    Ok(())
}

/// Removes `user`'s snippet `id`.
pub fn remove_saved_snippet(conn: &Connection, user: UserId, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM saved_snippets WHERE id = ?1 AND user_id = ?2")?.execute(params![id, user])?;
    Ok(())
}
