//! Sending what is due (Zulip's `try_deliver_one_scheduled_message`, `send_scheduled_message`
//! and `send_reminder`), from the realm actor's timer.
//!
//! The actor keeps one timer, armed for the earliest due time of its pending items
//! ([`RealmActor::arm_scheduler`], after every change to them and when the actor starts).
//! When it fires, each due item is sent through the normal send path (so events, unread
//! flags and push notifications are those of any message) in a transaction that also marks
//! the item delivered: the message exists exactly when its item is marked, and an item
//! already marked makes the transaction roll back, so nothing is sent twice. An item that
//! cannot be sent is marked failed with Zulip's message; the sender of a scheduled message
//! (not of a reminder) is told by Notification Bot.
//!
//! Items that came due while the server was down are sent when their organization starts
//! (the server starts every organization with pending items): messages up to
//! [`LATE_CUTOFF_SECS`] late, reminders however late, as in Zulip.

use std::collections::BTreeSet;
use std::time::Duration;

use actix::prelude::*;
use rusqlite::Transaction;

use super::format;
use super::reminders::current_content;
use crate::clock;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::actor::RealmActor;
use crate::realm::bots::webhooks::outgoing::{sending, WithServices};
use crate::realm::chat::send::{plan_notice, plan_send, ChannelRef, DirectRef, Notice, NoticeTo, SendMessage, SendTo};
use crate::realm::model::SystemBot;
use crate::realm::notices::texts::global_time;
use crate::realm::notifications::{with_push, PushContext, WithPush};
use crate::realm::scheduled_data::{ScheduledItem, ScheduledTarget};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Zulip's `SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES`: a scheduled message later than this is
/// not sent but marked failed.
pub const LATE_CUTOFF_SECS: i64 = 10 * 60;

/// Why an item was not sent, and whether its sender is told.
struct Failure {
    msg: String,
    notify: bool,
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure { msg: e.msg, notify: true }
    }
}

/// Zulip's checks before a send, in its order: the organization and the sender are active;
/// a message (not a reminder) is not too late.
fn check_deliverable(state: &RealmState, item: &ScheduledItem, now: i64) -> Result<(), Failure> {
    if state.realm().deactivated {
        return Err(Failure { msg: "This organization has been deactivated".into(), notify: false });
    }
    if !state.user(item.sender).is_some_and(|u| u.is_active) {
        return Err(Failure { msg: "Account is deactivated".into(), notify: false });
    }
    if !item.is_reminder() && now > item.deliver_at + LATE_CUTOFF_SECS {
        return Err(Failure { msg: "Message could not be sent at the scheduled time.".into(), notify: true });
    }
    Ok(())
}

/// A due message, sent, and its item marked delivered in the same transaction.
struct Delivered {
    send: WithServices,
    item: ScheduledItem,
}

impl Change for Delivered {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.send.write(tx)?;
        if !store::scheduled::mark_delivered(tx, self.item.id, self.send.message().id())? {
            tracing::error!(scheduled_message.id = self.item.id, "scheduled message already delivered");
            return Err(ApiError::internal());
        }
        Ok(())
    }

    /// The message's events, then `scheduled_messages` (or `reminders`) `remove`.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = self.send.apply(state).events;
        state.scheduled_mut().remove(self.item.id);
        events.push(format::removed(self.item.sender, self.item.id, self.item.is_reminder()));
        Applied::events(events)
    }
}

/// A due reminder: its text made again from the message as it is now (the saved text if
/// the user can no longer read it), sent by Notification Bot, the item marked delivered.
struct Reminded {
    state: RealmState,
    realm_url: String,
    bot: UserId,
    listeners: BTreeSet<UserId>,
    context: Option<PushContext>,
    now: i64,
    item: ScheduledItem,
    /// Set by the write.
    send: Option<WithPush>,
}

impl Change for Reminded {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let state = &self.state;
        let user = state.user_or_err(self.item.sender)?;
        let content = self
            .item
            .reminder
            .as_ref()
            .and_then(|r| current_content(state, tx, &self.realm_url, user, r).ok())
            .unwrap_or_else(|| self.item.content.clone());
        let notice = Notice::new(self.bot, NoticeTo::Direct(vec![user.id]), content);
        let planned = plan_notice(state, notice, &self.listeners, self.now)?;
        let context = self.context.take().ok_or_else(ApiError::internal)?;
        let mut send = with_push(state, planned, context);
        send.write(tx)?;
        if !store::scheduled::mark_delivered(tx, self.item.id, send.message().id())? {
            tracing::error!(reminder.id = self.item.id, "reminder already delivered");
            return Err(ApiError::internal());
        }
        self.send = Some(send);
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = self.send.map(|send| send.apply(state).events).unwrap_or_default();
        state.scheduled_mut().remove(self.item.id);
        events.push(format::removed(self.item.sender, self.item.id, true));
        Applied::events(events)
    }
}

/// An item that could not be sent, marked failed.
struct Failed {
    item: ScheduledItem,
    notify: bool,
}

