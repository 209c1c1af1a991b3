//! Users (spec 4.13-4.16): accounts, their creation, keys, listing, updates, deactivation
//! and reactivation. The messages and their handlers; the operations are in `ops` and
//! `create`.

pub mod create;
pub mod ops;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use create::{create_user, regenerate_api_key, regenerate_own_api_key};
pub use create::{CreatedUser, NewUser};
pub use ops::{set_active, StatusChange, UserUpdate};

use super::actor::RealmActor;
use super::format::UserDictOptions;
use crate::clock;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use ops::*;

/// A user as named in a request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserRef {
    Id(UserId),
    /// An API email, or a real email the viewer may see.
    Email(String),
}

/// Creates an account (its password already hashed by the caller).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateUser(pub NewUser);

/// `POST /users`: `acting` creates an account (its password already hashed).
#[derive(Message, Debug)]
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

impl Handler<CreateUser> for RealmActor {
    type Result = ApiResult<CreatedUser>;

    fn handle(&mut self, msg: CreateUser, _: &mut Self::Context) -> Self::Result {
        let change = create::plan_create_user(&self.state, &self.config, &msg.0, clock::now())?;
        self.commit(change)
    }
}

impl Handler<CreateUserAs> for RealmActor {
    type Result = ApiResult<CreatedUser>;

    fn handle(&mut self, msg: CreateUserAs, _: &mut Self::Context) -> Self::Result {
        let acting = self.viewer(msg.acting)?;
        crate::realm::permissions::authorize_user_creation(acting.role, acting.can_create_users)?;
        create::check_new_user(&self.state, &msg.new)?;
        if msg.password_too_weak {
            return Err(ApiError::bad_request("The password is too weak."));
        }
        let change = create::plan_create_user(&self.state, &self.config, &msg.new, clock::now())?;
        self.commit(change)
    }
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
        let change = set_active(&mut self.state, &self.store, msg.user_id, msg.active)?;
        self.status_changed(change);
        Ok(())
    }
}

impl RealmActor {
    /// Publishes a committed status change: the new snapshot, the events, and no more
    /// queues for the accounts it deactivated.
    fn status_changed(&mut self, change: StatusChange) {
        self.committed_auth(change.events);
        if !change.active {
            for user in change.users {
                self.close_queues_of(user);
            }
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
        let access = Access { allow_deactivated: true, allow_bots: true, for_admin: false };
        let target = access_user(&self.state, viewer, &msg.target, access)?;
        Ok(self.state.user_dict(viewer, target, msg.options))
    }
}

impl Handler<ListUsers> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: ListUsers, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        list_users(&self.state, viewer, msg.options, msg.user_ids.as_deref())
    }
}

impl Handler<UpdateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUser, _: &mut Self::Context) -> Self::Result {
        let (state, config) = (&mut self.state, &self.config);
        let events = update_user(state, &self.store, msg.acting, &msg.target, msg.update, config, clock::now())?;
        self.committed_auth(events);
        Ok(())
    }
}

impl Handler<DeactivateOwnUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateOwnUser, _: &mut Self::Context) -> Self::Result {
        let change = deactivate_own_user(&mut self.state, &self.store, msg.user_id)?;
        self.status_changed(change);
        Ok(())
    }
}

impl Handler<DeactivateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateUser, _: &mut Self::Context) -> Self::Result {
        check_deactivation_comment(msg.comment.as_deref())?;
        let change = deactivate_user(&mut self.state, &self.store, msg.acting, &msg.target)?;
        self.status_changed(change);
        Ok(())
    }
}

impl Handler<ReactivateUser> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReactivateUser, _: &mut Self::Context) -> Self::Result {
        let change = reactivate_user(&mut self.state, &self.store, msg.acting, &msg.target)?;
        self.status_changed(change);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
