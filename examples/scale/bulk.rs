//! The organization, written straight into a stopped server's SQLite file (a path that
//! exists only for this benchmark, as `msgload`'s history: the server only ever creates
//! these rows through its API).
//!
//! Every row is a copy of one the server made itself through the API: the users of a
//! template member (its settings, its system groups), the channels and subscriptions of two
//! template channels (one default channel, one ordinary), so the copies are what the server
//! would have written; only names, addresses, keys and ids differ.

use std::path::Path;
use std::time::Instant;

use rand::distributions::Alphanumeric;
use rand::Rng;
use rusqlite::{params, Connection};

use super::support::{BoxError, Creds};

/// What to write.
pub struct Spec {
    /// Users in the organization once written (those already there count).
    pub users: usize,
    /// Channels once written, of which `default_channels` are default channels with every
    /// user subscribed; each other channel has `channel_members` members.
    pub channels: usize,
    pub default_channels: usize,
    pub channel_members: usize,
    /// Messages, spread over the ordinary channels, each with its channel members' rows.
    pub messages: usize,
    /// The newest messages of each ordinary channel are unread for its members (but their
    /// senders).
    pub unread_per_channel: usize,
}

/// The templates the server made through the API.
pub struct Templates<'a> {
    pub member_email: &'a str,
    pub default_channel: &'a str,
    pub channel: &'a str,
}

/// What was written.
pub struct Written {
    /// The members written, with their keys, in id order.
    pub members: Vec<(i64, Creds)>,
    pub subscriptions: i64,
    pub user_messages: i64,
}

/// Messages per transaction.
const BATCH: usize = 100_000;

