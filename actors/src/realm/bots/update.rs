//! `PATCH /bots/{bot_id}` (Zulip's `patch_bot_backend`): name, short name (so email),
//! owner, default channels, the outgoing webhook's URL and interface, configuration. The role goes through the
//! users feature's role change first, as Zulip changes it before the rest.

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::ops::{access_bot, bot_email, channel_by_name, check_bot_name_available};
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::bot_data::{bot_added, bot_updated, service_dicts, BotProfile};
use crate::realm::events::realm_user_update;
use crate::realm::format::avatar_url;
use crate::realm::permissions::require_member;
use crate::realm::settings::format::delivery_email_events;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate;

/// The fields of `PATCH /bots/{bot_id}`; `None` leaves a field alone.
#[derive(Debug, Clone, Default)]
pub struct BotUpdate {
    pub full_name: Option<String>,
    /// A new short name, and so a new email `<short_name>-bot@<domain>` (level 447).
    pub short_name: Option<String>,
    pub bot_owner_id: Option<i64>,
    pub config_data: Option<Map<String, Value>>,
    pub service_payload_url: Option<String>,
    /// Default 1, as Zulip's.
    pub service_interface: i64,
    pub default_sending_stream: Option<String>,
    pub default_events_register_stream: Option<String>,
    pub default_all_public_streams: Option<bool>,
}

/// A planned bot update.
#[derive(Debug, Clone)]
pub struct BotEdit {
    bot: UserId,
    full_name: Option<String>,
    /// The new email (real and API: a bot's address is public).
    email: Option<String>,
    owner: Option<(Option<UserId>, UserId)>,
    profile: BotProfile,
    /// The `realm_bot` fields that changed (each its own event, as Zulip sends them).
    changed: Vec<Value>,
    request: BotUpdate,
}

/// Plans `PATCH /bots/{bot_id}` (the role aside), with Zulip's checks in its order.
pub fn plan_update_bot(
    state: &RealmState,
    config: &ServerConfig,
    acting: UserId,
    bot: UserId,
    req: BotUpdate,
) -> ApiResult<BotEdit> {
    let acting = require_member(state, acting)?;
    let bot = access_bot(state, acting, bot)?;
    let mut edit = BotEdit {
        bot: bot.id,
        full_name: None,
        email: None,
        owner: None,
        profile: state.bots().profile(bot.id),
        changed: Vec::new(),
        request: req.clone(),
    };
    if let Some(raw) = &req.full_name {
        let name = validate::full_name(raw)?;
        if name != bot.full_name {
            check_bot_name_available(state, &name)?;
            // Only `realm_user` hears of it since Zulip 12 (feature level 474).
            edit.full_name = Some(name);
        }
    }
    if let Some(raw) = &req.short_name {
        // Checked as at creation; the same address is no change.
        let email = bot_email(state, config, raw)?;
        if email != bot.delivery_email {
            if state.email_taken(&email, Some(bot.id)) {
                return Err(ApiError::bad_request("Username already in use"));
            }
            edit.email = Some(email);
        }
    }
    if let Some(owner_id) = req.bot_owner_id {
        let owner = state
            .user(UserId(owner_id))
            .ok_or_else(|| ApiError::bad_request("Failed to change owner, no such user"))?;
        if !owner.is_active {
            return Err(ApiError::bad_request("Failed to change owner, user is deactivated"));
        }
        if owner.is_bot {
            return Err(ApiError::bad_request("Failed to change owner, bots can't own other bots"));
        }
        if bot.bot_owner_id != Some(owner.id) {
            edit.owner = Some((bot.bot_owner_id, owner.id));
        }
    }
    let stream = |name: &Option<String>| -> ApiResult<Option<Option<ChannelId>>> {
        match name.as_deref() {
            None => Ok(None),
            Some("") => Ok(Some(None)),
            Some(name) => Ok(Some(Some(channel_by_name(state, acting, name)?))),
        }
    };
    let channel_name = |id: Option<ChannelId>| id.and_then(|id| state.channel(id)).map(|c| c.name.clone());
    if let Some(id) = stream(&req.default_sending_stream)? {
        edit.profile.default_sending_stream = id;
        edit.changed.push(json!({"default_sending_stream": channel_name(id)}));
    }
    if let Some(id) = stream(&req.default_events_register_stream)? {
        edit.profile.default_events_register_stream = id;
        edit.changed.push(json!({"default_events_register_stream": channel_name(id)}));
    }
    if let Some(all) = req.default_all_public_streams {
        edit.profile.default_all_public_streams = all;
        edit.changed.push(json!({"default_all_public_streams": all}));
    }
    let mut services_changed = false;
    if let Some(url) = &req.service_payload_url {
        if ![1, 2].contains(&req.service_interface) {
            return Err(ApiError::bad_request("Invalid interface type"));
        }
        if let Some(service) = edit.profile.service.as_mut() {
            service.base_url = url.clone();
            service.interface = req.service_interface;
            services_changed = true;
        }
    }
    if let Some(config) = &req.config_data {
        edit.profile.config_data.extend(config.clone());
        services_changed = true;
    }
    if services_changed {
        // Filled in once applied (the dicts come from the new profile).
        edit.changed.push(json!({"services": null}));
    }
    Ok(edit)
}

