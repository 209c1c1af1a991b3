//! Bot storage (`GET`/`PUT`/`DELETE /bot_storage`, Zulip's `zerver/lib/bot_storage.py`):
//! a user's key-value strings, kept in SQLite only (never in the state). Writes check
//! against the stored rows inside their transaction; reads run on the reader threads.

use rusqlite::{Connection, Transaction};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::reader::HistoryRead;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::bots as db;

/// Zulip's `USER_STATE_SIZE_LIMIT`: characters of keys and values a user may store.
pub const STORAGE_SIZE_LIMIT: i64 = 10_000_000;

fn key_missing() -> ApiError {
    ApiError::bad_request("Key does not exist.")
}

/// `PUT /bot_storage`: entries to store (replacing the values of existing keys).
#[derive(Debug, Clone)]
pub struct StoragePut {
    pub user: UserId,
    pub entries: Vec<(String, String)>,
}

impl Change for StoragePut {
    type Output = ();

    /// Refused as a whole when the storage would grow past the limit.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let mut difference = 0;
        for (key, value) in &self.entries {
            let size = (key.chars().count() + value.chars().count()) as i64;
            difference += size - db::storage_size(tx, self.user, Some(key))?;
        }
        let new_size = db::storage_size(tx, self.user, None)? + difference;
        if new_size > STORAGE_SIZE_LIMIT {
            return Err(ApiError::bad_request(format!(
                "Request exceeds storage limit by {} characters. The limit is {STORAGE_SIZE_LIMIT} characters.",
                new_size - STORAGE_SIZE_LIMIT
            )));
        }
        for (key, value) in &self.entries {
            db::storage_put(tx, self.user, key, value)?;
        }
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}

/// `DELETE /bot_storage`: the keys to remove (none or an empty list: every key).
#[derive(Debug, Clone)]
pub struct StorageRemove {
    pub user: UserId,
    pub keys: Option<Vec<String>>,
}

impl Change for StorageRemove {
    type Output = ();

    /// Refused as a whole when one of the keys is not stored.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let keys = match self.keys.take().filter(|k| !k.is_empty()) {
            Some(keys) => keys,
            None => db::storage_keys(tx, self.user)?,
        };
        let mut distinct: Vec<&String> = keys.iter().collect();
        distinct.sort();
        distinct.dedup();
        let mut found = 0;
        for key in &distinct {
            if db::storage_get(tx, self.user, key)?.is_some() {
                found += 1;
            }
        }
        if found < keys.len() {
            return Err(key_missing());
        }
        for key in distinct {
            db::storage_remove(tx, self.user, key)?;
        }
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}

/// `GET /bot_storage`: the values of `keys` (none or an empty list: every key).
#[derive(Debug, Clone)]
pub struct StorageGet {
    pub user: UserId,
    pub keys: Option<Vec<String>>,
}

impl HistoryRead for StorageGet {
    type Output = Map<String, Value>;

    fn run(self, _: &RealmState, conn: &Connection) -> ApiResult<Map<String, Value>> {
        let keys = match self.keys.filter(|k| !k.is_empty()) {
            Some(keys) => keys,
            None => db::storage_keys(conn, self.user)?,
        };
        let mut out = Map::new();
        for key in keys {
            let value = db::storage_get(conn, self.user, &key)?.ok_or_else(key_missing)?;
            out.insert(key, Value::String(value));
        }
        Ok(out)
    }
}
