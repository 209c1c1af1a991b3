//! Linkifier patterns in RE2's syntax (Zulip compiles them with `re2`), read with RE2's rules
//! and errors and rewritten for Rust's `regex` crate, which shares RE2's design (no
//! lookaround, no backreferences, linear-time matching) but not every detail of its syntax.
//!
//! The rewrite keeps RE2's meaning where the two differ: `\d`, `\w`, `\s` and `\b` are
//! ASCII-only (as in RE2), a `{` that starts no repetition is a literal, `\Q...\E` quotes,
//! `&`, `~` and `-` are never class operators, and capture groups lose their names (RE2
//! allows names, such as `1a` or duplicates, that Rust does not): the names are kept aside
//! with their group numbers. A pattern RE2 refuses is refused with RE2's message, e.g.
//! `missing ): (foo`, `bad repetition operator: ????`, `invalid perl operator: (?<=`.

use std::fmt::Write;

use syntax::{class_char, escaped_char, parse_counts, perl_class, unicode_class};

mod syntax;

/// The largest count of a counted repetition, and of nested ones multiplied (RE2's
/// `maximum_repeat_count`).
const MAX_REPEAT: u64 = 1000;

/// A pattern rewritten for Rust's `regex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// The pattern in Rust's syntax, with unnamed capture groups only.
    pub source: String,
    /// How many capture groups it has.
    pub captures: usize,
    /// Each group name, first use first, with its group's number (1 = the first group).
    pub names: Vec<(String, usize)>,
}

/// What came just before the current position, for the repetition rules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing a repetition can apply to: the start, `(` or `|`.
    Nothing,
    /// An operand of this weight (the product of the counted repetitions inside it).
    Operand(u64),
    /// A repetition operator that began at this byte (applied to an operand of this weight).
    Repeat(usize, u64),
}

/// An open group: the largest weight among its items.
struct Frame {
    weight: u64,
}

struct Parser<'a> {
    p: &'a str,
    i: usize,
    out: String,
    stack: Vec<Frame>,
    top: Frame,
    last: Last,
    captures: usize,
    names: Vec<(String, usize)>,
}

/// Reads `pattern` as RE2 does; the error is RE2's message (`code: argument`).
pub fn translate(pattern: &str) -> Result<Translated, String> {
    let mut parser = Parser {
        p: pattern,
        i: 0,
        out: String::with_capacity(pattern.len() + 16),
        stack: Vec::new(),
        top: Frame { weight: 1 },
        last: Last::Nothing,
        captures: 0,
        names: Vec::new(),
    };
    parser.run()?;
    Ok(Translated { source: parser.out, captures: parser.captures, names: parser.names })
}

fn err(code: &str, arg: &str) -> String {
    format!("{code}: {arg}")
}

