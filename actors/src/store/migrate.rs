//! Numbered SQL migrations from `sql/`, embedded in the binary and tracked with
//! `PRAGMA user_version`.

use rusqlite::{Connection, TransactionBehavior};

use super::{StoreError, StoreResult};

/// Migration `i` (0-based) brings the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("../../../sql/0001_initial.sql"),
    include_str!("../../../sql/0002_event_queues.sql"),
    include_str!("../../../sql/0003_custom_profile_fields.sql"),
    include_str!("../../../sql/0004_channels.sql"),
    include_str!("../../../sql/0005_messages.sql"),
    include_str!("../../../sql/0006_message_indexes.sql"),
    include_str!("../../../sql/0007_sanitize_rendered_html.sql"),
    include_str!("../../../sql/0008_presence.sql"),
    include_str!("../../../sql/0009_user_status_alert_words_muted_users.sql"),
    include_str!("../../../sql/0010_drafts_navigation_views_saved_snippets.sql"),
    include_str!("../../../sql/0011_push.sql"),
    include_str!("../../../sql/0012_invites_mail_system_bots.sql"),
    include_str!("../../../sql/0013_uploads.sql"),
    include_str!("../../../sql/0014_scheduled_messages.sql"),
    include_str!("../../../sql/0015_widgets.sql"),
    include_str!("../../../sql/0016_linkifiers.sql"),
    include_str!("../../../sql/0017_bots.sql"),
    include_str!("../../../sql/0018_event_queue_events.sql"),
    include_str!("../../../sql/0019_web_sessions.sql"),
    include_str!("../../../sql/0020_realm_exports.sql"),
    include_str!("../../../sql/0021_realm_playgrounds.sql"),
    // 0022 landed (stop 33) as the home view rename, then was renumbered 0024 by a merge that
    // also landed (stop 34): restored at 22, the first two then come next, so that a database
    // from either release holds, at its version, exactly the migrations listed up to it.
    include_str!("../../../sql/0022_web_home_view_recent.sql"),
    include_str!("../../../sql/0023_client_devices.sql"),
    include_str!("../../../sql/0024_messages_features.sql"),
    include_str!("../../../sql/0025_users_imported_stubs_profile_matching.sql"),
    include_str!("../../../sql/0026_message_expiry_indexes.sql"),
    include_str!("../../../sql/0027_default_avatar_source_of_existing_realms.sql"),
];

