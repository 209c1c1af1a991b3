//! End-to-end encrypted payloads: a notification is sealed (libsodium's `crypto_box_seal`:
//! an ephemeral X25519 key and XSalsa20-Poly1305) to the public key the device registered,
//! so that only the device can read it; the bouncer and FCM/APNs see ciphertext.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use crypto_box::aead::OsRng;
use crypto_box::PublicKey;

/// `plaintext` sealed to `public_key` (standard base64 of 32 bytes), as standard base64.
pub fn seal(public_key: &str, plaintext: &[u8]) -> Result<String, String> {
    let bytes = STANDARD.decode(public_key).map_err(|e| format!("bad public key: {e}"))?;
    let key: [u8; 32] = bytes.try_into().map_err(|_| "a public key is 32 bytes".to_owned())?;
    let sealed = PublicKey::from(key).seal(&mut OsRng, plaintext).map_err(|e| format!("sealing failed: {e}"))?;
    Ok(STANDARD.encode(sealed))
}

#[cfg(test)]
mod tests {
    use crypto_box::SecretKey;

    use super::*;

    #[test]
    fn only_the_device_opens_it() {
        let device = SecretKey::generate(&mut OsRng);
        let public = STANDARD.encode(device.public_key().as_bytes());
        let sealed = seal(&public, b"{\"type\":\"test\"}").unwrap();
        let opened = device.unseal(&STANDARD.decode(&sealed).unwrap()).unwrap();
        assert_eq!(opened, b"{\"type\":\"test\"}");
        let other = SecretKey::generate(&mut OsRng);
        assert!(other.unseal(&STANDARD.decode(&sealed).unwrap()).is_err());
        assert!(seal("not base64!", b"x").is_err());
        assert!(seal(&STANDARD.encode([1u8; 31]), b"x").is_err());
    }
}
