//! Sending messages (`POST /messages`): where a message goes (`addressee`), who it may go
//! to (`recipients`), the content and topic rules (`content`), mentions and the flags they
//! give (`mentions`), the planned message and its write (`ops`), and its events (`events`).

pub mod addressee;
pub mod content;
pub mod events;
pub mod follow;
pub mod mentions;
pub mod ops;
pub mod recipients;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use actix::prelude::*;

pub use addressee::{ChannelRef, DirectRef, SendTo};
pub use content::{normalize_content, normalize_topic, stripped_topic, truncate};
pub use ops::{plan_notice, plan_send, Notice, NoticeTo, PlannedMessage};
pub use recipients::{check_can_send_to_channel, topic_creation_refusal};

use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::group_commit::Deferred;
use crate::realm::state::RealmState;
use crate::store::Store;

/// `POST /messages`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<SentMessage>")]
pub struct SendMessage {
    pub sender: UserId,
    pub to: SendTo,
    /// `topic` or `subject`, as given.
    pub topic: Option<String>,
    pub content: String,
    /// The sending client's name (from its `User-Agent`).
    pub client: String,
    pub queue_id: Option<String>,
    pub local_id: Option<String>,
    pub read_by_sender: Option<bool>,
}

/// The reply to `POST /messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    pub id: MessageId,
    /// The topic policy the send set automatically (Zulip's `automatic_new_visibility_policy`).
    pub automatic_new_visibility_policy: Option<i64>,
}

impl Handler<SendMessage> for RealmActor {
    /// Sends wait for the group commit: several waiting in the mailbox share a transaction.
    type Result = Deferred<ApiResult<SentMessage>>;

    fn handle(&mut self, msg: SendMessage, ctx: &mut Self::Context) -> Self::Result {
        self.alert_bot_owner(msg.sender, &msg.to, &msg.content);
        self.defer(ctx, msg, |actor, msg| {
            let listeners = actor.all_public_streams_listeners();
            let change = plan_send(&actor.state, msg, &listeners, crate::clock::now())?;
            // Push notifications, and the jobs of outgoing-webhook bots it mentions or writes
            // to, in its transaction.
            Ok(crate::realm::bots::webhooks::outgoing::sending(actor, change))
        })
    }
}

/// Sends a message outside the realm actor (tests, tools): plans it, commits it and
/// returns the reply with the events.
pub fn send_message(
    state: &mut RealmState,
    store: &Store,
    msg: &SendMessage,
    public_listeners: &BTreeSet<UserId>,
    now: i64,
) -> ApiResult<(SentMessage, Vec<Outgoing>)> {
    let change = plan_send(state, msg.clone(), public_listeners, now)?;
    let applied = crate::realm::commit(state, store, change)?;
    Ok((applied.output, applied.events))
}
