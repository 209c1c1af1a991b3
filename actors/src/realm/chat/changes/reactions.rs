//! Emoji reactions: `POST` and `DELETE /messages/{message_id}/reactions` and the
//! `reaction` event (Zulip's `zerver/actions/reactions.py`).

use actix::prelude::*;
use serde_json::json;

use super::emoji::{self, check_emoji, emoji_data};
use super::{access_message_to_change, event_recipients};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::realm::actor::RealmActor;
use crate::realm::chat::flag;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::store::reactions::{self as store, MessageRow, Reaction};
use crate::store::Store;

/// `POST /messages/{message_id}/reactions`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct AddReaction {
    pub user_id: UserId,
    pub message_id: i64,
    pub emoji_name: String,
    pub emoji_code: Option<String>,
    pub reaction_type: Option<String>,
}

/// `DELETE /messages/{message_id}/reactions`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveReaction {
    pub user_id: UserId,
    pub message_id: i64,
    pub emoji_name: Option<String>,
    pub emoji_code: Option<String>,
    /// Zulip's default is `unicode_emoji`.
    pub reaction_type: Option<String>,
}

fn already_exists() -> ApiError {
    ApiError::new(ErrorCode::ReactionAlreadyExists, 400, "Reaction already exists.")
}

fn does_not_exist() -> ApiError {
    ApiError::new(ErrorCode::ReactionDoesNotExist, 400, "Reaction doesn't exist.")
}

/// Adds `user`'s reaction (Zulip's `check_add_reaction`): the code and type default to the
/// name's; a reaction with a code someone already used takes that reaction's name (a vote),
/// otherwise the emoji is validated. Reacting to a public-channel message one never
/// received gives one a historical, read row for it.
pub fn add_reaction(state: &RealmState, store: &Store, user: &User, msg: AddReaction) -> ApiResult<Vec<Outgoing>> {
    let conn = store.conn()?;
    let access = access_message_to_change(state, &conn, user, msg.message_id)?;
    let (emoji_code, reaction_type) = match (msg.emoji_code, msg.reaction_type) {
        (Some(code), Some(kind)) => (code, kind),
        (code, kind) => {
            let (default_code, default_kind) = emoji_data(&msg.emoji_name)?;
            (code.unwrap_or(default_code), kind.unwrap_or_else(|| default_kind.to_owned()))
        }
    };
    let message = &access.message;
    if store::user_reaction(&conn, message.id, user.id, &emoji_code, &reaction_type)?.is_some() {
        return Err(already_exists());
    }
    let emoji_name = match store::reaction_name(&conn, message.id, &emoji_code, &reaction_type)? {
        Some(name) => name,
        None => {
            check_emoji(&msg.emoji_name, &emoji_code, &reaction_type)?;
            msg.emoji_name
        }
    };
    drop(conn);
    let reaction = Reaction { emoji_name, emoji_code, reaction_type };
    store.write(|tx| {
        if !access.has_user_message {
            store::ensure_user_message(tx, user.id, message.id, flag::READ | flag::HISTORICAL)?;
        }
        store::insert_reaction(tx, message.id, user.id, &reaction)?;
        Ok::<_, ApiError>(())
    })?;
    reaction_event(state, store, user, message, &reaction, "add")
}

/// Removes `user`'s reaction (Zulip's `remove_reaction`): by code, or by the code of the
/// emoji name when no code is given.
pub fn remove_reaction(
    state: &RealmState,
    store: &Store,
    user: &User,
    msg: RemoveReaction,
) -> ApiResult<Vec<Outgoing>> {
    let conn = store.conn()?;
    let access = access_message_to_change(state, &conn, user, msg.message_id)?;
    let emoji_code = match (msg.emoji_code, msg.emoji_name) {
        (Some(code), _) => code,
        (None, Some(name)) => emoji_data(&name)?.0,
        (None, None) => {
            return Err(ApiError::bad_request(
                "At least one of the following arguments must be present: emoji_name, emoji_code",
            ))
        }
    };
    let reaction_type = msg.reaction_type.unwrap_or_else(|| emoji::UNICODE.to_owned());
    let message = &access.message;
    let reaction =
        store::user_reaction(&conn, message.id, user.id, &emoji_code, &reaction_type)?.ok_or_else(does_not_exist)?;
    drop(conn);
    store.write(|tx| store::delete_reaction(tx, message.id, user.id, &reaction))?;
    reaction_event(state, store, user, message, &reaction, "remove")
}

/// The `reaction` event, to everyone who may see the message (with the legacy `user`).
fn reaction_event(
    state: &RealmState,
    store: &Store,
    user: &User,
    message: &MessageRow,
    reaction: &Reaction,
    op: &str,
) -> ApiResult<Vec<Outgoing>> {
    let event = Event::new(
        "reaction",
        json!({
            "op": op,
            "user_id": user.id,
            "user": {"user_id": user.id, "email": user.email, "full_name": user.full_name},
            "message_id": message.id,
            "emoji_name": reaction.emoji_name,
            "emoji_code": reaction.emoji_code,
            "reaction_type": reaction.reaction_type,
        }),
    );
    let recipients = event_recipients(state, &*store.conn()?, message)?;
    Ok(vec![Outgoing::to(recipients, event)])
}

impl Handler<AddReaction> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddReaction, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?.clone();
        let events = add_reaction(&self.state, &self.store, &user, msg)?;
        self.committed(events);
        Ok(())
    }
}

impl Handler<RemoveReaction> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveReaction, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?.clone();
        let events = remove_reaction(&self.state, &self.store, &user, msg)?;
        self.committed(events);
        Ok(())
    }
}
