//! Numbered SQL migrations from `sql/`, embedded in the binary and tracked with
//! `PRAGMA user_version`.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreResult;

/// Migration `i` (0-based) brings the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("../../../sql/0001_initial.sql"),
    include_str!("../../../sql/0002_event_queues.sql"),
    include_str!("../../../sql/0003_custom_profile_fields.sql"),
    include_str!("../../../sql/0004_channels.sql"),
    include_str!("../../../sql/0005_messages.sql"),
];

/// Applies every migration newer than the database's `user_version`, each in its own
/// transaction together with the version bump.
pub(crate) fn apply(conn: &mut Connection) -> StoreResult<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= current {
            continue;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {version}"))?;
        tx.commit()?;
        tracing::info!(version, "applied database migration");
    }
    Ok(())
}
