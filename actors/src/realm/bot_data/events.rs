//! The `realm_bot` objects and events, and who hears of a bot's changes (Zulip's
//! `bot_owner_user_ids`).

use serde_json::{json, Map, Value};

use super::{EMBEDDED_BOT, OUTGOING_WEBHOOK_BOT};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::model::User;
use crate::realm::state::RealmState;

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
/// `get_owned_bot_dicts` / `created_bot_event`). Since Zulip 12 (feature level 474) only
/// what is not on the bot's user object: its default channels and its services (no
/// `api_key`, `avatar_url`, `bot_type`, `email`, `full_name`, `is_active`, `owner_id`;
/// clients read those from `realm_users` and `GET /bots/{bot_id}/api_key`).
pub fn bot_dict(state: &RealmState, bot: &User) -> Map<String, Value> {
    let profile = state.bots().profile(bot.id);
    crate::json_object(json!({
        "user_id": bot.id,
        "default_sending_stream": channel_name(state, profile.default_sending_stream),
        "default_events_register_stream": channel_name(state, profile.default_events_register_stream),
        "default_all_public_streams": profile.default_all_public_streams,
        "services": service_dicts(state, bot),
    }))
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
