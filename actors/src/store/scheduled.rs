//! Scheduled messages and reminders of `sql/0014_scheduled_messages.sql`: the pending ones
//! are loaded into the realm state (`realm::scheduled_data`); `realm::scheduled` writes
//! them, and marks one delivered in the transaction that inserts the message it became.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{StoreError, StoreResult};
use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::realm::scheduled_data::{ReminderOf, ScheduledItem, ScheduledTarget};

/// Zulip's `ScheduledMessage.SEND_LATER`.
const SEND_LATER: i64 = 1;
/// Zulip's `ScheduledMessage.REMIND`.
const REMIND: i64 = 2;

const COLUMNS: &str = "id, sender_id, channel_id, topic, dm_participants, content, rendered_content, sending_client,
    scheduled_timestamp, read_by_sender, failed, failure_message, reminder_target_message_id, reminder_note";

fn item(r: &Row<'_>) -> rusqlite::Result<(ScheduledItem, Option<String>)> {
    let channel: Option<ChannelId> = r.get(2)?;
    let target_message: Option<MessageId> = r.get(12)?;
    let item = ScheduledItem {
        id: r.get(0)?,
        sender: r.get(1)?,
        target: match channel {
            Some(channel) => ScheduledTarget::Channel(channel, r.get(3)?),
            None => ScheduledTarget::Direct(Vec::new()),
        },
        content: r.get(5)?,
        rendered_content: r.get(6)?,
        client: r.get(7)?,
        deliver_at: r.get(8)?,
        read_by_sender: r.get(9)?,
        failed: r.get(10)?,
        failure_message: r.get(11)?,
        reminder: target_message.map(|message_id| ReminderOf {
            message_id,
            note: r.get::<_, Option<String>>(13).ok().flatten().unwrap_or_default(),
        }),
    };
    Ok((item, r.get(4)?))
}

/// Decodes the stored participants of a direct message into the item.
fn with_participants((mut item, participants): (ScheduledItem, Option<String>)) -> StoreResult<ScheduledItem> {
    if let (ScheduledTarget::Direct(ids), Some(json)) = (&mut item.target, participants) {
        *ids = serde_json::from_str(&json)
            .map_err(|e| StoreError::Corrupt(format!("scheduled message {} participants: {e}", item.id)))?;
    }
    Ok(item)
}

/// The undelivered rows of an organization (failed ones included).
pub fn pending_in_realm(conn: &Connection, realm: RealmId) -> StoreResult<Vec<ScheduledItem>> {
    let sql = format!("SELECT {COLUMNS} FROM scheduled_messages WHERE realm_id = ?1 AND delivered = 0 ORDER BY id");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([realm], item)?;
    rows.map(|r| with_participants(r?)).collect()
}

/// The subdomains of the organizations with undelivered rows still to try (not failed):
/// they are started with the server so that their messages go out without a request.
pub fn subdomains_with_pending(conn: &Connection) -> StoreResult<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT r.subdomain FROM scheduled_messages s JOIN realms r ON r.id = s.realm_id
         WHERE s.delivered = 0 AND s.failed = 0",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<String>>>()?)
}

fn participants_json(target: &ScheduledTarget) -> Option<String> {
    match target {
        ScheduledTarget::Channel(..) => None,
        ScheduledTarget::Direct(ids) => {
            Some(serde_json::Value::from(ids.iter().map(|u| u.0).collect::<Vec<_>>()).to_string())
        }
    }
}

fn channel_topic(target: &ScheduledTarget) -> (Option<ChannelId>, &str) {
    match target {
        ScheduledTarget::Channel(channel, topic) => (Some(*channel), topic.as_str()),
        ScheduledTarget::Direct(_) => (None, ""),
    }
}

/// Stores a new item (its `id` is ignored); its id.
pub fn insert(conn: &Connection, realm: RealmId, item: &ScheduledItem) -> StoreResult<i64> {
    let (channel, topic) = channel_topic(&item.target);
    let reminder = item.reminder.as_ref();
    conn.prepare_cached(
        "INSERT INTO scheduled_messages (realm_id, sender_id, delivery_type, channel_id, topic, dm_participants,
             content, rendered_content, sending_client, scheduled_timestamp, read_by_sender,
             reminder_target_message_id, reminder_note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        realm,
        item.sender,
        if reminder.is_some() { REMIND } else { SEND_LATER },
        channel,
        topic,
        participants_json(&item.target),
        item.content,
        item.rendered_content,
        item.client,
        item.deliver_at,
        item.read_by_sender,
        reminder.map(|r| r.message_id),
        reminder.map(|r| r.note.as_str()),
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Replaces the fields of an undelivered item (an edit clears its failure); whether it was
/// still undelivered.
pub fn update(conn: &Connection, item: &ScheduledItem) -> StoreResult<bool> {
    let (channel, topic) = channel_topic(&item.target);
    let changed = conn
        .prepare_cached(
            "UPDATE scheduled_messages SET channel_id = ?2, topic = ?3, dm_participants = ?4, content = ?5,
                 rendered_content = ?6, sending_client = ?7, scheduled_timestamp = ?8, failed = ?9,
                 failure_message = ?10
             WHERE id = ?1 AND delivered = 0",
        )?
        .execute(params![
            item.id,
            channel,
            topic,
            participants_json(&item.target),
            item.content,
            item.rendered_content,
            item.client,
            item.deliver_at,
            item.failed,
            item.failure_message,
        ])?;
    Ok(changed > 0)
}

/// A row of `sender` of the given kind, whatever its state: whether it was delivered.
pub fn delivered_state(conn: &Connection, sender: UserId, id: i64, reminder: bool) -> StoreResult<Option<bool>> {
    let kind = if reminder { REMIND } else { SEND_LATER };
    Ok(conn
        .prepare_cached(
            "SELECT delivered FROM scheduled_messages WHERE id = ?1 AND sender_id = ?2 AND delivery_type = ?3",
        )?
        .query_row(params![id, sender, kind], |r| r.get(0))
        .optional()?)
}

/// Deletes a row of `sender`; whether there was one.
pub fn delete(conn: &Connection, sender: UserId, id: i64) -> StoreResult<bool> {
    let sql = "DELETE FROM scheduled_messages WHERE id = ?1 AND sender_id = ?2";
    Ok(conn.prepare_cached(sql)?.execute(params![id, sender])? > 0)
}

/// Marks an undelivered, unfailed row delivered as `message`; whether it was still to send
/// (if not, the caller's transaction must roll back: the message would be sent twice).
pub fn mark_delivered(conn: &Connection, id: i64, message: MessageId) -> StoreResult<bool> {
    let sql = "UPDATE scheduled_messages SET delivered = 1, delivered_message_id = ?2
               WHERE id = ?1 AND delivered = 0 AND failed = 0";
    Ok(conn.prepare_cached(sql)?.execute(params![id, message])? > 0)
}

/// Marks an undelivered row failed with Zulip's `failure_message`; whether it was still to
/// send.
pub fn mark_failed(conn: &Connection, id: i64, message: &str) -> StoreResult<bool> {
    let sql = "UPDATE scheduled_messages SET failed = 1, failure_message = ?2 WHERE id = ?1 AND delivered = 0";
    Ok(conn.prepare_cached(sql)?.execute(params![id, message])? > 0)
}