/// Writes the organization into the database at `db` (the server must be stopped).
pub fn write(db: &Path, spec: &Spec, templates: &Templates<'_>) -> Result<Written, BoxError> {
    let mut conn = Connection::open(db)?;
    // A bulk load: a large page cache, and nothing synced before the end.
    conn.execute_batch("PRAGMA cache_size = -262144; PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON;")?;
    let (template_id, realm_id, email, delivery): (i64, i64, String, String) = conn.query_row(
        "SELECT id, realm_id, email, delivery_email FROM users WHERE delivery_email = ?1",
        [templates.member_email],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    if email != delivery {
        return Err("the template member's API email is not its real address: this benchmark expects the \
                    organization's default (addresses visible to everyone)"
            .into());
    }
    let existing: i64 = conn.query_row("SELECT COUNT(*) FROM users WHERE realm_id = ?1", [realm_id], |r| r.get(0))?;
    let to_add = spec.users.saturating_sub(existing as usize);

    let started = Instant::now();
    let tx = conn.transaction()?;
    let mut members = Vec::with_capacity(to_add);
    {
        let mut insert = tx.prepare(
            "INSERT INTO users (realm_id, delivery_email, email, full_name, role, is_active, is_bot, bot_type,
                 bot_owner_id, timezone, date_joined, avatar_source, avatar_version, api_key, password_hash,
                 can_create_users, can_change_user_emails, email_address_visibility, settings)
             SELECT realm_id, ?2, ?2, ?3, role, is_active, is_bot, bot_type, bot_owner_id, timezone, date_joined,
                 avatar_source, avatar_version, ?4, password_hash, can_create_users, can_change_user_emails,
                 email_address_visibility, settings
             FROM users WHERE id = ?1",
        )?;
        let mut groups = tx.prepare(
            "INSERT INTO user_group_members (group_id, user_id) SELECT group_id, ?2 FROM user_group_members
             WHERE user_id = ?1",
        )?;
        for i in 0..to_add {
            let email = format!("scale-{i}@example.com");
            let api_key: String = rand::thread_rng().sample_iter(&Alphanumeric).take(32).map(char::from).collect();
            insert.execute(params![template_id, email, format!("Scale User {i}"), api_key])?;
            let id = tx.last_insert_rowid();
            groups.execute(params![template_id, id])?;
            members.push((id, Creds { email, api_key }));
        }
    }
    tx.commit()?;
    eprintln!("  {} users in {:.1} s", to_add, started.elapsed().as_secs_f64());

    // Channels: copies of the templates, numbered after them.
    let started = Instant::now();
    let tx = conn.transaction()?;
    let channel_of = |name: &str| -> rusqlite::Result<i64> {
        tx.query_row("SELECT id FROM channels WHERE realm_id = ?1 AND name = ?2", params![realm_id, name], |r| r.get(0))
    };
    let (default_template, ordinary_template) =
        (channel_of(templates.default_channel)?, channel_of(templates.channel)?);
    let copy_channel = "INSERT INTO channels (realm_id, name, description, rendered_description, invite_only,
             is_web_public, history_public_to_subscribers, message_retention_days, topics_policy, folder_id,
             creator_id, date_created, is_archived, settings)
         SELECT realm_id, ?2, description, rendered_description, invite_only, is_web_public,
             history_public_to_subscribers, message_retention_days, topics_policy, folder_id, creator_id,
             date_created, is_archived, settings
         FROM channels WHERE id = ?1";
    let ordinary = spec.channels.saturating_sub(spec.default_channels).max(1);
    let mut defaults = vec![default_template];
    let mut ordinaries = vec![ordinary_template];
    {
        let mut copy = tx.prepare(copy_channel)?;
        for i in 1..spec.default_channels.max(1) {
            copy.execute(params![default_template, format!("{} {i}", templates.default_channel)])?;
            defaults.push(tx.last_insert_rowid());
        }
        for i in 1..ordinary {
            copy.execute(params![ordinary_template, format!("{} {i}", templates.channel)])?;
            ordinaries.push(tx.last_insert_rowid());
        }
        let mut default =
            tx.prepare("INSERT OR IGNORE INTO default_channels (realm_id, channel_id) VALUES (?1, ?2)")?;
        for channel in &defaults {
            default.execute(params![realm_id, channel])?;
        }
    }
    // Subscriptions: copies of the template member's row in its channel, with the color
    // of the row it copies.
    let copy_subscription = "INSERT OR IGNORE INTO subscriptions (user_id, channel_id, active, color, is_muted,
             pin_to_top, desktop_notifications, audible_notifications, push_notifications, email_notifications,
             wildcard_mentions_notify)
         SELECT ?3, ?4, active, color, is_muted, pin_to_top, desktop_notifications, audible_notifications,
             push_notifications, email_notifications, wildcard_mentions_notify
         FROM subscriptions WHERE user_id = ?1 AND channel_id = ?2";
    let all_users: Vec<i64> = {
        let mut stmt = tx.prepare("SELECT id FROM users WHERE realm_id = ?1 AND is_active = 1 ORDER BY id")?;
        let rows = stmt.query_map([realm_id], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    {
        let mut copy = tx.prepare(copy_subscription)?;
        for channel in &defaults {
            for user in &all_users {
                copy.execute(params![template_id, default_template, user, channel])?;
            }
        }
        // Ordinary channel j: the members j*m .. j*m + m (mod the members written), so that
        // each member is in about channels*m/users of them.
        let n = members.len().max(1);
        for (j, channel) in ordinaries.iter().enumerate() {
            for k in 0..spec.channel_members {
                let (user, _) = &members[(j * spec.channel_members + k) % n];
                copy.execute(params![template_id, ordinary_template, user, channel])?;
            }
        }
    }
    tx.commit()?;
    let subscriptions: i64 = conn.query_row("SELECT COUNT(*) FROM subscriptions", [], |r| r.get(0))?;
    eprintln!(
        "  {} channels ({} default), {subscriptions} subscriptions in {:.1} s",
        defaults.len() + ordinaries.len(),
        defaults.len(),
        started.elapsed().as_secs_f64()
    );

    let user_messages = write_messages(&mut conn, realm_id, &ordinaries, spec)?;
    Ok(Written { members, subscriptions, user_messages })
}

/// The messages: message i goes to ordinary channel i mod C, from one of its members, in one of ten topics; each with its
/// full-text row and a row per member of its channel (read, but the newest
/// `unread_per_channel` of each channel for all but their sender).
fn write_messages(conn: &mut Connection, realm_id: i64, channels: &[i64], spec: &Spec) -> Result<i64, BoxError> {
    if spec.messages == 0 || channels.is_empty() {
        return Ok(0);
    }
    // Channel number -> id, for the statements below.
    conn.execute_batch("CREATE TEMP TABLE scale_channels (idx INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL)")?;
    {
        let mut insert = conn.prepare("INSERT INTO temp.scale_channels (idx, channel_id) VALUES (?1, ?2)")?;
        for (idx, channel) in channels.iter().enumerate() {
            insert.execute(params![idx as i64, channel])?;
        }
    }
    // Each channel's members, numbered from 0 in id order: the senders.
    conn.execute_batch(
        "CREATE TEMP TABLE scale_members (idx INTEGER NOT NULL, k INTEGER NOT NULL, user_id INTEGER NOT NULL,
                                          PRIMARY KEY (idx, k));
         INSERT INTO temp.scale_members (idx, k, user_id)
         SELECT sc.idx, row_number() OVER (PARTITION BY s.channel_id ORDER BY s.user_id) - 1, s.user_id
         FROM subscriptions s JOIN temp.scale_channels sc ON sc.channel_id = s.channel_id WHERE s.active;",
    )?;
    let c = channels.len() as i64;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs() as i64;
    let total = spec.messages as i64;
    let unread_from = total - (spec.unread_per_channel as i64 * c).min(total);
    let started = Instant::now();
    let mut user_messages = 0;
    for start in (0..spec.messages).step_by(BATCH) {
        let end = (start + BATCH).min(spec.messages) as i64;
        let tx = conn.transaction()?;
        let before: i64 = tx.query_row("SELECT COALESCE(MAX(id), 0) FROM messages", [], |r| r.get(0))?;
        // The sender: one of the channel's subscribers, picked by the message number.
        tx.execute(
            "INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent,
                                   sending_client)
             WITH RECURSIVE seq(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?2),
                  body(i, channel, text) AS (
                      SELECT i, (SELECT channel_id FROM temp.scale_channels WHERE idx = i % ?4), 'Scale message ' || i || ' about the '
                                || CASE i % 5 WHEN 0 THEN 'quick brown fox' WHEN 1 THEN 'lazy dog'
                                              WHEN 2 THEN 'release plan' WHEN 3 THEN 'lunch order'
                                              ELSE 'build failure' END || '.'
                      FROM seq)
             SELECT ?3, (SELECT user_id FROM temp.scale_members WHERE idx = body.i % ?4 AND k = (body.i / ?4) % ?5),
                    channel, 'topic ' || ((i / ?4) % 10), text, '<p>' || text || '</p>', ?6 + i, 'scale'
             FROM body",
            params![start as i64, end, realm_id, c, spec.channel_members as i64, now - total],
        )?;
        tx.execute(
            "INSERT INTO messages_fts (rowid, content, topic) SELECT id, content, topic FROM messages WHERE id > ?1",
            [before],
        )?;
        // Row i of this batch has id `before + 1 + (i - start)`.
        let first_unread_id = before + 1 + unread_from - start as i64;
        user_messages += tx.execute(
            "INSERT INTO user_messages (user_id, message_id, flags)
             SELECT s.user_id, m.id, CASE WHEN m.id >= ?2 AND s.user_id != m.sender_id THEN 0 ELSE 1 END
             FROM messages m JOIN subscriptions s ON s.channel_id = m.channel_id AND s.active
             WHERE m.id > ?1 ORDER BY s.user_id, m.id",
            params![before, first_unread_id],
        )? as i64;
        tx.commit()?;
        eprintln!("  {end} of {} messages ({:.0} s)", spec.messages, started.elapsed().as_secs_f64());
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    Ok(user_messages)
}
