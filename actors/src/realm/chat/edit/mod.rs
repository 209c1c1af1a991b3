//! Editing and moving messages: `PATCH /messages/{message_id}` and the `update_message`
//! event (Zulip's `update_message_backend`, `check_update_message`, `do_update_message`):
//! who may edit and when (`checks`), the planned edit and its write (`ops`), and its
//! events (`events`).
//!
//! A move reports what it moved ([`MoveReport`]): the realm actor then has Notification
//! Bot post the notices `send_notification_to_old_thread` / `_new_thread` ask for, and the
//! resolve-topic notice (`realm::notices`).

pub mod checks;
pub mod events;
pub mod ops;
pub mod topics;

#[cfg(test)]
mod tests;

use actix::prelude::*;

pub use ops::{plan_edit, MessageEdit, MoveReport};

use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::realm::actor::RealmActor;

/// Which messages of the topic an edit of the topic or channel applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagateMode {
    ChangeOne,
    ChangeLater,
    ChangeAll,
}

impl PropagateMode {
    /// Parses Zulip's `propagate_mode` values.
    pub fn parse(value: &str) -> ApiResult<PropagateMode> {
        match value {
            "change_one" => Ok(PropagateMode::ChangeOne),
            "change_later" => Ok(PropagateMode::ChangeLater),
            "change_all" => Ok(PropagateMode::ChangeAll),
            _ => Err(ApiError::bad_request("Invalid propagate_mode")),
        }
    }

    /// Zulip's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagateMode::ChangeOne => "change_one",
            PropagateMode::ChangeLater => "change_later",
            PropagateMode::ChangeAll => "change_all",
        }
    }
}

/// `PATCH /messages/{message_id}`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<Vec<serde_json::Value>>")]
pub struct UpdateMessage {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub content: Option<String>,
    /// `topic` or its legacy alias `subject`.
    pub topic: Option<String>,
    pub stream_id: Option<i64>,
    pub propagate_mode: PropagateMode,
    /// Notification Bot tells the old topic (default false).
    pub send_notification_to_old_thread: bool,
    /// Notification Bot tells the new topic (default true).
    pub send_notification_to_new_thread: bool,
    /// The SHA-256 (hex) of the content the client last saw: the edit is refused if the
    /// message's content is no longer that (Zulip's conflict check, feature level 379).
    pub prev_content_sha256: Option<String>,
}

impl Handler<UpdateMessage> for RealmActor {
    type Result = ApiResult<Vec<serde_json::Value>>;

    fn handle(&mut self, msg: UpdateMessage, _: &mut Self::Context) -> Self::Result {
        let (old, new) = (msg.send_notification_to_old_thread, msg.send_notification_to_new_thread);
        let change = plan_edit(&self.state, msg, crate::clock::now())?;
        let (report, detached) = self.commit(change)?;
        if let Some(report) = report {
            let realm_url = self.config.realm_url(&self.state.realm().subdomain);
            let notices = crate::realm::notices::moves::move_notices(&self.state, &realm_url, &report, old, new);
            self.post_notices(notices);
        }
        Ok(detached)
    }
}