impl Change for BotEdit {
    type Output = Map<String, Value>;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(name) = &self.full_name {
            store::users::set_full_name(tx, self.bot, name)?;
        }
        if let Some(email) = &self.email {
            store::users::set_emails(tx, self.bot, email, email)?;
        }
        if let Some((_, owner)) = self.owner {
            store::users::set_bot_owner(tx, self.bot, owner)?;
        }
        store::bots::put_profile(tx, &self.profile)?;
        Ok(())
    }

    /// `realm_user` updates (name, owner) to everyone and `realm_bot` updates to the owner
    /// and the administrators; a new owner who is no administrator gets `add`, the previous
    /// one `delete` (Zulip's `send_bot_owner_update_events`).
    fn apply(self, state: &mut RealmState) -> Applied<Map<String, Value>> {
        let BotEdit { bot, full_name, email, owner, profile, changed, request } = self;
        let mut events = Vec::new();
        // The bot signs in with its address: the server's credentials follow.
        let auth = email.is_some();
        if let Some(email) = email {
            // Zulip's `do_change_user_delivery_email`: no `realm_bot` event since level 474.
            if let Some(mut user) = state.user(bot).cloned() {
                user.delivery_email = email.clone();
                user.email = email;
                state.put_user(user.clone());
                events.extend(delivery_email_events(state, &user));
            }
        }
        if let Some(user) = state.user_mut(bot) {
            if let Some(name) = &full_name {
                user.full_name = name.clone();
            }
            if let Some((_, owner)) = owner {
                user.bot_owner_id = Some(owner);
            }
        }
        state.bots_mut().put(profile.clone());
        let Some(user) = state.user(bot) else {
            return Applied::new(Map::new(), events);
        };
        if let Some(name) = &full_name {
            events.push(state.to_everyone(realm_user_update(json!({"user_id": bot, "full_name": name}))));
        }
        for fields in changed {
            let fields =
                if fields.get("services").is_some() { json!({"services": service_dicts(state, user)}) } else { fields };
            events.push(bot_updated(state, user, fields));
        }
        if let Some((previous, owner)) = owner {
            events.extend(owner_events(state, user, previous, owner));
        }
        let name = |id: Option<ChannelId>| id.and_then(|id| state.channel(id)).map(|c| c.name.clone());
        let mut reply = crate::json_object(json!({
            "full_name": user.full_name,
            "avatar_url": avatar_url(user),
            "service_interface": request.service_interface,
            "service_payload_url": request.service_payload_url,
            "config_data": request.config_data,
            "default_sending_stream": name(profile.default_sending_stream),
            "default_events_register_stream": name(profile.default_events_register_stream),
            "default_all_public_streams": profile.default_all_public_streams,
        }));
        if let Some(owner) = user.bot_owner_id.and_then(|id| state.user(id)) {
            reply.insert("bot_owner".into(), json!(owner.email));
        }
        let applied = Applied::new(reply, events);
        if auth {
            applied.with_auth()
        } else {
            applied
        }
    }
}

/// Zulip's `send_bot_owner_update_events`.
fn owner_events(
    state: &RealmState,
    bot: &crate::realm::model::User,
    previous: Option<UserId>,
    owner: UserId,
) -> Vec<Outgoing> {
    let mut events = Vec::new();
    let is_admin = |id: UserId| state.user(id).is_some_and(|u| u.role.is_admin());
    if let Some(previous) = previous.filter(|p| !is_admin(*p)) {
        let delete = Event::new("realm_bot", json!({"op": "delete", "bot": {"user_id": bot.id}}));
        events.push(Outgoing::to(vec![previous], delete));
    }
    if !is_admin(owner) {
        let mut add = bot_added(state, bot);
        add = Outgoing::to(vec![owner], add.event);
        events.push(add);
    }
    // No `realm_bot` `update` with the owner since Zulip 12 (feature level 474).
    events.push(state.to_everyone(realm_user_update(json!({"user_id": bot.id, "bot_owner_id": owner}))));
    events
}
