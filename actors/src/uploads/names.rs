//! Names of uploaded files: Zulip's `sanitize_name` and its path ids.

use base64::Engine;
use rand::Rng;

use sha2::{Digest, Sha256};

use crate::ids::{RealmId, UserId};

/// Zulip's `sanitize_name`: safe in a file system, an object store and a URL. Letters and
/// digits of any script, `_`, `.` and `-` are kept, other characters dropped, runs of
/// spaces and dashes become one `-`; a name left empty, `.` or `..` is `uploaded-file`.
/// (Zulip first applies Unicode's NFKC normalization, which this does not.)
pub fn sanitize_name(value: &str) -> String {
    let kept: String =
        value.chars().filter(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-') || c.is_whitespace()).collect();
    let trimmed = kept.trim();
    let mut out = String::with_capacity(trimmed.len());
    let mut in_run = false;
    for c in trimmed.chars() {
        if c == '-' || c.is_whitespace() {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    if out.is_empty() || out == "." || out == ".." {
        return "uploaded-file".to_owned();
    }
    out
}

/// The name a client gave its file, without any directory part (as Django's upload parser
/// keeps it).
pub fn base_name(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw).trim();
    if base.is_empty() {
        "uploaded-file".to_owned()
    } else {
        base.to_owned()
    }
}

/// A new path id for a file of `realm` called `name` (as given): Zulip's local layout,
/// `<realm_id>/<random byte in hex>/<18 random bytes, URL-safe base64>/<sanitized name>`.
/// The 144 random bits make the URL unguessable.
pub fn new_path_id(realm: RealmId, name: &str) -> String {
    let mut rng = rand::thread_rng();
    let bucket: u8 = rng.gen();
    let token: [u8; 18] = rng.gen();
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token);
    format!("{}/{bucket:x}/{token}/{}", realm.0, sanitize_name(name))
}

/// Where a user's uploaded avatar lives (Zulip's `user_avatar_path`): `<realm_id>/<hash>`,
/// served as `/user_avatars/<path>.png` (100 pixels) and `<path>-medium.png` (500).
pub fn avatar_path(realm: RealmId, user: UserId) -> String {
    let hash = Sha256::digest(format!("agora-avatar:{}:{}", realm.0, user.0).as_bytes());
    let hex: String = hash.iter().take(20).map(|b| format!("{b:02x}")).collect();
    format!("{}/{hex}", realm.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_as_zulip_does() {
        assert_eq!(sanitize_name("zulip.txt"), "zulip.txt");
        assert_eq!(sanitize_name("my file (1).png"), "my-file-1.png");
        assert_eq!(sanitize_name("a - b.txt"), "a-b.txt");
        assert_eq!(sanitize_name("../../etc/passwd"), "....etcpasswd");
        assert_eq!(sanitize_name("ünïcödé 文件.txt"), "ünïcödé-文件.txt");
        assert_eq!(sanitize_name("a\u{0}b\u{7}c\n"), "abc");
        assert_eq!(sanitize_name("trailing_-"), "trailing_-");
        for empty in ["", "  ", "..", ".", "%%%", "/"] {
            assert_eq!(sanitize_name(empty), "uploaded-file", "{empty:?}");
        }
    }

    #[test]
    fn base_names_drop_directories() {
        assert_eq!(base_name("/home/me/zulip.txt"), "zulip.txt");
        assert_eq!(base_name("C:\\Users\\me\\a b.png"), "a b.png");
        assert_eq!(base_name("dir/"), "uploaded-file");
    }

    #[test]
    fn path_ids_follow_zulips_layout() {
        let id = new_path_id(RealmId(2), "a b.txt");
        let parts: Vec<&str> = id.split('/').collect();
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0], "2");
        assert!(u8::from_str_radix(parts[1], 16).is_ok() && parts[1].len() <= 2);
        assert_eq!(parts[2].len(), 24);
        assert_eq!(parts[3], "a-b.txt");
        assert_ne!(new_path_id(RealmId(2), "a"), new_path_id(RealmId(2), "a"));
    }
}
