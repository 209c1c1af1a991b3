//! Password login (`POST /fetch_api_key`): Zulip's checks in Zulip's order, with a limit on
//! attempts per username.
//!
//! The flow is split around the slow part: [`Logins::begin`] checks everything that needs
//! no password hashing, [`PendingLogin::verify`] runs argon2 (call it on a hashing
//! thread), and [`Logins::finish`] turns the verdict into credentials or an error, against
//! the account as it is *then* (it may have changed during the check).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::auth::AuthSnapshot;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::UserId;
use crate::ratelimit::{RateLimiter, Rule};
use crate::secrets::{hash_password, random_alphanumeric, verify_password, HashCost};
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
    /// A hash no password matches, checked when there is no account, so that a missing
    /// account costs exactly one verification like a real one.
    decoy_hash: Arc<str>,
}

/// A login whose password is still to be checked.
#[derive(Debug)]
pub struct PendingLogin {
    username: String,
    limiter_key: String,
    /// The account and its hash; `None` when there is nothing to match.
    target: Option<(UserId, Arc<str>)>,
    decoy_hash: Arc<str>,
}

impl PendingLogin {
    /// Whether `password` is right. Slow (argon2): run it on a hashing thread. Without an
    /// account it checks the decoy hash, taking the same time, and says no.
    pub fn verify(&self, password: &str) -> bool {
        match &self.target {
            Some((_, hash)) => verify_password(password, hash),
            None => {
                let _ = verify_password(password, &self.decoy_hash);
                false
            }
        }
    }
}

impl Logins {
    /// Spends one password verification on nothing (the decoy hash): a page that refuses an
    /// account before checking its password (deactivated) takes as long as a wrong
    /// password does. Slow (argon2): run it on a hashing thread.
    pub fn waste_verification(&self, password: &str) {
        let _ = verify_password(password, &self.decoy_hash);
    }
}

/// Attempts are keyed by the username alone, as Zulip's `authenticate_by_username` rule,
/// without regard to case.
fn limiter_key(username: &str) -> String {
    username.trim().to_lowercase()
}

fn failed() -> ApiError {
    ApiError::new(ErrorCode::AuthenticationFailed, 401, "Your username or password is incorrect")
}

/// Zulip's refusals of an existing account, before or after its password is checked.
fn refuse_unusable(realm: &AuthSnapshot, is_active: bool) -> ApiResult<()> {
    if realm.realm_deactivated {
        return Err(ApiError::new(ErrorCode::RealmDeactivated, 401, "This organization has been deactivated"));
    }
    if !is_active {
        return Err(ApiError::new(ErrorCode::UserDeactivated, 401, "Account is deactivated"));
    }
    Ok(())
}

impl Logins {
    /// At most `rule.max` attempts per username and window; the decoy hash costs what
    /// real ones do (computing it takes one hash: call this off the async threads).
    pub fn new(rule: Rule, cost: HashCost) -> Self {
        let decoy_hash = hash_password(&random_alphanumeric(24), cost).unwrap_or_else(|e| {
            tracing::error!(error = %e, "cannot hash the decoy password");
            String::new()
        });
        Logins { limiter: Mutex::new(RateLimiter::new(rule)), decoy_hash: decoy_hash.into() }
    }

