//! The plans of a password reset: the link and its mail, then the new password.

use std::collections::BTreeSet;

use rusqlite::Transaction;

use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::secrets::random_alphanumeric;
use crate::sessions::token_hash;
use crate::store::outbox::NewMail;
use crate::store::web_sessions::{self, ResetRow};
use crate::store::{self};

/// How long a reset link may be used: a day.
pub const RESET_LINK_SECS: i64 = 24 * 3600;

/// Why a reset link cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetProblem {
    /// No such link (or one of another organization, or of an account that can no longer
    /// sign in).
    Unknown,
    Expired,
    Used,
}

/// A reset link and its mail.
#[derive(Debug)]
pub struct NewReset {
    row: ResetRow,
    mail: NewMail,
    now: i64,
}

/// The link for `email`, if it is an active person's account: nothing otherwise (and the
/// caller says nothing either way).
pub fn plan_request(state: &RealmState, config: &ServerConfig, email: &str, now: i64) -> Option<NewReset> {
    let realm = state.realm();
    let user = state.user_by_delivery_email(email.trim()).filter(|u| u.is_active && !u.is_bot && !realm.deactivated)?;
    let token = random_alphanumeric(40);
    let realm_url = config.realm_url(&realm.subdomain);
    let link = format!("{realm_url}/accounts/password/reset/{token}/");
    let body = format!(
        "Somebody (possibly you) asked for a new password for the account {email} of {realm_name} \
         ({realm_url}).\n\n\
         To choose a new password, open the link below.\n    <{link}>\n\n\
         The link works once, within 24 hours. If you did not ask for a new password, you can \
         ignore this mail: your password stays as it is.\n",
        email = user.delivery_email,
        realm_name = realm.name,
    );
    let mail = NewMail {
        realm_id: Some(realm.id),
        kind: "password_reset".to_owned(),
        to: user.delivery_email.clone(),
        from_name: realm.name.clone(),
        subject: format!("Reset your password for {}", realm.name),
        body,
        message_id: format!("{}.password-reset@{}", random_alphanumeric(24), config.fake_email_domain("")),
    };
    let row = ResetRow {
        token_hash: token_hash(&token),
        realm_id: realm.id,
        user_id: user.id,
        created_at: now,
        expires_at: now + RESET_LINK_SECS,
        used_at: None,
    };
    Some(NewReset { row, mail, now })
}

impl Change for NewReset {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        web_sessions::insert_reset(tx, &self.row)?;
        store::outbox::enqueue(tx, &self.mail, self.now)?;
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        tracing::info!(realm.id = %state.realm().id, user.id = %self.row.user_id, "password reset link mailed");
        Applied::new((), Vec::new())
    }
}

/// A new password through a reset link.
#[derive(Debug)]
pub struct Reset {
    realm_id: RealmId,
    token_hash: String,
    password_hash: String,
    /// The accounts that may reset their password now: active people.
    eligible: BTreeSet<UserId>,
    now: i64,
    outcome: Result<UserId, ResetProblem>,
}

/// The reset; the link itself is read (and refused) when it is written.
pub fn plan_reset(state: &RealmState, token: String, password_hash: String, now: i64) -> Reset {
    let eligible = if state.realm().deactivated {
        BTreeSet::new()
    } else {
        state.users().filter(|u| u.is_active && !u.is_bot).map(|u| u.id).collect()
    };
    Reset {
        realm_id: state.realm().id,
        token_hash: token_hash(&token),
        password_hash,
        eligible,
        now,
        outcome: Err(ResetProblem::Unknown),
    }
}

/// Whether a link (its stored row) can be used now by an account of `eligible`.
pub fn check_link(
    row: Option<&ResetRow>,
    realm_id: RealmId,
    eligible: impl Fn(UserId) -> bool,
    now: i64,
) -> Result<UserId, ResetProblem> {
    let row = row.filter(|r| r.realm_id == realm_id && eligible(r.user_id)).ok_or(ResetProblem::Unknown)?;
    if row.used_at.is_some() {
        return Err(ResetProblem::Used);
    }
    if now >= row.expires_at {
        return Err(ResetProblem::Expired);
    }
    Ok(row.user_id)
}

impl Change for Reset {
    type Output = Result<UserId, ResetProblem>;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let row = web_sessions::get_reset(tx, &self.token_hash)?;
        self.outcome = check_link(row.as_ref(), self.realm_id, |u| self.eligible.contains(&u), self.now);
        if let Ok(user_id) = self.outcome {
            store::users::set_password_hash(tx, user_id, Some(&self.password_hash))?;
            web_sessions::use_resets_of(tx, user_id, self.now)?;
            web_sessions::delete_for_user(tx, user_id, None)?;
        }
        Ok(())
    }

    /// No event (Zulip sends none for a password change); the login index takes the hash.
    fn apply(self, state: &mut RealmState) -> Applied<Self::Output> {
        let Ok(user_id) = self.outcome else { return Applied::new(self.outcome, Vec::new()) };
        if let Some(user) = state.user_mut(user_id) {
            user.password_hash = Some(self.password_hash);
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %user_id, "password reset");
        Applied::new(self.outcome, Vec::new()).with_auth()
    }
}
