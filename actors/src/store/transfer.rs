//! Moving organizations in and out: an import writes a new organization under a subdomain
//! no request can name, publishes it in one step when everything is written, and removes
//! every row of it when anything fails.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreResult;
use crate::ids::{MessageId, RealmId, UserId};

/// The prefix of the subdomain an organization has while it is being imported: a space and
/// a slash can never come from a `Host` header, so no request reaches it.
pub const IMPORTING: &str = "import in progress/";

/// Organizations left half-imported (`(id, subdomain)`), for the next import to clean up.
pub fn unfinished_imports(conn: &Connection) -> StoreResult<Vec<(RealmId, String)>> {
    let mut stmt = conn.prepare("SELECT id, subdomain FROM realms WHERE subdomain LIKE ?1 || '%' ORDER BY id")?;
    let rows = stmt.query_map([IMPORTING], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Whether an organization holds `subdomain` (or is being imported under it).
pub fn subdomain_taken(conn: &Connection, subdomain: &str) -> StoreResult<bool> {
    Ok(conn.query_row("SELECT EXISTS (SELECT 1 FROM realms WHERE subdomain = ?1)", [subdomain], |r| r.get(0))?)
}

/// Gives an imported organization its subdomain and state: from now on it is served.
pub fn publish(conn: &Connection, realm: RealmId, subdomain: &str, deactivated: bool) -> StoreResult<()> {
    conn.execute(
        "UPDATE realms SET subdomain = ?2, deactivated = ?3 WHERE id = ?1",
        params![realm, subdomain, deactivated],
    )?;
    Ok(())
}

/// A message as an import writes it: everything it had where it came from.
#[derive(Debug, Clone)]
pub struct ImportedMessage<'a> {
    pub realm_id: RealmId,
    pub sender_id: UserId,
    pub channel_id: Option<crate::ids::ChannelId>,
    pub topic: &'a str,
    pub content: &'a str,
    pub rendered_content: &'a str,
    pub date_sent: i64,
    pub dm_key: Option<&'a str>,
    pub sending_client: &'a str,
    pub last_edit_time: Option<i64>,
    pub last_moved_time: Option<i64>,
    pub edit_history: Option<&'a str>,
    pub has_link: bool,
    pub has_image: bool,
    pub has_attachment: bool,
}

/// Stores rows of `user_messages` (`(user, message, flags)`). Given in the order of the
/// table's keys (by user, then message), a batch lands in few pages of each index.
pub fn insert_user_messages(conn: &Connection, rows: &[(UserId, MessageId, i64)]) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached("INSERT INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?;
    for (user, message, flags) in rows {
        stmt.execute(params![user, message, flags])?;
    }
    Ok(())
}

/// Stores an imported message, its full-text row and its recipients' rows
/// (`(user, flags)`); returns its id.
pub fn insert_message(
    conn: &Connection,
    m: &ImportedMessage<'_>,
    recipients: &[(UserId, i64)],
) -> StoreResult<MessageId> {
    conn.prepare_cached(
        "INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent,
                               dm_key, sending_client, last_edit_time, last_moved_time, edit_history,
                               has_link, has_image, has_attachment)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        m.realm_id,
        m.sender_id,
        m.channel_id,
        m.topic,
        m.content,
        m.rendered_content,
        m.date_sent,
        m.dm_key,
        m.sending_client,
        m.last_edit_time,
        m.last_moved_time,
        m.edit_history,
        m.has_link,
        m.has_image,
        m.has_attachment
    ])?;
    let id = MessageId(conn.last_insert_rowid());
    conn.prepare_cached("INSERT INTO messages_fts (rowid, content, topic) VALUES (?1, ?2, ?3)")?
        .execute(params![id, m.content, m.topic])?;
    let mut stmt = conn.prepare_cached("INSERT INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, ?3)")?;
    for (user, flags) in recipients {
        stmt.execute(params![user, id, flags])?;
    }
    Ok(id)
}

