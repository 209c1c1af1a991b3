//! Invitations (spec 4.10; Zulip's `zerver/views/invite.py` and `zerver/actions/invites.py`):
//! by email and as reusable links, listed, revoked and mailed again. Each invitation mail is
//! queued in the outbox with the invitation and the mail worker woken once committed.
//! Joining through a link is `realm::onboarding`.

pub mod format;
pub mod links;
pub mod mail;
pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use ops::{InviteRequest, NewInvites};

use crate::clock;
use crate::error::ApiResult;
use crate::realm::actor::RealmActor;

/// `POST /invites`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SendInvites {
    pub acting: crate::ids::UserId,
    pub request: InviteRequest,
}

/// `GET /invites`: the invitations the user controls.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListInvites {
    pub acting: crate::ids::UserId,
}

/// `DELETE /invites/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RevokeInvite {
    pub acting: crate::ids::UserId,
    pub id: i64,
}

/// `POST /invites/{id}/resend`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ResendInvite {
    pub acting: crate::ids::UserId,
    pub id: i64,
}

/// `POST /invites/multiuse`: replies with the link.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct CreateInviteLink {
    pub acting: crate::ids::UserId,
    pub request: InviteRequest,
}

/// `DELETE /invites/multiuse/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RevokeInviteLink {
    pub acting: crate::ids::UserId,
    pub id: i64,
}

impl Handler<SendInvites> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SendInvites, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_invite(&self.state, &self.config, msg.acting, &msg.request, clock::now())?;
        let skipped = self.commit(change)?;
        self.config.mail.wake();
        NewInvites::skipped_error(&skipped).map_or(Ok(()), Err)
    }
}

impl Handler<ListInvites> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListInvites, _: &mut Self::Context) -> Self::Result {
        let viewer = crate::realm::permissions::require_member(&self.state, msg.acting)?;
        Ok(format::list_invites(&self.state, &self.config, viewer, clock::now()))
    }
}

impl Handler<RevokeInvite> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RevokeInvite, _: &mut Self::Context) -> Self::Result {
        let change = links::plan_revoke(&self.state, msg.acting, msg.id)?;
        self.commit(change)
    }
}

impl Handler<ResendInvite> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ResendInvite, _: &mut Self::Context) -> Self::Result {
        let change = links::plan_resend(&self.state, &self.config, msg.acting, msg.id, clock::now())?;
        self.commit(change)?;
        self.config.mail.wake();
        Ok(())
    }
}

impl Handler<CreateInviteLink> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: CreateInviteLink, _: &mut Self::Context) -> Self::Result {
        let change = links::plan_link(&self.state, &self.config, msg.acting, &msg.request, clock::now())?;
        self.commit(change)
    }
}

impl Handler<RevokeInviteLink> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RevokeInviteLink, _: &mut Self::Context) -> Self::Result {
        let change = links::plan_revoke_link(&self.state, msg.acting, msg.id)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