impl Change for Failed {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::scheduled::mark_failed(tx, self.item.id, self.item.failure_message.as_deref().unwrap_or(""))?;
        Ok(())
    }

    /// `scheduled_messages` `update` (failed) when the sender is told.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let events = if self.notify { vec![format::updated(&self.item)] } else { Vec::new() };
        state.scheduled_mut().put(self.item);
        Applied::events(events)
    }
}

/// Notification Bot's message about a scheduled message that was not sent (Zulip's
/// `send_failed_scheduled_message_notification`).
pub fn failure_notice_text(deliver_at: i64, error: &str) -> String {
    format!(
        "The message you scheduled for {} was not sent because of the following error:\n\n> {error}\n\n[View scheduled messages](#scheduled)\n\n",
        global_time(deliver_at)
    )
}

impl RealmActor {
    /// Arms the timer for the earliest due item (cancelling one armed for another time),
    /// or none when nothing is pending.
    pub(crate) fn arm_scheduler(&mut self, ctx: &mut Context<Self>) {
        let next = self.state.scheduled().next_due();
        if next.is_some() && self.scheduler.as_ref().map(|(due, _)| *due) == next {
            return;
        }
        if let Some((_, handle)) = self.scheduler.take() {
            ctx.cancel_future(handle);
        }
        let Some(due) = next else { return };
        let wait_ms = (due.saturating_mul(1000) - clock::now_micros() / 1000).max(0);
        let handle = ctx.run_later(Duration::from_millis(wait_ms as u64), |actor, ctx| {
            actor.scheduler = None;
            actor.deliver_due(clock::now(), ctx);
        });
        self.scheduler = Some((due, handle));
    }

    /// Sends everything due at `now`, oldest first, then arms the timer again.
    pub(crate) fn deliver_due(&mut self, now: i64, ctx: &mut Context<Self>) {
        for id in self.state.scheduled().due(now) {
            self.deliver(id, now);
        }
        self.arm_scheduler(ctx);
    }

    fn deliver(&mut self, id: i64, now: i64) {
        let Some(item) = self.state.scheduled().get(id).cloned() else { return };
        let realm_id = self.state.realm().id;
        tracing::info!(realm.id = %realm_id, scheduled_message.id = id, user.id = %item.sender, "sending scheduled message");
        let sent = match check_deliverable(&self.state, &item, now) {
            Ok(()) if item.is_reminder() => self.send_reminder(&item, now).map_err(Failure::from),
            Ok(()) => self.send_scheduled(&item, now).map_err(Failure::from),
            Err(failure) => Err(failure),
        };
        if let Err(failure) = sent {
            tracing::info!(realm.id = %realm_id, scheduled_message.id = id, error = %failure.msg, "scheduled message failed");
            self.record_failure(item, failure);
        }
    }

    fn send_scheduled(&mut self, item: &ScheduledItem, now: i64) -> ApiResult<()> {
        let (to, topic) = match &item.target {
            ScheduledTarget::Channel(channel, topic) => {
                (SendTo::Channel(ChannelRef::Id(channel.0)), Some(topic.clone()))
            }
            ScheduledTarget::Direct(ids) => (SendTo::Direct(DirectRef::Ids(ids.iter().map(|u| u.0).collect())), None),
        };
        let msg = SendMessage {
            sender: item.sender,
            to,
            topic,
            content: item.content.clone(),
            client: item.client.clone(),
            queue_id: None,
            local_id: None,
            read_by_sender: Some(item.read_by_sender),
        };
        let listeners = self.all_public_streams_listeners();
        let planned = plan_send(&self.state, msg, &listeners, now)?;
        // Through the outgoing-webhook services, as `POST /messages`: a scheduled mention of
        // such a bot reaches it.
        let send = sending(self, planned);
        self.commit(Delivered { send, item: item.clone() })
    }

    fn send_reminder(&mut self, item: &ScheduledItem, now: i64) -> ApiResult<()> {
        let bot = self.state.system_bot(SystemBot::NOTIFICATION_BOT).map(|b| b.id).ok_or_else(ApiError::internal)?;
        let change = Reminded {
            state: self.state.clone(),
            realm_url: self.config.realm_url(&self.state.realm().subdomain),
            bot,
            listeners: self.all_public_streams_listeners(),
            context: Some(PushContext::of(self)),
            now,
            item: item.clone(),
            send: None,
        };
        self.commit(change)
    }

    /// Marks the item failed; the sender of a scheduled message hears about it from
    /// Notification Bot (unless they or the organization were deactivated).
    fn record_failure(&mut self, mut item: ScheduledItem, failure: Failure) {
        let notify = failure.notify && !item.is_reminder();
        item.failed = true;
        item.failure_message = Some(failure.msg.clone());
        let (sender, deliver_at) = (item.sender, item.deliver_at);
        if let Err(e) = self.commit(Failed { item, notify }) {
            tracing::error!(realm.id = %self.state.realm().id, error = %e, "could not mark a scheduled message failed");
            return;
        }
        if notify {
            if let Some(bot) = self.state.system_bot(SystemBot::NOTIFICATION_BOT).map(|b| b.id) {
                let text = failure_notice_text(deliver_at, &failure.msg);
                self.post_notices(vec![Notice::new(bot, NoticeTo::Direct(vec![sender]), text)]);
            }
        }
    }
}
