//! Deleting a topic: `POST /streams/{stream_id}/delete_topic` (Zulip's `delete_in_topic`):
//! the topic's messages the administrator may read, newest first, in batches of 100, each
//! batch its own transaction with its `delete_message` event (and the channel's new first
//! message, if it changes). Past Zulip's 50 seconds the reply is `complete: false` and the
//! client asks again; the realm actor serves its other requests between batches. Once the
//! topic is empty, the topic visibility policies for it are cleared.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::json;

use super::{event_recipients, first_message_changed, new_first_message};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::catalog::EMPTY_TOPIC_DISPLAY_NAME;
use crate::realm::chat::viewer;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{plan_policy, TopicPolicy, INHERIT};
use crate::realm::{Applied, Change};
use crate::store::{self, reactions};

/// Zulip's `RETENTION_STREAM_MESSAGE_BATCH_SIZE`: messages deleted per transaction.
pub const BATCH_SIZE: usize = 100;

/// How long one request deletes before answering `complete: false` (Zulip's 50 seconds).
pub const TIME_LIMIT: Duration = Duration::from_secs(50);

/// `POST /streams/{stream_id}/delete_topic`: replies whether the topic is now empty.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<bool>")]
pub struct DeleteTopic {
    pub acting: UserId,
    pub stream_id: i64,
    pub topic_name: String,
    /// [`TIME_LIMIT`], but for tests.
    pub time_limit: Duration,
}

/// A checked request: the channel, the topic as stored, and whose reads bound it.
#[derive(Debug, Clone)]
struct Target {
    acting: UserId,
    channel: ChannelId,
    topic: String,
    /// With protected history, only the messages the administrator received.
    received_by: Option<UserId>,
}

/// Zulip's checks: an administrator, then a channel they may read (`access_stream_by_id`:
/// "Invalid channel ID" otherwise); "general chat" names the empty topic.
fn plan_target(state: &RealmState, msg: &DeleteTopic) -> ApiResult<Target> {
    let user = viewer(state, msg.acting)?;
    require_admin(user.role)?;
    let channel = state
        .channel(ChannelId(msg.stream_id))
        .filter(|c| !c.is_archived && state.has_content_access(user, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))?;
    let topic = if msg.topic_name == EMPTY_TOPIC_DISPLAY_NAME { String::new() } else { msg.topic_name.clone() };
    let received_by = (!channel.history_public_to_subscribers).then_some(user.id);
    Ok(Target { acting: user.id, channel: channel.id, topic, received_by })
}

/// One batch: the newest messages left, deleted with their rows, reactions and search
/// entries (Zulip's `do_delete_messages` of them).
#[derive(Debug, Clone)]
struct Batch {
    state: RealmState,
    target: Target,
    /// Set by the write.
    done: Option<Deleted>,
}

/// What a batch deleted: the ids (ascending), who is told, the topic as the messages spelled
/// it, and the channel's new first message when it was among them.
#[derive(Debug, Clone)]
struct Deleted {
    ids: Vec<MessageId>,
    told: BTreeSet<UserId>,
    spelled: String,
    first: Option<Option<MessageId>>,
}

