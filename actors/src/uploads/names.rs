//! Names of uploaded files: Zulip's `sanitize_name` and its path ids.

use base64::Engine;
use rand::Rng;

use sha2::{Digest, Sha256};

use crate::ids::{RealmId, UserId};

/// Most file systems' limit on one path component, in bytes (Zulip's `MAX_FILE_NAME_LENGTH`).
pub const MAX_FILE_NAME_LENGTH: usize = 255;

/// Zulip's `sanitize_name`: safe in a file system, an object store and a URL. Letters and
/// digits of any script, `_`, `.` and `-` are kept, other characters dropped, runs of
/// spaces and dashes become one `-`, the result is cut to 255 bytes keeping its extension;
/// a name left empty, `.` or `..` is `uploaded-file`. (Zulip first applies Unicode's NFKC
/// normalization, which this does not.)
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
    let out = truncate_file_name(&out, MAX_FILE_NAME_LENGTH);
    if out.is_empty() || out == "." || out == ".." {
        return "uploaded-file".to_owned();
    }
    out
}

/// Zulip's `truncate_file_name`: at most `max` bytes, keeping the extension if that leaves
/// room for the rest, never cutting a character in two.
pub fn truncate_file_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, extension) = match name.rfind('.').filter(|&i| i > 0 && name.len() - i < max) {
        Some(i) => name.split_at(i),
        None => (name, ""),
    };
    let mut cut = max - extension.len();
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{extension}", &stem[..cut])
}

/// The name a client gave its file as Zulip keeps it: without any directory part (as
/// Django's upload parser keeps it), then percent-decoded, without NUL characters.
pub fn uploaded_name(raw: &str) -> String {
    percent_decode(&base_name(raw)).replace('\0', "")
}

/// Python's `urllib.parse.unquote`: `%XX` sequences decoded as UTF-8 (invalid sequences
/// replaced).
fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
    fn long_names_are_cut_keeping_their_extension() {
        let long = format!("{}.png", "a".repeat(300));
        let cut = sanitize_name(&long);
        assert_eq!((cut.len(), cut.ends_with(".png")), (255, true));
        let wide = "é".repeat(200);
        let cut = truncate_file_name(&wide, 255);
        assert_eq!(cut.len(), 254);
        assert_eq!(truncate_file_name("short.txt", 255), "short.txt");
    }

    #[test]
    fn uploaded_names_are_decoded_as_zulip_does() {
        assert_eq!(uploaded_name("my%20file%E2%9C%93.txt"), "my file✓.txt");
        assert_eq!(uploaded_name("/tmp/a%2Fb.txt"), "a/b.txt");
        assert_eq!(uploaded_name("50%.txt"), "50%.txt");
        assert_eq!(uploaded_name("a\0b.txt"), "ab.txt");
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
