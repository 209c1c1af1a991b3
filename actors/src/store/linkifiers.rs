//! The `realm_linkifiers` table of `sql/0016_linkifiers.sql` (and `0022`), loaded with the organization
//! and written by `realm::linkifiers`.

use rusqlite::{params, Connection};

use super::{StoreError, StoreResult};
use crate::ids::RealmId;
use crate::markdown::linkifier::Linkifier;

/// The linkifiers of `realm`, in their order (then by id, as Zulip orders equal ones).
pub fn in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<Linkifier>> {
    let mut stmt = conn.prepare(
        "SELECT id, pattern, url_template, example_input, reverse_template, alternative_url_templates
         FROM realm_linkifiers WHERE realm_id = ?1 ORDER BY sort_order, id",
    )?;
    let rows = stmt.query_map([realm], |r| {
        let alternatives: String = r.get(5)?;
        Ok((
            Linkifier {
                id: r.get(0)?,
                pattern: r.get(1)?,
                url_template: r.get(2)?,
                example_input: r.get(3)?,
                reverse_template: r.get(4)?,
                alternative_url_templates: Vec::new(),
            },
            alternatives,
        ))
    })?;
    let mut list = Vec::new();
    for row in rows {
        let (mut linkifier, alternatives) = row?;
        linkifier.alternative_url_templates = serde_json::from_str(&alternatives)
            .map_err(|e| StoreError::Corrupt(format!("linkifier {}: alternative_url_templates: {e}", linkifier.id)))?;
        list.push(linkifier);
    }
    Ok(list)
}

/// `alternative_url_templates` as stored: a JSON list.
fn alternatives(linkifier: &Linkifier) -> String {
    serde_json::Value::from(linkifier.alternative_url_templates.clone()).to_string()
}

/// Adds a linkifier after the others (its `id` is not read); returns its id.
pub fn add(conn: &Connection, realm: RealmId, linkifier: &Linkifier) -> StoreResult<i64> {
    conn.prepare_cached(
        "INSERT INTO realm_linkifiers
             (realm_id, pattern, url_template, example_input, reverse_template, alternative_url_templates, sort_order)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                 (SELECT COALESCE(MAX(sort_order), -1) + 1 FROM realm_linkifiers WHERE realm_id = ?1))",
    )?
    .execute(params![
        realm,
        linkifier.pattern,
        linkifier.url_template,
        linkifier.example_input,
        linkifier.reverse_template,
        alternatives(linkifier)
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Changes a linkifier's pattern, templates and example.
pub fn update(conn: &Connection, realm: RealmId, linkifier: &Linkifier) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE realm_linkifiers SET pattern = ?3, url_template = ?4, example_input = ?5, reverse_template = ?6,
                alternative_url_templates = ?7
         WHERE realm_id = ?1 AND id = ?2",
    )?
    .execute(params![
        realm,
        linkifier.id,
        linkifier.pattern,
        linkifier.url_template,
        linkifier.example_input,
        linkifier.reverse_template,
        alternatives(linkifier)
    ])?;
    Ok(())
}

/// Removes a linkifier.
pub fn remove(conn: &Connection, realm: RealmId, id: i64) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM realm_linkifiers WHERE realm_id = ?1 AND id = ?2")?.execute(params![realm, id])?;
    Ok(())
}

/// Orders the linkifiers as `ids` lists them (0, 1, ...).
pub fn reorder(conn: &Connection, realm: RealmId, ids: &[i64]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("UPDATE realm_linkifiers SET sort_order = ?3 WHERE realm_id = ?1 AND id = ?2")?;
    for (order, id) in ids.iter().enumerate() {
        stmt.execute(params![realm, id, order as i64])?;
    }
    Ok(())
}
