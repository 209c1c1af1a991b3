//! Subscribing (`POST /users/me/subscriptions`), which creates the channels it names that
//! do not exist yet, and creating one channel (`POST /channels/create`).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::checks::{check_channel_name, clean_description, principal_users, Principals};
use super::events::{audiences, creation_events, default_streams_event, peer_events, subscription_add_events};
use super::new_channel::{new_channel, pick_color, ChannelOptions};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, RealmId, UserId};
use crate::realm::model::{Channel, Subscription, User};
use crate::realm::permissions::{has_realm_permission, require_member};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// `POST /users/me/subscriptions`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct SubscribeRequest {
    /// `(name, description)` of each entry of `subscriptions`.
    pub channels: Vec<(String, Option<String>)>,
    /// Colors asked for new subscriptions, by lower-cased channel name (the entries'
    /// `color`, already checked as hex colors).
    pub colors: BTreeMap<String, String>,
    pub principals: Option<Principals>,
    pub authorization_errors_fatal: bool,
    pub send_new_subscription_messages: bool,
    /// Announce new channels in the organization's new-channel announcements channel.
    pub announce: bool,
    pub options: ChannelOptions,
}

/// The response of a subscription request (keys are user ids).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubscribeResult {
    pub subscribed: BTreeMap<UserId, Vec<String>>,
    pub already_subscribed: BTreeMap<UserId, Vec<String>>,
    /// Present when `authorization_errors_fatal` was false.
    pub unauthorized: Option<Vec<String>>,
    /// Present when `send_new_subscription_messages` was true.
    pub new_subscription_messages_sent: Option<bool>,
    /// The ids of the channels, in request order (for `POST /channels/create`).
    pub channel_ids: Vec<ChannelId>,
}

impl SubscribeResult {
    /// The response fields.
    pub fn to_json(&self) -> Map<String, Value> {
        let by_user = |m: &BTreeMap<UserId, Vec<String>>| -> Value {
            Value::Object(m.iter().map(|(u, names)| (u.0.to_string(), json!(names))).collect())
        };
        let mut out = Map::new();
        out.insert("subscribed".into(), by_user(&self.subscribed));
        out.insert("already_subscribed".into(), by_user(&self.already_subscribed));
        if let Some(names) = &self.unauthorized {
            out.insert("unauthorized".into(), json!(names));
        }
        if let Some(sent) = self.new_subscription_messages_sent {
            out.insert("new_subscription_messages_sent".into(), Value::Bool(sent));
        }
        out
    }
}

/// Whether `user` may subscribe other users to `channel`.
fn can_add_others(state: &RealmState, user: &User, channel: &Channel) -> bool {
    state.in_channel_group(channel, "can_add_subscribers_group", user)
        || state.can_administer_channel(user, channel)
        || (has_realm_permission(state, "can_add_subscribers_group", user.id)
            && state.has_content_access(user, channel))
}

/// Who a request subscribes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subscribers {
    /// The users `principals` names, else the acting user.
    Requested,
    /// Nobody: `POST /channels/create` with an empty `subscribers`.
    Nobody,
}

/// What one subscription request changes, decided before anything is written.
struct Plan {
    created: Vec<Channel>,
    /// Existing channels the users are subscribed to, in request order.
    existing: Vec<ChannelId>,
    users: Vec<UserId>,
    unauthorized: Vec<String>,
}

/// Validates a subscription request against the state (names, creation permissions,
/// principals, access) without changing anything.
fn plan_subscriptions(
    state: &RealmState,
    actor: &User,
    req: &SubscribeRequest,
    subscribers: Subscribers,
    now: i64,
) -> ApiResult<Plan> {
    let mut plan = Plan { created: Vec::new(), existing: Vec::new(), users: Vec::new(), unauthorized: Vec::new() };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (raw_name, description) in &req.channels {
        let name = raw_name.trim();
        check_channel_name(name)?;
        let description = clean_description(description.as_deref().unwrap_or(""))?;
        if !seen.insert(name.to_lowercase()) {
            continue;
        }
        match state.channel_by_name(name) {
            // An archived name stays taken; who cannot see the channel learns no more than
            // for any channel they cannot access.
            Some(c) if c.is_archived && state.has_metadata_access(actor, c) => {
                return Err(ApiError::bad_request(format!("Channel '{}' is archived.", c.name)));
            }
            Some(c) if c.is_archived => {
                return Err(ApiError::bad_request(format!("Unable to access channel ({name}).")));
            }
            Some(c) => plan.existing.push(c.id),
            None => plan.created.push(new_channel(state, actor, name, &description, &req.options, now)?),
        }
    }
    plan.users = match subscribers {
        Subscribers::Requested => principal_users(state, req.principals.as_ref(), actor.id)?,
        Subscribers::Nobody => Vec::new(),
    };
    let others = plan.users.iter().any(|u| *u != actor.id);
    let mut authorized = Vec::new();
    for id in std::mem::take(&mut plan.existing) {
        let Some(channel) = state.channel(id) else { continue };
        let may_add = others && can_add_others(state, actor, channel);
        if !state.has_content_access(actor, channel) && !may_add {
            if req.authorization_errors_fatal {
                return Err(ApiError::bad_request(format!("Unable to access channel ({}).", channel.name)));
            }
            plan.unauthorized.push(channel.name.clone());
        } else if others && !may_add {
            return Err(ApiError::bad_request("Insufficient permission"));
        } else {
            authorized.push(id);
        }
    }
    plan.existing = authorized;
    Ok(plan)
}

