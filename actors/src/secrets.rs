//! Passwords (argon2id) and API keys.
//!
//! Hashing is deliberately slow: call these from a thread made for it (the server's hashing
//! pool), never from an actor or an async worker. Each thread that hashes keeps the memory
//! cost of its costliest hash for good, so few threads should.

use std::cell::RefCell;

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
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

thread_local! {
    /// This thread's argon2 working memory, kept from one hash to the next. Allocating the
    /// whole memory cost (19 MiB by default) for each hash, as `argon2` does by itself, left
    /// glibc's arena of a hashing thread holding several times that cost, in fragments
    /// that were never reused; one buffer per thread costs the memory cost once.
    static MEMORY: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Runs `argon` with this thread's working memory, wiped afterwards (what argon2 leaves in
/// it would spare an attacker who reads it most of the work of each guess).
fn with_memory<T>(argon: &Argon2<'_>, f: impl FnOnce(&Argon2<'_>, &mut [Block]) -> T) -> T {
    let blocks = argon.params().block_count();
    MEMORY.with(|memory| {
        let mut memory = memory.borrow_mut();
        if memory.len() < blocks {
            memory.resize(blocks, Block::new());
        }
        let work = &mut memory[..blocks];
        let result = f(argon, work);
        work.fill(Block::new());
        result
    })
}

/// Hashes a password into a PHC string (`$argon2id$v=19$...`).
pub fn hash_password(password: &str, cost: HashCost) -> Result<String, HashError> {
    let error = |e: &dyn std::fmt::Display| HashError(e.to_string());
    let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None).map_err(|e| error(&e))?;
    let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let salt = SaltString::generate(&mut OsRng);
    let mut salt_bytes = [0u8; 64];
    let salt_bytes = salt.as_salt().decode_b64(&mut salt_bytes).map_err(|e| error(&e))?;
    let output = with_memory(&argon, |argon, memory| {
        Output::init_with(Params::DEFAULT_OUTPUT_LEN, |out| {
            argon.hash_password_into_with_memory(password.as_bytes(), salt_bytes, out, memory).map_err(Into::into)
        })
    })
    .map_err(|e| error(&e))?;
    let hash = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(argon.params()).map_err(|e| error(&e))?,
        salt: Some(salt.as_salt()),
        hash: Some(output),
    };
    Ok(hash.to_string())
}

/// Whether `password` matches the stored PHC hash. A malformed hash never matches.
pub fn verify_password(password: &str, stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(expected), Some(salt)) = (parsed.hash, parsed.salt) else {
        return false;
    };
    let algorithm = Algorithm::try_from(parsed.algorithm);
    let version = parsed.version.map_or(Ok(Version::default()), Version::try_from);
    let (Ok(algorithm), Ok(version), Ok(params)) = (algorithm, version, Params::try_from(&parsed)) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt_bytes) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    let argon = Argon2::new(algorithm, version, params);
    let computed = with_memory(&argon, |argon, memory| {
        Output::init_with(expected.len(), |out| {
            argon.hash_password_into_with_memory(password.as_bytes(), salt_bytes, out, memory).map_err(Into::into)
        })
    });
    // `Output`'s equality takes constant time.
    computed.is_ok_and(|computed| computed == expected)
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

/// A confirmation key of an invitation link: 24 random characters of `[a-z2-7]`, 120 bits
/// (the shape of Zulip's `generate_key`, lower-cased base32).
pub fn confirmation_key() -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    (0..24).map(|_| char::from(ALPHABET[OsRng.gen_range(0..32)])).collect()
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
    fn hashes_are_argon2s_own_format() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let cost = HashCost { memory_kib: 64, iterations: 2, parallelism: 2 };
        // Ours verify with the argon2 crate's verifier...
        let ours = hash_password("correct horse", cost).unwrap();
        assert!(ours.starts_with("$argon2id$v=19$m=64,t=2,p=2$"), "{ours}");
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(Argon2::default().verify_password(b"correct horse", &parsed).is_ok());
        assert!(Argon2::default().verify_password(b"wrong horse", &parsed).is_err());
        // ...and its hashes, of any variant and cost, verify here.
        for algorithm in [Algorithm::Argon2id, Algorithm::Argon2i, Algorithm::Argon2d] {
            let params = Params::new(32, 1, 1, None).unwrap();
            let salt = SaltString::generate(&mut OsRng);
            let theirs =
                Argon2::new(algorithm, Version::V0x13, params).hash_password(b"battery", &salt).unwrap().to_string();
            assert!(verify_password("battery", &theirs), "{theirs}");
            assert!(!verify_password("staple", &theirs), "{theirs}");
        }
    }

    #[test]
    fn the_working_memory_is_kept_and_wiped() {
        let cost = HashCost { memory_kib: 256, iterations: 1, parallelism: 1 };
        let hash = hash_password("pw", cost).unwrap();
        assert!(verify_password("pw", &hash));
        MEMORY.with(|memory| {
            let memory = memory.borrow();
            assert_eq!(memory.len(), 256);
            assert!(memory.iter().all(|block| block.as_ref().iter().all(|&word| word == 0)));
        });
        // A cheaper hash reuses the same buffer.
        assert!(verify_password("pw", &hash_password("pw", HashCost::cheapest()).unwrap()));
        MEMORY.with(|memory| assert_eq!(memory.borrow().len(), 256));
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
