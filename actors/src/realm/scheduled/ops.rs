//! Scheduling, editing and deleting messages to send later (Zulip's
//! `check_schedule_message`, `edit_scheduled_message`, `delete_scheduled_message`), planned
//! from the state, written, applied.
//!
//! A message is checked when scheduled (and when edited) exactly as `POST /messages` checks
//! it now ([`plan_send`], then the checks that need storage), and again when it is sent.
//! An item not in memory may still be in the database, delivered: the write tells "already
//! sent" from "does not exist".

use std::collections::BTreeSet;

use rusqlite::Transaction;

use super::format;
use crate::error::{ApiError, ApiResult};
use crate::ids::{RealmId, UserId};
use crate::realm::chat::send::content::default_read_by_sender;
use crate::realm::chat::send::{plan_send, ChannelRef, DirectRef, PlannedMessage, SendMessage, SendTo};
use crate::realm::scheduled_data::{ScheduledItem, ScheduledTarget};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// The type of a scheduled message, as the request names it (`stream` or `channel`,
/// `private` or `direct`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Direct,
}

impl Kind {
    /// Zulip's `Message.API_RECIPIENT_TYPES`; anything else is "Invalid type".
    pub fn parse(raw: &str) -> ApiResult<Kind> {
        match raw {
            "stream" | "channel" => Ok(Kind::Channel),
            "private" | "direct" => Ok(Kind::Direct),
            _ => Err(ApiError::bad_request("Invalid type")),
        }
    }
}

/// `to` as given: a channel id or a list of user ids (a JSON integer or list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum To {
    One(i64),
    Many(Vec<i64>),
}

/// Zulip's `extract_stream_id` and `extract_direct_message_recipient_ids`.
fn send_to(kind: Kind, to: &To) -> ApiResult<SendTo> {
    match (kind, to) {
        (Kind::Channel, To::One(id)) => Ok(SendTo::Channel(ChannelRef::Id(*id))),
        (Kind::Channel, To::Many(_)) => Err(ApiError::bad_request("Invalid data type for channel ID")),
        (Kind::Direct, To::Many(ids)) => {
            let ids: BTreeSet<i64> = ids.iter().copied().collect();
            Ok(SendTo::Direct(DirectRef::Ids(ids.into_iter().collect())))
        }
        (Kind::Direct, To::One(_)) => Err(ApiError::bad_request("Invalid data type for recipients")),
    }
}

/// Zulip's `DeliveryTimeNotInFutureError`.
pub fn not_in_future() -> ApiError {
    ApiError::bad_request("Scheduled delivery time must be in the future.")
}

/// Zulip's "Scheduled message does not exist" (404, code `BAD_REQUEST`).
fn no_such_scheduled_message() -> ApiError {
    ApiError::resource_not_found("Scheduled message does not exist")
}

/// What the stored item becomes from a checked message.
fn target_of(planned: &PlannedMessage) -> ScheduledTarget {
    match planned.channel_id() {
        Some(channel) => ScheduledTarget::Channel(channel, planned.topic().to_owned()),
        None => ScheduledTarget::Direct(planned.recipients().to_vec()),
    }
}

/// Checks a message as `POST /messages` would send it now.
fn check_message(
    state: &RealmState,
    sender: UserId,
    to: SendTo,
    topic: Option<String>,
    content: String,
    client: &str,
    now: i64,
) -> ApiResult<PlannedMessage> {
    let msg = SendMessage {
        sender,
        to,
        topic,
        content,
        client: client.to_owned(),
        queue_id: None,
        local_id: None,
        read_by_sender: Some(false),
    };
    plan_send(state, msg, &BTreeSet::new(), now)
}

/// `POST /scheduled_messages`, its parameters decoded.
#[derive(Debug, Clone)]
pub struct NewScheduled {
    pub kind: Kind,
    pub to: To,
    pub topic: Option<String>,
    pub content: String,
    pub deliver_at: i64,
    pub read_by_sender: Option<bool>,
    pub client: String,
}

/// A planned new scheduled message (or reminder).
#[derive(Debug, Clone)]
pub struct ScheduledCreated {
    pub(super) realm_id: RealmId,
    pub(super) item: ScheduledItem,
    /// The message as checked, for the checks that need storage.
    pub(super) planned: Option<PlannedMessage>,
}

/// Plans `POST /scheduled_messages` in Zulip's order: the delivery time, `to`'s shape,
/// then every check of a send.
pub fn plan_create(state: &RealmState, user: UserId, new: NewScheduled, now: i64) -> ApiResult<ScheduledCreated> {
    if new.deliver_at <= now {
        return Err(not_in_future());
    }
    let to = send_to(new.kind, &new.to)?;
    let planned = check_message(state, user, to, new.topic, new.content, &new.client, now)?;
    let to_self = planned.channel_id().is_none() && planned.recipients() == [user];
    // Zulip's legacy default: full clients mark it read for its sender, unless it is to
    // themselves only.
    let read_by_sender = new.read_by_sender.unwrap_or_else(|| default_read_by_sender(&new.client) && !to_self);
    let item = ScheduledItem {
        id: 0,
        sender: user,
        target: target_of(&planned),
        content: planned.content().to_owned(),
        rendered_content: planned.rendered_html().to_owned(),
        client: new.client,
        deliver_at: new.deliver_at,
        read_by_sender,
        failed: false,
        failure_message: None,
        reminder: None,
    };
    Ok(ScheduledCreated { realm_id: state.realm().id, item, planned: Some(planned) })
}

