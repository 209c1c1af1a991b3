//! Password resets from the sign-in page ("Forgot password?"): a link mailed through the
//! outbox to an active person's address (nothing is said either way, so the form tells no
//! one which addresses have accounts), usable once within a day, which sets a new password
//! and ends every web session of the account.

pub mod ops;

use actix::prelude::*;

use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;
use crate::realm::actor::RealmActor;

pub use ops::{ResetProblem, RESET_LINK_SECS};

/// Mails a reset link to `email` if it is an active person's account of this organization.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RequestPasswordReset {
    pub email: String,
}

/// Sets the password of the account a reset link is for, using the link up (with every
/// other of the account's links) and ending the account's web sessions; the account, or
/// why the link cannot be used.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Result<UserId, ResetProblem>>")]
pub struct ResetPassword {
    pub token: String,
    pub password_hash: String,
}

impl Handler<RequestPasswordReset> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RequestPasswordReset, _: &mut Self::Context) -> Self::Result {
        let Some(change) = ops::plan_request(&self.state, &self.config, &msg.email, clock::now()) else {
            return Ok(());
        };
        self.commit(change)?;
        self.config.mail.wake();
        Ok(())
    }
}

impl Handler<ResetPassword> for RealmActor {
    type Result = ApiResult<Result<UserId, ResetProblem>>;

    fn handle(&mut self, msg: ResetPassword, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_reset(&self.state, msg.token, msg.password_hash, clock::now());
        self.commit(change)
    }
}
