//! Users (spec 4.13-4.16): accounts, their creation, keys, listing, updates, deactivation
//! and reactivation. The messages and their handlers; the changes are planned in `create`
//! and `ops`, the queries answered in `reads`.

pub mod create;
pub mod ops;
pub mod reads;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use create::{create_user, regenerate_api_key, regenerate_own_api_key};
pub use create::{CreatedUser, NewUser};
pub use ops::{set_active, DeactivationActions, UserRef, UserUpdate};

use super::actor::RealmActor;
use super::format::UserDictOptions;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::{MessageId, UserId};
use crate::realm::avatars::ops::plan_remove;
use crate::realm::chat::changes::purge::{purge, Selection};
use crate::realm::model::Channel;
use crate::realm::state::RealmState;

/// Creates an account (its password already hashed by the caller).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateUser(pub NewUser);

/// `POST /users`: `acting` creates an account (its password already hashed).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateUserAs {
    pub acting: UserId,
    pub new: NewUser,
    /// The password failed the strength check (then it was not hashed): refused after
    /// the other checks, as Zulip orders them.
    pub password_too_weak: bool,
}

/// Replaces a user's API key and returns the new one.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct RegenerateApiKey {
    pub user_id: UserId,
}

/// `POST /users/me/api_key/regenerate`: humans replace their own key.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct RegenerateOwnApiKey {
    pub user_id: UserId,
}

/// Deactivates (`active: false`) or reactivates an account.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetUserActive {
    pub user_id: UserId,
    pub active: bool,
}

impl Handler<RegenerateApiKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: RegenerateApiKey, _: &mut Self::Context) -> Self::Result {
        let change = create::plan_new_api_key(&self.state, msg.user_id)?;
        self.commit(change)
    }
}

impl Handler<RegenerateOwnApiKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: RegenerateOwnApiKey, _: &mut Self::Context) -> Self::Result {
        let change = create::plan_own_new_api_key(&self.state, msg.user_id)?;
        self.commit(change)
    }
}

impl Handler<SetUserActive> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetUserActive, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_set_active(&self.state, msg.user_id, msg.active)?;
        self.commit(change)
    }
}

/// A successful login of `user_id` (password, web or API): the first one of an imported stub
/// or of an account created through `POST /users` ends its wait (FL 433, 475).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RecordLogin {
    pub user_id: UserId,
}

impl Handler<RecordLogin> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RecordLogin, _: &mut Self::Context) -> Self::Result {
        match ops::plan_first_login(&self.state, msg.user_id, clock::now()) {
            Some(change) => self.commit(change),
            None => Ok(()),
        }
    }
}

/// `GET /users/me`: the requester's own user object with `max_message_id`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct GetOwnProfile {
    pub user_id: UserId,
}

/// `GET /users/{id}` and `GET /users/{email}`: one user as `viewer` may see it.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct GetUser {
    pub viewer: UserId,
    pub target: UserRef,
    pub options: UserDictOptions,
}

/// `GET /users`: the JSON array of `members`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct ListUsers {
    pub viewer: UserId,
    pub options: UserDictOptions,
    pub user_ids: Option<Vec<i64>>,
}

/// `PATCH /users/{user_id}` (or `/users/{email}`).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUser {
    pub acting: UserId,
    pub target: UserRef,
    pub update: UserUpdate,
}

/// `DELETE /users/me`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateOwnUser {
    pub user_id: UserId,
}

/// `DELETE /users/{user_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateUser {
    pub acting: UserId,
    pub target: UserRef,
    /// `deactivation_notification_comment`: checked as Zulip checks it; Agora sends no mail.
    pub comment: Option<String>,
    /// `actions` (level 459).
    pub actions: DeactivationActions,
}

/// `POST /users/{user_id}/reactivate`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReactivateUser {
    pub acting: UserId,
    pub target: UserRef,
}

impl Handler<GetOwnProfile> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetOwnProfile, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        let max_message_id = crate::store::messages::max_message_id(&*self.store.conn()?, user.id)?;
        Ok(self.state.own_profile(user, max_message_id))
    }
}

