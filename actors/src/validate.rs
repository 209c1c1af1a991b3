//! Validation of user-supplied strings, with Zulip's messages.

use crate::error::{ApiError, ApiResult};

/// Longest full name (`UserProfile.MAX_NAME_LENGTH`).
pub const MAX_NAME_LENGTH: usize = 100;
/// Shortest full name (`UserProfile.MIN_NAME_LENGTH`).
pub const MIN_NAME_LENGTH: usize = 2;
/// Characters a full name may not contain (`UserProfile.NAME_INVALID_CHARS`).
const NAME_INVALID_CHARS: &[char] = &['*', '`', '\\', '>', '"', '@'];
/// Longest organization name (`Realm.MAX_REALM_NAME_LENGTH`).
pub const MAX_REALM_NAME_LENGTH: usize = 40;
/// Longest subdomain (`Realm.MAX_REALM_SUBDOMAIN_LENGTH`).
pub const MAX_SUBDOMAIN_LENGTH: usize = 40;
/// Subdomains that would clash with the root domain or with service names.
const RESERVED_SUBDOMAINS: &[&str] = &["www", "api", "static", "admin", "mail", "ftp", "zulip", "agora"];

/// The 1-based position (in characters) of the first character Zulip does not accept in
/// names and topics (Zulip's `check_string_is_printable`): the control characters
/// (category Cc) and Unicode's 66 non-characters; surrogates (Cs) cannot occur in Rust
/// strings. Other unassigned code points are accepted, as in Zulip.
pub fn first_unprintable(s: &str) -> Option<usize> {
    s.chars().position(|c| c.is_control() || is_noncharacter(c)).map(|i| i + 1)
}

/// `s` without leading and trailing whitespace as Python's `str.strip()` sees it (Zulip's
/// validators strip so): Unicode's white space plus the separators U+001C to U+001F.
pub fn python_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Zulip's `check_stream_topic`: "Invalid character in topic, at position N!" for the
/// first character Zulip does not accept in names (1-based).
pub fn check_topic(topic: &str) -> ApiResult<()> {
    match first_unprintable(topic) {
        Some(position) => Err(ApiError::bad_request(format!("Invalid character in topic, at position {position}!"))),
        None => Ok(()),
    }
}

/// Whether `c` is one of Unicode's 66 non-characters.
fn is_noncharacter(c: char) -> bool {
    let c = u32::from(c);
    (0xFDD0..=0xFDEF).contains(&c) || c & 0xFFFE == 0xFFFE
}

/// Checks and trims a full name (Zulip's `check_full_name`).
pub fn full_name(raw: &str) -> ApiResult<String> {
    let name = python_strip(raw);
    let len = name.chars().count();
    if len > MAX_NAME_LENGTH {
        return Err(ApiError::bad_request("Name too long!"));
    }
    if len < MIN_NAME_LENGTH {
        return Err(ApiError::bad_request("Name too short!"));
    }
    if first_unprintable(name).is_some() || name.chars().any(|c| NAME_INVALID_CHARS.contains(&c)) {
        return Err(ApiError::bad_request("Invalid characters in name!"));
    }
    // `Name|15` would read as a mention of user 15 in `@**Name|15**`.
    if let Some((_, tail)) = raw.rsplit_once('|') {
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            return Err(ApiError::bad_request("Invalid format!"));
        }
    }
    Ok(name.to_owned())
}

/// Whether `email` is a syntactically valid address, by the rules of Django's
/// `EmailValidator` that Zulip uses: a dot-atom local part and a domain of dotted labels
/// (or `localhost`).
pub fn is_valid_email(email: &str) -> bool {
    if email.len() > 320 || email.chars().any(char::is_whitespace) {
        return false;
    }
    let Some((local, domain)) = email.rsplit_once('@') else {
        return false;
    };
    is_valid_local_part(local) && is_valid_email_domain(domain)
}

fn is_valid_local_part(local: &str) -> bool {
    const SPECIALS: &str = "-!#$%&'*+/=?^_`{}|~";
    !local.is_empty()
        && local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(|c| c.is_ascii_alphanumeric() || SPECIALS.contains(c)))
}

/// Whether `domain` may follow the `@` of an address.
pub fn is_valid_email_domain(domain: &str) -> bool {
    if domain.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 {
        return false;
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let tld = labels[labels.len() - 1];
    labels.iter().all(|l| label_ok(l)) && tld.len() >= 2
}

/// Checks a subdomain for a new organization (Zulip's `check_subdomain_available`, minus
/// the "already in use" check, which needs the store). The empty string is the root.
pub fn subdomain(sub: &str) -> ApiResult<()> {
    if sub.is_empty() {
        return Ok(());
    }
    if sub.starts_with('-') || sub.ends_with('-') {
        return Err(ApiError::bad_request("Subdomain cannot start or end with a '-'."));
    }
    if !sub.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err(ApiError::bad_request("Subdomain can only have lowercase letters, numbers, and '-'s."));
    }
    if sub.len() < 3 {
        return Err(ApiError::bad_request("Subdomain needs to have length 3 or greater."));
    }
    if sub.len() > MAX_SUBDOMAIN_LENGTH {
        return Err(ApiError::bad_request(format!("Subdomain needs to have length {MAX_SUBDOMAIN_LENGTH} or less.")));
    }
    if RESERVED_SUBDOMAINS.contains(&sub) {
        return Err(subdomain_unavailable());
    }
    Ok(())
}

/// The error for a subdomain that is taken or reserved.
pub fn subdomain_unavailable() -> ApiError {
    ApiError::bad_request("Subdomain already in use. Please choose a different one.")
}

/// Checks and trims an organization name.
pub fn realm_name(raw: &str) -> ApiResult<String> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(ApiError::bad_request("Organization name can't be empty."));
    }
    if name.chars().count() > MAX_REALM_NAME_LENGTH {
        return Err(ApiError::bad_request(format!(
            "Organization name is too long (limit: {MAX_REALM_NAME_LENGTH} characters)."
        )));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_names() {
        assert_eq!(full_name("  Ada Lovelace ").unwrap(), "Ada Lovelace");
        assert_eq!(full_name("A").unwrap_err().msg, "Name too short!");
        assert_eq!(full_name(&"x".repeat(101)).unwrap_err().msg, "Name too long!");
        assert_eq!(full_name("Ada *bold*").unwrap_err().msg, "Invalid characters in name!");
        assert_eq!(full_name("Ada|15").unwrap_err().msg, "Invalid format!");
        assert!(full_name("Ada|x").is_ok());
    }

    #[test]
    fn emails() {
        for ok in ["a@example.com", "first.last+tag@sub.example.org", "owner@localhost", "x@a-b.co"] {
            assert!(is_valid_email(ok), "{ok}");
        }
        for bad in ["", "a", "a@", "@b.com", "a@b", "a b@c.com", "a..b@c.com", "a@-b.com", "a@b.c", "a@b..com"] {
            assert!(!is_valid_email(bad), "{bad}");
        }
    }

    #[test]
    fn subdomains() {
        assert!(subdomain("").is_ok());
        assert!(subdomain("acme").is_ok());
        assert!(subdomain("a-1").is_ok());
        assert!(subdomain("ab").is_err());
        assert!(subdomain("-abc").is_err());
        assert!(subdomain("Acme").is_err());
        assert!(subdomain("www").is_err());
        assert!(subdomain(&"a".repeat(41)).is_err());
    }
}
