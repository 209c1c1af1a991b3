//! Scheduled messages and reminders (Zulip's `GET`, `POST /scheduled_messages`, `PATCH`,
//! `DELETE /scheduled_messages/{id}`, `GET`, `POST /reminders`, `DELETE /reminders/{id}`,
//! the `scheduled_messages` and `reminders` data sets and events), and the timer that sends
//! them when due.
//!
//! The pending items live in the state ([`crate::realm::scheduled_data`]) and in the
//! database; every change to them arms the realm actor's timer again.
//!
//! - [`ops`]: scheduling, editing and deleting messages to send later.
//! - [`reminders`]: reminders and their text.
//! - [`delivery`]: the timer, and sending what is due.
//! - [`format`]: the objects and events as the API shows them.

pub mod delivery;
pub mod format;
pub mod ops;
pub mod reminders;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use ops::{Kind, NewScheduled, ScheduledEdit, To};
pub use reminders::NewReminder;

use super::actor::RealmActor;
use super::state::RealmState;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /scheduled_messages`: the user's pending scheduled messages, by due time.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListScheduledMessages {
    pub user_id: UserId,
}

/// `POST /scheduled_messages`: replies with the new scheduled message's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct ScheduleMessage {
    pub user_id: UserId,
    pub message: NewScheduled,
}

/// `PATCH /scheduled_messages/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct EditScheduledMessage {
    pub user_id: UserId,
    pub id: i64,
    pub edit: ScheduledEdit,
}

/// `DELETE /scheduled_messages/{id}` (`reminder` false) or `DELETE /reminders/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteScheduled {
    pub user_id: UserId,
    pub id: i64,
    pub reminder: bool,
}

/// `GET /reminders`: the user's pending reminders, by due time.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListReminders {
    pub user_id: UserId,
}

/// `POST /reminders`: replies with the new reminder's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct CreateReminder {
    pub user_id: UserId,
    pub reminder: NewReminder,
}

/// Arms the timer for the earliest pending item (sent by the registry when it starts the
/// organization's actor).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ArmScheduler;

/// Sends everything due at `now` (the current time when `None`) and arms the timer again:
/// what the timer does when it fires. Tests send it with a time of their choosing.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct DeliverDue {
    pub now: Option<i64>,
}

/// The user's pending scheduled messages (`reminders` false) or reminders, as the API shows
/// them, by due time.
pub fn pending_of(state: &RealmState, user: UserId, reminders: bool) -> Vec<Value> {
    let items = state.scheduled().of_user(user, reminders);
    let dict = if reminders { format::reminder_dict } else { format::scheduled_message_dict };
    items.into_iter().map(dict).collect()
}

/// The `scheduled_messages` and `reminders` data sets the client wants: the user's pending
/// ones (failed ones included), by due time.
pub fn register_data(want: impl Fn(&str) -> bool, state: &RealmState, user: UserId, out: &mut Map<String, Value>) {
    if want("scheduled_messages") {
        out.insert("scheduled_messages".into(), Value::Array(pending_of(state, user, false)));
    }
    if want("reminders") {
        out.insert("reminders".into(), Value::Array(pending_of(state, user, true)));
    }
}

impl Handler<ListScheduledMessages> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListScheduledMessages, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?.id;
        Ok(pending_of(&self.state, user, false))
    }
}

impl Handler<ListReminders> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListReminders, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?.id;
        Ok(pending_of(&self.state, user, true))
    }
}

impl Handler<ScheduleMessage> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: ScheduleMessage, ctx: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.user_id, msg.message, clock::now())?;
        let id = self.commit(change)?;
        self.arm_scheduler(ctx);
        Ok(id)
    }
}

impl Handler<EditScheduledMessage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: EditScheduledMessage, ctx: &mut Self::Context) -> Self::Result {
        let change = ops::plan_edit(&self.state, msg.user_id, msg.id, msg.edit, clock::now())?;
        self.commit(change)?;
        self.arm_scheduler(ctx);
        Ok(())
    }
}

impl Handler<DeleteScheduled> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteScheduled, ctx: &mut Self::Context) -> Self::Result {
        let sender = self.viewer(msg.user_id)?.id;
        self.commit(ops::ScheduledDeleted { sender, id: msg.id, reminder: msg.reminder })?;
        self.arm_scheduler(ctx);
        Ok(())
    }
}

impl Handler<CreateReminder> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: CreateReminder, ctx: &mut Self::Context) -> Self::Result {
        let realm_url = self.config.realm_url(&self.state.realm().subdomain);
        let change = reminders::plan_create(&self.state, msg.user_id, msg.reminder, realm_url, clock::now())?;
        let id = self.commit(change)?;
        self.arm_scheduler(ctx);
        Ok(id)
    }
}

impl Handler<ArmScheduler> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: ArmScheduler, ctx: &mut Self::Context) {
        self.arm_scheduler(ctx);
    }
}

impl Handler<DeliverDue> for RealmActor {
    type Result = ();

    fn handle(&mut self, msg: DeliverDue, ctx: &mut Self::Context) {
        self.deliver_due(msg.now.unwrap_or_else(clock::now), ctx);
    }
}

#[cfg(test)]
mod tests;