/// A subscription row to write; for a channel being created, its index in the new
/// channels (its id is known only once inserted).
#[derive(Debug, Clone)]
struct Row {
    sub: Subscription,
    created_index: Option<usize>,
}

/// The rows a subscription request writes, filling `subscribed` and `already_subscribed`
/// (per user, channels in request order; colors picked per user; a former subscription
/// comes back with its personal settings).
fn subscription_rows(
    state: &RealmState,
    plan: &Plan,
    colors: &BTreeMap<String, String>,
    result: &mut SubscribeResult,
) -> Vec<Row> {
    let color_for = |channel: &Channel, used: &mut Vec<String>| {
        colors.get(&channel.name.to_lowercase()).cloned().unwrap_or_else(|| pick_color(used))
    };
    let mut rows = Vec::new();
    for user in &plan.users {
        let mut used: Vec<String> = state.subscriptions_of(*user).map(|s| s.color.clone()).collect();
        for channel in plan.existing.iter().filter_map(|id| state.channel(*id)) {
            if state.is_subscribed(*user, channel.id) {
                result.already_subscribed.entry(*user).or_default().push(channel.name.clone());
                continue;
            }
            let sub = match state.subscription(*user, channel.id) {
                Some(old) => Subscription { active: true, ..old.clone() },
                None => Subscription::new(*user, channel.id, color_for(channel, &mut used)),
            };
            result.subscribed.entry(*user).or_default().push(channel.name.clone());
            rows.push(Row { sub, created_index: None });
        }
        for (i, channel) in plan.created.iter().enumerate() {
            result.subscribed.entry(*user).or_default().push(channel.name.clone());
            let sub = Subscription::new(*user, ChannelId(0), color_for(channel, &mut used));
            rows.push(Row { sub, created_index: Some(i) });
        }
    }
    rows
}

/// A subscription request, planned: the channels it creates, the rows it writes and the
/// reply (but for the new channels' ids, which come with the write).
#[derive(Debug, Clone)]
pub struct Subscribing {
    realm_id: RealmId,
    created: Vec<Channel>,
    existing: Vec<ChannelId>,
    rows: Vec<Row>,
    default_stream: bool,
    result: SubscribeResult,
}

impl Subscribing {
    fn new(state: &RealmState, plan: Plan, req: &SubscribeRequest) -> Self {
        let mut result = SubscribeResult::default();
        let rows = subscription_rows(state, &plan, &req.colors, &mut result);
        if req.send_new_subscription_messages {
            // Notification Bot tells users subscribed by someone else, unless too many were.
            let sent = result.subscribed.len() <= crate::realm::catalog::MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
            result.new_subscription_messages_sent = Some(sent);
        }
        if !req.authorization_errors_fatal {
            result.unauthorized = Some(plan.unauthorized);
        }
        Subscribing {
            realm_id: state.realm().id,
            created: plan.created,
            existing: plan.existing,
            rows,
            default_stream: req.options.is_default_stream,
            result,
        }
    }
}

impl Subscribing {
    /// Records the ids the database gave the new channels, in their subscription rows too.
    fn record_ids(&mut self, ids: &[ChannelId]) {
        for (channel, id) in self.created.iter_mut().zip(ids) {
            channel.id = *id;
        }
        for row in &mut self.rows {
            if let Some(channel) = row.created_index.and_then(|i| self.created.get(i)) {
                row.sub.channel_id = channel.id;
            }
        }
    }
}

/// Plans `POST /users/me/subscriptions`: creates missing channels, subscribes the users.
pub fn plan_subscribe(state: &RealmState, acting: UserId, req: SubscribeRequest, now: i64) -> ApiResult<Subscribing> {
    let actor = require_member(state, acting)?;
    let plan = plan_subscriptions(state, actor, &req, Subscribers::Requested, now)?;
    Ok(Subscribing::new(state, plan, &req))
}

