//! Deleting many messages chosen by a rule rather than one by one (Zulip's
//! `do_delete_messages` of a selection): a deactivated user's messages (`DELETE
//! /users/{user_id}` `actions`, level 459) and those past the retention period (level
//! 452). Batches of [`BATCH_SIZE`], each its own transaction; between batches the realm
//! actor serves its other requests. Each batch sends one `delete_message` event per topic
//! and per direct message conversation, and the new `first_message_id` of a channel whose
//! first message went.

use std::collections::{BTreeMap, BTreeSet};

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::json;

use super::delete_topic::BATCH_SIZE;
use super::{event_recipients, first_message_changed, new_first_message};
use crate::error::ApiResult;
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::{self, reactions};

/// Which messages go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// What `sender` sent in these channels, and their direct messages when `direct`,
    /// below `below` (the purge pages down from the newest message when it starts).
    SentBy { sender: UserId, channels: Vec<ChannelId>, direct: bool, below: MessageId },
    /// What was sent before `before` (Unix seconds) in `channel`, or directly when `None`
    /// (the retention policy).
    SentBefore { channel: Option<ChannelId>, before: i64 },
}

/// Where a deleted message was, as Zulip groups `delete_message` events: a topic (its name
/// lowercased) or a direct message conversation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Topic(ChannelId, String),
    Direct(String),
}

/// One batch of a purge, by `acting` (told of channel messages they may read, level 457).
#[derive(Debug, Clone)]
struct Batch {
    state: RealmState,
    selection: Selection,
    acting: Option<UserId>,
    /// Set by the write: the messages of each place (ascending) and who is told.
    done: BTreeMap<Place, (Vec<MessageId>, BTreeSet<UserId>)>,
    firsts: Vec<(ChannelId, Option<MessageId>)>,
}

impl Change for Batch {
    /// How many messages it deleted, and the oldest of them.
    type Output = (usize, Option<MessageId>);

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let ids = match &self.selection {
            Selection::SentBy { sender, channels, direct, below } => {
                store::messages::newest_sent_by(tx, *sender, channels, *direct, *below, BATCH_SIZE)?
            }
            Selection::SentBefore { channel, before } => {
                store::messages::oldest_before(tx, self.state.realm().id, *channel, *before, BATCH_SIZE)?
            }
        };
        let mut channels = BTreeSet::new();
        for id in &ids {
            let Some(message) = reactions::message(tx, *id)? else { continue };
            let mut told: BTreeSet<UserId> = event_recipients(&self.state, tx, &message)?.into_iter().collect();
            let place = match message.channel_id {
                Some(channel) => {
                    channels.insert(channel);
                    let acting = self.acting.and_then(|a| self.state.user(a));
                    let readable = self
                        .state
                        .channel(channel)
                        .zip(acting)
                        .is_some_and(|(c, a)| self.state.has_content_access(a, c));
                    if readable {
                        told.extend(self.acting);
                    }
                    Place::Topic(channel, message.topic.to_lowercase())
                }
                None => Place::Direct(message.dm_key.clone().unwrap_or_default()),
            };
            reactions::delete_message(tx, &message)?;
            let entry = self.done.entry(place).or_default();
            entry.0.push(message.id);
            entry.1.extend(told);
        }
        for channel in channels {
            if let Some(first) = new_first_message(&self.state, tx, channel, |id| ids.contains(&id))? {
                self.firsts.push((channel, first));
            }
        }
        Ok(())
    }

    /// Each channel's `first_message_id` update, then a `delete_message` per place.
    fn apply(self, state: &mut RealmState) -> Applied<(usize, Option<MessageId>)> {
        let mut events = Vec::new();
        for (channel, first) in self.firsts {
            let told: BTreeSet<UserId> = self
                .done
                .iter()
                .filter(|(place, _)| matches!(place, Place::Topic(c, _) if *c == channel))
                .flat_map(|(_, (_, told))| told.iter().copied())
                .collect();
            events.push(first_message_changed(state, channel, first, told.into_iter().collect()));
        }
        let (mut count, mut oldest) = (0, None);
        for (place, (mut ids, told)) in self.done {
            ids.sort();
            count += ids.len();
            if let Some(&first) = ids.first() {
                oldest = Some(oldest.map_or(first, |o: MessageId| o.min(first)));
            }
            let body = match place {
                Place::Topic(channel, topic) => {
                    json!({"message_ids": ids, "stream_id": channel, "topic": topic, "message_type": "stream"})
                }
                Place::Direct(_) => json!({"message_ids": ids, "message_type": "private"}),
            };
            events.push(Outgoing::to(told.into_iter().collect(), Event::new("delete_message", body)));
        }
        Applied::new((count, oldest), events)
    }
}

/// Deletes every message of `selection`, batch after batch, and replies how many went.
pub fn purge(selection: Selection, acting: Option<UserId>) -> ResponseActFuture<RealmActor, ApiResult<usize>> {
    step(selection, acting, 0)
}

fn step(
    selection: Selection,
    acting: Option<UserId>,
    so_far: usize,
) -> ResponseActFuture<RealmActor, ApiResult<usize>> {
    let pause = fut::wrap_future::<_, RealmActor>(tokio::task::yield_now());
    Box::pin(pause.then(move |_, actor, _| -> ResponseActFuture<RealmActor, ApiResult<usize>> {
        let batch = Batch {
            state: actor.state.clone(),
            selection: selection.clone(),
            acting,
            done: BTreeMap::new(),
            firsts: Vec::new(),
        };
        match actor.commit(batch) {
            Err(e) => Box::pin(fut::ready(Err(e))),
            Ok((0, _)) => Box::pin(fut::ready(Ok(so_far))),
            Ok((n, oldest)) => {
                let mut selection = selection;
                if let (Selection::SentBy { below, .. }, Some(oldest)) = (&mut selection, oldest) {
                    *below = oldest;
                }
                step(selection, acting, so_far + n)
            }
        }
    }))
}

/// [`purge`] of each selection in turn; replies how many messages went in all.
pub fn purge_all(
    mut selections: Vec<Selection>,
    acting: Option<UserId>,
) -> ResponseActFuture<RealmActor, ApiResult<usize>> {
    if selections.is_empty() {
        return Box::pin(fut::ready(Ok(0)));
    }
    let first = selections.remove(0);
    Box::pin(purge(first, acting).then(move |done, _, _| -> ResponseActFuture<RealmActor, ApiResult<usize>> {
        match done {
            Ok(n) => Box::pin(purge_all(selections, acting).map(move |rest, _, _| rest.map(|m| m + n))),
            Err(e) => Box::pin(fut::ready(Err(e))),
        }
    }))
}
