//! Temporary URLs of uploaded files (Zulip's `generate_unauthed_file_access_url`): a
//! token that names one path id and expires after [`TOKEN_VALIDITY_SECS`], signed with a key
//! of the server, serves the file at `/user_uploads/temporary/<token>/<file name>` without
//! credentials. The token is the upper-case hexadecimal of `<path_id>:<expiry>:<signature>`,
//! as Zulip's is of its signed value.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Zulip's `SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS`.
pub const TOKEN_VALIDITY_SECS: i64 = 60;

/// Signs and checks temporary URL tokens.
#[derive(Clone)]
pub struct Signer {
    key: [u8; 32],
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer")
    }
}

impl Signer {
    /// A signer with a fresh random key (tokens live a minute: a restart that forgets the
    /// key only ends the ones under way).
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut key);
        Signer { key }
    }

    fn mac(&self, payload: &str) -> String {
        // A key of any length is accepted by HMAC.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return String::new();
        };
        mac.update(payload.as_bytes());
        mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The token for `path_id`, valid until `now` + 60 s.
    pub fn token(&self, path_id: &str, now: i64) -> String {
        let payload = format!("{path_id}:{}", now + TOKEN_VALIDITY_SECS);
        let signed = format!("{payload}:{}", self.mac(&payload));
        signed.bytes().map(|b| format!("{b:02X}")).collect()
    }

    /// The temporary URL of `path_id` (its last segment is the file name).
    pub fn url(&self, path_id: &str, now: i64) -> String {
        let name = path_id.rsplit('/').next().unwrap_or(path_id);
        format!("/user_uploads/temporary/{}/{name}", self.token(path_id, now))
    }

    /// The path id a token names, if its signature holds and it has not expired.
    pub fn check(&self, token: &str, now: i64) -> Option<String> {
        if !token.len().is_multiple_of(2) || token.len() > 4096 {
            return None;
        }
        let bytes: Option<Vec<u8>> =
            (0..token.len()).step_by(2).map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok()).collect();
        let signed = String::from_utf8(bytes?).ok()?;
        let (payload, signature) = signed.rsplit_once(':')?;
        let expected = self.mac(payload);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), signature.as_bytes())) {
            return None;
        }
        let (path_id, expiry) = payload.rsplit_once(':')?;
        (expiry.parse::<i64>().ok()? >= now).then(|| path_id.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_file_for_a_minute() {
        let signer = Signer::random();
        let token = signer.token("2/ab/xyz/a.txt", 1000);
        assert!(token.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        assert_eq!(signer.check(&token, 1000).as_deref(), Some("2/ab/xyz/a.txt"));
        assert_eq!(signer.check(&token, 1060).as_deref(), Some("2/ab/xyz/a.txt"));
        assert_eq!(signer.check(&token, 1061), None);
        assert_eq!(Signer::random().check(&token, 1000), None);
        let mut forged = token.clone();
        forged.replace_range(0..2, "33");
        assert_eq!(signer.check(&forged, 1000), None);
        assert_eq!(signer.check("XYZ", 1000), None);
        assert!(signer.url("2/ab/xyz/a.txt", 1000).ends_with("/a.txt"));
    }
}
