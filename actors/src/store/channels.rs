//! Channels, subscriptions, default channels, channel folders and per-user topic
//! policies.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{Map, Value};

use super::realms::json_object;
use super::{flag, StoreResult};
use crate::ids::{ChannelId, FolderId, RealmId, UserId};
use crate::realm::model::{Channel, ChannelFolder, Subscription, UserTopic};

const CHANNEL_COLUMNS: &str = "id, name, description, rendered_description, invite_only, is_web_public, \
    history_public_to_subscribers, message_retention_days, topics_policy, folder_id, creator_id, date_created, \
    is_archived, settings";

fn channel_row(row: &Row<'_>) -> rusqlite::Result<(Channel, String)> {
    Ok((
        Channel {
            id: row.get(0)?,
            name: row.get(1)?,
            description: row.get(2)?,
            rendered_description: row.get(3)?,
            invite_only: flag(row.get(4)?),
            is_web_public: flag(row.get(5)?),
            history_public_to_subscribers: flag(row.get(6)?),
            message_retention_days: row.get(7)?,
            topics_policy: row.get(8)?,
            folder_id: row.get(9)?,
            creator_id: row.get(10)?,
            date_created: row.get(11)?,
            is_archived: flag(row.get(12)?),
            settings: Map::new(),
        },
        row.get(13)?,
    ))
}

/// Every channel of a realm (archived ones included), by id.
pub fn in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<Channel>> {
    let sql = format!("SELECT {CHANNEL_COLUMNS} FROM channels WHERE realm_id = ?1 ORDER BY id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([realm_id], channel_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter()
        .map(|(mut channel, settings)| {
            channel.settings = json_object(&settings)?;
            Ok(channel)
        })
        .collect()
}

/// Inserts a channel and returns its id (`channel.id` is ignored).
pub fn insert(conn: &Connection, realm_id: RealmId, channel: &Channel) -> StoreResult<ChannelId> {
    conn.execute(
        "INSERT INTO channels (realm_id, name, description, rendered_description, invite_only, is_web_public,
            history_public_to_subscribers, message_retention_days, topics_policy, folder_id, creator_id,
            date_created, is_archived, settings)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            realm_id,
            channel.name,
            channel.description,
            channel.rendered_description,
            channel.invite_only,
            channel.is_web_public,
            channel.history_public_to_subscribers,
            channel.message_retention_days,
            channel.topics_policy,
            channel.folder_id,
            channel.creator_id,
            channel.date_created,
            channel.is_archived,
            Value::Object(channel.settings.clone()).to_string(),
        ],
    )?;
    Ok(ChannelId(conn.last_insert_rowid()))
}

/// Writes every column of an existing channel.
pub fn update(conn: &Connection, channel: &Channel) -> StoreResult<()> {
    conn.execute(
        "UPDATE channels SET name = ?2, description = ?3, rendered_description = ?4, invite_only = ?5,
            is_web_public = ?6, history_public_to_subscribers = ?7, message_retention_days = ?8,
            topics_policy = ?9, folder_id = ?10, is_archived = ?11, settings = ?12
         WHERE id = ?1",
        params![
            channel.id,
            channel.name,
            channel.description,
            channel.rendered_description,
            channel.invite_only,
            channel.is_web_public,
            channel.history_public_to_subscribers,
            channel.message_retention_days,
            channel.topics_policy,
            channel.folder_id,
            channel.is_archived,
            Value::Object(channel.settings.clone()).to_string(),
        ],
    )?;
    Ok(())
}

const SUBSCRIPTION_COLUMNS: &str = "s.user_id, s.channel_id, s.active, s.color, s.is_muted, s.pin_to_top, \
    s.desktop_notifications, s.audible_notifications, s.push_notifications, s.email_notifications, \
    s.wildcard_mentions_notify";

fn optional_flag(v: Option<i64>) -> Option<bool> {
    v.map(flag)
}

