//! An organization written in Zulip's export format (what `manage.py export` writes and
//! `manage.py import` reads), so that a team can move to a Zulip server, or into another
//! Agora: `realm.json`, `messages-NNNNNN.json` (1,000 messages each, read from the database
//! a file at a time), `attachment.json`, `migration_status.json`, and the files with their
//! `records.json` under `uploads/`, `avatars/`, `emoji/` and `realm_icons/`.
//!
//! Field names and types are those of Zulip 11's tables: datetimes as float UNIX
//! timestamps, foreign keys as plain ids, every group (named, system and the anonymous ones
//! settings name) in `zerver_usergroup`. `import_source` is `"zulip"`: the organization
//! is a Zulip organization moving servers, and Zulip then sends nobody onboarding messages
//! again. `migration_status.json` names Zulip 11.0 and no migrations (Zulip's import then
//! warns per application and goes on).

mod files;
mod messages;
mod realm;
pub mod worker;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{json, Value};

use super::{ImportError, Progress};
use crate::ids::RealmId;
use crate::realm::state::RealmState;
use crate::store::Store;
use crate::uploads::storage::Storage;

/// What to put in an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Everything (`agora export`, Zulip's `manage.py export`).
    Full,
    /// Zulip's public export: public channels' messages only, no direct messages.
    Public,
    /// Zulip's standard export: public data, plus the private data of the users who
    /// consented (`allow_private_data_export`).
    Standard,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Exported {
    pub users: u64,
    pub channels: u64,
    pub messages: u64,
    pub uploads: u64,
}

/// Writes the organization into the directory `out` (created; must not exist).
pub fn export(
    store: &Store,
    storage: &dyn Storage,
    realm: RealmId,
    scope: &Scope,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<Exported, ImportError> {
    std::fs::create_dir_all(out).map_err(|e| ImportError::at(out.display().to_string(), e.to_string()))?;
    let state = RealmState::load(&*store.conn()?, realm)?.ok_or_else(|| ImportError::new("no such organization"))?;
    let mut tables = realm::Tables::build(store, &state, scope)?;
    progress.stage("messages", None);
    let messages = messages::write(store, &state, &mut tables, out, progress)?;
    write_json(out, "realm.json", &tables.realm_json())?;
    progress.stage("files", None);
    let uploads = files::write(store, storage, &state, &tables, out)?;
    write_json(out, "migration_status.json", &json!({"migrations_by_app": {}, "zulip_version": "11.0"}))?;
    Ok(Exported { users: tables.users, channels: tables.channels, messages, uploads })
}

/// Writes `value` as `name` under `dir`.
fn write_json(dir: &Path, name: &str, value: &Value) -> Result<(), ImportError> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ImportError::at(parent.display().to_string(), e.to_string()))?;
    }
    let file = File::create(&path).map_err(|e| ImportError::at(path.display().to_string(), e.to_string()))?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer(&mut out, value).map_err(|e| ImportError::at(name, e.to_string()))?;
    out.flush().map_err(|e| ImportError::at(name, e.to_string()))
}

/// Seconds as Zulip's exports write datetimes.
fn float(seconds: i64) -> Value {
    json!(seconds as f64)
}
