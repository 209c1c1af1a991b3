//! `messages-NNNNNN.json`: 1,000 messages a file with everyone's rows of them, read from the
//! database a file at a time; their reactions go to `realm.json`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use super::realm::Tables;
use super::{float, write_json};
use crate::ids::{MessageId, UserId};
use crate::realm::state::RealmState;
use crate::store::{self, Store};
use crate::transfer::{ImportError, Progress};

/// Messages per file, as Zulip's exporter writes them.
const PER_FILE: usize = 1_000;

/// Writes every exported message; returns how many.
pub fn write(
    store: &Store,
    state: &RealmState,
    tables: &mut Tables,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<u64, ImportError> {
    let conn = store.conn()?;
    let realm = state.realm().id;
    let (mut after, mut file, mut written) = (MessageId(0), 0, 0u64);
    let mut reaction_id = 0;
    loop {
        let page = store::transfer::messages_page(&conn, realm, after, PER_FILE)?;
        let Some(last) = page.last() else { break };
        after = last.0.id;
        let mut kept = Vec::new();
        for (row, has) in page {
            let recipient = match (&row.channel_id, &row.dm_key) {
                (Some(channel), _) => {
                    let private = tables.private_channels.contains(channel);
                    if !tables.exported_channels.contains(channel)
                        || (private && !tables.private_ok.contains(&row.sender_id))
                    {
                        continue;
                    }
                    tables.channel_recipients.get(channel).copied()
                }
                (None, Some(key)) => {
                    if !tables.private_ok.contains(&row.sender_id) {
                        continue;
                    }
                    let members: Vec<i64> = key.split(',').filter_map(|u| u.parse().ok()).collect();
                    match members.as_slice() {
                        [one] => tables.personal.get(&UserId(*one)).copied(),
                        [a, b] => {
                            let other = if *a == row.sender_id.0 { *b } else { *a };
                            tables.personal.get(&UserId(other)).copied()
                        }
                        _ => Some(tables.group_recipient(key)),
                    }
                }
                (None, None) => None,
            };
            let Some(recipient) = recipient else { continue };
            kept.push((row, has, recipient));
        }
        if kept.is_empty() {
            continue;
        }
        let ids: Vec<MessageId> = kept.iter().map(|(row, _, _)| row.id).collect();
        let mut received: HashMap<MessageId, Vec<(UserId, i64)>> = HashMap::new();
        for (message, user, flags) in store::transfer::user_messages_of(&conn, &ids)? {
            received.entry(message).or_default().push((user, flags));
        }
        for r in store::messages::reactions_of(&conn, &ids)? {
            reaction_id += 1;
            tables.reaction(json!({"id": reaction_id, "message": r.message_id.0, "user_profile": r.user_id.0,
                "emoji_name": r.emoji_name, "emoji_code": r.emoji_code, "reaction_type": r.reaction_type}));
        }
        let mut messages = Vec::with_capacity(kept.len());
        let mut user_messages = Vec::new();
        for (row, [has_link, has_image, has_attachment], recipient) in kept {
            let client = tables.client(&row.sending_client);
            messages.push(json!({
                "id": row.id.0, "sender": row.sender_id.0, "recipient": recipient, "realm": realm.0, "type": 1,
                "subject": row.topic, "content": row.content, "rendered_content": row.rendered_content,
                "rendered_content_version": 1, "date_sent": float(row.date_sent), "sending_client": client,
                "last_edit_time": row.last_edit_time.map(float), "edit_history": row.edit_history,
                "has_attachment": has_attachment, "has_image": has_image, "has_link": has_link,
                "is_channel_message": row.channel_id.is_some(),
            }));
            for (user, flags) in received.remove(&row.id).unwrap_or_default() {
                user_messages.push(json!({"id": user_messages.len() as i64 + 1, "user_profile": user.0, "message": row.id.0, "flags_mask": flags}));
            }
        }
        file += 1;
        written += messages.len() as u64;
        progress.advance(messages.len() as u64);
        let name = format!("messages-{file:06}.json");
        write_json(
            out,
            &name,
            &json!({"zerver_message": Value::Array(messages), "zerver_usermessage": Value::Array(user_messages)}),
        )?;
    }
    Ok(written)
}