/// Applies every migration newer than the database's `user_version`, each in its own
/// transaction together with the version bump.
pub(crate) fn apply(conn: &mut Connection) -> StoreResult<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > MIGRATIONS.len() as i64 {
        // A downgrade: this build would not know the newer tables and columns.
        return Err(StoreError::Corrupt(format!(
            "the database's schema (version {current}) is newer than this build's ({}): run the newer agora, \
             or restore a backup made before the upgrade",
            MIGRATIONS.len()
        )));
    }
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
    super::fixes::run_pending(conn)
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    /// The SHA-256 of every migration that has landed. A landed migration never changes: a
    /// database already past it would never see the change. Add a new migration instead,
    /// and its checksum here once it lands.
    const LANDED: &[(&str, &str)] = &[
        ("0001_initial.sql", "f1870622e6fe9e082ef82c1300c6d1bbd668748f1c8a846d1594c375820efedb"),
        ("0002_event_queues.sql", "74a5a04bbb32e3e358e4ed5092362e424029285d264e38efda73970697f62e6e"),
        ("0003_custom_profile_fields.sql", "b233e02fb4a9adbb5e4bc0317d4dbb162755c87a5567395b5daa290d458c6329"),
        ("0004_channels.sql", "b338b56d0ef18c04337912edc52000a221ba3ac989236e4b605bd43c77b26c93"),
        ("0005_messages.sql", "3f0d586c87386c101f0c35c06aded8888f411ad993e7135848674fa94fbf8715"),
        ("0006_message_indexes.sql", "ead566cf3e9f0a5665af636f86b895b5e7a959952628591082eb1e46e80df873"),
        ("0007_sanitize_rendered_html.sql", "d42e5dcf3111f35a31e34f907c94ad1101926773c57a4cf78e261b80928d5800"),
        ("0008_presence.sql", "667b0aa31c2a782d219f7284f6f7abfc02028e8c624d799c334f154c0f66846e"),
        (
            "0009_user_status_alert_words_muted_users.sql",
            "188a8e4a706f99e47f93f71a74a0e0cbdc74cd1bb719ca8edb65cff77b0e38dc",
        ),
        (
            "0010_drafts_navigation_views_saved_snippets.sql",
            "0bdc6247f3bfce51c29b74000630978e33d4f88c527f4779ce5127f7c872b3c4",
        ),
        ("0011_push.sql", "ebd86fca1e3af50838a69eaf36e683106f727c7c9a55a80d19c16827fe14544b"),
        ("0012_invites_mail_system_bots.sql", "a652a0a41abee1a3440176222d51bd218d791618c4586f969550d5de8334e9a0"),
        ("0013_uploads.sql", "f5d64cd2dc5f76870b4dea70aab5e36d5e079c6026160f8180932637b5da3481"),
        ("0014_scheduled_messages.sql", "bb03e8514455ccf0f8447674538c3ab67990b37ab1129225ec1181c5c7192178"),
        ("0015_widgets.sql", "0f11681ebaf1612d3924f5612ecae8a5d3cea804991dc1177643a713223769bc"),
        ("0016_linkifiers.sql", "d93d7f78d128b766bc84ce544b9e690033e07e1587880faa43612ab768e1759e"),
        ("0017_bots.sql", "0c59abed01657cafd5e3a3df586202a3c439a6b4d3bf64c5711ad2a790e2920c"),
        ("0018_event_queue_events.sql", "172acb3e9fc633fa6ec1ee60214b68f07585d5b824d61d932f4b874afbb2197c"),
        ("0019_web_sessions.sql", "da36e01911b1cdfe711d28c5cb9ac29298313a3144275224ecd31ced9f1ea52b"),
        ("0020_realm_exports.sql", "b415bc8100aca577a0f0eb102d55a25395d159bb2be8a579faca88ecc4624fa2"),
        ("0021_realm_playgrounds.sql", "888b108c4e13200c0691c0ec45d1bef6f0e0655796bd75d49e8a4be29cce96fc"),
        ("0022_web_home_view_recent.sql", "9e5f53b6d1f878c6a0f612911d42ec7f13be73e1d8e1319b098779c5853fcb13"),
        ("0023_client_devices.sql", "a31c492dd1f2e9400195078ef4b14ec08754c36905a2d11af351a23cc50a3025"),
        ("0024_messages_features.sql", "ac176c006598d1e9b8769608c20951743d9e1f997e7c4df48cf39c2ed0c2eae0"),
        (
            "0025_users_imported_stubs_profile_matching.sql",
            "9daf9bacdeea847940c648fc7aa2f35c4c14f088c6586edb5856292592a65643",
        ),
    ];

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn landed_migrations_never_change() {
        assert!(LANDED.len() <= MIGRATIONS.len());
        for (i, (name, sum)) in LANDED.iter().enumerate() {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sql").join(name);
            let on_disk = std::fs::read(&path).unwrap();
            assert_eq!(hex(&Sha256::digest(&on_disk)), *sum, "{name} changed after it landed");
            assert_eq!(MIGRATIONS[i].as_bytes(), on_disk.as_slice(), "migration {} is not {name}", i + 1);
        }
    }

    /// Every file in `sql/` is in the list, at the place its number says, so two
    /// branches that each added a migration cannot land them out of order.
    #[test]
    fn migration_files_are_listed_in_their_numbered_order() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sql");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        names.sort();
        assert_eq!(names.len(), MIGRATIONS.len(), "every file in sql/ is listed in MIGRATIONS");
        for (i, name) in names.iter().enumerate() {
            let number: usize = name.split('_').next().unwrap().parse().unwrap();
            assert_eq!(number, i + 1, "{name} is numbered out of sequence");
            let on_disk = std::fs::read_to_string(dir.join(name)).unwrap();
            assert_eq!(MIGRATIONS[i], on_disk, "migration {} is not {name}", i + 1);
        }
    }

    fn index_names(conn: &Connection) -> Vec<String> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    #[test]
    fn a_database_from_before_the_indexes_gets_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        // Version 5 as it was first landed: without the two indexes added to 0005 later.
        for sql in &MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch("DROP INDEX messages_channel; DROP INDEX user_messages_message; PRAGMA user_version = 5")
            .unwrap();
        assert!(!index_names(&conn).contains(&"user_messages_message".to_owned()));
        apply(&mut conn).unwrap();
        let names = index_names(&conn);
        assert!(names.contains(&"messages_channel".to_owned()), "{names:?}");
        assert!(names.contains(&"user_messages_message".to_owned()), "{names:?}");
        // And a database created whole (which had them from 0005) migrates too.
        let mut fresh = Connection::open_in_memory().unwrap();
        apply(&mut fresh).unwrap();
        assert_eq!(index_names(&fresh), names);
    }

    #[test]
    fn organizations_from_before_the_system_bots_get_them_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..9] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 9;
             INSERT INTO realms (subdomain, name, date_created) VALUES ('', 'Root', 1), ('acme', 'Acme', 2);
             INSERT INTO users (realm_id, delivery_email, email, full_name, role, date_joined, api_key)
                 VALUES (1, 'owner@root.test', 'owner@root.test', 'Owner', 100, 1, 'k1');",
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let bots: Vec<(i64, i64, String, bool)> = {
            let mut stmt = conn
                .prepare("SELECT id, realm_id, full_name, is_bot FROM users WHERE delivery_email LIKE '%@zulip.com' ORDER BY id")
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let names: Vec<(i64, &str)> = bots.iter().map(|(_, realm, name, _)| (*realm, name.as_str())).collect();
        assert_eq!(
            names,
            [
                (1, "Email Gateway"),
                (1, "Notification Bot"),
                (1, "Welcome Bot"),
                (2, "Email Gateway"),
                (2, "Notification Bot"),
                (2, "Welcome Bot")
            ]
        );
        assert!(bots.iter().all(|b| b.3) && bots[0].0 == 2, "after the existing users: {bots:?}");
        let keys: i64 = conn.query_row("SELECT COUNT(DISTINCT api_key) FROM users", [], |r| r.get(0)).unwrap();
        assert_eq!(keys, 7);
    }

    #[test]
    fn the_gif_rating_is_renamed_and_linkifiers_get_their_reverse_fields() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..21] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            r#"PRAGMA user_version = 21;
             INSERT INTO realms (subdomain, name, date_created, settings)
                 VALUES ('', 'Root', 1, '{"giphy_rating": 3, "name_changes_disabled": true}'), ('acme', 'Acme', 2, '{}');
             INSERT INTO realm_linkifiers (realm_id, pattern, url_template) VALUES (1, '#(?P<id>[0-9]+)', 'https://e/{id}');"#,
        )
        .unwrap();
        apply(&mut conn).unwrap();
        let settings: Vec<String> = conn
            .prepare("SELECT settings FROM realms ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Organizations from before keep Gravatar as their default avatar (0027).
        assert_eq!(
            settings,
            [
                r#"{"name_changes_disabled":true,"gif_rating_policy":3,"default_avatar_source":"G"}"#,
                r#"{"default_avatar_source":"G"}"#
            ]
        );
        let row: (Option<String>, Option<String>, String) = conn
            .query_row(
                "SELECT example_input, reverse_template, alternative_url_templates FROM realm_linkifiers",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(row, (None, None, "[]".to_owned()));
    }
}
