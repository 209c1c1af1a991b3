//! The events channel changes share: who newly sees a channel, subscription adds, peer
//! changes and the default channels.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::channels::format;
use crate::realm::model::Role;
use crate::realm::state::RealmState;

/// The metadata audience of each channel, as a set.
pub fn audiences(state: &RealmState, channels: &[ChannelId]) -> Vec<BTreeSet<UserId>> {
    channels.iter().map(|c| state.channel_metadata_audience(*c).into_iter().collect()).collect()
}

/// `stream` create events for users who newly may see each channel (`before[i]` is the
/// audience of `channels[i]` before the change).
pub fn creation_events(state: &RealmState, channels: &[ChannelId], before: &[BTreeSet<UserId>]) -> Vec<Outgoing> {
    let mut events = Vec::new();
    for (channel, before) in channels.iter().zip(before) {
        let Some(c) = state.channel(*channel) else { continue };
        let gained: Vec<UserId> =
            state.channel_metadata_audience(*channel).into_iter().filter(|u| !before.contains(u)).collect();
        if !gained.is_empty() {
            let dict = Value::Object(format::stream_dict(state, c));
            events.push(Outgoing::to(gained, Event::new("stream", json!({"op": "create", "streams": [dict]}))));
        }
    }
    events
}

/// `subscription` add events, one per newly subscribed user; each channel's subscriber
/// list is built once.
pub fn subscription_add_events(state: &RealmState, per_user: &BTreeMap<UserId, Vec<ChannelId>>) -> Vec<Outgoing> {
    let mut subscribers: BTreeMap<ChannelId, Value> = BTreeMap::new();
    let mut shared: BTreeMap<ChannelId, format::Common> = BTreeMap::new();
    per_user
        .iter()
        .map(|(user, channels)| {
            let subs: Vec<Value> = channels
                .iter()
                .filter_map(|c| {
                    let channel = state.channel(*c)?;
                    let common = shared.entry(*c).or_insert_with(|| format::common(state, channel)).clone();
                    let mut dict = format::subscription_dict_with(common, channel, state.subscription(*user, *c)?);
                    let list =
                        subscribers.entry(*c).or_insert_with(|| json!(format::active_subscribers(state, *c))).clone();
                    dict.insert("subscribers".into(), list);
                    Some(Value::Object(dict))
                })
                .collect();
            Outgoing::to(vec![*user], Event::new("subscription", json!({"op": "add", "subscriptions": subs})))
        })
        .collect()
}

/// `peer_add` / `peer_remove` events: for each channel, to who may see it, except the
/// users whose subscription changed. Channels with the same changed users and the same
/// audience share one event (`stream_ids` ascending), so a user joining many public
/// channels is one event per peer.
pub fn peer_events(state: &RealmState, op: &str, changed: &BTreeMap<ChannelId, Vec<UserId>>) -> Vec<Outgoing> {
    let mut groups: BTreeMap<(Vec<UserId>, Vec<UserId>), Vec<i64>> = BTreeMap::new();
    for (channel, users) in changed {
        let mut users = users.clone();
        users.sort();
        let peers: Vec<UserId> =
            state.channel_metadata_audience(*channel).into_iter().filter(|u| users.binary_search(u).is_err()).collect();
        if !peers.is_empty() {
            groups.entry((users, peers)).or_default().push(channel.0);
        }
    }
    groups
        .into_iter()
        .map(|((users, peers), stream_ids)| {
            let user_ids: Vec<i64> = users.iter().map(|u| u.0).collect();
            let fields = json!({"op": op, "stream_ids": stream_ids, "user_ids": user_ids});
            Outgoing::to(peers, Event::new("subscription", fields))
        })
        .collect()
}

/// The `default_streams` event (the default channels' ids), to every active member:
/// guests are not told the default channels, as in Zulip.
pub fn default_streams_event(state: &RealmState) -> Outgoing {
    let ids: Vec<i64> = state.default_channels().iter().map(|c| c.0).collect();
    let members = state.users().filter(|u| u.is_active && u.role != Role::Guest).map(|u| u.id).collect();
    Outgoing::to(members, Event::new("default_streams", json!({ "default_streams": ids })))
}
