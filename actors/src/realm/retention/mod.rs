//! The message retention policy (Zulip's `archive_messages`, with the `delete_message`
//! events of level 452): channel messages older than the channel's `message_retention_days`
//! (or the organization's, when it inherits), and direct messages older than the
//! organization's, are deleted. -1 keeps messages forever. The realm actor runs it a minute
//! after it starts and then every [`RETENTION_INTERVAL`] (daily, as Zulip's cron job), in
//! batches between its other requests; one run at a time.

use std::time::Duration;

use actix::prelude::*;

use crate::clock;
use crate::error::ApiResult;
use crate::realm::actor::RealmActor;
use crate::realm::chat::changes::purge::{purge_all, Selection};
use crate::realm::state::RealmState;

/// How often the policy is applied.
pub const RETENTION_INTERVAL: Duration = Duration::from_secs(86_400);

/// Seconds in a day.
const DAY: i64 = 86_400;

/// Arms the retention timer (sent once, when the realm actor starts); the first run comes
/// after a minute, so that a starting server first answers its clients.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StartRetention;

/// Applies the policy as at `now` (Unix seconds); replies how many messages went.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<usize>")]
pub struct ApplyRetention {
    pub now: i64,
}

/// What the policy deletes at `now`: each channel's expired messages, then the direct
/// messages'.
pub fn expired(state: &RealmState, now: i64) -> Vec<Selection> {
    let realm_days = state.realm_retention_days();
    let mut selections: Vec<Selection> = state
        .channels()
        .filter_map(|c| {
            let days = c.message_retention_days.unwrap_or(realm_days);
            (days > 0).then(|| Selection::SentBefore { channel: Some(c.id), before: now - days * DAY })
        })
        .collect();
    if realm_days > 0 {
        selections.push(Selection::SentBefore { channel: None, before: now - realm_days * DAY });
    }
    selections
}

impl Handler<StartRetention> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: StartRetention, ctx: &mut Self::Context) {
        let apply = |_: &mut RealmActor, ctx: &mut Context<RealmActor>| {
            ctx.notify(ApplyRetentionNow);
        };
        ctx.run_later(Duration::from_secs(60), apply);
        ctx.run_interval(RETENTION_INTERVAL, apply);
    }
}

/// A timer's run of the policy (its result is logged).
#[derive(Message, Debug)]
#[rtype(result = "()")]
struct ApplyRetentionNow;

impl Handler<ApplyRetentionNow> for RealmActor {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _: ApplyRetentionNow, _: &mut Self::Context) -> Self::Result {
        let realm = self.state.realm().id;
        if self.retention_running {
            return Box::pin(fut::ready(()));
        }
        self.retention_running = true;
        Box::pin(purge_all(expired(&self.state, clock::now()), None).map(move |done, actor: &mut RealmActor, _| {
            actor.retention_running = false;
            match done {
                Ok(0) => {}
                Ok(n) => tracing::info!(realm.id = %realm, messages = n, "retention policy deleted messages"),
                Err(e) => tracing::warn!(realm.id = %realm, error = %e, "retention policy failed"),
            }
        }))
    }
}

impl Handler<ApplyRetention> for RealmActor {
    type Result = ResponseActFuture<Self, ApiResult<usize>>;

    fn handle(&mut self, msg: ApplyRetention, _: &mut Self::Context) -> Self::Result {
        purge_all(expired(&self.state, msg.now), None)
    }
}
