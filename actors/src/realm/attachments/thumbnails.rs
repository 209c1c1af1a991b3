//! An image's thumbnails, made by the thumbnail worker (`crate::uploads::worker`):
//! recorded, and shown in the messages that link the image, whose previews showed the
//! loading placeholder until now (Zulip's `rewrite_thumbnailed_images` and
//! `do_update_embedded_data`: an `update_message` event with `rendering_only`).

use std::collections::BTreeMap;

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Value};

use crate::error::ApiResult;
use crate::events::{Event, Outgoing};
use crate::ids::{MessageId, UserId};
use crate::realm::chat::format::flag_names;
use crate::realm::state::RealmState;
use crate::realm::uploads_data::previews::ready_preview;
use crate::realm::uploads_data::Attachment;
use crate::realm::{Applied, Change};
use crate::store;

/// The worker made the thumbnails of attachment `attachment_id` (format names).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct ThumbnailsMade {
    pub attachment_id: i64,
    pub thumbnails: Vec<String>,
}

/// A message whose preview was rewritten: its id, content, new HTML and recipients with
/// their flags.
type Rewritten = (MessageId, String, String, Vec<(UserId, i64)>);

/// A planned recording of thumbnails.
#[derive(Debug)]
pub struct ThumbnailsChange {
    attachment: Attachment,
    now: i64,
    /// Set by the write: each rewritten message, its content, new HTML and recipients.
    rewritten: Vec<Rewritten>,
}

/// Plans recording thumbnails; `None` when the attachment is gone or not an image.
pub fn plan(state: &RealmState, msg: ThumbnailsMade) -> Option<ThumbnailsChange> {
    let mut attachment = state.uploads().by_id(msg.attachment_id)?.clone();
    attachment.image.as_mut()?.thumbnails = msg.thumbnails;
    Some(ThumbnailsChange { attachment, now: crate::clock::now(), rewritten: Vec::new() })
}

impl Change for ThumbnailsChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let a = &self.attachment;
        let names = a.image.as_ref().map(|i| i.thumbnails.clone()).unwrap_or_default();
        store::attachments::set_thumbnails(tx, a.id, &names)?;
        for (id, content, html) in store::attachments::claiming_rendered(tx, a.id)? {
            if let Some(new) = ready_preview(&html, a) {
                store::attachments::set_rendered(tx, id, &new)?;
                let recipients = store::messages::message_flags(tx, id)?;
                self.rewritten.push((id, content, new, recipients));
            }
        }
        Ok(())
    }

    /// `update_message` (rendering only) to each rewritten message's recipients, with their
    /// flags.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        state.uploads_mut().put(self.attachment);
        let mut events = Vec::new();
        for (id, content, html, recipients) in self.rewritten {
            let mut groups: BTreeMap<Vec<&'static str>, Vec<UserId>> = BTreeMap::new();
            for (user, bits) in recipients {
                groups.entry(flag_names(bits)).or_default().push(user);
            }
            for (flags, users) in groups {
                let body = json!({
                    "user_id": Value::Null,
                    "edit_timestamp": self.now,
                    "message_id": id,
                    "message_ids": [id],
                    "content": content,
                    "rendered_content": html,
                    "rendering_only": true,
                    "flags": flags,
                });
                events.push(Outgoing::to(users, Event::new("update_message", body)));
            }
        }
        Applied::events(events)
    }
}