/// `c` as a Rust regex literal (hex-escaped unless alphanumeric, non-ASCII or a space).
fn push_literal(out: &mut String, c: char) {
    if c.is_alphanumeric() || c == ' ' || !c.is_ascii() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.p[self.i..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn operand(&mut self, weight: u64) {
        self.top.weight = self.top.weight.max(weight);
        self.last = Last::Operand(weight);
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            let start = self.i;
            match c {
                '\\' => self.escape()?,
                '(' => self.open()?,
                ')' => {
                    let Some(parent) = self.stack.pop() else {
                        return Err(err("unexpected )", self.p));
                    };
                    self.i += 1;
                    self.out.push(')');
                    let weight = std::mem::replace(&mut self.top, parent).weight;
                    self.operand(weight);
                }
                '|' => {
                    self.i += 1;
                    self.out.push('|');
                    self.last = Last::Nothing;
                }
                '*' | '+' | '?' => {
                    self.i += 1;
                    if self.peek() == Some('?') {
                        self.i += 1;
                    }
                    self.repeat(start, None)?;
                }
                '{' => match parse_counts(&self.p[start + 1..]) {
                    Some((lo, hi, len)) => {
                        self.i += 1 + len;
                        if self.peek() == Some('?') {
                            self.i += 1;
                        }
                        self.repeat(start, Some((lo, hi)))?;
                    }
                    None => {
                        self.i += 1;
                        push_literal(&mut self.out, '{');
                        self.operand(1);
                    }
                },
                '[' => self.class()?,
                '.' | '^' | '$' => {
                    self.i += 1;
                    self.out.push(c);
                    self.operand(1);
                }
                _ => {
                    self.i += c.len_utf8();
                    push_literal(&mut self.out, c);
                    self.operand(1);
                }
            }
        }
        if !self.stack.is_empty() {
            return Err(err("missing )", self.p));
        }
        Ok(())
    }

    /// A repetition operator from `start` to here: `counts` for `{lo,hi}`.
    fn repeat(&mut self, start: usize, counts: Option<(u64, Option<u64>)>) -> Result<(), String> {
        let op = &self.p[start..self.i];
        if let Last::Repeat(prev, _) = self.last {
            return Err(err("bad repetition operator", &self.p[prev..self.i]));
        }
        let mut weight = match self.last {
            Last::Operand(w) => w,
            _ => 1,
        };
        if let Some((lo, hi)) = counts {
            if hi.is_some_and(|hi| hi < lo) || lo > MAX_REPEAT || hi.is_some_and(|hi| hi > MAX_REPEAT) {
                return Err(err("invalid repetition size", op));
            }
            let m = hi.unwrap_or(lo);
            if m > 0 {
                weight = weight.saturating_mul(m);
            }
            if (lo >= 2 || hi.unwrap_or(0) >= 2) && weight > MAX_REPEAT && self.last != Last::Nothing {
                return Err(err("invalid repetition size", op));
            }
        }
        if self.last == Last::Nothing {
            return Err(err("no argument for repetition operator", op));
        }
        self.out.push_str(op);
        self.top.weight = self.top.weight.max(weight);
        self.last = Last::Repeat(start, weight);
        Ok(())
    }

    /// `(`: a group, a named group, or flags.
    fn open(&mut self) -> Result<(), String> {
        let t = self.rest();
        if !t.starts_with("(?") {
            self.i += 1;
            self.push_group("(", true);
            return Ok(());
        }
        if t.len() > 3 && (t[2..].starts_with('=') || t[2..].starts_with('!')) {
            return Err(err("invalid perl operator", &t[..3]));
        }
        if t.len() > 4 && (t[2..].starts_with("<=") || t[2..].starts_with("<!")) {
            return Err(err("invalid perl operator", &t[..4]));
        }
        if t.starts_with("(?P<") || t.starts_with("(?<") {
            let begin = if t.starts_with("(?P<") { 4 } else { 3 };
            let Some(end) = t[2..].find('>').map(|e| e + 2) else {
                return Err(err("invalid named capture group", t));
            };
            let name = &t[begin..end];
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(err("invalid named capture group", &t[..=end]));
            }
            let name = name.to_owned();
            self.i += end + 1;
            self.push_group("(", true);
            if !self.names.iter().any(|(n, _)| *n == name) {
                self.names.push((name, self.captures));
            }
            return Ok(());
        }
        self.flags()
    }

    fn push_group(&mut self, opening: &str, capturing: bool) {
        self.out.push_str(opening);
        if capturing {
            self.captures += 1;
        }
        self.stack.push(std::mem::replace(&mut self.top, Frame { weight: 1 }));
        self.last = Last::Nothing;
    }

    /// `(?flags)` and `(?flags:`, with RE2's flags `i`, `m`, `s`, `U` and one `-`.
    fn flags(&mut self) -> Result<(), String> {
        let start = self.i;
        let mut j = start + 2;
        let (mut negated, mut saw) = (false, false);
        let mut flags = String::new();
        loop {
            let Some(c) = self.p[j..].chars().next() else {
                return Err(err("invalid perl operator", &self.p[start..j]));
            };
            j += c.len_utf8();
            match c {
                'i' | 'm' | 's' | 'U' => {
                    saw = true;
                    flags.push(c);
                }
                '-' if !negated => {
                    negated = true;
                    saw = false;
                    flags.push(c);
                }
                ':' | ')' => {
                    if negated && !saw {
                        return Err(err("invalid perl operator", &self.p[start..j]));
                    }
                    self.i = j;
                    if c == ':' {
                        self.push_group(&format!("(?{flags}:"), false);
                    } else if !flags.is_empty() {
                        let _ = write!(self.out, "(?{flags})");
                    }
                    return Ok(());
                }
                _ => return Err(err("invalid perl operator", &self.p[start..j])),
            }
        }
    }

    /// `\` outside a class.
    fn escape(&mut self) -> Result<(), String> {
        let start = self.i;
        let t = self.rest();
        if let Some(body) = t.strip_prefix("\\Q") {
            let (quoted, len) = match body.find("\\E") {
                Some(end) => (&body[..end], 2 + end + 2),
                None => (body, t.len()),
            };
            for c in quoted.chars() {
                push_literal(&mut self.out, c);
                self.operand(1);
            }
            self.i += len;
            return Ok(());
        }
        match t[1..].chars().next() {
            Some(c @ ('b' | 'B')) => {
                let _ = write!(self.out, "(?-u:\\{c})");
                self.i += 2;
            }
            Some(c @ ('A' | 'z')) => {
                let _ = write!(self.out, "\\{c}");
                self.i += 2;
            }
            Some('C') => {
                self.out.push_str("(?s:.)");
                self.i += 2;
            }
            Some(c) if perl_class(c).is_some() => {
                self.out.push_str(perl_class(c).unwrap_or_default());
                self.i += 2;
            }
            Some('p' | 'P') => {
                let (class, len) = unicode_class(t)?;
                self.out.push_str(&class);
                self.i += len;
            }
            _ => {
                let (c, len) = escaped_char(t)?;
                push_literal(&mut self.out, c);
                self.i = start + len;
            }
        }
        self.operand(1);
        Ok(())
    }

    /// A bracketed class, with RE2's rules: `]` first is a literal, `-` first or last too.
    fn class(&mut self) -> Result<(), String> {
        let whole = self.rest();
        let mut j = 1;
        let mut out = String::from("[");
        if whole[j..].starts_with('^') {
            out.push('^');
            j += 1;
        }
        let mut first = true;
        loop {
            let t = &whole[j..];
            let Some(c) = t.chars().next() else {
                return Err(err("missing ]", whole));
            };
            if c == ']' && !first {
                j += 1;
                break;
            }
            first = false;
            if let Some(posix) = t.strip_prefix("[:") {
                if let Some(end) = posix.find(":]").map(|e| e + 4) {
                    let name = t[2..end - 2].trim_start_matches('^');
                    const POSIX: &[&str] = &[
                        "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
                        "space", "upper", "word", "xdigit",
                    ];
                    if !POSIX.contains(&name) {
                        return Err(err("invalid character class range", &t[..end]));
                    }
                    out.push_str(&t[..end]);
                    j += end;
                    continue;
                }
            }
            if t.starts_with("\\p") || t.starts_with("\\P") {
                let (class, len) = unicode_class(t)?;
                out.push_str(&class);
                j += len;
                continue;
            }
            if let Some(class) = t.strip_prefix('\\').and_then(|r| r.chars().next()).and_then(perl_class) {
                out.push_str(class);
                j += 2;
                continue;
            }
            let (lo, len) = class_char(t)?;
            let mut hi = lo;
            let mut used = len;
            if t[len..].starts_with('-') && !t[len + 1..].starts_with(']') && t.len() > len + 1 {
                let (h, hlen) = class_char(&t[len + 1..])?;
                hi = h;
                used = len + 1 + hlen;
                if hi < lo {
                    return Err(err("invalid character class range", &t[..used]));
                }
            }
            push_literal(&mut out, lo);
            if hi != lo {
                out.push('-');
                push_literal(&mut out, hi);
            }
            j += used;
        }
        out.push(']');
        self.out.push_str(&out);
        self.i += j;
        self.operand(1);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
