//! The pieces of RE2's syntax that stand alone: escapes, Unicode classes, counted
//! repetitions.

use super::err;

/// RE2's general categories (`\pL`, `\p{Lu}`...).
pub(super) const CATEGORIES: &[&str] = &[
    "Any", "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd", "Nl",
    "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs",
];

/// The Perl classes as RE2 has them (ASCII only), as a Rust class body.
pub(super) fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        's' => "[\\t\\n\\x{C}\\r ]",
        'S' => "[^\\t\\n\\x{C}\\r ]",
        _ => return None,
    })
}

/// One character of a class (a literal or an escape) and its length.
pub(super) fn class_char(t: &str) -> Result<(char, usize), String> {
    if t.starts_with('\\') {
        return escaped_char(t);
    }
    let c = t.chars().next().unwrap_or('\0');
    Ok((c, c.len_utf8()))
}

/// `\p` or `\P` with a one-letter name or `{name}` (`{^name}` negates): RE2's general
/// categories and scripts.
pub(super) fn unicode_class(t: &str) -> Result<(String, usize), String> {
    let negated = t.starts_with("\\P");
    let body = &t[2..];
    let (name, len) = match body.chars().next() {
        None => return Err(err("invalid character class range", t)),
        Some('{') => match body.find('}') {
            Some(end) => (&body[1..end], 2 + end + 1),
            None => return Err(err("invalid character class range", t)),
        },
        Some(c) => (&body[..c.len_utf8()], 2 + c.len_utf8()),
    };
    let (negated, name) = match name.strip_prefix('^') {
        Some(n) => (!negated, n),
        None => (negated, name),
    };
    let known = CATEGORIES.contains(&name)
        || (name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && regex::Regex::new(&format!("\\p{{sc={name}}}")).is_ok());
    if !known {
        return Err(err("invalid character class range", &t[..len]));
    }
    let letter = if negated { 'P' } else { 'p' };
    let name = if CATEGORIES.contains(&name) { name.to_owned() } else { format!("sc={name}") };
    Ok((format!("\\{letter}{{{name}}}"), len))
}

/// A backslash escape that stands for one character, and its length (RE2's `ParseEscape`).
pub(super) fn escaped_char(t: &str) -> Result<(char, usize), String> {
    let mut chars = t[1..].chars();
    let Some(c) = chars.next() else {
        return Err("trailing \\".to_owned());
    };
    let bad = |len: usize| err("invalid escape sequence", &t[..len.min(t.len())]);
    let octal = |s: &str| s.bytes().take_while(|b| (b'0'..=b'7').contains(b)).count();
    match c {
        '1'..='7' if octal(&t[2..]) == 0 => Err(bad(2)),
        '0'..='7' => {
            let len = 1 + octal(&t[2..]).min(2);
            let code = u32::from_str_radix(&t[1..1 + len], 8).unwrap_or(0);
            Ok((char::from_u32(code).unwrap_or('\u{FFFD}'), 1 + len))
        }
        'x' => {
            let rest = &t[2..];
            if let Some(inner) = rest.strip_prefix('{') {
                let Some(end) = inner.find('}') else { return Err(bad(t.len())) };
                let hex = &inner[..end];
                let code = (!hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()))
                    .then(|| u32::from_str_radix(hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                return code.map(|c| (c, 2 + 1 + end + 1)).ok_or_else(|| bad(2 + 1 + end));
            }
            let hex: String = rest.chars().take(2).collect();
            if hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                let code = u32::from_str_radix(&hex, 16).unwrap_or(0);
                return Ok((char::from_u32(code).unwrap_or('\0'), 4));
            }
            Err(bad(2 + hex.len()))
        }
        'a' => Ok(('\x07', 2)),
        'f' => Ok(('\x0C', 2)),
        'n' => Ok(('\n', 2)),
        'r' => Ok(('\r', 2)),
        't' => Ok(('\t', 2)),
        'v' => Ok(('\x0B', 2)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, 2)),
        c => Err(bad(1 + c.len_utf8())),
    }
}

/// `{n}`, `{n,}` or `{n,m}` at the start of `t` (after the `{`): the counts and the length
/// up to and including `}`; `None` where RE2 reads a literal `{`.
pub(super) fn parse_counts(t: &str) -> Option<(u64, Option<u64>, usize)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(t);
    if n == 0 {
        return None;
    }
    let lo: u64 = t[..n].parse().unwrap_or(u64::MAX);
    let rest = &t[n..];
    if rest.starts_with('}') {
        return Some((lo, Some(lo), n + 1));
    }
    let rest = rest.strip_prefix(',')?;
    if rest.starts_with('}') {
        return Some((lo, None, n + 2));
    }
    let m = digits(rest);
    if m == 0 || !rest[m..].starts_with('}') {
        return None;
    }
    let hi: u64 = rest[..m].parse().unwrap_or(u64::MAX);
    Some((lo, Some(hi), n + 1 + m + 1))
}
