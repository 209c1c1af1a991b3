//! Linkifiers (Zulip's `RealmFilter`): a pattern in RE2's syntax whose matches in messages
//! and topics become links to an RFC 6570 URL template expanded with the match's named
//! groups. This module checks them as Zulip's `filter_pattern_validator` and
//! `url_template_validator` do, compiles them once per change of the organization's list,
//! and finds their matches as Zulip's `LinkifierPattern` and `topic_links` do.
//!
//! Cost is bounded twice: Rust's `regex` matches in time linear in the text (no
//! backtracking, as RE2), and a compiled pattern may not exceed [`SIZE_LIMIT`] bytes of
//! program (a larger one is refused as RE2 refuses its too-large programs).

use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use super::re2::translate;
use super::uri_template::UriTemplate;

/// The largest compiled program of one linkifier, in bytes.
pub const SIZE_LIMIT: usize = 1 << 20;

/// A linkifier as stored and shown (`{pattern, url_template, id, example_input,
/// reverse_template, alternative_url_templates}`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Linkifier {
    pub id: i64,
    pub pattern: String,
    pub url_template: String,
    /// A text the pattern matches (FL 471), required with `reverse_template`.
    pub example_input: Option<String>,
    /// `{variable}` text that turns a URL matching `url_template` back into the pattern's
    /// text (FL 471); `{{` and `}}` are literal braces.
    pub reverse_template: Option<String>,
    /// Further URL templates used only to turn pasted URLs back into text (FL 478).
    pub alternative_url_templates: Vec<String>,
}

/// A linkifier ready to match: the pattern wrapped as Zulip's `prepare_linkifier_pattern`
/// does (it must follow the start, whitespace or an opening delimiter, and no letter or digit
/// may follow it), and its template.
#[derive(Debug, Clone)]
pub struct Compiled {
    regex: Regex,
    /// Each named group of the pattern with its capture index in `regex`.
    names: Vec<(String, usize)>,
    /// The index of the trailing group (what follows the match).
    after: usize,
    template: UriTemplate,
}

/// A match: the byte ranges of the whole match (delimiter included) and of the matched
/// text, and the expanded URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub text_start: usize,
    pub text_end: usize,
    /// Where the next search starts (the character after the match is left to it).
    pub next: usize,
    /// The end of the whole match (the character after it included).
    pub end: usize,
    pub url: String,
}

/// Checks a pattern as RE2 would compile it, with Zulip's message on failure
/// (`Bad regular expression: missing ): (foo`); gives its group names.
pub fn check_pattern(pattern: &str) -> Result<Vec<String>, String> {
    let translated = translate(pattern).map_err(|e| format!("Bad regular expression: {e}"))?;
    build(&translated.source)?;
    Ok(translated.names.into_iter().map(|(name, _)| name).collect())
}

/// The named groups of `pattern` when it matches the whole of `text` (for a linkifier's
/// `example_input`); `None` if it does not.
pub fn whole_match_groups(pattern: &str, text: &str) -> Option<Vec<(String, String)>> {
    let translated = translate(pattern).ok()?;
    let regex = build(&format!("^(?:{})$", translated.source)).ok()?;
    let caps = regex.captures(text)?;
    let groups = translated
        .names
        .into_iter()
        .map(|(name, n)| {
            let value = caps.get(n).map(|m| m.as_str().to_owned()).unwrap_or_default();
            (name, value)
        })
        .collect();
    Some(groups)
}

