//! The identities the bouncer knows this server's organizations and users by. Zulip stores
//! random UUIDs; Agora derives them from the server's registration (its `org_id`), so they
//! are stable without being stored and differ between servers.

use sha2::{Digest, Sha256};

use crate::ids::{RealmId, UserId};

/// A version 4 UUID made of the hash of `seed`.
fn uuid_of(seed: &str) -> String {
    let hash = Sha256::digest(seed.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&hash[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The organization's `realm_uuid`.
pub fn realm_uuid(org_id: &str, realm: RealmId) -> String {
    uuid_of(&format!("agora-realm:{org_id}:{realm}"))
}

/// The user's `user_uuid`.
pub fn user_uuid(org_id: &str, user: UserId) -> String {
    uuid_of(&format!("agora-user:{org_id}:{user}"))
}

/// The organization's `uuid_owner_secret` (known to the bouncer and this server only: it
/// comes from the secret key).
pub fn realm_owner_secret(org_key: &str, realm: RealmId) -> String {
    let hash = Sha256::digest(format!("agora-realm-owner:{org_key}:{realm}").as_bytes());
    hash.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_stable() {
        let a = realm_uuid("org", RealmId(1));
        assert_eq!(a, realm_uuid("org", RealmId(1)));
        assert_ne!(a, realm_uuid("org", RealmId(2)));
        assert_ne!(a, realm_uuid("other", RealmId(1)));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(user_uuid("org", UserId(1)), a);
    }
}
