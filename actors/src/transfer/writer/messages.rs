//! Messages, in batches of one transaction each, with their reactions, submessages and
//! everyone's flags; then the uploads' links to them.

use rusqlite::Transaction;

use super::Writer;
use crate::ids::{MessageId, UserId};
use crate::realm::chat::format::dm_key;
use crate::store::{self, reactions::Reaction};
use crate::transfer::model::{Destination, Message};
use crate::transfer::ImportError;

/// Zulip's `is_private` flag: the message is a direct message.
const IS_PRIVATE: i64 = 2048;

impl Writer<'_> {
    pub(super) fn flush(&mut self) -> Result<(), ImportError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        let store = self.store;
        // Every id was mapped from the input or refused: the database need not check again.
        store.write_unchecked(|tx| -> Result<(), ImportError> {
            store::transfer::bulk_cache(tx)?;
            let mut received = Vec::new();
            for message in &batch {
                self.write_message(tx, message, &mut received)?;
            }
            // Everyone's rows of the batch, in the table's order.
            received.sort_unstable();
            store::transfer::insert_user_messages(tx, &received)?;
            Ok(())
        })
    }

    /// Writes one message; its recipients' rows are added to `received`, for the caller to
    /// write with the batch's.
    fn write_message(
        &mut self,
        tx: &Transaction<'_>,
        m: &Message,
        received: &mut Vec<(UserId, MessageId, i64)>,
    ) -> Result<(), ImportError> {
        let place = || format!("message {}", m.id);
        let sender = self
            .user(m.sender)
            .ok_or_else(|| ImportError::at(place(), format!("its sender {} is not a user", m.sender)))?;
        let (channel, topic, key) = match &m.to {
            Destination::Channel(channel, topic) => {
                let id = self
                    .channel(*channel)
                    .ok_or_else(|| ImportError::at(place(), format!("its channel {channel} does not exist")))?;
                (Some(id), topic.as_str(), None)
            }
            Destination::Direct(users) => {
                let mut ids = Vec::with_capacity(users.len() + 1);
                for user in users.iter().chain([&m.sender]) {
                    ids.push(
                        self.user(*user)
                            .ok_or_else(|| ImportError::at(place(), format!("its recipient {user} is not a user")))?,
                    );
                }
                ids.sort();
                ids.dedup();
                (None, "", Some(dm_key(&ids)))
            }
        };
        let content = self.ids.text(&m.content);
        let rendered = match &m.rendered_content {
            Some(html) => self.ids.text(html),
            None => crate::realm::chat::render::render(&self.state, &content).html,
        };
        let mut recipients: Vec<(UserId, i64)> = Vec::with_capacity(m.recipients.len());
        for (user, flags) in &m.recipients {
            let id = self
                .user(*user)
                .ok_or_else(|| ImportError::at(place(), format!("user {user}, who received it, is not a user")))?;
            let flags = if key.is_some() { flags | IS_PRIVATE } else { *flags };
            match recipients.iter_mut().find(|(u, _)| *u == id) {
                Some(row) => row.1 |= flags,
                None => recipients.push((id, flags)),
            }
        }
        let history = m.edit_history.as_ref().map(|h| self.ids.edit_history(h).to_string());
        let row = store::transfer::ImportedMessage {
            realm_id: self.realm_id,
            sender_id: sender,
            channel_id: channel,
            topic,
            content: &content,
            rendered_content: &rendered,
            date_sent: m.date_sent,
            dm_key: key.as_deref(),
            sending_client: &m.sending_client,
            last_edit_time: m.last_edit_time,
            last_moved_time: m.last_moved_time,
            edit_history: history.as_deref(),
            has_link: rendered.contains("<a "),
            has_image: rendered.contains("<img"),
            has_attachment: rendered.contains("/user_uploads/"),
        };
        let id = store::transfer::insert_message(tx, &row, &[])?;
        received.extend(recipients.iter().map(|(user, flags)| (*user, id, *flags)));
        self.ids.messages.insert(m.id, id.0);
        if let Some(key) = key.as_deref().filter(|k| k.matches(',').count() >= 2) {
            store::submessages::ensure_dm_group(tx, self.realm_id, key)?;
        }
        for r in &m.reactions {
            let Some(user) = self.user(r.user) else { continue };
            let emoji_code = match r.reaction_type.as_str() {
                "realm_emoji" => match r.emoji_code.parse::<i64>().ok().and_then(|c| self.ids.emoji.get(&c)) {
                    Some(new) => new.to_string(),
                    None => continue,
                },
                _ => r.emoji_code.clone(),
            };
            let reaction =
                Reaction { emoji_name: r.emoji_name.clone(), emoji_code, reaction_type: r.reaction_type.clone() };
            match store::reactions::insert_reaction(tx, id, user, &reaction) {
                Ok(()) => self.summary.reactions += 1,
                // The same reaction twice in the input is one reaction.
                Err(e) if e.is_unique_violation() => {}
                Err(e) => return Err(e.into()),
            }
        }
        for (from, msg_type, content) in &m.submessages {
            let from = self.user(*from).unwrap_or(sender);
            store::submessages::insert(tx, id, from, msg_type, content)?;
        }
        self.summary.messages += 1;
        Ok(())
    }

    /// Links each upload to the messages that name it (and opens the uploads of public
    /// channels' messages to the organization's members).
    pub(super) fn write_claims(&mut self) -> Result<(), ImportError> {
        let claims = std::mem::take(&mut self.claims);
        let ids = &self.ids;
        self.store.write(|tx| -> Result<(), ImportError> {
            for (attachment, messages) in &claims {
                for source in messages {
                    let Some(message) = ids.messages.get(source).map(|m| MessageId(*m)) else { continue };
                    let public = store::transfer::in_public_channel(tx, message)?;
                    store::attachments::claim(tx, *attachment, message, public)?;
                }
            }
            Ok(())
        })
    }
}
