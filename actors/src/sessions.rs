//! Web sessions: which user a signed-in browser speaks for.
//!
//! Signing in at `/login/` starts a session: a random token in the browser's `HttpOnly`
//! cookie, its SHA-256 in the database (`web_sessions`) with the user, the expiry and a
//! fingerprint of the user's password hash. A request with the cookie is the user's as long
//! as the session has not expired or been ended (sign-out), the account is active in an
//! active organization, and its password is still the one the session began with (a
//! password change ends the other sessions, as Django's session hash does in Zulip).
//!
//! Sessions are kept in memory for a few seconds once read ([`CACHE_FOR`]), so that a
//! signed-in request mostly costs a hash and a map lookup; the database is read again after
//! that (so a session ended elsewhere, by a deactivation in the organization's transaction,
//! ends here within seconds) and written at sign-in and sign-out. Every check of the user is
//! made against the organization's published authentication index, never a copy.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::auth::AuthEntry;
use crate::ids::RealmId;
use crate::secrets::random_alphanumeric;
use crate::store::web_sessions::{self, SessionRow};
use crate::store::{Store, StoreResult};

/// How long a session lasts: two weeks, Django's `SESSION_COOKIE_AGE` as Zulip keeps it.
pub const SESSION_SECS: i64 = 14 * 24 * 3600;

/// How long a session read from the database is trusted before it is read again.
pub const CACHE_FOR: Duration = Duration::from_secs(5);

/// A new session: the token for the browser's cookie and what is stored.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub token: String,
    pub row: Arc<SessionRow>,
}

/// The server's sessions.
#[derive(Debug)]
pub struct Sessions {
    store: Store,
    /// Sessions by their token's hash, with when they were read.
    cache: RwLock<HashMap<String, (Arc<SessionRow>, Instant)>>,
}

