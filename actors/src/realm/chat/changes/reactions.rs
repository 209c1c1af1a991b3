//! Emoji reactions: `POST` and `DELETE /messages/{message_id}/reactions` and the
//! `reaction` event (Zulip's `zerver/actions/reactions.py`).
//!
//! Zulip checks access to the stored message before the emoji: the emoji is resolved when
//! planned, and its errors wait for the access check when written.

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::json;

use super::emoji::{self, check_emoji, emoji_data};
use super::{access_message_to_change, event_recipients};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::chat::{flag, viewer};
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::reactions::{self as store, Reaction};

/// `POST /messages/{message_id}/reactions`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct AddReaction {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub emoji_name: String,
    pub emoji_code: Option<String>,
    pub reaction_type: Option<String>,
}

/// `DELETE /messages/{message_id}/reactions`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveReaction {
    pub user_id: UserId,
    pub message_id: MessageId,
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

/// Adding or removing a reaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReactionOp {
    Add,
    Remove,
}

/// A reaction to add or remove, planned: the access check and the reactions already there
/// need the stored message and are read when written, against the state it was planned
/// with.
#[derive(Debug, Clone)]
pub struct ReactionChange {
    state: RealmState,
    user: UserId,
    message_id: MessageId,
    op: ReactionOp,
    /// The name asked for (adding).
    emoji_name: String,
    /// The emoji code and reaction type, or why they cannot be found.
    emoji: ApiResult<(String, String)>,
    /// Set by the write: the reaction and who may see the message.
    done: Option<(Reaction, Vec<UserId>)>,
}

/// Plans `user`'s reaction (Zulip's `check_add_reaction`): the code and type default to
/// the name's.
pub fn plan_add_reaction(state: &RealmState, msg: AddReaction) -> ApiResult<ReactionChange> {
    let user = viewer(state, msg.user_id)?.id;
    let emoji = match (msg.emoji_code, msg.reaction_type) {
        (Some(code), Some(kind)) => Ok((code, kind)),
        (code, kind) => emoji_data(state.uploads(), &msg.emoji_name).map(|(default_code, default_kind)| {
            (code.unwrap_or(default_code), kind.unwrap_or_else(|| default_kind.to_owned()))
        }),
    };
    let (message_id, emoji_name) = (msg.message_id, msg.emoji_name);
    Ok(ReactionChange { state: state.clone(), user, message_id, op: ReactionOp::Add, emoji_name, emoji, done: None })
}

/// Plans the removal of `user`'s reaction (Zulip's `remove_reaction`): by code, or by the
/// code of the emoji name when no code is given.
pub fn plan_remove_reaction(state: &RealmState, msg: RemoveReaction) -> ApiResult<ReactionChange> {
    let user = viewer(state, msg.user_id)?.id;
    let code = match (msg.emoji_code, msg.emoji_name) {
        (Some(code), _) => Ok(code),
        (None, Some(name)) => emoji_data(state.uploads(), &name).map(|(code, _)| code),
        (None, None) => Err(ApiError::bad_request(
            "At least one of the following arguments must be present: emoji_name, emoji_code",
        )),
    };
    let kind = msg.reaction_type.unwrap_or_else(|| emoji::UNICODE.to_owned());
    let emoji = code.map(|code| (code, kind));
    let message_id = msg.message_id;
    let (op, emoji_name) = (ReactionOp::Remove, String::new());
    Ok(ReactionChange { state: state.clone(), user, message_id, op, emoji_name, emoji, done: None })
}

impl Change for ReactionChange {
    type Output = ();

    /// Adding: a reaction with a code someone already used takes that reaction's name (a
    /// vote), otherwise the emoji is validated; reacting to a public-channel message one
    /// never received gives one a historical, read row for it. Removing: the user's
    /// reaction with that code must exist.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let state = &self.state;
        let user = viewer(state, self.user)?;
        let access = access_message_to_change(state, tx, user, self.message_id)?;
        let (emoji_code, reaction_type) = self.emoji.clone()?;
        let message = access.message.id;
        let existing = store::user_reaction(tx, message, user.id, &emoji_code, &reaction_type)?;
        let reaction = match self.op {
            ReactionOp::Add => {
                if existing.is_some() {
                    return Err(already_exists());
                }
                let emoji_name = match store::reaction_name(tx, message, &emoji_code, &reaction_type)? {
                    Some(name) => name,
                    None => {
                        check_emoji(state.uploads(), &self.emoji_name, &emoji_code, &reaction_type)?;
                        self.emoji_name.clone()
                    }
                };
                let reaction = Reaction { emoji_name, emoji_code, reaction_type };
                if !access.has_user_message {
                    store::ensure_user_message(tx, user.id, message, flag::READ | flag::HISTORICAL)?;
                }
                store::insert_reaction(tx, message, user.id, &reaction)?;
                reaction
            }
            ReactionOp::Remove => {
                let reaction = existing.ok_or_else(does_not_exist)?;
                store::delete_reaction(tx, message, user.id, &reaction)?;
                reaction
            }
        };
        let recipients = event_recipients(state, tx, &access.message)?;
        self.done = Some((reaction, recipients));
        Ok(())
    }

    /// The `reaction` event, to everyone who may see the message (with the legacy `user`).
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let ReactionChange { state: planned, user, message_id, op, done, .. } = self;
        drop(planned);
        let (Some((reaction, recipients)), Some(user)) = (done, state.user(user)) else {
            return Applied::events(Vec::new());
        };
        Applied::events(vec![reaction_event(user, message_id, &reaction, op, recipients)])
    }
}

/// The `reaction` event (without the `user` object since feature level 484).
fn reaction_event(user: &User, message: MessageId, reaction: &Reaction, op: ReactionOp, to: Vec<UserId>) -> Outgoing {
    let op = match op {
        ReactionOp::Add => "add",
        ReactionOp::Remove => "remove",
    };
    let event = Event::new(
        "reaction",
        json!({
            "op": op,
            "user_id": user.id,
            "message_id": message,
            "emoji_name": reaction.emoji_name,
            "emoji_code": reaction.emoji_code,
            "reaction_type": reaction.reaction_type,
        }),
    );
    Outgoing::to(to, event)
}

impl Handler<AddReaction> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddReaction, _: &mut Self::Context) -> Self::Result {
        let change = plan_add_reaction(&self.state, msg)?;
        self.commit(change)
    }
}

impl Handler<RemoveReaction> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveReaction, _: &mut Self::Context) -> Self::Result {
        let change = plan_remove_reaction(&self.state, msg)?;
        self.commit(change)
    }
}
