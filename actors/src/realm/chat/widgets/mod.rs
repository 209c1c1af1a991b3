//! Widgets: polls and to-do lists. A `/poll` or `/todo` message gets its `widget`
//! submessage when sent ([`data`]); readers then vote, add options and tasks, strike tasks
//! with `POST /submessage` (Zulip's `process_submessage` and `do_add_submessage`), each a
//! submessage of the message with a `submessage` event to everyone who received it.
//! Messages carry their submessages (`submessages`) when fetched.

pub mod checks;
pub mod data;

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Value};

use super::changes::access_message_to_change;
use super::viewer;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::reactions::message_recipients;
use crate::store::submessages::{self as store, SubmessageRow};

/// `POST /submessage`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct AddSubmessage {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub msg_type: String,
    /// The submessage as the client wrote it (a JSON string).
    pub content: String,
}

/// A submessage to add, planned: every check needs the stored message and runs when
/// written, against the state it was planned with.
#[derive(Debug, Clone)]
pub struct SubmessageChange {
    state: RealmState,
    msg: AddSubmessage,
    /// Set by the write: the submessage and who received the message.
    done: Option<(SubmessageRow, Vec<UserId>)>,
}

/// Plans a submessage.
pub fn plan_submessage(state: &RealmState, msg: AddSubmessage) -> ApiResult<SubmessageChange> {
    viewer(state, msg.user_id)?;
    Ok(SubmessageChange { state: state.clone(), msg, done: None })
}

/// The widget type of a message's `widget` submessage (Zulip's `get_widget_type`).
fn widget_type(content: &str) -> Option<String> {
    let data: Value = serde_json::from_str(content).ok()?;
    data.get("widget_type").and_then(Value::as_str).map(str::to_owned)
}

impl Change for SubmessageChange {
    type Output = ();

    /// Zulip's order: access to the message, then who may attach (the sender first), the
    /// JSON, then the widget's own rules.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let state = &self.state;
        let user = viewer(state, self.msg.user_id)?;
        let message = access_message_to_change(state, tx, user, self.msg.message_id)?.message;
        // Zulip's `verify_submessage_sender`: the message's sender attaches the first one.
        if message.sender_id != user.id && !store::exists_from(tx, message.id, message.sender_id)? {
            return Err(ApiError::bad_request("You cannot attach a submessage to this message."));
        }
        let data: Value = serde_json::from_str(&self.msg.content)
            .map_err(|_| ApiError::bad_request("Invalid json for submessage"))?;
        let is_author = message.sender_id == user.id;
        let checked = match store::widget_content(tx, message.id)?.as_deref().and_then(widget_type).as_deref() {
            Some("poll") => checks::check_poll(&data, is_author),
            Some("todo") => checks::check_todo(&data, is_author),
            _ => Ok(()),
        };
        checked.map_err(ApiError::bad_request)?;
        let id = store::insert(tx, message.id, user.id, &self.msg.msg_type, &self.msg.content)?;
        let row = SubmessageRow {
            id,
            message_id: message.id,
            sender_id: user.id,
            msg_type: self.msg.msg_type.clone(),
            content: self.msg.content.clone(),
        };
        // Zulip sends it to every user with a row for the message.
        self.done = Some((row, message_recipients(tx, message.id)?));
        Ok(())
    }

    /// The `submessage` event.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let SubmessageChange { state: planned, done, .. } = self;
        drop(planned);
        let Some((row, recipients)) = done else { return Applied::events(Vec::new()) };
        let recipients = recipients.into_iter().filter(|u| state.user(*u).is_some_and(|u| u.is_active)).collect();
        let event = Event::new(
            "submessage",
            json!({
                "msg_type": row.msg_type,
                "message_id": row.message_id,
                "submessage_id": row.id,
                "sender_id": row.sender_id,
                "content": row.content,
            }),
        );
        Applied::events(vec![Outgoing::to(recipients, event)])
    }
}

/// A submessage in a message object (Zulip's `SubMessage.get_raw_db_rows` fields).
pub fn submessage_dict(row: &SubmessageRow) -> Value {
    json!({
        "id": row.id,
        "message_id": row.message_id,
        "sender_id": row.sender_id,
        "msg_type": row.msg_type,
        "content": row.content,
    })
}

impl Handler<AddSubmessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddSubmessage, _: &mut Self::Context) -> Self::Result {
        let change = plan_submessage(&self.state, msg)?;
        self.commit(change)
    }
}