/// The SHA-256 of a secret token, as stored.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// A fingerprint of a password hash (itself salted): it changes whenever the password does.
pub fn fingerprint(password_hash: Option<&str>) -> String {
    let digest = Sha256::digest(format!("agora-session:{}", password_hash.unwrap_or("")).as_bytes());
    hex(&digest[..16])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a session still speaks for its user, whose entry in the organization's index is
/// `entry`.
pub fn speaks_for(row: &SessionRow, entry: &AuthEntry, realm_deactivated: bool, now: i64) -> bool {
    now < row.expires_at
        && !realm_deactivated
        && entry.is_active
        && !entry.is_bot
        && row.password_fp == fingerprint(entry.password_hash.as_deref())
}

impl Sessions {
    /// The sessions of `store`.
    pub fn new(store: Store) -> Self {
        Sessions { store, cache: RwLock::new(HashMap::new()) }
    }

    /// Starts a session for `entry` (blocking: a write). Expired sessions are forgotten on
    /// the way.
    pub fn start(&self, realm_id: RealmId, entry: &AuthEntry, now: i64) -> StoreResult<NewSession> {
        let token = random_alphanumeric(40);
        let row = SessionRow {
            id_hash: token_hash(&token),
            realm_id,
            user_id: entry.user_id,
            password_fp: fingerprint(entry.password_hash.as_deref()),
            created_at: now,
            expires_at: now + SESSION_SECS,
        };
        self.store.write::<_, crate::store::StoreError>(|tx| {
            web_sessions::delete_expired(tx, now)?;
            web_sessions::insert(tx, &row)
        })?;
        let row = Arc::new(row);
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        cache.retain(|_, (_, read)| read.elapsed() < CACHE_FOR);
        cache.insert(row.id_hash.clone(), (Arc::clone(&row), Instant::now()));
        Ok(NewSession { token, row })
    }

    /// The session a cookie's token names, if it was read from the database in the last
    /// [`CACHE_FOR`] (no I/O).
    pub fn cached(&self, token: &str) -> Option<Arc<SessionRow>> {
        let cache = self.cache.read().unwrap_or_else(PoisonError::into_inner);
        cache.get(&token_hash(token)).filter(|(_, read)| read.elapsed() < CACHE_FOR).map(|(row, _)| Arc::clone(row))
    }

    /// The session a cookie's token names, read from the database (blocking) and kept for
    /// [`CACHE_FOR`]; none (and forgotten) if it is no longer there.
    pub fn load(&self, token: &str) -> StoreResult<Option<Arc<SessionRow>>> {
        let hash = token_hash(token);
        let row = web_sessions::get(&*self.store.conn()?, &hash)?.map(Arc::new);
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        if cache.len() > 10_000 {
            cache.retain(|_, (_, read)| read.elapsed() < CACHE_FOR);
        }
        match &row {
            Some(row) => cache.insert(hash, (Arc::clone(row), Instant::now())),
            None => cache.remove(&hash),
        };
        Ok(row)
    }

    /// Ends the session of a token (blocking: a write); nothing if there is none.
    pub fn end(&self, token: &str) -> StoreResult<()> {
        let hash = token_hash(token);
        self.cache.write().unwrap_or_else(PoisonError::into_inner).remove(&hash);
        self.store.write(|tx| web_sessions::delete(tx, &hash))
    }

    /// Keeps a session signed in across its user's password change made through it
    /// (blocking: a write); the user's other sessions end by the change itself.
    pub fn adopt_password(&self, token: &str, password_hash: Option<&str>) -> StoreResult<()> {
        let hash = token_hash(token);
        let fp = fingerprint(password_hash);
        self.store.write(|tx| web_sessions::set_password_fp(tx, &hash, &fp))?;
        let mut cache = self.cache.write().unwrap_or_else(PoisonError::into_inner);
        if let Some((row, _)) = cache.get_mut(&hash) {
            *row = Arc::new(SessionRow { password_fp: fp, ..(**row).clone() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;
    use crate::realm::model::Role;

    fn entry(hash: Option<&str>) -> AuthEntry {
        AuthEntry {
            user_id: UserId(5),
            delivery_email: "a@b.c".into(),
            api_key: "k".into(),
            role: Role::Member,
            is_active: true,
            is_bot: false,
            bot_type: None,
            can_create_users: false,
            password_hash: hash.map(Arc::from),
        }
    }

    #[test]
    fn a_session_lives_until_it_expires_or_its_user_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .write::<_, crate::store::StoreError>(|tx| {
                tx.execute_batch(
                    "INSERT INTO realms (id, subdomain, name, date_created) VALUES (1, '', 'r', 0);
                     INSERT INTO users (id, realm_id, email, delivery_email, full_name, api_key, role, date_joined)
                     VALUES (5, 1, 'a@b.c', 'a@b.c', 'A', 'k', 400, 0);",
                )?;
                Ok(())
            })
            .unwrap();
        let sessions = Sessions::new(store.clone());
        let user = entry(Some("$argon2id$one"));
        let new = sessions.start(RealmId(1), &user, 1000).unwrap();
        assert_eq!(new.token.len(), 40);
        assert_ne!(new.row.id_hash, new.token, "only the hash is kept");
        let row = sessions.cached(&new.token).unwrap();
        assert!(speaks_for(&row, &user, false, 1001));
        assert!(!speaks_for(&row, &user, false, 1000 + SESSION_SECS), "expired");
        assert!(!speaks_for(&row, &user, true, 1001), "organization deactivated");
        assert!(!speaks_for(&row, &AuthEntry { is_active: false, ..user.clone() }, false, 1001));
        let changed = entry(Some("$argon2id$two"));
        assert!(!speaks_for(&row, &changed, false, 1001), "password changed");
        // Read back after a restart (a fresh cache), then adopting the new password.
        let fresh = Sessions::new(store.clone());
        assert!(fresh.cached(&new.token).is_none());
        assert_eq!(fresh.load(&new.token).unwrap().unwrap(), row);
        fresh.adopt_password(&new.token, changed.password_hash.as_deref()).unwrap();
        assert!(speaks_for(&fresh.cached(&new.token).unwrap(), &changed, false, 1001));
        assert!(speaks_for(&Sessions::new(store.clone()).load(&new.token).unwrap().unwrap(), &changed, false, 1001));
        // Signed out: gone from memory and from the database.
        fresh.end(&new.token).unwrap();
        assert!(fresh.cached(&new.token).is_none());
        assert!(fresh.load(&new.token).unwrap().is_none());
        assert!(Sessions::new(store).load("not a token").unwrap().is_none());
    }
}
