//! Password login (`POST /fetch_api_key`): Zulip's checks in Zulip's order, with a limit on
//! attempts per username.
//!
//! The flow is split around the slow part: [`Logins::begin`] checks everything that needs
//! no password hashing, [`PendingLogin::verify`] runs argon2 (call it on a blocking
//! thread), and [`Logins::finish`] turns the verdict into credentials or an error.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{RealmId, UserId};
use crate::ratelimit::{RateLimiter, Rule};
use crate::realm::snapshot::{AuthEntry, AuthSnapshot};
use crate::secrets::{verify_against_nothing, verify_password, HashCost};
use crate::validate;

/// What a successful login returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub api_key: String,
    /// The delivery email.
    pub email: String,
    pub user_id: UserId,
}

/// Login attempts across all organizations of the server.
#[derive(Debug)]
pub struct Logins {
    limiter: Mutex<RateLimiter>,
    /// Cost of the decoy hash checked when the account does not exist.
    decoy_cost: HashCost,
}

/// A login whose password is still to be checked.
#[derive(Debug)]
pub struct PendingLogin {
    limiter_key: String,
    /// The account and its hash; `None` when there is nothing to match.
    target: Option<(Arc<AuthEntry>, Arc<str>)>,
    decoy_cost: HashCost,
}

impl PendingLogin {
    /// Whether `password` is right. Slow (argon2): run it on a blocking thread. When there is
    /// no account to check, it spends about the same time and says no.
    pub fn verify(&self, password: &str) -> bool {
        match &self.target {
            Some((_, hash)) => verify_password(password, hash),
            None => {
                verify_against_nothing(password, self.decoy_cost);
                false
            }
        }
    }
}

fn failed() -> ApiError {
    ApiError::new(ErrorCode::AuthenticationFailed, 401, "Your username or password is incorrect")
}

impl Logins {
    /// At most `rule.max` attempts per username and window.
    pub fn new(rule: Rule, decoy_cost: HashCost) -> Self {
        Logins { limiter: Mutex::new(RateLimiter::new(rule)), decoy_cost }
    }

    fn limiter(&self) -> std::sync::MutexGuard<'_, RateLimiter> {
        self.limiter.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Everything before the password check: the username must be an email, the attempt must
    /// be within the limit, and the account must exist, be active and have a password.
    pub fn begin(&self, realm: &AuthSnapshot, username: &str, now: Instant) -> ApiResult<PendingLogin> {
        let username = username.trim();
        if !validate::is_valid_email(username) {
            return Err(ApiError::bad_request("Enter a valid email address."));
        }
        let limiter_key = limiter_key(realm.realm_id, username);
        if let Err(wait) = self.limiter().attempt(&limiter_key, now) {
            return Err(ApiError::rate_limited(wait.as_secs_f64()));
        }
        let target = match realm.by_delivery_email(username) {
            None => None,
            Some(_) if realm.realm_deactivated => {
                return Err(ApiError::new(ErrorCode::RealmDeactivated, 401, "This organization has been deactivated"));
            }
            Some(entry) if !entry.is_active => {
                return Err(ApiError::new(ErrorCode::UserDeactivated, 401, "Account is deactivated"));
            }
            Some(entry) => entry.password_hash.clone().map(|hash| (Arc::clone(entry), hash)),
        };
        Ok(PendingLogin { limiter_key, target, decoy_cost: self.decoy_cost })
    }

    /// The outcome of a checked password. Success forgets the username's failed attempts, as
    /// Zulip does.
    pub fn finish(&self, pending: PendingLogin, verified: bool) -> ApiResult<Credentials> {
        match pending.target {
            Some((entry, _)) if verified => {
                self.limiter().clear(&pending.limiter_key);
                Ok(Credentials {
                    api_key: entry.api_key.clone(),
                    email: entry.delivery_email.clone(),
                    user_id: entry.user_id,
                })
            }
            _ => Err(failed()),
        }
    }
}

fn limiter_key(realm: RealmId, username: &str) -> String {
    format!("{realm}:{}", username.to_lowercase())
}
