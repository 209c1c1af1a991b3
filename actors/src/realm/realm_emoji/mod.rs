//! Custom emoji (Zulip's `zerver/views/realm_emoji.py`): `GET`, `POST` and `DELETE
//! /realm/emoji/...`, the `realm_emoji` data set and event. The image is made square and
//! stored by the HTTP handler before the emoji is added (nothing here does I/O); `:name:`
//! renders it and reactions take it (`reaction_type` `realm_emoji`).

pub mod ops;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use ops::EmojiUpload;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `GET /realm/emoji`: every custom emoji by id (deactivated ones included).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct ListRealmEmoji {
    pub user_id: UserId,
}

/// `POST /realm/emoji/{emoji_name}`, once its image is stored.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct AddRealmEmoji {
    pub user_id: UserId,
    pub upload: EmojiUpload,
}

/// `DELETE /realm/emoji/{emoji_name}`: deactivates it.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveRealmEmoji {
    pub user_id: UserId,
    pub name: String,
}

impl Handler<ListRealmEmoji> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: ListRealmEmoji, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        Ok(self.state.uploads().emoji_dicts(self.state.realm().id))
    }
}

impl Handler<AddRealmEmoji> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddRealmEmoji, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add(&self.state, msg.user_id, msg.upload)?;
        self.commit(change)
    }
}

impl Handler<RemoveRealmEmoji> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveRealmEmoji, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove(&self.state, msg.user_id, &msg.name)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
