//! Creating bots (`POST /bots`), who may act on one (Zulip's `access_bot_by_id`), their
//! deactivation (`DELETE /bots/{bot_id}`) and new API keys
//! (`POST /bots/{bot_id}/api_key/regenerate`): planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::bot_data::{bot_added, BotProfile, Service, EMBEDDED_BOT, GENERIC_BOT};
use crate::realm::model::{Role, User, INCOMING_WEBHOOK_BOT};
use crate::realm::permissions::{has_realm_permission, require_member};
use crate::realm::state::RealmState;
use crate::realm::users::create::{plan_account, plan_new_api_key, CreatedUser, NewAccount, NewApiKey, NewUser};
use crate::realm::{Applied, Change};
use crate::secrets::new_api_key;
use crate::store;
use crate::validate;

/// The interface types of outgoing webhooks (1 generic, 2 Slack).
const INTERFACE_TYPES: [i64; 2] = [1, 2];

/// The incoming-webhook integrations Agora has (`service_name` of an incoming-webhook bot).
pub const INTEGRATIONS: [&str; 2] = ["alertmanager", "json"];

/// The parameters of `POST /bots`, decoded.
#[derive(Debug, Clone, Default)]
pub struct BotRequest {
    pub full_name: String,
    pub short_name: String,
    pub bot_type: i64,
    pub payload_url: String,
    pub service_name: Option<String>,
    pub config_data: Map<String, Value>,
    pub interface_type: i64,
    pub default_sending_stream: Option<String>,
    pub default_events_register_stream: Option<String>,
    pub default_all_public_streams: Option<bool>,
}

/// What `POST /bots` answers.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedBot {
    pub user_id: UserId,
    pub api_key: String,
    pub avatar_url: String,
    pub default_sending_stream: Option<String>,
    pub default_events_register_stream: Option<String>,
    pub default_all_public_streams: bool,
}

/// A channel named by a bot setting, which `user` must have content access to (Zulip's
/// `access_stream_by_name`).
pub fn channel_by_name(state: &RealmState, user: &User, name: &str) -> ApiResult<ChannelId> {
    state
        .channel_by_name(name)
        .filter(|c| !c.is_archived && state.has_content_access(user, c))
        .map(|c| c.id)
        .ok_or_else(|| ApiError::bad_request(format!("Invalid channel name '{name}'")))
}

/// Zulip's `check_bot_name_available`: no active account may have the name already.
pub fn check_bot_name_available(state: &RealmState, full_name: &str) -> ApiResult<()> {
    if state.users().any(|u| u.is_active && u.full_name == full_name.trim()) {
        return Err(ApiError::bad_request("Name is already in use!"));
    }
    Ok(())
}

/// Zulip's `check_bot_creation_policy`: `can_create_bots_group` may create any bot,
/// `can_create_write_only_bots_group` incoming-webhook bots only.
fn check_bot_creation_policy(state: &RealmState, user: &User, bot_type: i64) -> ApiResult<()> {
    if has_realm_permission(state, "can_create_bots_group", user.id) {
        return Ok(());
    }
    if bot_type == INCOMING_WEBHOOK_BOT && has_realm_permission(state, "can_create_write_only_bots_group", user.id) {
        return Ok(());
    }
    Err(ApiError::bad_request("Insufficient permission"))
}

/// A bot's short name, stripped: "Bad name or username" when nothing is left (Zulip's
/// `check_short_name`).
fn checked_short_name(raw: &str) -> ApiResult<&str> {
    let short_name = validate::python_strip(raw);
    if short_name.is_empty() {
        return Err(ApiError::bad_request("Bad name or username"));
    }
    Ok(short_name)
}

/// A bot's address from its short name, `<short_name>-bot@<domain>` (Zulip's
/// `validate_short_name_and_construct_bot_email`), with the same refusals.
pub fn bot_email(state: &RealmState, config: &ServerConfig, raw: &str) -> ApiResult<String> {
    let short_name = checked_short_name(raw)?;
    let email = format!("{short_name}-bot@{}", config.fake_email_domain(&state.realm().subdomain));
    if !validate::is_valid_email(&email) {
        return Err(ApiError::bad_request("Bad name or username"));
    }
    Ok(email)
}

/// Plans `POST /bots`, with Zulip's checks in Zulip's order (`add_bot_backend`).
pub fn plan_create_bot(
    state: &RealmState,
    config: &ServerConfig,
    acting: UserId,
    req: BotRequest,
    now: i64,
) -> ApiResult<NewBot> {
    let acting = require_member(state, acting)?;
    let short_name = checked_short_name(&req.short_name)?;
    let service_name = match req.bot_type {
        INCOMING_WEBHOOK_BOT => req.service_name.clone().filter(|s| !s.is_empty()),
        _ => Some(req.service_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| short_name.to_owned())),
    };
    let full_name = validate::full_name(&req.full_name)?;
    if req.bot_type == EMBEDDED_BOT {
        return Err(ApiError::bad_request("Embedded bots are not enabled."));
    }
    let email = bot_email(state, config, short_name)?;
    if state.email_taken(&email, None) {
        return Err(ApiError::bad_request("Username already in use"));
    }
    check_bot_name_available(state, &full_name)?;
    check_bot_creation_policy(state, acting, req.bot_type)?;
    if ![GENERIC_BOT, INCOMING_WEBHOOK_BOT, crate::realm::bot_data::OUTGOING_WEBHOOK_BOT].contains(&req.bot_type) {
        return Err(ApiError::bad_request("Invalid bot type"));
    }
    if !INTERFACE_TYPES.contains(&req.interface_type) {
        return Err(ApiError::bad_request("Invalid interface type"));
    }
    let sending = req.default_sending_stream.as_deref().map(|n| channel_by_name(state, acting, n)).transpose()?;
    let register =
        req.default_events_register_stream.as_deref().map(|n| channel_by_name(state, acting, n)).transpose()?;
    let mut config_data = Map::new();
    if req.bot_type == INCOMING_WEBHOOK_BOT {
        if let Some(name) = &service_name {
            if !INTEGRATIONS.contains(&name.as_str()) {
                return Err(ApiError::bad_request(format!("Invalid integration '{name}'.")));
            }
            config_data.insert("integration_id".into(), json!(name));
        }
        config_data.extend(req.config_data.clone());
    }
    let service = (req.bot_type == crate::realm::bot_data::OUTGOING_WEBHOOK_BOT).then(|| Service {
        name: service_name.clone().unwrap_or_default(),
        base_url: req.payload_url.clone(),
        interface: req.interface_type,
        token: new_api_key(),
    });
    let new = NewUser {
        bot_type: Some(req.bot_type),
        bot_owner_id: Some(acting.id),
        ..NewUser::human(&email, &full_name, Role::Member, None)
    };
    let account = plan_account(state, config, &new, now);
    let profile = BotProfile {
        user_id: UserId(0),
        default_sending_stream: sending,
        default_events_register_stream: register,
        default_all_public_streams: req.default_all_public_streams.unwrap_or(false),
        service,
        config_data,
    };
    Ok(NewBot { account, profile })
}