impl Change for ScheduledCreated {
    /// The new item's id.
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(planned) = &mut self.planned {
            planned.check_stored(tx)?;
        }
        self.item.id = store::scheduled::insert(tx, self.realm_id, &self.item)?;
        Ok(())
    }

    /// `scheduled_messages` (or `reminders`) `add`, to the sender.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let event = format::added(&self.item);
        let id = self.item.id;
        state.scheduled_mut().put(self.item);
        Applied::new(id, vec![event])
    }
}

/// `PATCH /scheduled_messages/{id}`, its parameters decoded.
#[derive(Debug, Clone)]
pub struct ScheduledEdit {
    pub kind: Option<Kind>,
    pub to: Option<To>,
    pub topic: Option<String>,
    pub content: Option<String>,
    pub deliver_at: Option<i64>,
    pub client: String,
}

/// A planned edit; `edited` is `None` when the item is not pending (the write then answers
/// whether it was sent or never existed).
#[derive(Debug, Clone)]
pub struct ScheduledEdited {
    sender: UserId,
    id: i64,
    edited: Option<(ScheduledItem, Option<PlannedMessage>)>,
}

/// Plans `PATCH /scheduled_messages/{id}` in Zulip's order: something to change, a
/// recipient with a new type (and a topic with the channel type), a future time, the
/// message itself, a new time for a failed one, then the message checked again if its
/// recipient, topic or content changes.
pub fn plan_edit(
    state: &RealmState,
    user: UserId,
    id: i64,
    edit: ScheduledEdit,
    now: i64,
) -> ApiResult<ScheduledEdited> {
    if edit.kind.is_none()
        && edit.to.is_none()
        && edit.topic.is_none()
        && edit.content.is_none()
        && edit.deliver_at.is_none()
    {
        return Err(ApiError::bad_request("Nothing to change"));
    }
    if edit.kind.is_some() && edit.to.is_none() {
        return Err(ApiError::bad_request("Recipient required when updating type of scheduled message."));
    }
    if edit.kind == Some(Kind::Channel) && edit.topic.is_none() {
        return Err(ApiError::bad_request("Topic required when updating scheduled message type to channel."));
    }
    if edit.deliver_at.is_some_and(|t| t <= now) {
        return Err(not_in_future());
    }
    let Some(existing) = state.scheduled().get(id).filter(|i| i.sender == user && !i.is_reminder()) else {
        return Ok(ScheduledEdited { sender: user, id, edited: None });
    };
    if existing.failed && edit.deliver_at.is_none() {
        return Err(not_in_future());
    }
    let mut item = existing.clone();
    let (existing_kind, existing_topic) = match &existing.target {
        ScheduledTarget::Channel(_, topic) => (Kind::Channel, Some(topic.clone())),
        ScheduledTarget::Direct(_) => (Kind::Direct, None),
    };
    let rechecks = edit.kind.is_some()
        || edit.to.is_some()
        || edit.content.is_some()
        || (edit.topic.is_some() && existing_kind == Kind::Channel);
    let mut planned = None;
    if rechecks {
        let kind = edit.kind.unwrap_or(existing_kind);
        let to = match &edit.to {
            Some(to) => send_to(kind, to)?,
            None => match &existing.target {
                ScheduledTarget::Channel(channel, _) => SendTo::Channel(ChannelRef::Id(channel.0)),
                ScheduledTarget::Direct(ids) => SendTo::Direct(DirectRef::Ids(ids.iter().map(|u| u.0).collect())),
            },
        };
        let topic = edit.topic.clone().or(existing_topic);
        let content = edit.content.clone().unwrap_or_else(|| existing.content.clone());
        let checked = check_message(state, user, to, topic, content, &edit.client, now)?;
        item.target = target_of(&checked);
        item.content = checked.content().to_owned();
        item.rendered_content = checked.rendered_html().to_owned();
        planned = Some(checked);
    }
    if let Some(at) = edit.deliver_at {
        item.deliver_at = at;
    }
    item.client = edit.client;
    item.failed = false;
    item.failure_message = None;
    Ok(ScheduledEdited { sender: user, id, edited: Some((item, planned)) })
}

impl Change for ScheduledEdited {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let Some((item, planned)) = &mut self.edited else {
            return Err(match store::scheduled::delivered_state(tx, self.sender, self.id, false)? {
                Some(true) => ApiError::bad_request("Scheduled message was already sent"),
                _ => no_such_scheduled_message(),
            });
        };
        if let Some(planned) = planned {
            planned.check_stored(tx)?;
        }
        if !store::scheduled::update(tx, item)? {
            return Err(ApiError::bad_request("Scheduled message was already sent"));
        }
        Ok(())
    }

    /// `scheduled_messages` `update` with the whole message, to the sender.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let Some((item, _)) = self.edited else { return Applied::events(Vec::new()) };
        let event = format::updated(&item);
        state.scheduled_mut().put(item);
        Applied::events(vec![event])
    }
}

/// A planned deletion of a scheduled message or a reminder of the user's (delivered ones
/// too, as Zulip: their row goes).
#[derive(Debug, Clone)]
pub struct ScheduledDeleted {
    pub(super) sender: UserId,
    pub(super) id: i64,
    pub(super) reminder: bool,
}

impl Change for ScheduledDeleted {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if store::scheduled::delivered_state(tx, self.sender, self.id, self.reminder)?.is_none() {
            return Err(if self.reminder {
                ApiError::resource_not_found("Reminder does not exist")
            } else {
                no_such_scheduled_message()
            });
        }
        store::scheduled::delete(tx, self.sender, self.id)?;
        Ok(())
    }

    /// `scheduled_messages` (or `reminders`) `remove`, to the sender.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        state.scheduled_mut().remove(self.id);
        Applied::events(vec![format::removed(self.sender, self.id, self.reminder)])
    }
}
