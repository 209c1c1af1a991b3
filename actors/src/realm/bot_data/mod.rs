//! What bots have beyond their account (Zulip's bot fields of `UserProfile`, `Service` and
//! `BotConfigData`), the `realm_bot` objects and events, and who hears of a bot's changes
//! (Zulip's `bot_owner_user_ids`). A leaf: features that change bots (the bots feature,
//! account deactivation) share these.

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{json, Map, Value};

use super::format::avatar_url;
use super::model::User;
use super::state::RealmState;
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};

/// Bot type of generic bots.
pub const GENERIC_BOT: i64 = 1;
/// Bot type of outgoing-webhook bots.
pub const OUTGOING_WEBHOOK_BOT: i64 = 3;
/// Bot type of embedded bots.
pub const EMBEDDED_BOT: i64 = 4;

/// An outgoing-webhook (or embedded) bot's service (Zulip's `Service`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    /// Where the webhook posts.
    pub base_url: String,
    /// 1 generic, 2 Slack.
    pub interface: i64,
    /// Sent with each request, for the service to check.
    pub token: String,
}

/// A bot's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct BotProfile {
    pub user_id: UserId,
    pub default_sending_stream: Option<ChannelId>,
    pub default_events_register_stream: Option<ChannelId>,
    pub default_all_public_streams: bool,
    pub service: Option<Service>,
    /// Incoming-webhook and embedded bots' configuration.
    pub config_data: Map<String, Value>,
}

impl BotProfile {
    /// The defaults of a bot that has no row.
    pub fn new(user_id: UserId) -> Self {
        BotProfile {
            user_id,
            default_sending_stream: None,
            default_events_register_stream: None,
            default_all_public_streams: false,
            service: None,
            config_data: Map::new(),
        }
    }
}

/// Every bot's profile, by bot.
#[derive(Debug, Clone, Default)]
pub struct BotsData {
    profiles: OrdMap<UserId, Arc<BotProfile>>,
}

impl BotsData {
    /// From the stored rows.
    pub fn from_rows(rows: Vec<BotProfile>) -> Self {
        BotsData { profiles: rows.into_iter().map(|p| (p.user_id, Arc::new(p))).collect() }
    }

    /// A bot's profile (the defaults when it has none).
    pub fn profile(&self, bot: UserId) -> BotProfile {
        self.profiles.get(&bot).map_or_else(|| BotProfile::new(bot), |p| (**p).clone())
    }

    /// A bot's service, if it has one.
    pub fn service(&self, bot: UserId) -> Option<&Service> {
        self.profiles.get(&bot).and_then(|p| p.service.as_ref())
    }

    /// Stores a bot's profile once committed.
    pub(crate) fn put(&mut self, profile: BotProfile) {
        self.profiles.insert(profile.user_id, Arc::new(profile));
    }
}

/// Zulip's `bot_owner_user_ids`: the active administrators, and the bot's owner if active.
pub fn bot_owner_user_ids(state: &RealmState, bot: &User) -> Vec<UserId> {
    let mut ids: Vec<UserId> =
        state.users().filter(|u| u.is_active && u.role.is_admin() && !u.is_bot).map(|u| u.id).collect();
    if let Some(owner) = bot.bot_owner_id.and_then(|id| state.user(id)).filter(|o| o.is_active) {
        if !ids.contains(&owner.id) {
            ids.push(owner.id);
            ids.sort();
        }
    }
    ids
}

/// A channel's name, or null.
fn channel_name(state: &RealmState, id: Option<ChannelId>) -> Value {
    id.and_then(|id| state.channel(id)).map_or(Value::Null, |c| Value::String(c.name.clone()))
}

/// Zulip's `get_service_dicts_for_bot`.
pub fn service_dicts(state: &RealmState, bot: &User) -> Value {
    let profile = state.bots().profile(bot.id);
    match (bot.bot_type, &profile.service) {
        (Some(OUTGOING_WEBHOOK_BOT), Some(s)) => {
            json!([{"base_url": s.base_url, "interface": s.interface, "token": s.token}])
        }
        (Some(EMBEDDED_BOT), Some(s)) => json!([{"config_data": profile.config_data, "service_name": s.name}]),
        _ => json!([]),
    }
}

/// A bot as `realm_bots` and the `realm_bot` `add` event show it (Zulip's
/// `get_owned_bot_dicts` / `created_bot_event`).
pub fn bot_dict(state: &RealmState, bot: &User) -> Map<String, Value> {
    let profile = state.bots().profile(bot.id);
    let mut dict = crate::json_object(json!({
        "email": bot.email,
        "user_id": bot.id,
        "full_name": bot.full_name,
        "bot_type": bot.bot_type,
        "is_active": bot.is_active,
        "api_key": bot.api_key,
        "default_sending_stream": channel_name(state, profile.default_sending_stream),
        "default_events_register_stream": channel_name(state, profile.default_events_register_stream),
        "default_all_public_streams": profile.default_all_public_streams,
    }));
    if let Some(owner) = bot.bot_owner_id {
        dict.insert("owner_id".into(), json!(owner));
    }
    dict.insert("avatar_url".into(), json!(avatar_url(bot)));
    dict.insert("services".into(), service_dicts(state, bot));
    dict
}

/// `realm_bot` `add` for the bot's owner and the administrators.
pub fn bot_added(state: &RealmState, bot: &User) -> Outgoing {
    let event = Event::new("realm_bot", json!({"op": "add", "bot": bot_dict(state, bot)}));
    Outgoing::to(bot_owner_user_ids(state, bot), event)
}

/// `realm_bot` `update` of some fields (`user_id` added) for the owner and the
/// administrators.
pub fn bot_updated(state: &RealmState, bot: &User, fields: Value) -> Outgoing {
    let mut data = Map::new();
    data.insert("user_id".into(), json!(bot.id));
    if let Value::Object(fields) = fields {
        data.extend(fields);
    }
    let event = Event::new("realm_bot", json!({"op": "update", "bot": data}));
    Outgoing::to(bot_owner_user_ids(state, bot), event)
}

/// The `realm_bots` data set: every bot of the organization for administrators, one's own
/// bots for others; system bots aside.
pub fn realm_bots(state: &RealmState, viewer: &User) -> Value {
    let bots = state
        .users()
        .filter(|u| u.is_bot && (viewer.role.is_admin() || u.bot_owner_id == Some(viewer.id)))
        .map(|u| Value::Object(bot_dict(state, u)))
        .collect();
    Value::Array(bots)
}