/// A bot to create: its account and its profile.
#[derive(Debug, Clone)]
pub struct NewBot {
    account: NewAccount,
    profile: BotProfile,
}

impl Change for NewBot {
    type Output = CreatedBot;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.account.write(tx).map_err(|e| {
            if e.msg == "Email is already in use." {
                ApiError::bad_request("Username already in use")
            } else {
                e
            }
        })?;
        self.profile.user_id = self.account.user().id;
        store::bots::put_profile(tx, &self.profile)?;
        Ok(())
    }

    /// `realm_user` `add` to everyone (as for any new account), then `realm_bot` `add` to
    /// the owner and the administrators.
    fn apply(self, state: &mut RealmState) -> Applied<CreatedBot> {
        let profile = self.profile.clone();
        state.bots_mut().put(self.profile);
        let applied = self.account.apply(state);
        let CreatedUser { user_id, api_key } = applied.output;
        let mut events = applied.events;
        let Some(bot) = state.user(user_id) else {
            return Applied::new(empty_created(user_id, api_key), events).with_auth();
        };
        events.push(bot_added(state, bot));
        let name = |id: Option<ChannelId>| id.and_then(|id| state.channel(id)).map(|c| c.name.clone());
        let created = CreatedBot {
            user_id,
            api_key,
            avatar_url: crate::realm::format::avatar_url(bot),
            default_sending_stream: name(profile.default_sending_stream),
            default_events_register_stream: name(profile.default_events_register_stream),
            default_all_public_streams: profile.default_all_public_streams,
        };
        Applied::new(created, events).with_auth()
    }
}

fn empty_created(user_id: UserId, api_key: String) -> CreatedBot {
    CreatedBot {
        user_id,
        api_key,
        avatar_url: String::new(),
        default_sending_stream: None,
        default_events_register_stream: None,
        default_all_public_streams: false,
    }
}

/// Zulip's `access_bot_by_id`: a bot of the organization that `acting` may administer (an
/// administrator, or its owner); one that may create users needs an owner.
pub fn access_bot<'a>(state: &'a RealmState, acting: &User, bot_id: UserId) -> ApiResult<&'a User> {
    let bot = state.users().find(|u| u.id == bot_id).filter(|u| u.is_bot).ok_or_else(no_such_bot)?;
    if !(acting.role.is_admin() || bot.bot_owner_id == Some(acting.id)) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    if bot.can_create_users && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    Ok(bot)
}

fn no_such_bot() -> ApiError {
    ApiError::bad_request("No such bot")
}

/// A bot's new API key: a user's new key (the old one stops working once applied, its push
/// registrations go) that its owner and the administrators hear of.
#[derive(Debug, Clone)]
pub struct NewBotKey(NewApiKey);

/// Plans `POST /bots/{bot_id}/api_key/regenerate` (members and administrators).
pub fn plan_regenerate(state: &RealmState, acting: UserId, bot: UserId) -> ApiResult<NewBotKey> {
    let acting = require_member(state, acting)?;
    let bot = access_bot(state, acting, bot)?;
    Ok(NewBotKey(plan_new_api_key(state, bot.id)?))
}

impl Change for NewBotKey {
    type Output = String;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.0.write(tx)
    }

    /// No `realm_bot` event since Zulip 12 (feature level 474): bot objects have no key.
    fn apply(self, state: &mut RealmState) -> Applied<String> {
        self.0.apply(state)
    }
}

/// What `DELETE /bots/{bot_id}` does: deactivate an active bot, or nothing for one already
/// deactivated (as Zulip's `do_deactivate_user`).
pub enum BotDeactivation {
    Deactivate(crate::realm::users::ops::AccountStatus),
    AlreadyInactive,
}

/// Plans `DELETE /bots/{bot_id}`.
pub fn plan_deactivate_bot(state: &RealmState, acting: UserId, bot: UserId) -> ApiResult<BotDeactivation> {
    let acting = state.user_or_err(acting)?;
    let bot = access_bot(state, acting, bot)?;
    if !bot.is_active {
        return Ok(BotDeactivation::AlreadyInactive);
    }
    Ok(BotDeactivation::Deactivate(crate::realm::users::ops::plan_set_active(state, bot.id, false)?))
}
