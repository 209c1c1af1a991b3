//! RFC 6570 URL templates as Zulip reads and expands them (the Python `uri_template`
//! package): which templates are valid, which variables they name, and their expansion
//! with string values (a linkifier's matched groups), missing values skipped.

/// The characters an expansion leaves as they are (RFC 3986's unreserved).
const UNRESERVED: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~";
/// RFC 3986's reserved characters (`+` and `#` expansions and literals keep them too).
const RESERVED: &str = ":/?#[]@!$&'()*+,;=";

/// One variable of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Var {
    /// The name the template declares (what must match a pattern's group).
    name: String,
    /// The name the value is looked up by (differs only for `name/key` specs).
    key: String,
    /// `:N`: only the first N characters of the value.
    max_length: usize,
    /// `name=default`: the value used when none is given.
    default: Option<String>,
}

/// A part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// An expression: its operator (`'\0'` for a simple one), variables, and a trailing
    /// joiner that replaces the prefix (the package's extension).
    Expr {
        op: char,
        vars: Vec<Var>,
        trailing: Option<char>,
    },
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `template`; `None` where Zulip's "Invalid URL template." applies.
    pub fn parse(template: &str) -> Option<UriTemplate> {
        let mut parts = Vec::new();
        for piece in split_expressions(template) {
            if let Some(body) = piece.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                parts.push(expression(body)?);
            } else if piece.contains(['{', '}']) {
                return None;
            } else if !piece.is_empty() {
                parts.push(Part::Literal(piece.to_owned()));
            }
        }
        Some(UriTemplate { parts })
    }

    /// The names of its variables, each once, in order of first use.
    pub fn variable_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Expr { vars, .. } = part {
                for var in vars {
                    if !names.contains(&var.name.as_str()) {
                        names.push(&var.name);
                    }
                }
            }
        }
        names
    }

    /// Expands the template with the values `value` gives by name: `Some(None)` for a name
    /// that has no value (skipped), `None` for an unknown name (its default applies).
    pub fn expand<'v>(&self, value: impl Fn(&str) -> Option<Option<&'v str>>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => encode(&mut out, text, true),
                Part::Expr { op, vars, trailing } => expand_expr(&mut out, *op, vars, *trailing, &value),
            }
        }
        out
    }
}

/// The template cut into literals and `{...}` pieces (Python's `re.split(r'(\{[^\}]*\})')`).
fn split_expressions(template: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        // The first `{` and the first `}` after it (Python's `\{[^\}]*\}`).
        pieces.push(&rest[..open]);
        pieces.push(&rest[open..=close]);
        rest = &rest[close + 1..];
    }
    pieces.push(rest);
    pieces
}

/// The expression inside `{...}`.
fn expression(body: &str) -> Option<Part> {
    let first = body.chars().next()?;
    let simple = first.is_ascii_alphanumeric()
        || first == '_'
        || (first == '%' && body.len() >= 3 && body.as_bytes()[1..3].iter().all(u8::is_ascii_hexdigit));
    let (op, vars) = if simple {
        ('\0', body)
    } else {
        match first {
            '+' | '#' | '.' | '/' | ';' | '?' | '&' => (first, &body[1..]),
            ',' if body[1..].starts_with('+') => ('*', &body[2..]),
            ',' => (',', &body[1..]),
            _ => return None,
        }
    };
    let (vars, trailing) = match vars.chars().last() {
        Some(c @ (',' | '.' | '/' | ';' | '&')) => (&vars[..vars.len() - 1], Some(c)),
        _ => (vars, None),
    };
    let vars = vars.split(',').map(variable).collect::<Option<Vec<_>>>()?;
    Some(Part::Expr { op, vars, trailing })
}

/// One variable spec (the package's `Variable`).
fn variable(spec: &str) -> Option<Var> {
    let first = spec.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return None;
    }
    let (mut spec, default) = match spec.split_once('=') {
        Some((s, d)) => (s, Some(d.to_owned())),
        None => (spec, None),
    };
    let mut max_length = 0;
    if let Some((s, len)) = spec.split_once(':') {
        if len.is_empty() || len.len() >= 4 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        max_length = len.parse().ok().filter(|n| *n > 0)?;
        spec = s;
    } else if let Some(s) = spec.strip_suffix('*') {
        spec = s;
    } else if let Some(s) = spec.strip_suffix("[]") {
        spec = s;
    }
    let (mut name, mut key) = (String::new(), String::new());
    let bytes = spec.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'%' && i + 2 < bytes.len() && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit() {
            key.push_str(&spec[i..i + 3]);
            i += 2;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
            key.push(c as char);
        } else if c == b'/' {
            name = std::mem::take(&mut key);
        } else {
            return None;
        }
        i += 1;
    }
    if name.is_empty() {
        name = key.clone();
    }
    if key.is_empty() {
        key = name.clone();
    }
    Some(Var { name, key, max_length, default })
}

