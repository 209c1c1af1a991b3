//! New members: joining through an invitation link, and what every new human account gets
//! (Zulip's `do_create_user` and `process_new_human_user`): the default channels (with
//! `peer_add` for the others), the invitation's channels, groups and role, the inviter's
//! notice, the signup announcement and Welcome Bot's messages. `POST /users` and the
//! command line create accounts through here too.

pub mod join;
pub mod member;
#[cfg(feature = "test-support")]
pub mod testing;

use actix::prelude::*;

pub use join::{FieldErrors, JoinOutcome, LinkInfo, LinkProblem, SignUp};
pub use member::NewMember;

use crate::clock;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::ids::UserId;
use crate::realm::actor::RealmActor;
use crate::realm::commit;
use crate::realm::group_commit::{Deferred, Plan};
use crate::realm::invite_data::Invite;
use crate::realm::notices::new_user_notices;
use crate::realm::state::RealmState;
use crate::realm::users::create::{plan_create_user, plan_create_user_as};
use crate::realm::users::{CreateUser, CreateUserAs, CreatedUser, NewUser};
use crate::store::Store;

/// What the sign-up page of an invitation link shows, or why it cannot be used.
#[derive(Message, Debug)]
#[rtype(result = "Result<LinkInfo, LinkProblem>")]
pub struct CheckInviteLink {
    pub key: String,
}

/// The sign-up form of an invitation link, submitted.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Result<CreatedUser, JoinOutcome>>")]
pub struct JoinOrganization(pub SignUp);

impl RealmActor {
    /// Commits a new member, then posts what the system bots say about it.
    fn welcome(&mut self, member: NewMember, invite: Option<Invite>) -> ApiResult<CreatedUser> {
        let human = member_is_human(&member);
        let created = self.commit(member)?;
        if human {
            if let Some(user) = self.state.user(created.user_id).cloned() {
                let notices = new_user_notices(&self.state, &user, invite.as_ref());
                self.post_notices(notices);
            }
        }
        Ok(created)
    }
}

impl RealmActor {
    /// After a group commit that created an account without an invitation: what the system
    /// bots say about a new human.
    fn welcome_created(&mut self, created: &CreatedUser) {
        if let Some(user) = self.state.user(created.user_id).filter(|u| u.bot_type.is_none()).cloned() {
            let notices = new_user_notices(&self.state, &user, None);
            self.post_notices(notices);
        }
    }
}

fn member_is_human(member: &NewMember) -> bool {
    member.account().user().bot_type.is_none()
}

impl Handler<CheckInviteLink> for RealmActor {
    type Result = Result<LinkInfo, LinkProblem>;

    fn handle(&mut self, msg: CheckInviteLink, _: &mut Self::Context) -> Self::Result {
        join::link_info(&self.state, &self.config, &msg.key, clock::now())
    }
}

impl Handler<JoinOrganization> for RealmActor {
    type Result = ApiResult<Result<CreatedUser, JoinOutcome>>;

    fn handle(&mut self, msg: JoinOrganization, _: &mut Self::Context) -> Self::Result {
        let (member, invite) = match join::plan_join(&self.state, &self.config, &msg.0, clock::now())? {
            Ok(planned) => planned,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let invite = member.invite().cloned().or(Some(invite));
        self.welcome(member, invite).map(Ok)
    }
}

impl Handler<CreateUser> for RealmActor {
    /// Waits for the group commit, as sends do.
    type Result = Deferred<ApiResult<CreatedUser>>;

    fn handle(&mut self, msg: CreateUser, ctx: &mut Self::Context) -> Self::Result {
        let plan: Plan<CreateUser, NewMember> = |actor, msg| {
            let account = plan_create_user(&actor.state, &actor.config, &msg.0, clock::now())?;
            Ok(NewMember::plan(&actor.state, account, None))
        };
        self.defer_then(ctx, msg, plan, Some(RealmActor::welcome_created))
    }
}

impl Handler<CreateUserAs> for RealmActor {
    /// Waits for the group commit, as sends do.
    type Result = Deferred<ApiResult<CreatedUser>>;

    fn handle(&mut self, msg: CreateUserAs, ctx: &mut Self::Context) -> Self::Result {
        let plan: Plan<CreateUserAs, NewMember> = |actor, msg| {
            let acting = actor.viewer(msg.acting)?;
            let (new, weak) = (&msg.new, msg.password_too_weak);
            let account = plan_create_user_as(&actor.state, &actor.config, acting, new, weak, clock::now())?;
            Ok(NewMember::plan(&actor.state, account, None))
        };
        self.defer_then(ctx, msg, plan, Some(RealmActor::welcome_created))
    }
}

/// Creates an account outside any actor (the command line on a stopped server), as the
/// realm actor does: default channels and the system bots' messages included. Returns the
/// account and every event (nobody is listening).
pub fn create_member(
    state: &mut RealmState,
    store: &Store,
    config: &ServerConfig,
    new: NewUser,
    now: i64,
) -> ApiResult<CreatedUser> {
    let account = plan_create_user(state, config, &new, now)?;
    let member = NewMember::plan(state, account, None);
    let human = member_is_human(&member);
    let created = commit(state, store, member)?.output;
    if human {
        post_welcome(state, store, created.user_id, now);
    }
    Ok(created)
}

/// Posts, outside any actor, what the system bots say about a new human account (Welcome
/// Bot's messages; the signup announcement once there is someone to tell): for accounts made
/// on a stopped server and for an organization's first owner, whom Zulip welcomes as it
/// welcomes everyone after. A notice that cannot be posted is logged, never fatal.
pub fn post_welcome(state: &mut RealmState, store: &Store, user_id: UserId, now: i64) {
    let Some(user) = state.user(user_id).cloned() else { return };
    for notice in new_user_notices(state, &user, None) {
        let posted = crate::realm::chat::send::plan_notice(state, notice, &Default::default(), now)
            .and_then(|change| commit(state, store, change).map(|_| ()));
        if let Err(e) = posted {
            tracing::warn!(error = %e, "could not post a notice");
        }
    }
}

#[cfg(test)]
mod tests;
