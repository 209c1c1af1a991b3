//! Passwords (argon2id) and API keys.
//!
//! Hashing is deliberately slow: call these from a blocking thread (`spawn_blocking`,
//! `web::block`), never from an actor or an async worker.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::distributions::Alphanumeric;
use rand::rngs::OsRng;
use rand::Rng;
use subtle::ConstantTimeEq;

/// Length of an API key, as in Zulip (`UserProfile.API_KEY_LENGTH`).
pub const API_KEY_LENGTH: usize = 32;

/// Cost parameters of new password hashes. Verification reads them from the stored hash, so
/// changing them only affects passwords set afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashCost {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes over memory.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
}

impl Default for HashCost {
    /// OWASP's recommended argon2id minimum (19 MiB, 2 passes, 1 lane).
    fn default() -> Self {
        HashCost { memory_kib: 19 * 1024, iterations: 2, parallelism: 1 }
    }
}

impl HashCost {
    /// The cheapest valid cost, for tests only.
    pub fn cheapest() -> Self {
        HashCost { memory_kib: 8, iterations: 1, parallelism: 1 }
    }
}

/// Why a password could not be hashed (bad cost parameters).
#[derive(Debug, thiserror::Error)]
#[error("cannot hash password: {0}")]
pub struct HashError(String);

/// Hashes a password into a PHC string (`$argon2id$v=19$...`).
pub fn hash_password(password: &str, cost: HashCost) -> Result<String, HashError> {
    let params =
        Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None).map_err(|e| HashError(e.to_string()))?;
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let salt = SaltString::generate(&mut OsRng);
    argon.hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| HashError(e.to_string()))
}

/// Whether `password` matches the stored PHC hash. A malformed hash never matches.
pub fn verify_password(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

/// Zulip's `check_password_strength`: long enough, not too long, and withstanding
/// enough guesses by zxcvbn's estimate.
pub fn password_is_strong(password: &str) -> bool {
    use crate::realm::catalog::{PASSWORD_MAX_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH};
    let len = password.chars().count();
    if !(PASSWORD_MIN_LENGTH..=PASSWORD_MAX_LENGTH).contains(&len) {
        return false;
    }
    let guesses = zxcvbn::zxcvbn(password, &[]).guesses();
    guesses >= PASSWORD_MIN_GUESSES.unsigned_abs()
}

/// A fresh API key: 32 random alphanumerics from the OS generator.
pub fn new_api_key() -> String {
    random_alphanumeric(API_KEY_LENGTH)
}

/// `n` random characters from `[A-Za-z0-9]`.
pub fn random_alphanumeric(n: usize) -> String {
    OsRng.sample_iter(&Alphanumeric).take(n).map(char::from).collect()
}

/// Whether a string has the shape of an API key (Zulip's `has_api_key_format`).
pub fn has_api_key_format(key: &str) -> bool {
    key.len() == API_KEY_LENGTH && key.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Compares two secrets in time that depends only on their lengths.
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_passwords_are_refused() {
        for weak in ["", "pw", "12345", "password", "123456789", "qwertyuiop", &"a".repeat(101)] {
            assert!(!password_is_strong(weak), "{weak}");
        }
        for strong in ["correct horse battery", "vQ7#mz!p2", "Tr0ub4dor&3"] {
            assert!(password_is_strong(strong), "{strong}");
        }
    }

    #[test]
    fn hash_then_verify() {
        let hash = hash_password("correct horse", HashCost::cheapest()).unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn api_keys_have_the_zulip_shape() {
        let a = new_api_key();
        let b = new_api_key();
        assert!(has_api_key_format(&a));
        assert_ne!(a, b);
        assert!(!has_api_key_format("short"));
        assert!(!has_api_key_format(&"x".repeat(31)));
        assert!(!has_api_key_format(&format!("{}-", "x".repeat(31))));
        assert!(secrets_equal(&a, &a.clone()));
        assert!(!secrets_equal(&a, &b));
    }
}
