//! Which link and image URLs become an `href` or `src`: Zulip's `sanitize_url`
//! (zerver/lib/markdown/__init__.py), which splits the URL as Python's `urlsplit` does and
//! allows only a fixed list of schemes.
//!
//! The URL given here is the one a browser would see: pulldown-cmark has already decoded
//! character references (`&#106;avascript:`, `javascript&colon;`) and backslash escapes in
//! link destinations, so what is checked is what the attribute will mean.

use ammonia::url::{ParseError, Url};

/// The schemes a link may have: Zulip's `allowed_schemes` (HTTP, FTP, files and the
/// WHATWG safelisted schemes).
pub const ALLOWED_SCHEMES: &[&str] = &[
    "http",
    "https",
    "ftp",
    "file",
    "bitcoin",
    "geo",
    "im",
    "irc",
    "ircs",
    "magnet",
    "mailto",
    "matrix",
    "mms",
    "news",
    "nntp",
    "openpgp4fpr",
    "sip",
    "sms",
    "smsto",
    "ssh",
    "tel",
    "urn",
    "webcal",
    "wtai",
    "xmpp",
];

/// Schemes whose URLs Python's `urlunsplit` writes with `//` (its `uses_netloc`).
const USES_NETLOC: &[&str] = &[
    "",
    "ftp",
    "http",
    "gopher",
    "nntp",
    "telnet",
    "imap",
    "wais",
    "file",
    "mms",
    "https",
    "shttp",
    "snews",
    "prospero",
    "rtsp",
    "rtsps",
    "rtspu",
    "rsync",
    "svn",
    "svn+ssh",
    "sftp",
    "nfs",
    "git",
    "git+ssh",
    "ws",
    "wss",
    "itms-services",
];

/// The `href` (or `src`) for a link destination, or `None` when no link may be made (the
/// link is then shown as the text it was written as).
///
/// This is Zulip's `sanitize_url` applied to the trimmed destination, plus one refusal of
/// our own: a URL with a scheme that is malformed by the WHATWG URL standard (an empty or
/// invalid host, a bad port) is refused too, since the HTML sanitizer that runs last drops
/// such attributes and no browser could follow them anyway.
pub fn link_href(dest: &str) -> Option<String> {
    let href = sanitize_url(dest.trim())?;
    match Url::parse(&href) {
        Ok(url) => ALLOWED_SCHEMES.contains(&url.scheme()).then_some(href),
        Err(ParseError::RelativeUrlWithoutBase) => Some(href),
        Err(_) => None,
    }
}

/// Zulip's `sanitize_url`: `None` for a refused URL, otherwise the URL to use (which may
/// differ from the input: a scheme-less URL gets `http://`, one with an `@` and no scheme
/// becomes `mailto:`, and one Python cannot split becomes the empty string).
pub fn sanitize_url(url: &str) -> Option<String> {
    sanitize(url, false)
}

fn sanitize(url: &str, prefixed: bool) -> Option<String> {
    let Some(parts) = urlsplit(&url.replace(' ', "%20")) else {
        // "Bad URL - so bad it couldn't be parsed."
        return Some(String::new());
    };
    let Parts { mut scheme, netloc, path, query, fragment } = parts;
    if scheme.is_empty() && netloc.is_empty() {
        if path.contains('@') {
            scheme = "mailto".into();
        } else if path.starts_with('/') {
            // Domain-relative links.
            return Some(urlunsplit("", "", &path, &query, &fragment));
        } else if path.is_empty() && query.is_empty() && !fragment.is_empty() {
            // Fragment links.
            return Some(urlunsplit("", "", "", "", &fragment));
        }
    }
    if scheme.is_empty() {
        // Zulip assumes http:// and looks again. The prefixed URL always has a scheme, so
        // this goes one level deep at most.
        return if prefixed { None } else { sanitize(&format!("http://{url}"), true) };
    }
    if !ALLOWED_SCHEMES.contains(&scheme.as_str()) {
        return None;
    }
    Some(urlunsplit(&scheme, &netloc, &path, &query, &fragment))
}

/// A URL split as Python's `urlsplit` splits it.
#[derive(Debug, PartialEq)]
struct Parts {
    scheme: String,
    netloc: String,
    path: String,
    query: String,
    fragment: String,
}