/// Percent-encodes `value` into `out`, keeping unreserved characters (and reserved ones and
/// existing `%XX` when `reserved`).
fn encode(out: &mut String, value: &str, reserved: bool) {
    let bytes = value.as_bytes();
    let mut chars = value.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if UNRESERVED.contains(c) || (reserved && RESERVED.contains(c)) {
            out.push(c);
        } else if reserved
            && c == '%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            out.push_str(&value[i..i + 3]);
            chars.next();
            chars.next();
        } else {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push('%');
                out.push_str(&format!("{byte:02X}"));
            }
        }
    }
}

/// One expression with string values (the package's `ExpressionExpansion.expand`).
fn expand_expr<'v>(
    out: &mut String,
    op: char,
    vars: &[Var],
    trailing: Option<char>,
    value: &impl Fn(&str) -> Option<Option<&'v str>>,
) {
    let (prefix, joiner, reserved, named) = match op {
        '+' => ("", ",", true, false),
        '#' => ("#", ",", true, false),
        '.' => (".", ".", false, false),
        '/' => ("/", "/", false, false),
        ';' => (";", ";", false, true),
        '?' => ("?", "&", false, true),
        '&' => ("&", "&", false, true),
        ',' => (",", ",", false, false),
        '*' => (",", ",", true, false),
        _ => ("", ",", false, false),
    };
    let mut expanded: Vec<String> = Vec::new();
    for var in vars {
        let Some(raw) = value(&var.key).unwrap_or(var.default.as_deref()) else { continue };
        let raw: String = if var.max_length > 0 { raw.chars().take(var.max_length).collect() } else { raw.to_owned() };
        let mut encoded = String::new();
        encode(&mut encoded, &raw, reserved);
        let mut name = String::new();
        encode(&mut name, &var.name, true);
        expanded.push(match op {
            ';' if encoded.is_empty() => var.name.clone(),
            _ if named => format!("{name}={encoded}"),
            _ => encoded,
        });
    }
    if expanded.is_empty() {
        return;
    }
    if trailing.is_none() {
        out.push_str(prefix);
    }
    out.push_str(&expanded.join(joiner));
    if let Some(t) = trailing {
        out.push(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(t: &str) -> bool {
        UriTemplate::parse(t).is_some()
    }

    #[test]
    fn zulip_valid_and_invalid_templates() {
        for t in [
            "http://example.com/",
            "https://user:password@example.com/",
            "https://example.com/foo[bar]",
            "https://example.com/{foo}{bars}",
            "https://example.com/%%(foo)s",
            "https://example.com{/foo,bar,baz}",
            "https://example.com/{?foo*}",
            "https://example.com/{+foo,bar}",
            "https://chat{.domain}.com/{#foo}",
            "https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}",
            "$not_a_url$",
        ] {
            assert!(valid(t), "{t}");
        }
        for t in [
            "https://example.com/{foo",
            "https://example.com/{{}",
            "https://example.com/{//foo}",
            "https://example.com/{bar++}",
            "a}b",
            "{=x}",
            "{x:0}",
            "{x:1000}",
        ] {
            assert!(!valid(t), "{t}");
        }
    }

    #[test]
    fn names_and_expansions_as_the_python_package() {
        let t =
            UriTemplate::parse("https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}")
                .unwrap();
        assert_eq!(t.variable_names(), ["zone", "domain", "location", "id", "name", "chapter", "fragment"]);
        let values = |k: &str| match k {
            "zone" => Some(Some("a b")),
            "domain" => Some(Some("x")),
            "id" => Some(Some("7/8")),
            "name" => Some(Some("é")),
            "fragment" => Some(Some("abcdefgh")),
            _ => Some(None),
        };
        assert_eq!(t.expand(values), "https://zone_a%20b.x.net/ticket/7%2F8?name=%C3%A9#abcde");
        let t = UriTemplate::parse("https://example.com/%ba/{+path}/%%/{id}").unwrap();
        let values = |k: &str| Some(Some(if k == "path" { "a/b c%41" } else { "#1" }));
        assert_eq!(t.expand(values), "https://example.com/%ba/a/b%20c%41/%25%25/%231");
        // A default applies to an unknown name only, not to a group that did not match.
        let t = UriTemplate::parse("/{a=x}/{b=y}").unwrap();
        assert_eq!(t.expand(|k| if k == "a" { Some(None) } else { None }), "//y");
    }
}
