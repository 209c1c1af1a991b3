//! Joining through an invitation link (Zulip's `accounts_register` with a confirmation
//! key): what the sign-up page shows for a key, and the account its form creates.

use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::realm::invite_data::{Invite, InviteStatus};
use crate::realm::invites::ops::{email_error, existing_user_error};
use crate::realm::state::RealmState;
use crate::realm::users::create::{plan_account, NewAccount};
use crate::realm::users::NewUser;
use crate::validate;

use super::member::NewMember;

/// Why a link cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkProblem {
    /// No invitation has this key (or it is malformed).
    Unknown,
    Expired,
    /// An email invitation whose account exists.
    Used,
    Revoked,
    /// The organization is deactivated.
    RealmDeactivated,
}

/// What the sign-up page of a link shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInfo {
    pub realm_name: String,
    /// The organization's URL (to enter in a Zulip app).
    pub realm_url: String,
    /// The invited address (email invitations); reusable links ask for one.
    pub email: Option<String>,
}

/// The sign-up form as submitted (the password already hashed off the actor thread, or
/// found too weak and not hashed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignUp {
    pub key: String,
    /// Reusable links only.
    pub email: Option<String>,
    pub full_name: String,
    pub password_hash: Option<String>,
    /// `Some(message)` when the password was refused (empty, too long, too weak).
    pub password_error: Option<String>,
}

/// The fields of a refused form with their messages, in the form's order.
pub type FieldErrors = Vec<(&'static str, String)>;

/// What submitting the form leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinOutcome {
    /// The link cannot be used.
    Link(LinkProblem),
    /// The form is refused: its fields' errors.
    Form(FieldErrors),
}

/// The usable invitation of a key at `now`, or why there is none (Zulip's
/// `get_object_from_key`: length, existence, expiry, then used or revoked).
pub fn usable_invite<'s>(state: &'s RealmState, key: &str, now: i64) -> Result<&'s Invite, LinkProblem> {
    if state.realm().deactivated {
        return Err(LinkProblem::RealmDeactivated);
    }
    if key.len() != 24 {
        return Err(LinkProblem::Unknown);
    }
    let invite = state.invites().by_key(key).ok_or(LinkProblem::Unknown)?;
    match invite.status {
        InviteStatus::Revoked => Err(LinkProblem::Revoked),
        _ if invite.expired(now) => Err(LinkProblem::Expired),
        InviteStatus::Used => Err(LinkProblem::Used),
        InviteStatus::Usable => Ok(invite),
    }
}

/// What the page of a link shows, or why the link cannot be used.
pub fn link_info(state: &RealmState, config: &ServerConfig, key: &str, now: i64) -> Result<LinkInfo, LinkProblem> {
    let invite = usable_invite(state, key, now)?;
    Ok(LinkInfo {
        realm_name: state.realm().name.clone(),
        realm_url: config.realm_url(&state.realm().subdomain),
        email: invite.email.clone(),
    })
}

/// Plans the account a submitted form creates, with the invitation's role, channels and
/// groups; or why not. The checks: the link, the address (reusable links: valid, free),
/// then the full name and the password, all reported together.
pub fn plan_join(
    state: &RealmState,
    config: &ServerConfig,
    form: &SignUp,
    now: i64,
) -> ApiResult<Result<(NewMember, Invite), JoinOutcome>> {
    let invite = match usable_invite(state, &form.key, now) {
        Ok(invite) => invite,
        Err(problem) => return Ok(Err(JoinOutcome::Link(problem))),
    };
    let mut errors: FieldErrors = Vec::new();
    let email = match &invite.email {
        Some(email) => email.clone(),
        None => form.email.as_deref().unwrap_or("").trim().to_owned(),
    };
    if invite.multiuse {
        if email.is_empty() {
            errors.push(("email", "This field is required.".to_owned()));
        } else if let Some(reason) = email_error(&email) {
            errors.push(("email", reason.to_owned()));
        } else if let Some((reason, _)) = existing_user_error(state, &email) {
            errors.push(("email", reason.to_owned()));
        }
    } else if let Some((reason, _)) = existing_user_error(state, &email) {
        errors.push(("email", reason.to_owned()));
    }
    if form.full_name.trim().is_empty() {
        errors.push(("full_name", "This field is required.".to_owned()));
    } else if let Err(e) = validate::full_name(&form.full_name) {
        errors.push(("full_name", e.msg));
    }
    if let Some(problem) = &form.password_error {
        errors.push(("password", problem.clone()));
    }
    if !errors.is_empty() {
        return Ok(Err(JoinOutcome::Form(errors)));
    }
    let new = NewUser::human(&email, &form.full_name, invite.invited_as, form.password_hash.clone());
    let account: NewAccount = plan_account(state, config, &new, now);
    Ok(Ok((NewMember::plan(state, account, Some(invite)), invite.clone())))
}