impl Change for Subscribing {
    type Output = SubscribeResult;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let mut ids = Vec::with_capacity(self.created.len());
        for channel in &self.created {
            let id = store::channels::insert(tx, self.realm_id, channel)?;
            if self.default_stream {
                store::channels::set_default_channel(tx, self.realm_id, id, true)?;
            }
            ids.push(id);
        }
        self.record_ids(&ids);
        for row in &self.rows {
            store::channels::put_subscription(tx, &row.sub)?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<SubscribeResult> {
        let Subscribing { created, existing, rows, default_stream, mut result, .. } = self;
        let before = audiences(state, &existing);
        let created_ids: Vec<ChannelId> = created.iter().map(|c| c.id).collect();
        for channel in created {
            if default_stream {
                state.set_default_channel(channel.id, true);
            }
            state.put_channel(channel);
        }
        // New channels are announced as created, before anyone is subscribed (as Zulip does).
        let empty = vec![BTreeSet::new(); created_ids.len()];
        let mut events = creation_events(state, &created_ids, &empty);
        let mut added: BTreeMap<ChannelId, Vec<UserId>> = BTreeMap::new();
        let mut per_user: BTreeMap<UserId, Vec<ChannelId>> = BTreeMap::new();
        let mut before_all = audiences(state, &created_ids);
        before_all.extend(before);
        for Row { sub, .. } in rows {
            added.entry(sub.channel_id).or_default().push(sub.user_id);
            per_user.entry(sub.user_id).or_default().push(sub.channel_id);
            state.put_subscription(sub);
        }
        // Then creation for subscribers who could not see a channel before, `add` for the
        // subscribers, `peer_add` for everyone else who may see the channel.
        let mut all_channels = created_ids.clone();
        all_channels.extend(existing.iter().copied());
        events.extend(creation_events(state, &all_channels, &before_all));
        if default_stream && !created_ids.is_empty() {
            events.push(default_streams_event(state));
        }
        events.extend(subscription_add_events(state, &per_user));
        events.extend(peer_events(state, "peer_add", &added));
        result.channel_ids = created_ids;
        Applied::new(result, events)
    }
}

/// `POST /channels/create`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct NewChannel {
    pub name: String,
    pub description: Option<String>,
    pub subscribers: Vec<i64>,
    pub send_new_subscription_messages: bool,
    pub announce: bool,
    pub options: ChannelOptions,
}

/// One channel to create with its subscribers; replies with the channel's id.
#[derive(Debug, Clone)]
pub struct CreatingChannel(Subscribing);

/// Plans `POST /channels/create`: a new channel with these subscribers (none: the channel
/// is still created, with nobody in it); 409 when the name is taken.
pub fn plan_create_channel(
    state: &RealmState,
    acting: UserId,
    new: NewChannel,
    now: i64,
) -> ApiResult<CreatingChannel> {
    let NewChannel { name, description, subscribers, send_new_subscription_messages, announce, options } = new;
    let actor = require_member(state, acting)?;
    let name = name.trim();
    check_channel_name(name)?;
    if let Some(existing) = state.channel_by_name(name) {
        return Err(ApiError::new(
            ErrorCode::ChannelAlreadyExists,
            409,
            format!("Channel '{}' already exists", existing.name),
        ));
    }
    let who = if subscribers.is_empty() { Subscribers::Nobody } else { Subscribers::Requested };
    let req = SubscribeRequest {
        channels: vec![(name.to_owned(), description)],
        colors: BTreeMap::new(),
        principals: Some(Principals::Ids(subscribers)),
        authorization_errors_fatal: true,
        send_new_subscription_messages,
        announce,
        options,
    };
    let plan = plan_subscriptions(state, actor, &req, who, now)?;
    if plan.created.len() != 1 {
        return Err(ApiError::internal());
    }
    Ok(CreatingChannel(Subscribing::new(state, plan, &req)))
}

impl Change for CreatingChannel {
    type Output = ChannelId;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.0.write(tx)
    }

    fn apply(self, state: &mut RealmState) -> Applied<ChannelId> {
        let applied = self.0.apply(state);
        // The plan holds exactly one new channel.
        let id = applied.output.channel_ids.first().copied().unwrap_or(ChannelId(0));
        Applied::new(id, applied.events)
    }
}

#[cfg(test)]
impl Subscribing {
    /// The change as if written with these ids for its new channels (tests without a
    /// database).
    pub(crate) fn once_written(mut self, ids: &[ChannelId]) -> Self {
        self.record_ids(ids);
        self
    }
}

#[cfg(test)]
impl CreatingChannel {
    /// The change as if written, the new channel getting `id` (tests without a database).
    pub(crate) fn once_written(self, id: ChannelId) -> Self {
        CreatingChannel(self.0.once_written(&[id]))
    }
}