    fn limiter(&self) -> std::sync::MutexGuard<'_, RateLimiter> {
        self.limiter.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a password attempt for `username` made outside a login (the old password of
    /// a password change, which Zulip checks with the same `authenticate` and so the same
    /// per-username rule), or refuses it with the time until one is allowed again.
    pub fn attempt(&self, username: &str, now: Instant) -> Result<(), Duration> {
        self.limiter().attempt(&limiter_key(username), now)
    }

    /// Forgets `username`'s attempts: its password was just proven, as after a login.
    pub fn forget(&self, username: &str) {
        self.limiter().clear(&limiter_key(username));
    }

    /// Everything before the password check: the username must be an email, the attempt must
    /// be within the limit, and an existing account must be active.
    pub fn begin(&self, realm: &AuthSnapshot, username: &str, now: Instant) -> ApiResult<PendingLogin> {
        let username = username.trim();
        if !validate::is_valid_email(username) {
            return Err(ApiError::bad_request("Enter a valid email address."));
        }
        let limiter_key = limiter_key(username);
        if let Err(wait) = self.limiter().attempt(&limiter_key, now) {
            return Err(ApiError::rate_limited(wait.as_secs_f64()));
        }
        let target = match realm.by_delivery_email(username) {
            None => None,
            Some(entry) => {
                refuse_unusable(realm, entry.is_active)?;
                entry.password_hash.clone().map(|hash| (entry.user_id, hash))
            }
        };
        Ok(PendingLogin {
            username: username.to_owned(),
            limiter_key,
            target,
            decoy_hash: Arc::clone(&self.decoy_hash),
        })
    }

    /// The outcome of a checked password, judged against `realm` as it is now: an account
    /// deactivated or given a new key meanwhile is refused or gets the new key. Success
    /// forgets the username's earlier attempts, as Zulip does.
    pub fn finish(&self, realm: &AuthSnapshot, pending: PendingLogin, verified: bool) -> ApiResult<Credentials> {
        let Some((user_id, _)) = pending.target.filter(|_| verified) else {
            return Err(failed());
        };
        let entry = realm.by_delivery_email(&pending.username).filter(|e| e.user_id == user_id).ok_or_else(failed)?;
        refuse_unusable(realm, entry.is_active)?;
        self.limiter().clear(&pending.limiter_key);
        Ok(Credentials { api_key: entry.api_key.clone(), email: entry.delivery_email.clone(), user_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use crate::realm::model::Role;
    use crate::realm::organization::{create_realm, NewRealm};
    use crate::realm::users::{regenerate_api_key, NewUser};
    use crate::store::Store;

    fn realm_with_password() -> (tempfile::TempDir, Store, crate::realm::RealmState) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let hash = hash_password("secret", HashCost::cheapest()).unwrap();
        let new = NewRealm {
            subdomain: "acme".into(),
            name: "Acme".into(),
            owner: NewUser::human("boss@acme.test", "The Boss", Role::Owner, Some(hash)),
        };
        let (_, state) = create_realm(&store, &ServerConfig::default(), new, 0).unwrap();
        (dir, store, state)
    }

    fn logins() -> Logins {
        Logins::new(Rule { max: 5, window: Duration::from_secs(60) }, HashCost::cheapest())
    }

    #[test]
    fn a_missing_account_costs_one_verification_against_a_real_hash() {
        let (_dir, _store, state) = realm_with_password();
        let logins = logins();
        assert!(logins.decoy_hash.starts_with("$argon2id$"));
        let pending = logins.begin(&AuthSnapshot::of(&state), "ghost@acme.test", Instant::now()).unwrap();
        assert!(pending.target.is_none());
        assert!(!pending.verify("secret"));
        assert_eq!(logins.finish(&AuthSnapshot::of(&state), pending, true).unwrap_err().msg, failed().msg);
    }

    #[test]
    fn other_password_checks_count_against_the_same_username() {
        let (_dir, _store, state) = realm_with_password();
        let logins = logins();
        let now = Instant::now();
        for _ in 0..5 {
            assert!(logins.attempt(" Boss@Acme.test ", now).is_ok());
        }
        assert_eq!(logins.attempt("boss@acme.test", now), Err(Duration::from_secs(60)));
        let err = logins.begin(&AuthSnapshot::of(&state), "boss@acme.test", now).unwrap_err();
        assert_eq!(err.code, Some(ErrorCode::RateLimitHit));
        logins.forget("BOSS@acme.test");
        assert!(logins.begin(&AuthSnapshot::of(&state), "boss@acme.test", now).is_ok());
    }

    #[test]
    fn the_outcome_reflects_changes_made_during_the_check() {
        let (_dir, store, mut state) = realm_with_password();
        let logins = logins();
        let owner = state.user_by_delivery_email("boss@acme.test").unwrap().id;

        let pending = logins.begin(&AuthSnapshot::of(&state), "boss@acme.test", Instant::now()).unwrap();
        assert!(pending.verify("secret"));
        let new_key = regenerate_api_key(&mut state, &store, owner).unwrap();
        let creds = logins.finish(&AuthSnapshot::of(&state), pending, true).unwrap();
        assert_eq!(creds, Credentials { api_key: new_key, email: "boss@acme.test".into(), user_id: owner });

        let pending = logins.begin(&AuthSnapshot::of(&state), "boss@acme.test", Instant::now()).unwrap();
        crate::realm::users::set_active(&mut state, &store, owner, false).unwrap();
        let err = logins.finish(&AuthSnapshot::of(&state), pending, true).unwrap_err();
        assert_eq!((err.code, err.status), (Some(ErrorCode::UserDeactivated), 401));
    }
}
