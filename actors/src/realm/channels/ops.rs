//! Channel operations: each validates against the state with Zulip's messages, writes in
//! one transaction, then applies the change and returns the events for exactly the users
//! allowed to see them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::format;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::catalog;
use crate::realm::channels::access::channel_permission;
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Role, Subscription, User};
use crate::realm::permissions::has_realm_permission as access_realm_permission;
use crate::realm::state::RealmState;
use crate::store::{self, Store};

/// Zulip's palette of personal channel colors (`STREAM_ASSIGNMENT_COLORS`).
pub const STREAM_ASSIGNMENT_COLORS: [&str; 24] = [
    "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5", "#f5ce6e", "#c2726a",
    "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063", "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4",
    "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
];

/// The topics policies a channel may have (spec 2.6).
const TOPICS_POLICIES: [&str; 4] = ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"];

/// The settings of channels created by a request (`POST /users/me/subscriptions`,
/// `POST /channels/create`), as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct ChannelOptions {
    pub invite_only: bool,
    pub is_web_public: bool,
    pub is_default_stream: bool,
    pub history_public_to_subscribers: Option<bool>,
    /// A number, `"realm_default"` or `"unlimited"`, as given.
    pub message_retention_days: Option<Value>,
    pub topics_policy: Option<String>,
    pub folder_id: Option<i64>,
    /// Raw API values of the `can_*_group` parameters given, by setting name.
    pub settings: Vec<(String, Value)>,
}

/// Users named by `principals`: ids or API emails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principals {
    Ids(Vec<i64>),
    Emails(Vec<String>),
}

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

// --- Validation. ---

/// Zulip's `check_stream_name`.
pub fn check_channel_name(name: &str) -> ApiResult<()> {
    if name.trim().is_empty() {
        return Err(ApiError::bad_request("Channel name can't be empty."));
    }
    if name.chars().count() > catalog::MAX_STREAM_NAME_LENGTH {
        return Err(ApiError::bad_request(format!(
            "Channel name too long (limit: {} characters).",
            catalog::MAX_STREAM_NAME_LENGTH
        )));
    }
    if let Some(pos) = crate::validate::first_unprintable(name) {
        return Err(ApiError::bad_request(format!("Invalid character in channel name, at position {pos}.")));
    }
    Ok(())
}

/// A description as stored: newlines become spaces; refused when too long.
pub fn clean_description(description: &str) -> ApiResult<String> {
    let cleaned = description.replace("\r\n", " ").replace(['\n', '\r'], " ");
    if cleaned.chars().count() > catalog::MAX_STREAM_DESCRIPTION_LENGTH {
        return Err(ApiError::bad_request(format!(
            "description is too long (limit: {} characters)",
            catalog::MAX_STREAM_DESCRIPTION_LENGTH
        )));
    }
    Ok(cleaned)
}

