//! The authentication index a realm actor publishes after each change it commits, so HTTP
//! workers authenticate requests without a round trip through the actor.

use std::sync::Arc;

use imbl::ordmap::DiffItem;
use imbl::{HashMap, OrdMap};

use crate::error::ApiError;
use crate::ids::{RealmId, UserId};
use crate::realm::model::{Role, User, INCOMING_WEBHOOK_BOT};
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
    /// Lower-cased delivery email -> entry (a persistent map: the next snapshot shares all
    /// but the entries that changed).
    by_email: HashMap<String, Arc<AuthEntry>>,
    /// API key -> entry (incoming webhooks name their user by key alone).
    by_key: HashMap<String, Arc<AuthEntry>>,
    /// The users it was made from, to tell next time which of them changed.
    users: OrdMap<UserId, Arc<User>>,
}

/// A user's entry, under its key.
fn entry_of(u: &User) -> (String, Arc<AuthEntry>) {
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
        let by_email: HashMap<String, Arc<AuthEntry>> = state.users().map(entry_of).collect();
        let by_key = by_email.values().map(|e| (e.api_key.clone(), Arc::clone(e))).collect();
        let (realm_id, realm_deactivated) = (state.realm().id, state.realm().deactivated);
        AuthSnapshot { realm_id, realm_deactivated, by_email, by_key, users: state.user_map().clone() }
    }

    /// The index of `state`, made from this one by redoing only the entries of the users
    /// that changed since (the same as [`AuthSnapshot::of`], without the work that grows
    /// with the organization).
    pub fn updated(&self, state: &RealmState) -> Self {
        let (mut by_email, mut by_key) = (self.by_email.clone(), self.by_key.clone());
        let changes: Vec<_> = self.users.diff(state.user_map()).collect();
        // Every old key goes before any new one comes: two users may swap addresses.
        for change in &changes {
            if let DiffItem::Update { old: (_, user), .. } | DiffItem::Remove(_, user) = change {
                by_email.remove(&user.delivery_email.to_lowercase());
                by_key.remove(&user.api_key);
            }
        }
        for change in &changes {
            if let DiffItem::Update { new: (_, user), .. } | DiffItem::Add(_, user) = change {
                let (key, entry) = entry_of(user);
                by_key.insert(entry.api_key.clone(), Arc::clone(&entry));
                by_email.insert(key, entry);
            }
        }
        let (realm_id, realm_deactivated) = (state.realm().id, state.realm().deactivated);
        AuthSnapshot { realm_id, realm_deactivated, by_email, by_key, users: state.user_map().clone() }
    }

    /// The account with this delivery email, compared case-insensitively.
    pub fn by_delivery_email(&self, email: &str) -> Option<&Arc<AuthEntry>> {
        self.by_email.get(&email.to_lowercase())
    }

    /// The account with this id (a web session names its user by id).
    pub fn by_id(&self, id: UserId) -> Option<&Arc<AuthEntry>> {
        self.by_delivery_email(&self.users.get(&id)?.delivery_email)
    }

    /// Checks HTTP Basic credentials (already split and trimmed) against this realm,
    /// in Zulip's order: key format, key and email, organization, account, webhook bots.
    /// The key is compared in constant time.
    pub fn check_api_key(&self, email: &str, api_key: &str) -> Result<Arc<AuthEntry>, KeyRejection> {
        self.check_basic(email, api_key, false)
    }

    /// [`Self::check_api_key`] for an incoming webhook's endpoint, where incoming-webhook
    /// bots are who the credentials are for.
    pub fn check_webhook_basic(&self, email: &str, api_key: &str) -> Result<Arc<AuthEntry>, KeyRejection> {
        self.check_basic(email, api_key, true)
    }

    fn check_basic(&self, email: &str, api_key: &str, webhook: bool) -> Result<Arc<AuthEntry>, KeyRejection> {
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
        if !webhook && entry.bot_type == Some(INCOMING_WEBHOOK_BOT) {
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
        // Found by the key itself: nothing is left to compare.
        let entry =
            self.by_key.get(api_key).ok_or_else(|| ApiError::new(ErrorCode::InvalidApiKey, 401, "Invalid API key"))?;
        if self.realm_deactivated {
            return Err(ApiError::new(ErrorCode::RealmDeactivated, 401, "This organization has been deactivated"));
        }
        if !entry.is_active {
            return Err(ApiError::new(ErrorCode::UserDeactivated, 401, "Account is deactivated"));
        }
        Ok(Arc::clone(entry))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realm::fixture_tests::{human, organization};

    /// Every lookup the HTTP layer makes, for comparing two snapshots.
    fn entries(snapshot: &AuthSnapshot) -> Vec<(String, AuthEntry)> {
        let mut all: Vec<(String, AuthEntry)> =
            snapshot.by_email.iter().map(|(k, v)| (k.clone(), (**v).clone())).collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    fn keys(snapshot: &AuthSnapshot) -> Vec<(String, AuthEntry)> {
        let mut all: Vec<(String, AuthEntry)> =
            snapshot.by_key.iter().map(|(k, v)| (k.clone(), (**v).clone())).collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    #[test]
    fn an_updated_snapshot_is_the_snapshot_of_the_new_state() {
        let key = |c: char| c.to_string().repeat(32);
        let mut state = organization();
        let a = human(&mut state, UserId(10), "a@acme.test", "A", &key('a'), Role::Owner);
        let b = human(&mut state, UserId(11), "B@acme.test", "B", &key('b'), Role::Member);
        human(&mut state, UserId(12), "c@acme.test", "C", &key('c'), Role::Member);
        let before = AuthSnapshot::of(&state);

        // Two users swap addresses, one is deactivated, one changes key, one is added.
        let mut first = state.user(a).unwrap().clone();
        let mut second = state.user(b).unwrap().clone();
        std::mem::swap(&mut first.delivery_email, &mut second.delivery_email);
        second.is_active = false;
        state.put_user(first);
        state.put_user(second);
        state.user_mut(UserId(12)).unwrap().api_key = key('z');
        human(&mut state, UserId(13), "d@acme.test", "D", &key('d'), Role::Member);

        let updated = before.updated(&state);
        assert_eq!(entries(&updated), entries(&AuthSnapshot::of(&state)));
        // The index by key (incoming webhooks) follows too: the old key is gone.
        assert_eq!(keys(&updated), keys(&AuthSnapshot::of(&state)));
        assert!(updated.by_key.get(&key('c')).is_none());
        assert_eq!(updated.by_key.get(&key('z')).unwrap().user_id, UserId(12));
        assert_eq!(updated.by_delivery_email("a@ACME.test").unwrap().user_id, b);
        assert!(updated.check_api_key("c@acme.test", &key('c')).is_err());
        assert_eq!(updated.check_api_key("d@acme.test", &key('d')).unwrap().user_id, UserId(13));
        // The old snapshot is untouched.
        assert_eq!(before.by_delivery_email("a@acme.test").unwrap().user_id, a);
    }
}