impl Change for Batch {
    /// How many messages it deleted.
    type Output = usize;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let Target { acting, channel, topic, received_by } = &self.target;
        let ids = store::messages::newest_in_topic(tx, *channel, topic, *received_by, BATCH_SIZE)?;
        let mut told = BTreeSet::from([*acting]);
        let mut spelled = String::new();
        for id in &ids {
            let Some(message) = reactions::message(tx, *id)? else { continue };
            told.extend(event_recipients(&self.state, tx, &message)?);
            reactions::delete_message(tx, &message)?;
            spelled = message.topic;
        }
        let first = new_first_message(&self.state, tx, *channel, |id| ids.contains(&id))?;
        let mut ids = ids;
        ids.sort();
        self.done = Some(Deleted { ids, told, spelled, first });
        Ok(())
    }

    /// The channel's `first_message_id` update, then `delete_message` (its topic lowercased,
    /// as Zulip groups deletions by topic), to everyone who could see the messages and to
    /// the administrator.
    fn apply(self, state: &mut RealmState) -> Applied<usize> {
        let Some(Deleted { ids, told, spelled, first }) = self.done else { return Applied::new(0, Vec::new()) };
        if ids.is_empty() {
            return Applied::new(0, Vec::new());
        }
        let channel = self.target.channel;
        let told: Vec<UserId> = told.into_iter().collect();
        let mut events = Vec::new();
        if let Some(first) = first {
            events.push(first_message_changed(state, channel, first, told.clone()));
        }
        let body = json!({"message_ids": ids, "stream_id": channel, "topic": spelled.to_lowercase(),
                          "message_type": "stream"});
        events.push(Outgoing::to(told, Event::new("delete_message", body)));
        Applied::new(ids.len(), events)
    }
}

/// Once the topic is empty: the visibility policies for it are cleared (Zulip's
/// `bulk_do_set_user_topic_visibility_policy` to "inherit"), but, with protected history,
/// not those of users who still received some message of it.
#[derive(Debug, Clone)]
struct Cleanup {
    target: Target,
    policies: Vec<(UserId, TopicPolicy)>,
}

impl Cleanup {
    fn plan(state: &RealmState, target: Target, now: i64) -> Cleanup {
        let policies = state
            .users()
            .filter(|u| state.user_topic(u.id, target.channel, &target.topic).is_some())
            .map(|u| (u.id, plan_policy(state, u.id, target.channel, &target.topic, INHERIT, now)))
            .collect();
        Cleanup { target, policies }
    }
}

impl Change for Cleanup {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.target.received_by.is_some() {
            let (channel, topic) = (self.target.channel, &self.target.topic);
            let mut kept = Vec::new();
            for (user, policy) in self.policies.drain(..) {
                if !store::user_messages::has_topic(tx, user, channel, topic)? {
                    kept.push((user, policy));
                }
            }
            self.policies = kept;
        }
        for (_, policy) in &mut self.policies {
            policy.write(tx)?;
        }
        Ok(())
    }

    fn writes(&self) -> bool {
        !self.policies.is_empty()
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let events = self.policies.into_iter().flat_map(|(_, policy)| policy.apply(state).events).collect();
        Applied::events(events)
    }
}

/// The next step: a batch unless the time is up (`complete: false`); once a batch finds
/// nothing left, the cleanup (`complete: true`). Between steps the actor goes on with its
/// mailbox.
fn step(target: Target, deadline: Instant) -> ResponseActFuture<RealmActor, ApiResult<bool>> {
    let pause = fut::wrap_future::<_, RealmActor>(tokio::task::yield_now());
    Box::pin(pause.then(move |_, actor, _| -> ResponseActFuture<RealmActor, ApiResult<bool>> {
        if Instant::now() >= deadline {
            return Box::pin(fut::ready(Ok(false)));
        }
        let batch = Batch { state: actor.state.clone(), target: target.clone(), done: None };
        match actor.commit(batch) {
            Err(e) => Box::pin(fut::ready(Err(e))),
            Ok(0) => {
                let cleanup = Cleanup::plan(&actor.state, target, crate::clock::now());
                Box::pin(fut::ready(actor.commit(cleanup).map(|()| true)))
            }
            Ok(_) => step(target, deadline),
        }
    }))
}

impl Handler<DeleteTopic> for RealmActor {
    /// Not atomic: other requests are served between the batches.
    type Result = ResponseActFuture<Self, ApiResult<bool>>;

    fn handle(&mut self, msg: DeleteTopic, _: &mut Self::Context) -> Self::Result {
        let deadline = Instant::now() + msg.time_limit;
        match plan_target(&self.state, &msg) {
            Ok(target) => step(target, deadline),
            Err(e) => Box::pin(fut::ready(Err(e))),
        }
    }
}