impl Handler<GetUser> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetUser, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        reads::user_dict(&self.state, viewer, &msg.target, msg.options)
    }
}

impl Handler<ListUsers> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: ListUsers, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        reads::list_users(&self.state, viewer, msg.options, msg.user_ids.as_deref())
    }
}

impl Handler<UpdateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUser, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, &self.config, msg.acting, &msg.target, msg.update, clock::now())?;
        self.commit(change)
    }
}

impl Handler<DeactivateOwnUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateOwnUser, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_deactivate_own(&self.state, msg.user_id)?;
        self.commit(change)
    }
}

impl Handler<DeactivateUser> for RealmActor {
    /// Deleting messages is not atomic: other requests are served between the batches.
    type Result = ResponseActFuture<Self, ApiResult<()>>;

    fn handle(&mut self, msg: DeactivateUser, _: &mut Self::Context) -> Self::Result {
        let planned = ops::plan_deactivate(&self.state, msg.acting, &msg.target, msg.comment.as_deref());
        let accounts = match planned.and_then(|change| {
            let accounts = change.accounts().to_vec();
            self.commit(change).map(|()| accounts)
        }) {
            Ok(accounts) => accounts,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        // The bots first, then the user (`accounts` has the user first).
        let mut order: Vec<UserId> = accounts[1..].to_vec();
        order.extend(accounts.first());
        deactivation_actions(order, msg.acting, msg.actions)
    }
}

/// The `actions` of a deactivation, account after account: the profile, then the messages.
fn deactivation_actions(
    mut accounts: Vec<UserId>,
    acting: UserId,
    actions: DeactivationActions,
) -> ResponseActFuture<RealmActor, ApiResult<()>> {
    if accounts.is_empty() {
        return Box::pin(fut::ready(Ok(())));
    }
    let account = accounts.remove(0);
    let this_one = move |(),
                         actor: &mut RealmActor,
                         _: &mut Context<RealmActor>|
          -> ResponseActFuture<RealmActor, ApiResult<()>> {
        if actions.delete_profile {
            if let Err(e) = actor.delete_profile(acting, account) {
                return Box::pin(fut::ready(Err(e)));
            }
        }
        let Some(selection) = sent_messages(&actor.state, account, actions) else {
            return deactivation_actions(accounts, acting, actions);
        };
        let rest = move |done: ApiResult<usize>, _: &mut RealmActor, _: &mut Context<RealmActor>| match done {
            Ok(_) => deactivation_actions(accounts, acting, actions),
            Err(e) => Box::pin(fut::ready(Err(e))) as ResponseActFuture<RealmActor, ApiResult<()>>,
        };
        Box::pin(purge(selection, Some(acting)).then(rest))
    };
    Box::pin(fut::ready(()).then(this_one))
}

/// The messages `account` sent that `actions` deletes, if any: in public channels (Zulip's
/// `get_public_streams_queryset`: open, with shared history), in the others, directly; up
/// to the last message sent now.
fn sent_messages(state: &RealmState, account: UserId, actions: DeactivationActions) -> Option<Selection> {
    let DeactivationActions {
        delete_public_channel_messages: public, delete_private_channel_messages: private, ..
    } = actions;
    let direct = actions.delete_direct_messages;
    if !(public || private || direct) {
        return None;
    }
    let is_public = |c: &Channel| !c.invite_only && c.history_public_to_subscribers;
    let channels = state.channels().filter(|c| if is_public(c) { public } else { private }).map(|c| c.id).collect();
    let below = MessageId(state.last_message_id().0 + 1);
    Some(Selection::SentBy { sender: account, channels, direct, below })
}

impl RealmActor {
    /// A deleted profile: "Deleted user", and no uploaded avatar.
    fn delete_profile(&mut self, acting: UserId, account: UserId) -> ApiResult<()> {
        let renamed = ops::plan_deleted_profile(&self.state, acting, account)?;
        self.commit(renamed)?;
        if let Some(avatar) = plan_remove(&self.state, account)? {
            self.commit(avatar)?;
        }
        Ok(())
    }
}

impl Handler<ReactivateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReactivateUser, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_reactivate(&self.state, msg.acting, &msg.target)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
