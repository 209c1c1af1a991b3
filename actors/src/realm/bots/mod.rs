//! Bots: `POST`/`GET /bots`, `PATCH`/`DELETE /bots/{bot_id}`, `GET /bots/{bot_id}/api_key`,
//! `POST /bots/{bot_id}/api_key/regenerate` and bot storage (`/bot_storage`). The
//! messages and their handlers; the changes are planned in `ops`, `update` and `storage`.
//! Incoming and outgoing webhooks live in `webhooks`.

pub mod ops;
pub mod storage;
pub mod update;
pub mod webhooks;

#[cfg(test)]
mod tests;

use actix::prelude::*;
use serde_json::{json, Map, Value};

pub use ops::{BotRequest, CreatedBot};
pub use storage::{StorageGet, StoragePut, StorageRemove};
pub use update::BotUpdate;

use super::actor::RealmActor;
use super::format::avatar_url;
use super::permissions::require_member;
use super::users::ops::{plan_update, UserRef, UserUpdate};
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /bots`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<CreatedBot>")]
pub struct CreateBot {
    pub acting: UserId,
    pub request: BotRequest,
}

/// `GET /bots`: the requester's active bots.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListBots {
    pub user: UserId,
}

/// `PATCH /bots/{bot_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct UpdateBot {
    pub acting: UserId,
    pub bot: UserId,
    /// The new role (the wire value), changed before the rest as Zulip does.
    pub role: Option<i64>,
    pub update: BotUpdate,
}

/// `DELETE /bots/{bot_id}`: deactivates the bot.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateBot {
    pub acting: UserId,
    pub bot: UserId,
}

/// `POST /bots/{bot_id}/api_key/regenerate`: the bot's new key.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct RegenerateBotKey {
    pub acting: UserId,
    pub bot: UserId,
}

/// `GET /bots/{bot_id}/api_key` (Zulip 12, feature level 463): the bot's key, for its owner
/// and the administrators (as regenerating it).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct GetBotKey {
    pub acting: UserId,
    pub bot: UserId,
}

/// `PUT /bot_storage`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct PutBotStorage(pub StoragePut);

/// `DELETE /bot_storage`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveBotStorage(pub StorageRemove);

impl Handler<CreateBot> for RealmActor {
    type Result = ApiResult<CreatedBot>;

    fn handle(&mut self, msg: CreateBot, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create_bot(&self.state, &self.config, msg.acting, msg.request, clock::now())?;
        self.commit(change)
    }
}

impl Handler<ListBots> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    /// Zulip's `get_bots_backend`: active bots owned by the user, oldest first.
    fn handle(&mut self, msg: ListBots, _: &mut Self::Context) -> Self::Result {
        let state = &self.state;
        let user = require_member(state, msg.user)?;
        let mut bots: Vec<_> =
            state.users().filter(|u| u.is_bot && u.is_active && u.bot_owner_id == Some(user.id)).collect();
        bots.sort_by_key(|b| (b.date_joined, b.id));
        let name = |id: Option<crate::ids::ChannelId>| id.and_then(|id| state.channel(id)).map(|c| c.name.clone());
        Ok(bots
            .into_iter()
            .map(|b| {
                let profile = state.bots().profile(b.id);
                json!({
                    "username": b.email,
                    "full_name": b.full_name,
                    "api_key": b.api_key,
                    "avatar_url": avatar_url(b),
                    "default_sending_stream": name(profile.default_sending_stream),
                    "default_events_register_stream": name(profile.default_events_register_stream),
                    "default_all_public_streams": profile.default_all_public_streams,
                })
            })
            .collect())
    }
}

impl Handler<UpdateBot> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: UpdateBot, _: &mut Self::Context) -> Self::Result {
        let edit = update::plan_update_bot(&self.state, &self.config, msg.acting, msg.bot, msg.update)?;
        if let Some(role) = msg.role {
            let unchanged = self.state.user(msg.bot).is_some_and(|b| b.role.as_i64() == role);
            if !unchanged {
                let update = UserUpdate { role: Some(role), ..Default::default() };
                let change =
                    plan_update(&self.state, &self.config, msg.acting, &UserRef::Id(msg.bot), update, clock::now())?;
                self.commit(change)?;
            }
        }
        self.commit(edit)
    }
}

impl Handler<DeactivateBot> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateBot, _: &mut Self::Context) -> Self::Result {
        match ops::plan_deactivate_bot(&self.state, msg.acting, msg.bot)? {
            ops::BotDeactivation::Deactivate(change) => self.commit(change),
            ops::BotDeactivation::AlreadyInactive => Ok(()),
        }
    }
}

impl Handler<RegenerateBotKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: RegenerateBotKey, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_regenerate(&self.state, msg.acting, msg.bot)?;
        self.commit(change)
    }
}

impl Handler<GetBotKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: GetBotKey, _: &mut Self::Context) -> Self::Result {
        let acting = require_member(&self.state, msg.acting)?;
        Ok(ops::access_bot(&self.state, acting, msg.bot)?.api_key.clone())
    }
}

impl Handler<PutBotStorage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: PutBotStorage, _: &mut Self::Context) -> Self::Result {
        self.commit(msg.0)
    }
}

impl Handler<RemoveBotStorage> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveBotStorage, _: &mut Self::Context) -> Self::Result {
        self.commit(msg.0)
    }
}