/// Every subscription (active or not) to the realm's channels.
pub fn subscriptions_in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<Subscription>> {
    let sql = format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM subscriptions s JOIN channels c ON c.id = s.channel_id
         WHERE c.realm_id = ?1 ORDER BY s.channel_id, s.user_id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([realm_id], |row| {
        Ok(Subscription {
            user_id: row.get(0)?,
            channel_id: row.get(1)?,
            active: flag(row.get(2)?),
            color: row.get(3)?,
            is_muted: flag(row.get(4)?),
            pin_to_top: flag(row.get(5)?),
            desktop_notifications: optional_flag(row.get(6)?),
            audible_notifications: optional_flag(row.get(7)?),
            push_notifications: optional_flag(row.get(8)?),
            email_notifications: optional_flag(row.get(9)?),
            wildcard_mentions_notify: optional_flag(row.get(10)?),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Inserts or replaces a subscription row.
pub fn put_subscription(conn: &Connection, sub: &Subscription) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT OR REPLACE INTO subscriptions (user_id, channel_id, active, color, is_muted, pin_to_top,
            desktop_notifications, audible_notifications, push_notifications, email_notifications,
            wildcard_mentions_notify)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    stmt.execute(params![
        sub.user_id,
        sub.channel_id,
        sub.active,
        sub.color,
        sub.is_muted,
        sub.pin_to_top,
        sub.desktop_notifications,
        sub.audible_notifications,
        sub.push_notifications,
        sub.email_notifications,
        sub.wildcard_mentions_notify,
    ])?;
    Ok(())
}

/// The realm's default channels.
pub fn default_channels(conn: &Connection, realm_id: RealmId) -> StoreResult<BTreeSet<ChannelId>> {
    let mut stmt = conn.prepare("SELECT channel_id FROM default_channels WHERE realm_id = ?1")?;
    let rows = stmt.query_map([realm_id], |r| r.get::<_, ChannelId>(0))?;
    Ok(rows.collect::<rusqlite::Result<BTreeSet<_>>>()?)
}

/// Makes a channel a default channel of its realm (or no longer one).
pub fn set_default_channel(conn: &Connection, realm_id: RealmId, channel: ChannelId, default: bool) -> StoreResult<()> {
    if default {
        conn.execute(
            "INSERT OR IGNORE INTO default_channels (realm_id, channel_id) VALUES (?1, ?2)",
            params![realm_id, channel],
        )?;
    } else {
        conn.execute(
            "DELETE FROM default_channels WHERE realm_id = ?1 AND channel_id = ?2",
            params![realm_id, channel],
        )?;
    }
    Ok(())
}

fn folder_row(row: &Row<'_>) -> rusqlite::Result<ChannelFolder> {
    Ok(ChannelFolder {
        id: row.get(0)?,
        name: row.get(1)?,
        description: row.get(2)?,
        rendered_description: row.get(3)?,
        order: row.get(4)?,
        is_archived: flag(row.get(5)?),
        creator_id: row.get(6)?,
        date_created: row.get(7)?,
    })
}

/// Every channel folder of a realm, in their order.
pub fn folders_in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<ChannelFolder>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, description, rendered_description, sort_order, is_archived, creator_id, date_created
         FROM channel_folders WHERE realm_id = ?1 ORDER BY sort_order, id",
    )?;
    let rows = stmt.query_map([realm_id], folder_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Inserts a folder and returns its id (`folder.id` is ignored).
pub fn insert_folder(conn: &Connection, realm_id: RealmId, folder: &ChannelFolder) -> StoreResult<FolderId> {
    conn.execute(
        "INSERT INTO channel_folders (realm_id, name, description, rendered_description, sort_order, is_archived,
            creator_id, date_created)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            realm_id,
            folder.name,
            folder.description,
            folder.rendered_description,
            folder.order,
            folder.is_archived,
            folder.creator_id,
            folder.date_created,
        ],
    )?;
    Ok(FolderId(conn.last_insert_rowid()))
}

/// Writes the changeable columns of a folder.
pub fn update_folder(conn: &Connection, folder: &ChannelFolder) -> StoreResult<()> {
    conn.execute(
        "UPDATE channel_folders SET name = ?2, description = ?3, rendered_description = ?4, sort_order = ?5,
            is_archived = ?6
         WHERE id = ?1",
        params![
            folder.id,
            folder.name,
            folder.description,
            folder.rendered_description,
            folder.order,
            folder.is_archived
        ],
    )?;
    Ok(())
}

/// Sets a folder's position in the organization's list.
pub fn set_folder_order(conn: &Connection, id: FolderId, order: i64) -> StoreResult<()> {
    conn.execute("UPDATE channel_folders SET sort_order = ?2 WHERE id = ?1", params![id, order])?;
    Ok(())
}

/// Every per-user topic policy in the realm.
pub fn user_topics_in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<Vec<UserTopic>> {
    let mut stmt = conn.prepare(
        "SELECT t.user_id, t.channel_id, t.topic, t.visibility_policy, t.last_updated
         FROM user_topics t JOIN channels c ON c.id = t.channel_id WHERE c.realm_id = ?1",
    )?;
    let rows = stmt.query_map([realm_id], |row| {
        Ok(UserTopic {
            user_id: row.get(0)?,
            channel_id: row.get(1)?,
            topic: row.get(2)?,
            visibility_policy: row.get(3)?,
            last_updated: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Sets a user's policy for a topic; policy 0 removes the row.
pub fn put_user_topic(conn: &Connection, topic: &UserTopic) -> StoreResult<()> {
    conn.execute(
        "DELETE FROM user_topics WHERE user_id = ?1 AND channel_id = ?2 AND topic = ?3 COLLATE NOCASE",
        params![topic.user_id, topic.channel_id, topic.topic],
    )?;
    if topic.visibility_policy != 0 {
        conn.execute(
            "INSERT INTO user_topics (user_id, channel_id, topic, visibility_policy, last_updated)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![topic.user_id, topic.channel_id, topic.topic, topic.visibility_policy, topic.last_updated],
        )?;
    }
    Ok(())
}

/// The id of a channel by its name in a realm, case-insensitively (for tools without a
/// loaded state).
pub fn id_by_name(conn: &Connection, realm_id: RealmId, name: &str) -> StoreResult<Option<ChannelId>> {
    Ok(conn
        .query_row(
            "SELECT id FROM channels WHERE realm_id = ?1 AND name = ?2 COLLATE NOCASE",
            params![realm_id, name],
            |r| r.get(0),
        )
        .optional()?)
}

/// The id of each channel's first message, for the realm's channels that have messages.
pub fn first_message_ids(
    conn: &Connection,
    realm_id: RealmId,
) -> StoreResult<std::collections::HashMap<ChannelId, i64>> {
    let mut stmt = conn.prepare(
        "SELECT channel_id, MIN(id) FROM messages WHERE realm_id = ?1 AND channel_id IS NOT NULL GROUP BY channel_id",
    )?;
    let rows = stmt.query_map([realm_id], |r| Ok((r.get::<_, ChannelId>(0)?, r.get::<_, i64>(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The first (lowest) message id of a channel, if it has any.
pub fn first_message_id(conn: &Connection, channel: ChannelId) -> StoreResult<Option<i64>> {
    Ok(conn.query_row("SELECT MIN(id) FROM messages WHERE channel_id = ?1", [channel], |r| r.get(0))?)
}

/// Whether a channel has a message outside the empty topic.
pub fn has_named_topic(conn: &Connection, channel: ChannelId) -> StoreResult<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM messages WHERE channel_id = ?1 AND topic != '' LIMIT 1", [channel], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Inserts a channel message (until the messages issue owns sending) and returns its id.
pub fn insert_message(
    conn: &Connection,
    realm_id: RealmId,
    sender: UserId,
    channel: ChannelId,
    topic: &str,
    content: &str,
    date_sent: i64,
) -> StoreResult<i64> {
    conn.execute(
        "INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, date_sent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![realm_id, sender, channel, topic, content, date_sent],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Records that `users` received `message` (Zulip's UserMessage rows, no flags).
pub fn insert_user_messages(conn: &Connection, message: i64, users: &[UserId]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR IGNORE INTO user_messages (user_id, message_id, flags) VALUES (?1, ?2, 0)")?;
    for user in users {
        stmt.execute(params![user, message])?;
    }
    Ok(())
}

/// The topics of a channel with the id of each one's latest message, newest first (Zulip's
/// `get_topic_history_for_stream`): with `received_by`, only messages that user received
/// (protected history). Topics differing only in case are one topic, named as in its
/// latest group.
pub fn channel_topics(
    conn: &Connection,
    channel: ChannelId,
    received_by: Option<UserId>,
) -> StoreResult<Vec<(String, i64)>> {
    let rows = match received_by {
        None => {
            let mut stmt = conn.prepare_cached(
                "SELECT topic, MAX(id) FROM messages WHERE channel_id = ?1 GROUP BY topic ORDER BY MAX(id) DESC",
            )?;
            let rows = stmt.query_map([channel], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<Vec<(String, i64)>>>()?
        }
        Some(user) => {
            let mut stmt = conn.prepare_cached(
                "SELECT m.topic, MAX(m.id) FROM messages m JOIN user_messages um ON um.message_id = m.id
                 WHERE um.user_id = ?1 AND m.channel_id = ?2 GROUP BY m.topic ORDER BY MAX(m.id) DESC",
            )?;
            let rows = stmt.query_map(params![user, channel], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<Vec<(String, i64)>>>()?
        }
    };
    let mut seen = std::collections::HashSet::new();
    Ok(rows.into_iter().filter(|(topic, _)| seen.insert(topic.to_lowercase())).collect())
}
