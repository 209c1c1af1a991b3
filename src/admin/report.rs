//! What `agora list-realms` and `agora stats` print: read from the database (and, with a
//! server running, from its organizations' shared figures).

use std::path::Path;

use agora_actors::ids::RealmId;
use agora_actors::stats::RealmFigures;
use agora_actors::store::{stats, Store};
use serde_json::{json, Map, Value};

use super::AdminResult;
use crate::backup::UPLOADS;

/// Every organization; `running` are those whose actor runs.
pub fn realms(store: &Store, running: &[RealmId]) -> AdminResult {
    let rows = stats::realms(&*store.conn()?)?;
    let realms: Vec<Value> = rows
        .into_iter()
        .map(|r| {
            json!({
                "realm_id": r.id,
                "subdomain": r.subdomain,
                "name": r.name,
                "deactivated": r.deactivated,
                "date_created": r.date_created,
                "active_humans": r.active_humans,
                "active_bots": r.active_bots,
                "deactivated_users": r.deactivated_users,
                "running": running.contains(&r.id),
            })
        })
        .collect();
    Ok(json!({"realms": realms}))
}

/// Queue, mailbox, presence, database and upload figures; `running` is `None` when no
/// server runs (then the saved event queues are all there is).
pub fn stats(store: &Store, running: Option<&[RealmFigures]>) -> AdminResult {
    let conn = store.conn()?;
    let db = stats::database(&conn)?;
    let tables: Map<String, Value> = stats::table_rows(&conn)?.into_iter().map(|(t, n)| (t, Value::from(n))).collect();
    let saved: Vec<Value> =
        stats::saved_queues(&conn)?.into_iter().map(|(realm, n)| json!({"realm_id": realm, "queues": n})).collect();
    drop(conn);
    let path = store.path();
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let (files, bytes) = path.parent().map_or((0, 0), |dir| uploads(&dir.join(UPLOADS)));
    let realms: Vec<Value> = running.unwrap_or_default().iter().map(realm_figures).collect();
    Ok(json!({
        "server_running": running.is_some(),
        "realms": realms,
        "saved_event_queues": saved,
        "database": {
            "file": path.display().to_string(),
            "bytes": size(path),
            "wal_bytes": size(Path::new(&wal)),
            "page_size": db.page_size,
            "pages": db.pages,
            "free_pages": db.free_pages,
            "schema_version": db.schema_version,
            "tables": tables,
        },
        "uploads": {"files": files, "bytes": bytes},
    }))
}

fn realm_figures(r: &RealmFigures) -> Value {
    json!({
        "realm_id": r.realm_id,
        "subdomain": r.subdomain,
        "active_users": r.active_users,
        "event_queues": r.event_queues,
        "waiting_polls": r.waiting_polls,
        "mailbox": r.mailbox,
        "presence_rows": r.presence.map(|p| p.rows),
        "presence_unwritten_rows": r.presence.map(|p| p.dirty),
    })
}

/// Files and bytes under the uploads directory (links not followed).
fn uploads(root: &Path) -> (u64, u64) {
    let (mut files, mut bytes) = (0, 0);
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                files += 1;
                bytes += entry.metadata().map_or(0, |m| m.len());
            }
        }
    }
    (files, bytes)
}
