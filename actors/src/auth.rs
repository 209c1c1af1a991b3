//! The authentication index a realm actor publishes after each change it commits, so HTTP
//! workers authenticate requests without a round trip through the actor.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::ApiError;
use crate::ids::{RealmId, UserId};
use crate::realm::model::{Role, INCOMING_WEBHOOK_BOT};
use crate::realm::state::RealmState;
use crate::secrets::{has_api_key_format, secrets_equal};
use crate::store::{self, Store};

/// What a request needs to know about its authenticated user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthEntry {
    pub user_id: UserId,
    pub delivery_email: String,
    pub api_key: String,
    pub role: Role,
    pub is_active: bool,
    pub is_bot: bool,
    pub bot_type: Option<i64>,
    /// May create users through the API (`POST /users`).
    pub can_create_users: bool,
    /// For `fetch_api_key`; never logged.
    pub password_hash: Option<Arc<str>>,
}

/// An immutable picture of who may authenticate at one realm.
#[derive(Debug, Clone)]
pub struct AuthSnapshot {
    pub realm_id: RealmId,
    pub realm_deactivated: bool,
    /// Lower-cased delivery email -> entry.
    by_email: HashMap<String, Arc<AuthEntry>>,
    /// API key -> entry (incoming webhooks name their user by key alone).
    by_key: HashMap<String, Arc<AuthEntry>>,
}

/// Why HTTP Basic credentials were refused.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyRejection {
    /// Not a valid email/key pair of this realm: ask [`explain_foreign_key`] what it is.
    Unknown,
    /// A valid pair that may not be used: the error to answer with.
    Refused(ApiError),
}

impl AuthSnapshot {
    /// The index of a realm's current state.
    pub fn of(state: &RealmState) -> Self {
        let by_email: HashMap<String, Arc<AuthEntry>> = state
            .users()
            .map(|u| {
                let entry = AuthEntry {
                    user_id: u.id,
                    delivery_email: u.delivery_email.clone(),
                    api_key: u.api_key.clone(),
                    role: u.role,
                    is_active: u.is_active,
                    is_bot: u.is_bot,
                    bot_type: u.bot_type,
                    can_create_users: u.can_create_users,
                    password_hash: u.password_hash.as_deref().map(Arc::from),
                };
                (u.delivery_email.to_lowercase(), Arc::new(entry))
            })
            .collect();
        let by_key = by_email.values().map(|e: &Arc<AuthEntry>| (e.api_key.clone(), Arc::clone(e))).collect();
        AuthSnapshot { realm_id: state.realm().id, realm_deactivated: state.realm().deactivated, by_email, by_key }
    }

    /// The account with this delivery email, compared case-insensitively.
    pub fn by_delivery_email(&self, email: &str) -> Option<&Arc<AuthEntry>> {
        self.by_email.get(&email.to_lowercase())
    }

    /// Checks HTTP Basic credentials (already split and trimmed) against this realm,
    /// in Zulip's order: key format, key and email, organization, account, webhook bots.
    /// The key is compared in constant time.
    pub fn check_api_key(&self, email: &str, api_key: &str) -> Result<Arc<AuthEntry>, KeyRejection> {
        if !has_api_key_format(api_key) {
            return Err(KeyRejection::Refused(ApiError::unauthorized("Malformed API key")));
        }
        let entry = match self.by_delivery_email(email) {
            Some(entry) if secrets_equal(&entry.api_key, api_key) => entry,
            _ => return Err(KeyRejection::Unknown),
        };
        if self.realm_deactivated {
            return Err(KeyRejection::Refused(ApiError::unauthorized("This organization has been deactivated")));
        }
        if !entry.is_active {
            return Err(KeyRejection::Refused(ApiError::unauthorized("Account is deactivated")));
        }
        if entry.bot_type == Some(INCOMING_WEBHOOK_BOT) {
            return Err(KeyRejection::Refused(ApiError::unauthorized(
                "This API is not available to incoming webhook bots.",
            )));
        }
        Ok(Arc::clone(entry))
    }
}

impl AuthSnapshot {
    /// Checks the API key of an incoming webhook (Zulip's `validate_api_key` for webhooks):
    /// any active account of this organization, incoming-webhook bots included.
    pub fn check_webhook_key(&self, api_key: &str) -> Result<Arc<AuthEntry>, ApiError> {
        use crate::error::ErrorCode;
        let api_key = api_key.trim();
        if !has_api_key_format(api_key) {
            return Err(ApiError::new(ErrorCode::InvalidApiKey, 401, "Malformed API key"));
        }
        let entry = self
            .by_key
            .get(api_key)
            .filter(|e| secrets_equal(&e.api_key, api_key))
            .ok_or_else(|| ApiError::new(ErrorCode::InvalidApiKey, 401, "Invalid API key"))?;
        if self.realm_deactivated {
            return Err(ApiError::new(ErrorCode::RealmDeactivated, 401, "This organization has been deactivated"));
        }
        if !entry.is_active {
            return Err(ApiError::new(ErrorCode::UserDeactivated, 401, "Account is deactivated"));
        }
        Ok(Arc::clone(entry))
    }

    /// Checks HTTP Basic credentials of an incoming webhook: as [`Self::check_api_key`],
    /// incoming-webhook bots allowed.
    pub fn check_webhook_basic(&self, email: &str, api_key: &str) -> Result<Arc<AuthEntry>, ApiError> {
        let entry = self.check_webhook_key(api_key)?;
        if entry.delivery_email.to_lowercase() != email.trim().to_lowercase() {
            return Err(ApiError::new(crate::error::ErrorCode::InvalidApiKey, 401, "Invalid API key"));
        }
        Ok(entry)
    }
}

/// The error for credentials this realm does not know: Zulip's API keys are global, so a
/// valid pair of another organization is "not associated with this subdomain" (or that
/// account's own deactivation), anything else an invalid key. Reads the database: call it
/// off the async threads, and only on the failure path.
pub fn explain_foreign_key(store: &Store, realm_id: RealmId, email: &str, api_key: &str) -> ApiError {
    let found = store.conn().map_err(ApiError::from).and_then(|conn| {
        let user = store::users::by_api_key(&conn, api_key)?;
        let realm = match &user {
            Some(u) => store::realms::by_id(&conn, u.realm_id)?,
            None => None,
        };
        Ok((user, realm))
    });
    match found {
        Ok((Some(user), Some(realm)))
            if user.realm_id != realm_id && user.delivery_email.to_lowercase() == email.to_lowercase() =>
        {
            if realm.deactivated {
                ApiError::unauthorized("This organization has been deactivated")
            } else if !user.is_active {
                ApiError::unauthorized("Account is deactivated")
            } else {
                ApiError::unauthorized("Account is not associated with this subdomain")
            }
        }
        Ok(_) => ApiError::unauthorized("Invalid API key"),
        Err(e) => e,
    }
}