/// Gives the connection of an import a page cache that holds the indexes it writes into
/// (256 MiB at most, taken as it fills; SQLite's default is 2 MiB, which makes every
/// row of `user_messages` a page read).
pub fn bulk_cache(conn: &Connection) -> StoreResult<()> {
    conn.pragma_update(None, "cache_size", -262_144)?;
    conn.pragma_update(None, "wal_autocheckpoint", 20_000)?;
    Ok(())
}

/// The id an API key is already used by, if any (keys are unique across the server).
pub fn api_key_user(conn: &Connection, api_key: &str) -> StoreResult<Option<UserId>> {
    Ok(conn.query_row("SELECT id FROM users WHERE api_key = ?1", [api_key], |r| r.get(0)).optional()?)
}

/// Whether a message is in a channel that is not private (its uploads are then readable by
/// the organization's members).
pub fn in_public_channel(conn: &Connection, message: MessageId) -> StoreResult<bool> {
    Ok(conn
        .query_row(
            "SELECT c.invite_only = 0 FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = ?1",
            [message],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(false))
}

/// Records an imported upload's image dimensions; its thumbnails are then made by the
/// server's worker, as for a new upload.
pub fn set_image(conn: &Connection, attachment: i64, width: u32, height: u32, frames: u32) -> StoreResult<()> {
    conn.execute(
        "UPDATE attachments SET image_width = ?2, image_height = ?3, image_frames = ?4, thumbnails = '[]' WHERE id = ?1",
        params![attachment, width, height, frames],
    )?;
    Ok(())
}

/// An organization's messages after `after`, oldest first, at most `limit`: each with
/// whether it has a link, an image and an attachment.
pub fn messages_page(
    conn: &Connection,
    realm: RealmId,
    after: MessageId,
    limit: usize,
) -> StoreResult<Vec<(super::messages::MessageRow, [bool; 3])>> {
    let sql = format!(
        "SELECT {}, m.has_link, m.has_image, m.has_attachment FROM messages m
         WHERE m.realm_id = ?1 AND m.id > ?2 ORDER BY m.id LIMIT ?3",
        super::messages::MESSAGE_COLUMNS
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![realm, after, limit as i64], |r| {
        Ok((super::messages::read_row(r, 0)?, [r.get(12)?, r.get(13)?, r.get(14)?]))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every `(message, user, flags)` row of these messages.
pub fn user_messages_of(conn: &Connection, messages: &[MessageId]) -> StoreResult<Vec<(MessageId, UserId, i64)>> {
    let ids = serde_json::to_string(messages).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(
        "SELECT message_id, user_id, flags FROM user_messages
         WHERE message_id IN (SELECT value FROM json_each(?1)) ORDER BY message_id, user_id",
    )?;
    let rows = stmt.query_map([ids], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Removes an organization and everything that belongs to it, in an order the foreign keys
/// accept. Used for an import that failed; nothing of the organization is left.
pub fn delete_realm(conn: &Connection, realm: RealmId) -> StoreResult<()> {
    const USERS: &str = "(SELECT id FROM users WHERE realm_id = ?1)";
    const MESSAGES: &str = "(SELECT id FROM messages WHERE realm_id = ?1)";
    // The full-text index is an external-content table: a row is removed with its values.
    conn.execute(
        "INSERT INTO messages_fts (messages_fts, rowid, content, topic)
         SELECT 'delete', id, content, topic FROM messages WHERE realm_id = ?1",
        [realm],
    )?;
    let statements = [
        format!("DELETE FROM attachment_messages WHERE message_id IN {MESSAGES}"),
        "DELETE FROM attachment_messages WHERE attachment_id IN (SELECT id FROM attachments WHERE realm_id = ?1)"
            .to_owned(),
        format!("DELETE FROM submessages WHERE message_id IN {MESSAGES}"),
        format!("DELETE FROM reactions WHERE message_id IN {MESSAGES}"),
        format!("DELETE FROM user_messages WHERE message_id IN {MESSAGES}"),
        format!("DELETE FROM user_messages WHERE user_id IN {USERS}"),
        format!("DELETE FROM reactions WHERE user_id IN {USERS}"),
        "DELETE FROM outbox WHERE realm_id = ?1".to_owned(),
        "DELETE FROM outgoing_webhook_jobs WHERE realm_id = ?1".to_owned(),
        "DELETE FROM scheduled_messages WHERE realm_id = ?1".to_owned(),
        format!("DELETE FROM user_topics WHERE user_id IN {USERS}"),
        format!("DELETE FROM subscriptions WHERE user_id IN {USERS}"),
        "DELETE FROM subscriptions WHERE channel_id IN (SELECT id FROM channels WHERE realm_id = ?1)".to_owned(),
        "DELETE FROM default_channels WHERE realm_id = ?1".to_owned(),
        format!("DELETE FROM custom_profile_field_values WHERE user_id IN {USERS}"),
        "DELETE FROM custom_profile_fields WHERE realm_id = ?1".to_owned(),
        "DELETE FROM user_group_members WHERE group_id IN (SELECT id FROM user_groups WHERE realm_id = ?1)".to_owned(),
        format!("DELETE FROM user_group_members WHERE user_id IN {USERS}"),
        "DELETE FROM user_group_subgroups WHERE supergroup_id IN (SELECT id FROM user_groups WHERE realm_id = ?1)
             OR subgroup_id IN (SELECT id FROM user_groups WHERE realm_id = ?1)"
            .to_owned(),
        format!("DELETE FROM bot_profiles WHERE user_id IN {USERS}"),
        format!("DELETE FROM bot_storage WHERE user_id IN {USERS}"),
        "DELETE FROM messages WHERE realm_id = ?1".to_owned(),
        "DELETE FROM attachments WHERE realm_id = ?1".to_owned(),
        "DELETE FROM realm_emoji WHERE realm_id = ?1".to_owned(),
        "DELETE FROM realm_linkifiers WHERE realm_id = ?1".to_owned(),
        "DELETE FROM dm_groups WHERE realm_id = ?1".to_owned(),
        "DELETE FROM user_presence WHERE realm_id = ?1".to_owned(),
        "DELETE FROM presence_sequences WHERE realm_id = ?1".to_owned(),
        "DELETE FROM user_statuses WHERE realm_id = ?1".to_owned(),
        "DELETE FROM alert_words WHERE realm_id = ?1".to_owned(),
        "DELETE FROM muted_users WHERE realm_id = ?1".to_owned(),
        "DELETE FROM drafts WHERE realm_id = ?1".to_owned(),
        "DELETE FROM navigation_views WHERE realm_id = ?1".to_owned(),
        "DELETE FROM saved_snippets WHERE realm_id = ?1".to_owned(),
        "DELETE FROM push_outbox WHERE realm_id = ?1".to_owned(),
        "DELETE FROM push_devices WHERE realm_id = ?1".to_owned(),
        "DELETE FROM client_devices WHERE realm_id = ?1".to_owned(),
        "DELETE FROM invite_sends WHERE realm_id = ?1".to_owned(),
        "DELETE FROM invites WHERE realm_id = ?1".to_owned(),
        "DELETE FROM event_queue_events WHERE realm_id = ?1".to_owned(),
        "DELETE FROM event_queues WHERE realm_id = ?1".to_owned(),
        "DELETE FROM web_sessions WHERE realm_id = ?1".to_owned(),
        "DELETE FROM realm_exports WHERE realm_id = ?1".to_owned(),
        "DELETE FROM password_resets WHERE realm_id = ?1".to_owned(),
        "DELETE FROM channels WHERE realm_id = ?1".to_owned(),
        "DELETE FROM channel_folders WHERE realm_id = ?1".to_owned(),
        "DELETE FROM user_groups WHERE realm_id = ?1".to_owned(),
        // Bots' owners point at users of the same organization.
        "UPDATE users SET bot_owner_id = NULL WHERE realm_id = ?1".to_owned(),
        "DELETE FROM users WHERE realm_id = ?1".to_owned(),
        "DELETE FROM realms WHERE id = ?1".to_owned(),
    ];
    for sql in &statements {
        conn.execute(sql, [realm])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// Every table's row count, the full-text index's included.
    fn counts(conn: &Connection) -> Vec<(String, i64)> {
        let tables: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                 AND name NOT LIKE 'messages_fts_%' ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut out: Vec<(String, i64)> = tables
            .into_iter()
            .map(|t| {
                let n = conn.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0)).unwrap();
                (t, n)
            })
            .collect();
        let indexed: i64 = conn
            .query_row("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'imported'", [], |r| r.get(0))
            .unwrap();
        out.push(("messages_fts matches".into(), indexed));
        out
    }

    #[test]
    fn deleting_an_organization_leaves_no_row_of_it_and_touches_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let conn = store.conn().unwrap();
        let seed = "INSERT INTO realms (subdomain, name, date_created) VALUES (?1, ?1, 0)";
        let fill = |realm: RealmId, tag: &str| {
            let sql = format!(
                "INSERT INTO users (realm_id, delivery_email, email, full_name, role, date_joined, api_key)
                   VALUES ({r}, '{tag}a@x.test', '{tag}a@x.test', 'A', 100, 0, '{tag}ka');
                 INSERT INTO users (realm_id, delivery_email, email, full_name, role, is_bot, bot_type, bot_owner_id,
                                    date_joined, api_key)
                   VALUES ({r}, '{tag}b@x.test', '{tag}b@x.test', 'B', 400, 1, 1, last_insert_rowid(), 0, '{tag}kb');
                 INSERT INTO user_groups (realm_id, name) VALUES ({r}, 'g');
                 INSERT INTO user_group_members (group_id, user_id)
                   SELECT g.id, u.id FROM user_groups g, users u WHERE g.realm_id = {r} AND u.realm_id = {r};
                 INSERT INTO channels (realm_id, name, date_created) VALUES ({r}, 'c', 0);
                 INSERT INTO subscriptions (user_id, channel_id, color)
                   SELECT u.id, c.id, '#fff' FROM users u, channels c WHERE u.realm_id = {r} AND c.realm_id = {r};",
                r = realm.0
            );
            conn.execute_batch(&sql).unwrap();
            let user: UserId = conn
                .query_row(&format!("SELECT min(id) FROM users WHERE realm_id = {}", realm.0), [], |r| r.get(0))
                .unwrap();
            let channel: crate::ids::ChannelId = conn
                .query_row(&format!("SELECT id FROM channels WHERE realm_id = {}", realm.0), [], |r| r.get(0))
                .unwrap();
            let m = ImportedMessage {
                realm_id: realm,
                sender_id: user,
                channel_id: Some(channel),
                topic: "imported",
                content: "imported words",
                rendered_content: "<p>imported words</p>",
                date_sent: 1,
                dm_key: None,
                sending_client: "test",
                last_edit_time: None,
                last_moved_time: None,
                edit_history: None,
                has_link: false,
                has_image: false,
                has_attachment: false,
            };
            let id = insert_message(&conn, &m, &[(user, 1)]).unwrap();
            conn.execute(
                "INSERT INTO reactions (message_id, user_id, emoji_name, emoji_code, reaction_type)
                 VALUES (?1, ?2, 'smile', '1f604', 'unicode_emoji')",
                params![id, user],
            )
            .unwrap();
        };
        conn.execute(seed, ["kept"]).unwrap();
        let kept = RealmId(conn.last_insert_rowid());
        fill(kept, "k");
        let before = counts(&conn);
        conn.execute(seed, [format!("{IMPORTING}1/x")]).unwrap();
        let gone = RealmId(conn.last_insert_rowid());
        fill(gone, "g");
        assert_eq!(unfinished_imports(&conn).unwrap(), vec![(gone, format!("{IMPORTING}1/x"))]);
        assert_ne!(counts(&conn), before);
        delete_realm(&conn, gone).unwrap();
        assert_eq!(counts(&conn), before);
        let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(integrity, "ok");
        let violations: i64 =
            conn.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
        assert_eq!(violations, 0);
    }
}