/// Zulip's `parse_message_retention_days`: `None` inherits, -1 is unlimited.
pub fn parse_retention(value: &Value) -> ApiResult<Option<i64>> {
    let bad = || ApiError::bad_request(format!("Bad value for 'message_retention_days': {}", display(value)));
    match value {
        Value::String(s) if s == "realm_default" => Ok(None),
        Value::String(s) if s == "unlimited" => Ok(Some(-1)),
        Value::String(s) => s.parse::<i64>().ok().filter(|n| *n > 0).map(Some).ok_or_else(bad),
        Value::Number(n) => n.as_i64().filter(|n| *n > 0).map(Some).ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Zulip's `validate_topics_policy`: a known policy; anything but `inherit` needs the
/// organization's `can_set_topics_policy_group`; `empty_topic_only` on an existing channel
/// needs every message of it in the empty topic.
pub fn check_topics_policy(
    state: &RealmState,
    store: &Store,
    actor: &User,
    policy: &str,
    channel: Option<ChannelId>,
) -> ApiResult<()> {
    if !TOPICS_POLICIES.contains(&policy) {
        return Err(ApiError::bad_request("Invalid topics_policy"));
    }
    if policy != "inherit" && !access_realm_permission(state, "can_set_topics_policy_group", actor.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    if let (Some(id), "empty_topic_only") = (channel, policy) {
        let conn = store.conn()?;
        if store::channels::has_named_topic(&conn, id)? {
            return Err(ApiError::bad_request(
                "To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.",
            ));
        }
    }
    Ok(())
}

/// A channel permission setting's value from the API, validated against its rule.
pub fn check_channel_group_setting(state: &RealmState, name: &str, value: &Value) -> ApiResult<GroupSettingValue> {
    let permission = channel_permission(name).ok_or_else(|| ApiError::bad_request(format!("Invalid {name}")))?;
    let parsed = GroupSettingValue::from_api(name, value)?;
    state.check_group_setting(name, &permission.rule, parsed)
}

// --- Creation. ---

/// A channel about to be created, validated.
fn new_channel(
    state: &RealmState,
    store: &Store,
    acting: &User,
    name: &str,
    description: &str,
    options: &ChannelOptions,
    now: i64,
) -> ApiResult<Channel> {
    let public_or_private =
        if options.invite_only { "can_create_private_channel_group" } else { "can_create_public_channel_group" };
    if !access_realm_permission(state, public_or_private, acting.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    if options.is_web_public {
        return Err(ApiError::bad_request("Web-public channels are not enabled."));
    }
    if options.is_default_stream {
        if !acting.role.is_admin() {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
        if options.invite_only {
            return Err(ApiError::bad_request("A default channel cannot be private."));
        }
    }
    let message_retention_days = match &options.message_retention_days {
        Some(value) => {
            // Zulip's `list_to_streams`: parsed first; only a value other than the
            // organization's default needs an owner.
            let days = parse_retention(value)?;
            if days.is_some() && acting.role != Role::Owner {
                return Err(ApiError::must_be_owner());
            }
            days
        }
        None => None,
    };
    let topics_policy = options.topics_policy.clone().unwrap_or_else(|| "inherit".to_owned());
    check_topics_policy(state, store, acting, &topics_policy, None)?;
    let folder_id =
        options.folder_id.map(|id| crate::realm::folders::check_folder_for_channel(state, id)).transpose()?;
    let mut settings = Map::new();
    for (name, value) in &options.settings {
        let value = check_channel_group_setting(state, name, value)?;
        settings.insert(name.clone(), value.to_json());
    }
    if !settings.contains_key("can_administer_channel_group") {
        let creator = GroupSettingValue::Anonymous {
            direct_members: BTreeSet::from([acting.id]),
            direct_subgroups: BTreeSet::new(),
        };
        settings.insert("can_administer_channel_group".into(), creator.to_json());
    }
    Ok(Channel {
        id: ChannelId(0),
        name: name.to_owned(),
        description: description.to_owned(),
        rendered_description: crate::markdown::render(description),
        invite_only: options.invite_only,
        is_web_public: false,
        history_public_to_subscribers: !options.invite_only || options.history_public_to_subscribers.unwrap_or(false),
        message_retention_days,
        topics_policy,
        folder_id,
        creator_id: Some(acting.id),
        date_created: now,
        is_archived: false,
        settings,
    })
}

/// The next color for a user: the first of the palette they do not use yet, else the
/// palette in turn (Zulip's `pick_colors`).
fn pick_color(used: &mut Vec<String>) -> String {
    let color = STREAM_ASSIGNMENT_COLORS
        .iter()
        .find(|c| !used.iter().any(|u| u == *c))
        .copied()
        .unwrap_or_else(|| STREAM_ASSIGNMENT_COLORS[used.len() % STREAM_ASSIGNMENT_COLORS.len()])
        .to_owned();
    used.push(color.clone());
    color
}

/// The users `principals` name (active ones; "No such user" otherwise).
fn resolve_principals(state: &RealmState, principals: &Principals) -> ApiResult<Vec<UserId>> {
    let found: Vec<Option<&User>> = match principals {
        Principals::Ids(ids) => ids.iter().map(|id| state.user(UserId(*id))).collect(),
        Principals::Emails(emails) => emails.iter().map(|e| state.user_by_api_email(e)).collect(),
    };
    let (mut users, mut seen) = (Vec::new(), BTreeSet::new());
    for user in found {
        match user {
            Some(u) if u.is_active => {
                if seen.insert(u.id) {
                    users.push(u.id)
                }
            }
            Some(_) => return Err(ApiError::bad_request("User is deactivated")),
            None => return Err(ApiError::bad_request("No such user")),
        }
    }
    Ok(users)
}

/// Whether `user` may subscribe other users to `channel`.
fn can_add_others(state: &RealmState, user: &User, channel: &Channel) -> bool {
    state.in_channel_group(channel, "can_add_subscribers_group", user)
        || state.can_administer_channel(user, channel)
        || (access_realm_permission(state, "can_add_subscribers_group", user.id)
            && state.has_content_access(user, channel))
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
    store: &Store,
    actor: &User,
    req: &SubscribeRequest,
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
            None => plan.created.push(new_channel(state, store, actor, name, &description, &req.options, now)?),
        }
    }
    plan.users = match &req.principals {
        Some(p @ Principals::Ids(v)) if !v.is_empty() => resolve_principals(state, p)?,
        Some(p @ Principals::Emails(v)) if !v.is_empty() => resolve_principals(state, p)?,
        _ => vec![actor.id],
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

/// The metadata audience of each channel, as a set.
fn audiences(state: &RealmState, channels: &[ChannelId]) -> Vec<BTreeSet<UserId>> {
    channels.iter().map(|c| state.channel_metadata_audience(*c).into_iter().collect()).collect()
}

/// `stream` create events for users who newly may see each channel (`before[i]` is the
/// audience of `channels[i]` before the change).
fn creation_events(state: &RealmState, channels: &[ChannelId], before: &[BTreeSet<UserId>]) -> Vec<Outgoing> {
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

/// A subscription row to write; for a channel being created, its index in the new
/// channels (its id is known only once inserted).
struct Row {
    sub: Subscription,
    created_index: Option<usize>,
}

/// The rows a subscription request writes, filling `subscribed` and `already_subscribed`
/// (per user, channels in request order; colors picked per user; a former subscription
/// comes back with its personal settings).
fn subscription_rows(
    state: &RealmState,
    users: &[UserId],
    existing: &[ChannelId],
    created: &[Channel],
    colors: &BTreeMap<String, String>,
    result: &mut SubscribeResult,
) -> Vec<Row> {
    let color_for = |channel: &Channel, used: &mut Vec<String>| {
        colors.get(&channel.name.to_lowercase()).cloned().unwrap_or_else(|| pick_color(used))
    };
    let mut rows = Vec::new();
    for user in users {
        let mut used: Vec<String> = state.subscriptions_of(*user).map(|s| s.color.clone()).collect();
        for channel in existing.iter().filter_map(|id| state.channel(*id)) {
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
        for (i, channel) in created.iter().enumerate() {
            result.subscribed.entry(*user).or_default().push(channel.name.clone());
            let sub = Subscription::new(*user, ChannelId(0), color_for(channel, &mut used));
            rows.push(Row { sub, created_index: Some(i) });
        }
    }
    rows
}

/// `POST /users/me/subscriptions`: creates missing channels, subscribes the users.
pub fn subscribe(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    req: SubscribeRequest,
    now: i64,
) -> ApiResult<(SubscribeResult, Vec<Outgoing>)> {
    let actor = crate::realm::permissions::require_member(state, acting)?.clone();
    let plan = plan_subscriptions(state, store, &actor, &req, now)?;
    let before = audiences(state, &plan.existing);
    let realm_id = state.realm().id;
    let default_stream = req.options.is_default_stream;
    let Plan { mut created, existing, users, unauthorized } = plan;
    let mut result = SubscribeResult::default();
    let mut rows = subscription_rows(state, &users, &existing, &created, &req.colors, &mut result);
    store.write(|tx| -> crate::store::StoreResult<()> {
        for channel in &mut created {
            channel.id = store::channels::insert(tx, realm_id, channel)?;
            if default_stream {
                store::channels::set_default_channel(tx, realm_id, channel.id, true)?;
            }
        }
        for row in &mut rows {
            if let Some(index) = row.created_index {
                row.sub.channel_id = created[index].id;
            }
            store::channels::put_subscription(tx, &row.sub)?;
        }
        Ok(())
    })?;
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
    if req.send_new_subscription_messages {
        // Zulip's Notification Bot tells users subscribed by someone else; Agora has no
        // messages yet, so it reports honestly that it sent none.
        result.new_subscription_messages_sent = Some(false);
    }
    if !req.authorization_errors_fatal {
        result.unauthorized = Some(unauthorized);
    }
    result.channel_ids = created_ids;
    Ok((result, events))
}

/// `subscription` add events, one per newly subscribed user; each channel's subscriber
/// list is built once.
fn subscription_add_events(state: &RealmState, per_user: &BTreeMap<UserId, Vec<ChannelId>>) -> Vec<Outgoing> {
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
fn peer_events(state: &RealmState, op: &str, changed: &BTreeMap<ChannelId, Vec<UserId>>) -> Vec<Outgoing> {
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

/// `POST /channels/create`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct NewChannel {
    pub name: String,
    pub description: Option<String>,
    pub subscribers: Vec<i64>,
    pub send_new_subscription_messages: bool,
    pub options: ChannelOptions,
}

/// `POST /channels/create`: a new channel with these subscribers; 409 when the name is taken.
pub fn create_channel(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewChannel,
    now: i64,
) -> ApiResult<(ChannelId, Vec<Outgoing>)> {
    let NewChannel { name, description, subscribers, send_new_subscription_messages, options } = new;
    crate::realm::permissions::require_member(state, acting)?;
    let name = name.trim();
    check_channel_name(name)?;
    if let Some(existing) = state.channel_by_name(name) {
        return Err(ApiError::new(
            ErrorCode::ChannelAlreadyExists,
            409,
            format!("Channel '{}' already exists", existing.name),
        ));
    }
    let req = SubscribeRequest {
        channels: vec![(name.to_owned(), description)],
        colors: BTreeMap::new(),
        principals: Some(Principals::Ids(subscribers)),
        authorization_errors_fatal: true,
        send_new_subscription_messages,
        options,
    };
    // No subscribers: the channel is still created, with nobody in it.
    let empty = matches!(&req.principals, Some(Principals::Ids(v)) if v.is_empty());
    if empty {
        return create_empty(state, store, acting, req, now);
    }
    let (result, events) = subscribe(state, store, acting, req, now)?;
    let id = result.channel_ids.first().copied().ok_or_else(ApiError::internal)?;
    Ok((id, events))
}

/// A channel created without subscribers.
fn create_empty(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    req: SubscribeRequest,
    now: i64,
) -> ApiResult<(ChannelId, Vec<Outgoing>)> {
    let actor = crate::realm::permissions::require_member(state, acting)?.clone();
    let (name, description) = req.channels.into_iter().next().ok_or_else(ApiError::internal)?;
    let description = clean_description(description.as_deref().unwrap_or(""))?;
    let mut channel = new_channel(state, store, &actor, &name, &description, &req.options, now)?;
    let realm_id = state.realm().id;
    let default_stream = req.options.is_default_stream;
    channel.id = store.write(|tx| -> crate::store::StoreResult<ChannelId> {
        let id = store::channels::insert(tx, realm_id, &channel)?;
        if default_stream {
            store::channels::set_default_channel(tx, realm_id, id, true)?;
        }
        Ok(id)
    })?;
    let id = channel.id;
    state.put_channel(channel);
    if default_stream {
        state.set_default_channel(id, true);
    }
    let mut events = creation_events(state, &[id], &[BTreeSet::new()]);
    if default_stream {
        events.push(default_streams_event(state));
    }
    Ok((id, events))
}

// --- Unsubscribing. ---

/// `DELETE /users/me/subscriptions`: the `removed` and `not_removed` channel names.
pub fn unsubscribe(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    names: &[String],
    principals: Option<Principals>,
) -> ApiResult<(Map<String, Value>, Vec<Outgoing>)> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?.clone();
    let mut channels: Vec<ChannelId> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim();
        match state.channel_by_name(name).filter(|c| !c.is_archived && state.has_metadata_access(&actor, c)) {
            Some(c) if !channels.contains(&c.id) => channels.push(c.id),
            Some(_) => {}
            None => missing.push(name.to_owned()),
        }
    }
    if !missing.is_empty() {
        return Err(ApiError::bad_request(format!("Channel(s) ({}) do not exist", missing.join(", "))));
    }
    let users = match &principals {
        Some(p @ Principals::Ids(v)) if !v.is_empty() => resolve_principals(state, p)?,
        Some(p @ Principals::Emails(v)) if !v.is_empty() => resolve_principals(state, p)?,
        _ => vec![acting],
    };
    let others: Vec<&UserId> = users.iter().filter(|u| **u != acting).collect();
    // Administrators, bot owners removing their own bots, and members of the channel's
    // can_remove_subscribers_group may remove others.
    let own_bots_only =
        others.iter().all(|u| state.user(**u).is_some_and(|b| b.is_bot && b.bot_owner_id == Some(acting)));
    if !others.is_empty() && !actor.role.is_admin() && !own_bots_only {
        let refused = channels
            .iter()
            .filter_map(|id| state.channel(*id))
            .any(|channel| !state.in_channel_group(channel, "can_remove_subscribers_group", &actor));
        if refused {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
    }
    let mut removed_rows: Vec<Subscription> = Vec::new();
    let (mut removed, mut not_removed) = (Vec::new(), Vec::new());
    for user in &users {
        for id in &channels {
            let name = state.channel(*id).map(|c| c.name.clone()).unwrap_or_default();
            match state.subscription(*user, *id).filter(|s| s.active) {
                Some(sub) => {
                    removed_rows.push(Subscription { active: false, ..sub.clone() });
                    removed.push(name);
                }
                None => not_removed.push(name),
            }
        }
    }
    store.write(|tx| -> crate::store::StoreResult<()> {
        for sub in &removed_rows {
            store::channels::put_subscription(tx, sub)?;
        }
        Ok(())
    })?;
    let mut per_user: BTreeMap<UserId, Vec<Value>> = BTreeMap::new();
    let mut per_channel: BTreeMap<ChannelId, Vec<UserId>> = BTreeMap::new();
    for sub in removed_rows {
        let name = state.channel(sub.channel_id).map(|c| c.name.clone()).unwrap_or_default();
        per_user.entry(sub.user_id).or_default().push(json!({"name": name, "stream_id": sub.channel_id}));
        per_channel.entry(sub.channel_id).or_default().push(sub.user_id);
        state.put_subscription(sub);
    }
    let mut events = Vec::new();
    for (user, subs) in per_user {
        let ids: Vec<ChannelId> = subs.iter().filter_map(|s| s["stream_id"].as_i64()).map(ChannelId).collect();
        events
            .push(Outgoing::to(vec![user], Event::new("subscription", json!({"op": "remove", "subscriptions": subs}))));
        events.extend(lost_access_event(state, user, &ids));
    }
    events.extend(peer_events(state, "peer_remove", &per_channel));
    let mut out = Map::new();
    out.insert("removed".into(), json!(removed));
    out.insert("not_removed".into(), json!(not_removed));
    Ok((out, events))
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
    let dicts: Vec<Value> = lost.iter().map(|c| Value::Object(format::stream_dict(state, c))).collect();
    let ids: Vec<i64> = lost.iter().map(|c| c.id.0).collect();
    Some(Outgoing::to(vec![user], Event::new("stream", json!({"op": "delete", "streams": dicts, "stream_ids": ids}))))
}

// --- Channel administration. ---

/// A channel the user may know of, or Zulip's "Invalid channel ID".
pub fn visible_channel<'s>(state: &'s RealmState, user: &User, id: ChannelId) -> ApiResult<&'s Channel> {
    state
        .channel(id)
        .filter(|c| state.has_metadata_access(user, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))
}

/// A channel the user may administer (Zulip's
/// `access_stream_for_delete_or_update_requiring_metadata_access`).
fn administered_channel<'s>(state: &'s RealmState, user: &User, id: ChannelId) -> ApiResult<&'s Channel> {
    let channel = visible_channel(state, user, id)?;
    if !state.can_administer_channel(user, channel) {
        return Err(ApiError::bad_request("You do not have permission to administer this channel."));
    }
    Ok(channel)
}

/// `DELETE /streams/{id}`: archives the channel; it stops being a default channel.
pub fn archive_channel(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: ChannelId,
) -> ApiResult<Vec<Outgoing>> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?.clone();
    let mut channel = administered_channel(state, &actor, id)?.clone();
    if channel.is_archived {
        return Err(ApiError::bad_request("Channel is already deactivated"));
    }
    let audience = state.channel_metadata_audience(id);
    let was_default = state.default_channels().contains(&id);
    channel.is_archived = true;
    let realm_id = state.realm().id;
    store.write(|tx| -> crate::store::StoreResult<()> {
        store::channels::update(tx, &channel)?;
        store::channels::set_default_channel(tx, realm_id, id, false)
    })?;
    state.put_channel(channel);
    state.set_default_channel(id, false);
    let dict = state.channel(id).map(|c| Value::Object(format::stream_dict(state, c))).unwrap_or(Value::Null);
    let name = state.channel(id).map(|c| c.name.clone()).unwrap_or_default();
    // The queues pick one of the two by the client's `archived_channels` capability.
    let update = json!({"op": "update", "property": "is_archived", "value": true, "stream_id": id, "name": name});
    let delete = json!({"op": "delete", "streams": [dict], "stream_ids": [id], "for_archive": true});
    let mut events = vec![
        Outgoing::to(audience.clone(), Event::new("stream", update)),
        Outgoing::to(audience, Event::new("stream", delete)),
    ];
    if was_default {
        events.push(default_streams_event(state));
    }
    Ok(events)
}

/// `PATCH /streams/{id}`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct ChannelUpdate {
    pub new_name: Option<String>,
    pub description: Option<String>,
    pub is_private: Option<bool>,
    pub is_web_public: Option<bool>,
    pub history_public_to_subscribers: Option<bool>,
    pub is_default_stream: Option<bool>,
    pub message_retention_days: Option<Value>,
    pub topics_policy: Option<String>,
    /// `Some(None)` takes the channel out of its folder.
    pub folder_id: Option<Option<i64>>,
    /// Raw `{"new": .., "old": ..}` values of the `can_*_group` parameters given.
    pub settings: Vec<(String, Value)>,
}

/// `PATCH /streams/{id}`: validates every change, writes them at once, then emits one
/// `stream` update event per changed property (plus creation and deletion events for
/// users who gain or lose sight of the channel).
pub fn update_channel(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: ChannelId,
    update: ChannelUpdate,
) -> ApiResult<Vec<Outgoing>> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?.clone();
    let old = administered_channel(state, &actor, id)?.clone();
    let mut channel = old.clone();
    let mut changed: Vec<(&'static str, Value)> = Vec::new();
    if let Some(name) = &update.new_name {
        let name = name.trim();
        check_channel_name(name)?;
        if name != channel.name {
            if state.channel_by_name(name).is_some_and(|c| c.id != id) {
                return Err(ApiError::bad_request("Channel name is already in use."));
            }
            channel.name = name.to_owned();
            changed.push(("name", json!(name)));
        }
    }
    if let Some(description) = &update.description {
        let description = clean_description(description)?;
        if description != channel.description {
            channel.rendered_description = crate::markdown::render(&description);
            channel.description = description;
            changed.push(("description", json!(channel.description)));
        }
    }
    apply_privacy(state, &actor, &mut channel, &update, &mut changed)?;
    if let Some(value) = &update.message_retention_days {
        // Zulip's `update_stream_backend` checks the role before the value.
        if actor.role != Role::Owner {
            return Err(ApiError::must_be_owner());
        }
        let days = parse_retention(value)?;
        if days != channel.message_retention_days {
            channel.message_retention_days = days;
            changed.push(("message_retention_days", json!(days)));
        }
    }
    if let Some(policy) = &update.topics_policy {
        check_topics_policy(state, store, &actor, policy, Some(id))?;
        if *policy != channel.topics_policy {
            channel.topics_policy = policy.clone();
            changed.push(("topics_policy", json!(policy)));
        }
    }
    if let Some(folder) = update.folder_id {
        let folder = folder.map(|f| crate::realm::folders::check_folder_for_channel(state, f)).transpose()?;
        if folder != channel.folder_id {
            channel.folder_id = folder;
            changed.push(("folder_id", json!(folder)));
        }
    }
    for (name, raw) in &update.settings {
        let permission = channel_permission(name).ok_or_else(|| ApiError::bad_request(format!("Invalid {name}")))?;
        let change = crate::realm::group_setting::GroupSettingChange::from_api(name, raw)?;
        // Spec 2.5: this one needs content access on top of administering the channel.
        if name == "can_add_subscribers_group" && !state.has_content_access(&actor, &old) {
            return Err(ApiError::bad_request("Invalid channel ID"));
        }
        let current = state.channel_setting(&channel, name);
        if !change.is_change_from(&current, state.nobody_group_id())? {
            continue;
        }
        let value = state.check_group_setting(name, &permission.rule, change.new)?;
        channel.settings.insert(name.clone(), value.to_json());
        let shown = state.group_setting_api_value(&value).to_json();
        changed.push((permission.name, shown));
    }
    let default_change = match update.is_default_stream {
        Some(d) if d != state.default_channels().contains(&id) => {
            crate::realm::permissions::require_admin(actor.role)?;
            if d && channel.invite_only {
                return Err(ApiError::bad_request("A default channel cannot be private."));
            }
            if d && channel.is_archived {
                return Err(ApiError::bad_request("Invalid channel ID"));
            }
            Some(d)
        }
        _ => None,
    };
    if changed.is_empty() && default_change.is_none() {
        return Ok(Vec::new());
    }
    let before: BTreeSet<UserId> = state.channel_metadata_audience(id).into_iter().collect();
    let realm_id = state.realm().id;
    store.write(|tx| -> crate::store::StoreResult<()> {
        store::channels::update(tx, &channel)?;
        if let Some(d) = default_change {
            store::channels::set_default_channel(tx, realm_id, id, d)?;
        }
        Ok(())
    })?;
    state.put_channel(channel);
    if let Some(d) = default_change {
        state.set_default_channel(id, d);
    }
    Ok(update_events(state, id, &old, &before, changed, default_change.is_some()))
}

/// `invite_only`, `history_public_to_subscribers` and `is_web_public` changes.
fn apply_privacy(
    state: &RealmState,
    actor: &User,
    channel: &mut Channel,
    update: &ChannelUpdate,
    changed: &mut Vec<(&'static str, Value)>,
) -> ApiResult<()> {
    if update.is_web_public == Some(true) {
        return Err(ApiError::bad_request("Web-public channels are not enabled."));
    }
    let invite_only = update.is_private.unwrap_or(channel.invite_only);
    if invite_only != channel.invite_only {
        let setting = if invite_only { "can_create_private_channel_group" } else { "can_create_public_channel_group" };
        if !actor.role.is_admin() && !access_realm_permission(state, setting, actor.id) {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
        if invite_only && state.default_channels().contains(&channel.id) && update.is_default_stream != Some(false) {
            return Err(ApiError::bad_request("A default channel cannot be private."));
        }
    }
    let history = if invite_only {
        update.history_public_to_subscribers.unwrap_or(if channel.invite_only {
            channel.history_public_to_subscribers
        } else {
            false
        })
    } else {
        true
    };
    let web_public = update.is_web_public.unwrap_or(channel.is_web_public) && !invite_only;
    // One event per changed property, as Zulip's `do_change_stream_permission`.
    let old = (channel.invite_only, channel.history_public_to_subscribers, channel.is_web_public);
    channel.invite_only = invite_only;
    channel.history_public_to_subscribers = history;
    channel.is_web_public = web_public;
    if old.0 != invite_only {
        changed.push(("invite_only", json!(invite_only)));
    }
    if old.1 != history {
        changed.push(("history_public_to_subscribers", json!(history)));
    }
    if old.2 != web_public {
        changed.push(("is_web_public", json!(web_public)));
    }
    Ok(())
}

/// The events of a channel update: `stream` update per property to who may see the
/// channel now, creation for who gained sight, deletion for who lost it.
fn update_events(
    state: &RealmState,
    id: ChannelId,
    old: &Channel,
    before: &BTreeSet<UserId>,
    changed: Vec<(&'static str, Value)>,
    default_changed: bool,
) -> Vec<Outgoing> {
    let Some(channel) = state.channel(id) else { return Vec::new() };
    let after = state.channel_metadata_audience(id);
    let stayed: Vec<UserId> = after.iter().copied().filter(|u| before.contains(u)).collect();
    let gained: Vec<UserId> = after.iter().copied().filter(|u| !before.contains(u)).collect();
    let lost: Vec<UserId> = before.iter().copied().filter(|u| !after.contains(u)).collect();
    let mut events = Vec::new();
    if !lost.is_empty() {
        let dict = Value::Object(format::stream_dict(state, channel));
        events.push(Outgoing::to(
            lost,
            Event::new("stream", json!({"op": "delete", "streams": [dict], "stream_ids": [id]})),
        ));
    }
    if !gained.is_empty() {
        let dict = Value::Object(format::stream_dict(state, channel));
        events.push(Outgoing::to(gained, Event::new("stream", json!({"op": "create", "streams": [dict]}))));
    }
    let post_policy_before = format::stream_post_policy(state, old);
    for (property, value) in changed {
        // Zulip names the channel by its name before a rename.
        let name = if property == "name" { old.name.as_str() } else { channel.name.as_str() };
        let mut fields = json!({"op": "update", "property": property, "value": value, "stream_id": id, "name": name});
        if let Value::Object(map) = &mut fields {
            match property {
                "description" => {
                    map.insert("rendered_description".into(), json!(channel.rendered_description));
                }
                "invite_only" => {
                    map.insert("history_public_to_subscribers".into(), json!(channel.history_public_to_subscribers));
                    map.insert("is_web_public".into(), json!(channel.is_web_public));
                }
                _ => {}
            }
        }
        events.push(Outgoing::to(stayed.clone(), Event::new("stream", fields)));
        if property == "can_send_message_group" {
            let policy = format::stream_post_policy(state, channel);
            if policy != post_policy_before {
                let fields = json!({"op": "update", "property": "stream_post_policy", "value": policy, "stream_id": id, "name": channel.name});
                events.push(Outgoing::to(stayed.clone(), Event::new("stream", fields)));
            }
        }
    }
    if default_changed {
        events.push(default_streams_event(state));
    }
    events
}

// --- Default channels. ---

/// `POST /default_streams` (`add`) and `DELETE /default_streams`.
pub fn set_default_stream(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: ChannelId,
    add: bool,
) -> ApiResult<Vec<Outgoing>> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?.clone();
    crate::realm::permissions::require_admin(actor.role)?;
    let channel = visible_channel(state, &actor, id)?;
    // An archived channel is no longer a default one (archiving removes it) and cannot
    // become one: new users would join a channel they cannot post to.
    if add && channel.is_archived {
        return Err(ApiError::bad_request("Invalid channel ID"));
    }
    if add && channel.invite_only {
        return Err(ApiError::bad_request("Private channels cannot be made default."));
    }
    // Adding a default channel again, or removing a channel that is not one, changes
    // nothing and succeeds, as in Zulip.
    let is_default = state.default_channels().contains(&id);
    if add == is_default {
        return Ok(Vec::new());
    }
    let realm_id = state.realm().id;
    store.write(|tx| store::channels::set_default_channel(tx, realm_id, id, add))?;
    state.set_default_channel(id, add);
    Ok(vec![default_streams_event(state)])
}
