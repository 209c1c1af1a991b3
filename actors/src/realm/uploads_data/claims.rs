//! Claiming uploads (Zulip's `do_claim_attachments` and the attachment part of message
//! edits): a message that links `/user_uploads/<path_id>` claims the attachment, which
//! then becomes readable by whoever can read the message. Its owner may always claim it;
//! anyone else only an attachment they can already read because a public channel's
//! message claimed it (Zulip lets anyone who can read a file share it again; other cases
//! are left unclaimed). A message of a public channel makes the attachment public to the
//! organization's members; an edit that drops a link removes that message's claim.

use std::collections::BTreeSet;

use rusqlite::Transaction;

use super::Attachment;
use crate::error::ApiResult;
use crate::events::{Event, Outgoing};
use crate::ids::MessageId;
use crate::realm::model::{Channel, Role, User};
use crate::realm::state::RealmState;
use crate::store;

/// The claims a send or an edit makes and drops, planned from the state.
#[derive(Debug, Clone, Default)]
pub struct Claims {
    /// Attachment ids the message now claims (new ones only).
    added: Vec<i64>,
    /// Attachment ids the message no longer claims.
    removed: Vec<i64>,
    /// The message is in a public channel.
    realm_public: bool,
    /// Once written: each changed attachment's claiming messages (id, sent at).
    written: Vec<(i64, Vec<(MessageId, i64)>)>,
}

fn claimable(state: &RealmState, sender: &User, path_id: &str) -> Option<i64> {
    let prefix = format!("{}/", state.realm().id.0);
    let a: &Attachment = state.uploads().by_path(path_id).filter(|_| path_id.starts_with(&prefix))?;
    (a.owner_id == sender.id || (a.is_realm_public && sender.role != Role::Guest)).then_some(a.id)
}

fn ids(state: &RealmState, sender: &User, content: &str) -> BTreeSet<i64> {
    super::linked_path_ids(content).iter().filter_map(|p| claimable(state, sender, p)).collect()
}

/// The claims of a new message by `sender` with `content`, to `channel` (none: direct).
pub fn plan_send(state: &RealmState, sender: &User, content: &str, channel: Option<&Channel>) -> Claims {
    if !content.contains("/user_uploads/") {
        return Claims::default();
    }
    let realm_public = channel.is_some_and(|c| !c.invite_only);
    Claims { added: ids(state, sender, content).into_iter().collect(), realm_public, ..Claims::default() }
}

/// The claims an edit of a message from `old` to `new` content makes and drops (the
/// message's sender's rights decide, as for the send).
pub fn plan_edit(state: &RealmState, sender: &User, old: &str, new: &str, channel: Option<&Channel>) -> Claims {
    if !old.contains("/user_uploads/") && !new.contains("/user_uploads/") {
        return Claims::default();
    }
    let before = ids(state, sender, old);
    let after = ids(state, sender, new);
    Claims {
        added: after.difference(&before).copied().collect(),
        removed: before.difference(&after).copied().collect(),
        realm_public: channel.is_some_and(|c| !c.invite_only),
        written: Vec::new(),
    }
}

impl Claims {
    /// Whether there is anything to write.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// Writes the claims of `message` and reads back the changed attachments' messages.
    pub fn write(&mut self, tx: &Transaction<'_>, message: MessageId) -> ApiResult<()> {
        if self.is_empty() {
            return Ok(());
        }
        for id in &self.added {
            store::attachments::claim(tx, *id, message, self.realm_public)?;
        }
        for id in &self.removed {
            store::attachments::unclaim(tx, *id, message)?;
        }
        let changed: Vec<i64> = self.added.iter().chain(&self.removed).copied().collect();
        let rows = store::attachments::claims_of(tx, &changed)?;
        self.written =
            changed.iter().map(|id| (*id, rows.iter().filter(|r| r.0 == *id).map(|r| (r.1, r.2)).collect())).collect();
        Ok(())
    }

    /// Attachments that no message claims any more (Zulip's `detached_uploads`), once written.
    pub fn detached(&self, state: &RealmState) -> Vec<serde_json::Value> {
        self.written
            .iter()
            .filter(|(id, messages)| self.removed.contains(id) && messages.is_empty())
            .filter_map(|(id, _)| state.uploads().by_id(*id))
            .map(|a| attachment_json(a, &[]))
            .collect()
    }

    /// Applies the written claims: attachments become public to the organization, and
    /// their owners get `attachment` `update` with the messages now claiming them.
    pub fn apply(&self, state: &mut RealmState) -> Vec<Outgoing> {
        let mut events = Vec::new();
        for (id, messages) in &self.written {
            let Some(mut a) = state.uploads().by_id(*id).cloned() else { continue };
            a.is_realm_public |= self.realm_public && self.added.contains(id);
            let (owner, space) = (a.owner_id, state.uploads().space_used());
            let event = Event::new(
                "attachment",
                serde_json::json!({"op": "update", "attachment": attachment_json(&a, messages), "upload_space_used": space}),
            );
            events.push(Outgoing::to(vec![owner], event));
            state.uploads_mut().put(a);
        }
        events
    }
}

/// The attachment object (Zulip's `Attachment.to_dict`): `create_time` in seconds (feature
/// level 443; milliseconds before) and the claiming messages as `message_ids` (feature level
/// 472; objects with `id` and `date_sent` before).
pub fn attachment_json(a: &Attachment, messages: &[(MessageId, i64)]) -> serde_json::Value {
    let message_ids: Vec<MessageId> = messages.iter().map(|(id, _)| *id).collect();
    serde_json::json!({
        "id": a.id,
        "name": a.name,
        "path_id": a.path_id,
        "size": a.size,
        "create_time": a.create_time,
        "message_ids": message_ids,
    })
}
