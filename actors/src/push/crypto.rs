//! End-to-end encrypted payloads: a notification is encrypted with the push key the device
//! registered (Zulip 12, feature level 432), so that only the device can read it; the
//! bouncer and FCM/APNs see ciphertext.
//!
//! A push key is a cryptosystem byte, then the key. The one cryptosystem Zulip defines,
//! `0x31`, is libsodium's secretbox (`crypto_secretbox_easy`: XSalsa20-Poly1305 with a
//! 32-byte key); the ciphertext sent is the random 24-byte nonce followed by the box, as the
//! mobile app reads it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use crypto_secretbox::aead::{Aead, AeadCore, KeyInit, OsRng};
use crypto_secretbox::XSalsa20Poly1305;

/// The cryptosystem byte of a secretbox push key.
pub const SECRETBOX: u8 = 0x31;

/// Zulip's `check_push_key`: standard base64 of 33 bytes starting with [`SECRETBOX`].
pub fn parse_push_key(raw: &str) -> Option<Vec<u8>> {
    let bytes = STANDARD.decode(raw).ok()?;
    (bytes.len() == 33 && bytes[0] == SECRETBOX).then_some(bytes)
}

/// `plaintext` encrypted with `push_key` (as [`parse_push_key`] returns it), as standard
/// base64 of the nonce and the box.
pub fn encrypt(push_key: &[u8], plaintext: &[u8]) -> Result<String, String> {
    let key = match push_key {
        [SECRETBOX, key @ ..] if key.len() == 32 => key,
        _ => return Err("not a secretbox push key".to_owned()),
    };
    let cipher = XSalsa20Poly1305::new_from_slice(key).map_err(|e| format!("bad push key: {e}"))?;
    let nonce = XSalsa20Poly1305::generate_nonce(&mut OsRng);
    let sealed = cipher.encrypt(&nonce, plaintext).map_err(|e| format!("encryption failed: {e}"))?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    Ok(STANDARD.encode(out))
}

#[cfg(test)]
mod tests {
    use crypto_secretbox::Nonce;

    use super::*;

    #[test]
    fn only_the_key_opens_it() {
        let mut push_key = vec![SECRETBOX];
        push_key.extend_from_slice(&[9u8; 32]);
        let sealed = STANDARD.decode(encrypt(&push_key, b"{\"type\":\"test\"}").unwrap()).unwrap();
        let (nonce, boxed) = sealed.split_at(24);
        let cipher = XSalsa20Poly1305::new_from_slice(&[9u8; 32]).unwrap();
        assert_eq!(cipher.decrypt(Nonce::from_slice(nonce), boxed).unwrap(), b"{\"type\":\"test\"}");
        let other = XSalsa20Poly1305::new_from_slice(&[8u8; 32]).unwrap();
        assert!(other.decrypt(Nonce::from_slice(nonce), boxed).is_err());
        assert!(encrypt(&[SECRETBOX, 1, 2], b"x").is_err());
        assert!(encrypt(&[0x32; 33], b"x").is_err());
    }

    #[test]
    fn push_keys_are_checked_as_zulip_checks_them() {
        let good = STANDARD.encode([[SECRETBOX].as_slice(), &[1u8; 32]].concat());
        assert_eq!(parse_push_key(&good).map(|k| k.len()), Some(33));
        assert_eq!(parse_push_key("@abcdefg"), None);
        assert_eq!(parse_push_key("abcd"), None);
        assert_eq!(parse_push_key(&STANDARD.encode([0x32u8; 33])), None);
    }
}
