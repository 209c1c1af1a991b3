//! Reusable invitation links (`POST /invites/multiuse`), revoking invitations of both kinds
//! and mailing an invitation again (`POST /invites/{id}/resend`).

use rusqlite::Transaction;

use super::mail::{invitation_mail, invite_link};
use super::ops::{check_daily_limit, check_inviter, check_targets, invites_changed, new_invite, InviteRequest};
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::ids::{RealmId, UserId};
use crate::realm::invite_data::{Invite, InviteStatus};
use crate::realm::model::{Role, User};
use crate::realm::permissions::require_member;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::{self, outbox::NewMail};

/// A new reusable link, planned; replies with the link.
#[derive(Debug, Clone)]
pub struct NewLink {
    realm_id: RealmId,
    invite: Invite,
    link_base: String,
}

/// Plans `POST /invites/multiuse` in Zulip's order of checks.
pub fn plan_link(
    state: &RealmState,
    config: &ServerConfig,
    acting: UserId,
    req: &InviteRequest,
    now: i64,
) -> ApiResult<NewLink> {
    let acting = check_inviter(state, acting, "create_multiuse_invite_group", req)?;
    let targets = check_targets(state, acting, req)?;
    let invite = new_invite(acting, req, None, &targets, now);
    let link_base = invite_link(config, state, &invite);
    Ok(NewLink { realm_id: state.realm().id, invite, link_base })
}

impl Change for NewLink {
    type Output = String;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.invite.id = store::invites::insert(tx, self.realm_id, &self.invite)?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<String> {
        let referrer = self.invite.referred_by;
        state.invites_mut().put(self.invite);
        Applied::new(self.link_base, vec![invites_changed(state, Some(referrer))])
    }
}

fn no_such_invitation() -> ApiError {
    ApiError::bad_request("No such invitation")
}

/// Acting on someone else's invitation needs the administrator role (and the owner role
/// for an invitation of owners).
fn check_controls(acting: &User, invite: &Invite) -> ApiResult<()> {
    if invite.referred_by != acting.id {
        if invite.invited_as == Role::Owner && acting.role != Role::Owner {
            return Err(ApiError::must_be_owner());
        }
        if !acting.role.is_admin() {
            return Err(ApiError::bad_request("Must be an organization administrator"));
        }
    }
    Ok(())
}

/// Zulip's `access_invite_by_id`: an email invitation of the organization, usable (a
/// revoked one is gone in Zulip), that `acting` controls.
fn access_invite<'s>(state: &'s RealmState, acting: &User, id: i64) -> ApiResult<&'s Invite> {
    let invite = state
        .invites()
        .get(id)
        .filter(|i| !i.multiuse && i.status == InviteStatus::Usable)
        .ok_or_else(no_such_invitation)?;
    check_controls(acting, invite)?;
    Ok(invite)
}

/// An invitation's new status (revoked).
#[derive(Debug, Clone)]
pub struct Revocation {
    invite: Invite,
}

/// Plans `DELETE /invites/{id}`.
pub fn plan_revoke(state: &RealmState, acting: UserId, id: i64) -> ApiResult<Revocation> {
    let acting = require_member(state, acting)?;
    let invite = access_invite(state, acting, id)?;
    Ok(Revocation { invite: Invite { status: InviteStatus::Revoked, ..invite.clone() } })
}

/// Plans `DELETE /invites/multiuse/{id}` (Zulip's `access_multiuse_invite_by_id`).
pub fn plan_revoke_link(state: &RealmState, acting: UserId, id: i64) -> ApiResult<Revocation> {
    let acting = require_member(state, acting)?;
    let invite = state.invites().get(id).filter(|i| i.multiuse).ok_or_else(no_such_invitation)?;
    check_controls(acting, invite)?;
    if invite.status == InviteStatus::Revoked {
        return Err(ApiError::bad_request("Invitation has already been revoked"));
    }
    Ok(Revocation { invite: Invite { status: InviteStatus::Revoked, ..invite.clone() } })
}

impl Change for Revocation {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::invites::set_status(tx, self.invite.id, self.invite.status, None)?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let referrer = self.invite.referred_by;
        tracing::info!(realm.id = %state.realm().id, invite.id = self.invite.id, "revoked invitation");
        state.invites_mut().put(self.invite);
        Applied::events(vec![invites_changed(state, Some(referrer))])
    }
}

/// An invitation mailed again.
#[derive(Debug, Clone)]
pub struct Resend {
    realm_id: RealmId,
    mail: NewMail,
    now: i64,
}

/// Plans `POST /invites/{id}/resend`: the same link, mailed again (it counts against the
/// daily limit).
pub fn plan_resend(state: &RealmState, config: &ServerConfig, acting: UserId, id: i64, now: i64) -> ApiResult<Resend> {
    let acting = require_member(state, acting)?;
    let invite = access_invite(state, acting, id)?;
    check_daily_limit(state, config, 1, now)?;
    let referrer = state.user(invite.referred_by).ok_or_else(no_such_invitation)?;
    Ok(Resend { realm_id: state.realm().id, mail: invitation_mail(state, config, referrer, invite), now })
}

impl Change for Resend {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::outbox::enqueue(tx, &self.mail, self.now)?;
        Ok(store::invites::record_sends(tx, self.realm_id, self.now, 1)?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        state.invites_mut().note_sends(self.now, 1);
        Applied::events(Vec::new())
    }
}
