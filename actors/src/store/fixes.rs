//! One-time rewrites of stored data that SQL alone cannot make (they need Rust code, such
//! as the HTML sanitizer). A migration queues a fix by name in `pending_data_fixes`; the
//! server runs the pending ones right after the migrations, each in its own transaction
//! together with the removal of its name, so a fix runs exactly once even if the server
//! stops halfway.

use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use serde_json::Value;

use super::{StoreError, StoreResult};
use crate::markdown::sanitize;

/// Rows read per batch when rewriting messages.
const BATCH: i64 = 1000;

/// Runs every pending fix.
pub(crate) fn run_pending(conn: &mut Connection) -> StoreResult<()> {
    let pending: Vec<String> = {
        let mut stmt = conn.prepare("SELECT name FROM pending_data_fixes ORDER BY name")?;
        let names = stmt.query_map([], |row| row.get(0))?;
        names.collect::<Result<_, _>>()?
    };
    for name in pending {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = match name.as_str() {
            "sanitize_rendered_html" => sanitize_rendered_html(&tx)?,
            other => return Err(StoreError::Corrupt(format!("unknown data fix {other:?}"))),
        };
        tx.execute("DELETE FROM pending_data_fixes WHERE name = ?1", [&name])?;
        tx.commit()?;
        tracing::info!(fix = %name, rows = changed, "applied data fix");
    }
    Ok(())
}

/// Only HTML with a link or an image can hold a URL.
const HAS_URL: &str = "(COL LIKE '%<a %' OR COL LIKE '%<img %')";

fn with_url(column: &str) -> String {
    HAS_URL.replace("COL", column)
}

/// The sanitized HTML, if the sanitizer changes it.
fn cleaned(html: &str) -> Option<String> {
    let clean = sanitize::clean(html);
    (clean != html).then_some(clean)
}

/// Passes every stored rendering (messages and their edit history, channel and folder
/// descriptions, profile values) through the sanitizer; returns how many rows changed.
fn sanitize_rendered_html(tx: &Transaction<'_>) -> StoreResult<usize> {
    let mut changed = 0;
    for table in ["channels", "channel_folders"] {
        let rows: Vec<(i64, String)> = {
            let sql =
                format!("SELECT id, rendered_description FROM {table} WHERE {}", with_url("rendered_description"));
            let mut stmt = tx.prepare(&sql)?;
            let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, html) in rows {
            if let Some(clean) = cleaned(&html) {
                tx.execute(&format!("UPDATE {table} SET rendered_description = ?1 WHERE id = ?2"), params![clean, id])?;
                changed += 1;
            }
        }
    }
    let values: Vec<(i64, i64, String)> = {
        let sql = format!(
            "SELECT user_id, field_id, rendered_value FROM custom_profile_field_values WHERE {}",
            with_url("rendered_value")
        );
        let mut stmt = tx.prepare(&sql)?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (user, field, html) in values {
        if let Some(clean) = cleaned(&html) {
            tx.execute(
                "UPDATE custom_profile_field_values SET rendered_value = ?1 WHERE user_id = ?2 AND field_id = ?3",
                params![clean, user, field],
            )?;
            changed += 1;
        }
    }
    Ok(changed + sanitize_messages(tx)?)
}

/// Messages, in batches by id: the rendered content and each `prev_rendered_content` of
/// the edit history.
fn sanitize_messages(tx: &Transaction<'_>) -> StoreResult<usize> {
    let sql = format!(
        "SELECT id, rendered_content, edit_history FROM messages
         WHERE id > ?1 AND ({} OR edit_history LIKE '%<a %' OR edit_history LIKE '%<img %')
         ORDER BY id LIMIT ?2",
        with_url("rendered_content")
    );
    let (mut after, mut changed) = (0i64, 0usize);
    loop {
        let rows: Vec<(i64, String, Option<String>)> = {
            let mut stmt = tx.prepare_cached(&sql)?;
            let rows = stmt.query_map(params![after, BATCH], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let Some(last) = rows.last() else { return Ok(changed) };
        after = last.0;
        for (id, html, history) in rows {
            let content = cleaned(&html);
            let history = history.as_deref().and_then(sanitize_history);
            if content.is_none() && history.is_none() {
                continue;
            }
            tx.execute(
                "UPDATE messages SET rendered_content = COALESCE(?1, rendered_content),
                                     edit_history = COALESCE(?2, edit_history) WHERE id = ?3",
                params![content, history, id],
            )?;
            changed += 1;
        }
    }
}

/// An edit history (a JSON list of edits) with each `prev_rendered_content` sanitized, if
/// that changes anything.
fn sanitize_history(history: &str) -> Option<String> {
    let mut edits: Value = serde_json::from_str(history).ok()?;
    let mut any = false;
    for edit in edits.as_array_mut()? {
        if let Some(Value::String(html)) = edit.get_mut("prev_rendered_content") {
            if let Some(clean) = cleaned(html) {
                *html = clean;
                any = true;
            }
        }
    }
    any.then(|| edits.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_script_links_are_sanitized_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrate::apply(&mut conn).unwrap();
        // `apply` ran the fix on an empty database; queue it again over hostile rows.
        conn.execute_batch(
            "INSERT INTO realms (id, subdomain, name, date_created) VALUES (1, '', 'R', 0);
             INSERT INTO users (id, realm_id, email, delivery_email, full_name, role, api_key, date_joined)
                 VALUES (1, 1, 'a@x', 'a@x', 'A', 400, 'k', 0);
             INSERT INTO channels (id, realm_id, name, rendered_description, date_created)
                 VALUES (1, 1, 'c', '<p><a href=\"javascript:alert(1)\">x</a></p>', 0);
             INSERT INTO messages (id, realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent,
                                   edit_history)
                 VALUES (1, 1, 1, 1, 't', 'x', '<p><a href=\"JAVASCRIPT:alert(1)\">x</a> <a href=\"https://ok.example\">ok</a></p>', 0,
                         '[{\"timestamp\": 1, \"prev_rendered_content\": \"<p><img src=\\\"data:text/html,x\\\"></p>\"}]'),
                        (2, 1, 1, 1, 't', 'y', '<p>plain</p>', 0, NULL);
             INSERT INTO pending_data_fixes (name) VALUES ('sanitize_rendered_html');",
        )
        .unwrap();
        run_pending(&mut conn).unwrap();
        let text = |sql: &str| -> String { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(text("SELECT rendered_description FROM channels"), "<p><a>x</a></p>");
        assert_eq!(
            text("SELECT rendered_content FROM messages WHERE id = 1"),
            "<p><a>x</a> <a href=\"https://ok.example\">ok</a></p>"
        );
        assert_eq!(
            text("SELECT edit_history FROM messages WHERE id = 1"),
            r#"[{"timestamp":1,"prev_rendered_content":"<p><img></p>"}]"#
        );
        assert_eq!(text("SELECT rendered_content FROM messages WHERE id = 2"), "<p>plain</p>");
        let pending: i64 = conn.query_row("SELECT count(*) FROM pending_data_fixes", [], |r| r.get(0)).unwrap();
        assert_eq!(pending, 0);
    }
}