/// Python's `urllib.parse.urlsplit`: leading C0 controls and spaces are stripped and tabs
/// and line breaks removed (as browsers do), the scheme is lowercased. `None` where Python
/// raises `ValueError` (unbalanced IPv6 brackets in the network location).
fn urlsplit(url: &str) -> Option<Parts> {
    let url: String =
        url.trim_start_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\r' | '\n')).collect();
    let mut rest = url.as_str();
    let mut scheme = String::new();
    if let Some(i) = rest.find(':') {
        let candidate = &rest[..i];
        let starts_with_letter = candidate.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
        if starts_with_letter && candidate.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        {
            scheme = candidate.to_ascii_lowercase();
            rest = &rest[i + 1..];
        }
    }
    let mut netloc = "";
    if let Some(after) = rest.strip_prefix("//") {
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        netloc = &after[..end];
        rest = &after[end..];
        if netloc.contains('[') != netloc.contains(']') {
            return None;
        }
    }
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    Some(Parts { scheme, netloc: netloc.into(), path: path.into(), query: query.into(), fragment: fragment.into() })
}

/// Python's `urlunsplit` (as of CPython 3.12.4 and 3.13): the parts written back as a URL,
/// without the `?` or `#` of an empty query or fragment.
fn urlunsplit(scheme: &str, netloc: &str, path: &str, query: &str, fragment: &str) -> String {
    let mut url = String::with_capacity(scheme.len() + netloc.len() + path.len() + query.len() + fragment.len() + 6);
    if !scheme.is_empty() {
        url.push_str(scheme);
        url.push(':');
    }
    if !netloc.is_empty() {
        url.push_str("//");
        url.push_str(netloc);
        if !path.is_empty() && !path.starts_with('/') {
            url.push('/');
        }
    } else if path.starts_with("//")
        || (!scheme.is_empty() && USES_NETLOC.contains(&scheme) && (path.is_empty() || path.starts_with('/')))
    {
        url.push_str("//");
    }
    url.push_str(path);
    if !query.is_empty() {
        url.push('?');
        url.push_str(query);
    }
    if !fragment.is_empty() {
        url.push('#');
        url.push_str(fragment);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zulips_schemes_pass_and_others_are_refused() {
        for url in [
            "https://zulip.com/x?y=z#w",
            "http://a.b/",
            "ftp://f.example/x",
            "tel:+14155551234",
            "sms:+1",
            "mailto:a@b.com",
        ] {
            assert_eq!(sanitize_url(url).as_deref(), Some(url), "{url}");
        }
        for url in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "vbscript:msgbox(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "javascript://foo.com",
            "itms://itunes.com/apps/appname",
            "foo://",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "\u{1f}\u{8}javascript:alert(1)",
        ] {
            assert_eq!(sanitize_url(url), None, "{url:?}");
        }
        // Zulip strips the destination before `sanitize_url`; a space left in it is %20,
        // which is no scheme.
        assert_eq!(sanitize_url(" javascript:alert(1)").as_deref(), Some("http://%20javascript:alert(1)"));
    }

    #[test]
    fn scheme_less_relative_fragment_and_address_urls_are_zulips() {
        // No scheme: http:// is assumed.
        assert_eq!(sanitize_url("example.com/a b").as_deref(), Some("http://example.com/a%20b"));
        // Percent-encoding is no scheme: the colon stays in the host part.
        assert_eq!(sanitize_url("javascript%3Aalert(1)").as_deref(), Some("http://javascript%3Aalert(1)"));
        assert_eq!(sanitize_url("%6Aavascript:alert(1)").as_deref(), Some("http://%6Aavascript:alert(1)"));
        // Domain-relative and fragment links stay relative.
        assert_eq!(sanitize_url("/user_uploads/1/ab/x.pdf?a=1#b").as_deref(), Some("/user_uploads/1/ab/x.pdf?a=1#b"));
        assert_eq!(sanitize_url("#narrow/channel/1-x").as_deref(), Some("#narrow/channel/1-x"));
        // An address is a mailto: link.
        assert_eq!(sanitize_url("a@b.com").as_deref(), Some("mailto:a@b.com"));
        // Unbalanced brackets: Python cannot split it, Zulip links to "".
        assert_eq!(sanitize_url("http://[::1/x").as_deref(), Some(""));
        // The scheme is lowercased, empty query and fragment markers dropped.
        assert_eq!(sanitize_url("HTTPS://a.b/c?#").as_deref(), Some("https://a.b/c"));
    }

    #[test]
    fn link_hrefs_are_trimmed_and_must_be_followable() {
        assert_eq!(link_href("  https://a.b/  ").as_deref(), Some("https://a.b/"));
        assert_eq!(link_href(" \t javascript:alert(1)\n"), None);
        assert_eq!(link_href("\u{a0}javascript:alert(1)"), None);
        assert_eq!(link_href("x").as_deref(), Some("http://x"));
        // An empty destination is http:// to Zulip, which has no host: no link.
        assert_eq!(link_href(""), None);
        assert_eq!(link_href("http://a:99999/"), None);
        assert_eq!(link_href("#").as_deref(), None);
        assert_eq!(link_href("#x").as_deref(), Some("#x"));
        assert_eq!(link_href("http://[::1/x").as_deref(), Some(""));
    }
}
