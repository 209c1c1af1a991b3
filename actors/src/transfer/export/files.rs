//! `attachment.json` and the files: uploads, avatars, custom emoji and the organization's
//! icon, each category with its `records.json`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use super::realm::Tables;
use super::{float, write_json};
use crate::realm::state::RealmState;
use crate::store::{self, Store};
use crate::transfer::ImportError;
use crate::uploads::names::avatar_path;
use crate::uploads::storage::Storage;

/// Copies a stored file into the export; false when storage has no such file.
fn copy(storage: &dyn Storage, path_id: &str, to: &Path) -> Result<bool, ImportError> {
    let Some(mut stored) = storage.open(path_id).map_err(|e| ImportError::new(format!("uploads: {e}")))? else {
        return Ok(false);
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ImportError::at(parent.display().to_string(), e.to_string()))?;
    }
    let mut out = std::fs::File::create(to).map_err(|e| ImportError::at(to.display().to_string(), e.to_string()))?;
    std::io::copy(&mut stored.file, &mut out).map_err(|e| ImportError::at(to.display().to_string(), e.to_string()))?;
    Ok(true)
}

/// Writes the files; returns how many uploads were copied.
pub fn write(
    store: &Store,
    storage: &dyn Storage,
    state: &RealmState,
    tables: &Tables,
    out: &Path,
) -> Result<u64, ImportError> {
    let conn = store.conn()?;
    let realm = state.realm().id;
    let attachments = store::attachments::in_realm(&conn, realm)?;
    let ids: Vec<i64> = attachments.iter().map(|a| a.id).collect();
    let mut claims: HashMap<i64, Vec<i64>> = HashMap::new();
    for (attachment, message, _) in store::attachments::claims_of(&conn, &ids)? {
        claims.entry(attachment).or_default().push(message.0);
    }
    let email: HashMap<i64, String> = state.users().map(|u| (u.id.0, u.delivery_email.clone())).collect();
    let (mut rows, mut records, mut copied) = (Vec::new(), Vec::new(), 0);
    for a in &attachments {
        rows.push(
            json!({"id": a.id, "file_name": a.name, "path_id": a.path_id, "owner": a.owner_id.0, "realm": realm.0,
            "create_time": float(a.create_time), "size": a.size, "content_type": a.content_type,
            "is_realm_public": a.is_realm_public, "is_web_public": a.is_web_public,
            "messages": claims.remove(&a.id).unwrap_or_default(), "scheduled_messages": []}),
        );
        if copy(storage, &a.path_id, &out.join("uploads").join(&a.path_id))? {
            records.push(json!({"realm_id": realm.0, "user_profile_id": a.owner_id.0, "user_profile_email": email.get(&a.owner_id.0),
                "s3_path": a.path_id, "path": a.path_id, "size": a.size, "last_modified": float(a.create_time),
                "content_type": a.content_type}));
            copied += 1;
        }
    }
    write_json(out, "attachment.json", &json!({"zerver_attachment": rows}))?;
    write_json(out, "uploads/records.json", &Value::Array(records))?;

    let mut avatars = Vec::new();
    for user in state.users().filter(|u| u.avatar_source == "U") {
        let stored = avatar_path(realm, user.id);
        for (from, suffix) in
            [(format!("user_avatars/{stored}-medium.png"), "original"), (format!("user_avatars/{stored}.png"), "png")]
        {
            let path = format!("{}/{}.{suffix}", realm.0, user.id.0);
            if copy(storage, &from, &out.join("avatars").join(&path))? {
                avatars.push(
                    json!({"realm_id": realm.0, "user_profile_id": user.id.0, "user_profile_email": user.delivery_email,
                    "avatar_version": user.avatar_version, "s3_path": path, "path": path}),
                );
            }
        }
    }
    write_json(out, "avatars/records.json", &Value::Array(avatars))?;

    let mut emoji = Vec::new();
    for row in tables.tables.get("zerver_realmemoji").into_iter().flatten() {
        let file_name = row["file_name"].as_str().unwrap_or_default();
        let path = format!("{}/emoji/images/{file_name}", realm.0);
        if copy(storage, &format!("user_avatars/{path}"), &out.join("emoji").join(&path))? {
            emoji.push(json!({"realm_id": realm.0, "author": row["author"], "path": path, "s3_path": path,
                "file_name": file_name, "name": row["name"], "deactivated": row["deactivated"]}));
        }
    }
    write_json(out, "emoji/records.json", &Value::Array(emoji))?;

    let mut icons = Vec::new();
    if state.realm().settings.get("icon_source").and_then(Value::as_str) == Some("U") {
        for name in ["icon.png", "icon.original"] {
            let path = format!("{}/{name}", realm.0);
            if copy(storage, &format!("user_avatars/{}/realm/icon.png", realm.0), &out.join("realm_icons").join(&path))?
            {
                icons.push(json!({"realm_id": realm.0, "path": path, "s3_path": path}));
            }
        }
    }
    write_json(out, "realm_icons/records.json", &Value::Array(icons))?;
    Ok(copied)
}