/// Fills a linkifier's `reverse_template` (`{name}` for a variable, `{{` and `}}` for
/// literal braces) with `groups`; `None` for a malformed template or an unknown variable.
pub fn fill_reverse_template(template: &str, groups: &[(String, String)]) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{").or_else(|| tail.strip_prefix("}}")) {
            out.push_str(&tail[..1]);
            rest = after;
        } else if let Some(body) = tail.strip_prefix('{') {
            let end = body.find('}')?;
            let name = &body[..end];
            out.push_str(&groups.iter().find(|(n, _)| n == name)?.1);
            rest = &body[end + 1..];
        } else {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

fn build(source: &str) -> Result<Regex, String> {
    RegexBuilder::new(source).size_limit(SIZE_LIMIT).dfa_size_limit(2 * SIZE_LIMIT).build().map_err(|e| match e {
        regex::Error::CompiledTooBig(_) => "Bad regular expression: pattern too large - compile failed".to_owned(),
        _ => "Unknown regular expression error".to_owned(),
    })
}

impl Compiled {
    /// Compiles a stored linkifier; `None` if it cannot be (then it matches nothing, as
    /// Zulip's `topic_links` skips such a pattern).
    pub fn new(linkifier: &Linkifier) -> Option<Compiled> {
        let translated = translate(&linkifier.pattern).ok()?;
        let template = UriTemplate::parse(&linkifier.url_template)?;
        // Groups: 1 the delimiter before, 2 the match, 3.. the pattern's own, then the
        // character after.
        let source = format!("(^|[\\t\\n\\x{{C}}\\r ]|\\x{{85}}|\\pZ|['\"(,:<])({})($|[^\\pL\\pN])", translated.source);
        let regex = build(&source).ok()?;
        let names = translated.names.into_iter().map(|(name, n)| (name, n + 2)).collect();
        Some(Compiled { regex, names, after: translated.captures + 3, template })
    }

    /// The first match in `text` at or after byte `from` (`^` matches only at 0).
    pub fn find_at(&self, text: &str, from: usize) -> Option<Found> {
        let caps = self.regex.captures_at(text, from)?;
        let whole = caps.get(0)?;
        let outer = caps.get(2)?;
        let after = caps.get(self.after).map_or(0, |m| m.len());
        let url = self.template.expand(|name| {
            let index = self.names.iter().find(|(n, _)| n == name).map(|(_, i)| *i)?;
            Some(caps.get(index).map(|m| m.as_str()))
        });
        Some(Found {
            start: whole.start(),
            text_start: outer.start(),
            text_end: outer.end(),
            next: whole.end() - after,
            end: whole.end(),
            url,
        })
    }
}

/// An organization's linkifiers in their order, each compiled once (when the list changes).
#[derive(Debug, Clone, Default)]
pub struct Linkifiers {
    entries: Arc<Vec<(Linkifier, Option<Arc<Compiled>>)>>,
}

impl Linkifiers {
    /// The list in this order, compiled.
    pub fn new(list: Vec<Linkifier>) -> Self {
        let entries = list
            .into_iter()
            .map(|l| {
                let compiled = Compiled::new(&l).map(Arc::new);
                (l, compiled)
            })
            .collect();
        Linkifiers { entries: Arc::new(entries) }
    }

    /// The linkifiers, in order.
    pub fn list(&self) -> impl Iterator<Item = &Linkifier> {
        self.entries.iter().map(|(l, _)| l)
    }

    /// The compiled ones, in order.
    pub fn compiled(&self) -> impl Iterator<Item = &Compiled> {
        self.entries.iter().filter_map(|(_, c)| c.as_deref())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A copy of the list (to change and rebuild).
    pub fn to_vec(&self) -> Vec<Linkifier> {
        self.list().cloned().collect()
    }

    /// A message's `topic_links`: `[{"text", "url"}]` for its topic.
    pub fn topic_links_json(&self, topic: &str) -> serde_json::Value {
        if topic.is_empty() || self.is_empty() && !topic.contains("://") {
            return serde_json::Value::Array(Vec::new());
        }
        let links = self.topic_links(topic).into_iter();
        links.map(|(text, url)| serde_json::json!({"text": text, "url": url})).collect()
    }

    /// Zulip's `topic_links`: `(text, url)` of each linkifier match in `topic` (earlier
    /// linkifiers first, overlapping later ones dropped) and each `http(s)://` URL, in the
    /// order they appear.
    pub fn topic_links(&self, topic: &str) -> Vec<(String, String)> {
        struct M {
            index: usize,
            len: usize,
            text: String,
            url: String,
        }
        let mut matches: Vec<M> = Vec::new();
        for compiled in self.compiled() {
            let mut pos = 0;
            while pos < topic.len() {
                let Some(found) = compiled.find_at(topic, pos) else { break };
                let step = topic[pos..].chars().next().map_or(1, char::len_utf8);
                pos = found.next.max(pos + step);
                let text = topic[found.text_start..found.text_end].to_owned();
                // Zulip measures overlaps from the start of the whole match.
                matches.push(M { index: found.start, len: text.len(), text, url: found.url });
            }
        }
        for (index, url) in topic_urls(topic) {
            matches.push(M { index, len: url.len(), text: url.clone(), url });
        }
        let overlaps = |a: &M, b: &M| {
            (b.index <= a.index && a.index < b.index + b.len) || (a.index <= b.index && b.index < a.index + a.len)
        };
        let mut applied: Vec<M> = Vec::new();
        for m in matches {
            if applied.iter().all(|old| !overlaps(old, &m)) {
                applied.push(m);
            }
        }
        applied.sort_by_key(|m| m.index);
        applied.into_iter().map(|m| (m.text, m.url)).collect()
    }
}

/// The `http://` and `https://` URLs of a topic, as Zulip finds them: the topic cut at
/// spaces and `!;),'"`, a piece that is (or, after one of `'"(,:<`, ends with) a URL with
/// something after `://`, without its trailing punctuation. Gives (piece start, URL).
fn topic_urls(topic: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pos = 0;
    for piece in topic.split([' ', '!', ';', ')', ',', '\'', '"']) {
        let start = pos;
        pos += piece.len() + 1;
        let Some(at) = ["https://", "http://"]
            .iter()
            .filter_map(|scheme| piece.find(scheme))
            .find(|&at| at == 0 || piece[..at].ends_with(['(', ':', '<']))
        else {
            continue;
        };
        let url = piece[at..].trim_end_matches(['!', ':', ';', '?', ')', ',', '.', '\'', '"', '>']);
        let host = url.split_once("://").map_or("", |(_, rest)| rest);
        if !host.is_empty() && !url.contains(['(', '<']) {
            out.push((start, url.to_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests;
