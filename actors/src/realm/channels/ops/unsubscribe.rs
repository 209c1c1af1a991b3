//! Unsubscribing (`DELETE /users/me/subscriptions`): oneself, or others with the right to.

use std::collections::BTreeMap;

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::checks::{principal_users, Principals};
use super::events::peer_events;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::channels::format;
use crate::realm::model::{Channel, Subscription};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// An unsubscription, planned: the rows it deactivates and the `removed` and
/// `not_removed` channel names of the reply.
#[derive(Debug, Clone)]
pub struct Unsubscribing {
    rows: Vec<Subscription>,
    removed: Vec<String>,
    not_removed: Vec<String>,
}

/// Plans `DELETE /users/me/subscriptions` for the channels `names` names.
pub fn plan_unsubscribe(
    state: &RealmState,
    acting: UserId,
    names: &[String],
    principals: Option<&Principals>,
) -> ApiResult<Unsubscribing> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?;
    let mut channels: Vec<ChannelId> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim();
        match state.channel_by_name(name).filter(|c| !c.is_archived && state.has_metadata_access(actor, c)) {
            Some(c) if !channels.contains(&c.id) => channels.push(c.id),
            Some(_) => {}
            None => missing.push(name.to_owned()),
        }
    }
    if !missing.is_empty() {
        return Err(ApiError::bad_request(format!("Channel(s) ({}) do not exist", missing.join(", "))));
    }
    let users = principal_users(state, principals, acting)?;
    let others: Vec<&UserId> = users.iter().filter(|u| **u != acting).collect();
    // Administrators, bot owners removing their own bots, and members of the channel's
    // can_remove_subscribers_group may remove others.
    let own_bots_only =
        others.iter().all(|u| state.user(**u).is_some_and(|b| b.is_bot && b.bot_owner_id == Some(acting)));
    if !others.is_empty() && !actor.role.is_admin() && !own_bots_only {
        let refused = channels
            .iter()
            .filter_map(|id| state.channel(*id))
            .any(|channel| !state.in_channel_group(channel, "can_remove_subscribers_group", actor));
        if refused {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
    }
    let mut rows: Vec<Subscription> = Vec::new();
    let (mut removed, mut not_removed) = (Vec::new(), Vec::new());
    for user in &users {
        for id in &channels {
            let name = state.channel(*id).map(|c| c.name.clone()).unwrap_or_default();
            match state.subscription(*user, *id).filter(|s| s.active) {
                Some(sub) => {
                    rows.push(Subscription { active: false, ..sub.clone() });
                    removed.push(name);
                }
                None => not_removed.push(name),
            }
        }
    }
    Ok(Unsubscribing { rows, removed, not_removed })
}

impl Change for Unsubscribing {
    /// The `removed` and `not_removed` fields of the reply.
    type Output = Map<String, Value>;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        for sub in &self.rows {
            store::channels::put_subscription(tx, sub)?;
        }
        Ok(())
    }

    /// `subscription` remove for each user (then a `stream` delete for the channels they
    /// can no longer see), `peer_remove` for who still may see the channels.
    fn apply(self, state: &mut RealmState) -> Applied<Map<String, Value>> {
        let mut per_user: BTreeMap<UserId, Vec<Value>> = BTreeMap::new();
        let mut per_channel: BTreeMap<ChannelId, Vec<UserId>> = BTreeMap::new();
        for sub in self.rows {
            let name = state.channel(sub.channel_id).map(|c| c.name.clone()).unwrap_or_default();
            per_user.entry(sub.user_id).or_default().push(json!({"name": name, "stream_id": sub.channel_id}));
            per_channel.entry(sub.channel_id).or_default().push(sub.user_id);
            state.put_subscription(sub);
        }
        let mut events = Vec::new();
        for (user, subs) in per_user {
            let ids: Vec<ChannelId> = subs.iter().filter_map(|s| s["stream_id"].as_i64()).map(ChannelId).collect();
            let remove = Event::new("subscription", json!({"op": "remove", "subscriptions": subs}));
            events.push(Outgoing::to(vec![user], remove));
            events.extend(lost_access_event(state, user, &ids));
        }
        events.extend(peer_events(state, "peer_remove", &per_channel));
        let mut out = Map::new();
        out.insert("removed".into(), json!(self.removed));
        out.insert("not_removed".into(), json!(self.not_removed));
        Applied::new(out, events)
    }
}

/// A `stream` delete event for the channels among `channels` that `user` can no longer
/// see (a non-administrator leaving a private channel), as Zulip sends after removal.
fn lost_access_event(state: &RealmState, user: UserId, channels: &[ChannelId]) -> Option<Outgoing> {
    let viewer = state.user(user)?;
    let lost: Vec<&Channel> =
        channels.iter().filter_map(|id| state.channel(*id)).filter(|c| !state.has_metadata_access(viewer, c)).collect();
    if lost.is_empty() {
        return None;
    }
    let ids: Vec<ChannelId> = lost.iter().map(|c| c.id).collect();
    Some(Outgoing::to(vec![user], Event::new("stream", format::stream_delete_body(&ids))))
}
