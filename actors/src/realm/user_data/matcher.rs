//! Finding alert words in a message as Zulip does (`AlertWordNotificationProcessor` in
//! `zerver/lib/markdown`, over the organization's Aho-Corasick automaton of
//! `zerver/lib/alert_words.py`).
//!
//! Zulip runs it as a Markdown preprocessor: on the source after Python-Markdown's
//! whitespace normalization and Zulip's fenced blocks (code and math blocks are gone by
//! then; quote and spoiler blocks keep their text), lower-cased. Every occurrence of a
//! (lower-cased) alert word counts when the character before it is one of
//! [`BEFORE`] and the one after it one of [`AFTER`] (or the text starts or ends there).
//! Two quirks of Zulip's checks are kept, so that the same messages alert the same
//! people: a word preceded by exactly one character counts whatever that character is
//! (Zulip accepts any "index <= 0"), and `"` does not end a word (Zulip's set holds the
//! two-character string `",` where `"` was meant).

use std::collections::{BTreeSet, HashMap};

use aho_corasick::{AhoCorasick, MatchKind};

use crate::ids::UserId;

/// Characters that may come right before an alert word.
const BEFORE: &[char] = &[' ', '\n', '(', '"', '.', ',', '\'', ';', '[', '*', '`', '>'];
/// Characters that may come right after an alert word.
const AFTER: &[char] = &[' ', '\n', ')', '?', ':', '.', ',', '\'', ';', ']', '!', '*', '`'];
/// Python-Markdown's `tab_length`.
const TAB_LENGTH: usize = 4;

/// Every alert word of an organization, lower-cased, with the users who have it.
#[derive(Debug)]
pub struct AlertWordMatcher {
    automaton: AhoCorasick,
    /// The users of each pattern, by pattern index.
    users: Vec<Vec<UserId>>,
}

impl AlertWordMatcher {
    /// A matcher of `words` (user, word); `None` when there are none.
    pub fn new<'a>(words: impl IntoIterator<Item = (UserId, &'a str)>) -> Option<Self> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut users: Vec<Vec<UserId>> = Vec::new();
        for (user, word) in words {
            let lower = word.to_lowercase();
            if lower.is_empty() {
                continue;
            }
            let at = *index.entry(lower).or_insert_with_key(|lower| {
                patterns.push(lower.clone());
                users.push(Vec::new());
                patterns.len() - 1
            });
            if !users[at].contains(&user) {
                users[at].push(user);
            }
        }
        if patterns.is_empty() {
            return None;
        }
        match AhoCorasick::builder().match_kind(MatchKind::Standard).build(&patterns) {
            Ok(automaton) => Some(AlertWordMatcher { automaton, users }),
            Err(e) => {
                tracing::error!(error = %e, words = patterns.len(), "could not build the alert word matcher");
                None
            }
        }
    }

    /// The users whose alert words `content` (a message's Markdown source) contains.
    pub fn users_alerted_by(&self, content: &str) -> BTreeSet<UserId> {
        let text = searchable(content);
        let mut out = BTreeSet::new();
        for found in self.automaton.find_overlapping_iter(&text) {
            if starts_word(&text, found.start()) && ends_word(&text, found.end()) {
                out.extend(self.users[found.pattern().as_usize()].iter().copied());
            }
        }
        out
    }
}

/// Zulip's `check_valid_start_position`, given the byte offset where a match starts: it
/// checks the character before the match, and accepts any when it is the first one.
fn starts_word(text: &str, start: usize) -> bool {
    let mut before = text[..start].chars().rev();
    match (before.next(), before.next()) {
        (None, _) | (Some(_), None) => true,
        (Some(c), Some(_)) => BEFORE.contains(&c),
    }
}

/// Zulip's `check_valid_end_position`, given the byte offset where a match ends.
fn ends_word(text: &str, end: usize) -> bool {
    text[end..].chars().next().is_none_or(|c| AFTER.contains(&c))
}

/// The text Zulip looks for alert words in: `content` after Python-Markdown's
/// `NormalizeWhitespace` (no STX or ETX, `\r\n` and `\r` as `\n`, tabs expanded, lines of
/// spaces emptied) and Zulip's fenced blocks, lower-cased.
fn searchable(content: &str) -> String {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    let lines = normalized.split('\n').enumerate().map(|(i, line)| {
        let line = expand_tabs(line);
        // `(?<=\n) +\n`: a line of spaces after the first one becomes empty.
        if i > 0 && !line.is_empty() && line.bytes().all(|b| b == b' ') {
            String::new()
        } else {
            line
        }
    });
    without_code_blocks(lines).join("\n").to_lowercase()
}

/// `line` without STX and ETX, its tabs expanded to the next multiple of four columns.
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut column = 0;
    for c in line.chars() {
        match c {
            '\u{2}' | '\u{3}' => {}
            '\t' => {
                let pad = TAB_LENGTH - column % TAB_LENGTH;
                out.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            }
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// What a fenced block becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Code and math: a placeholder (its text is not looked at).
    Code,
    /// Its lines, quoted.
    Quote,
    /// Its header and lines.
    Spoiler,
}

/// An open fenced block.
#[derive(Debug)]
struct Block {
    fence: String,
    kind: Kind,
    header: Option<String>,
    lines: Vec<String>,
}

/// Zulip's `FencedBlockPreprocessor`, keeping only the text: each code or math block
/// becomes an empty line (Zulip's placeholder), quote and spoiler blocks keep their lines
/// (and may hold other fenced blocks), an unclosed block runs to the end.
fn without_code_blocks(lines: impl Iterator<Item = String>) -> Vec<String> {
    let mut output = Vec::new();
    let mut open: Vec<Block> = Vec::new();
    for line in lines {
        if let Some(block) = open.last_mut() {
            if line.trim_end() == block.fence {
                close(&mut output, &mut open);
                continue;
            }
            if block.kind == Kind::Code {
                block.lines.push(line.trim_end().to_owned());
                continue;
            }
        }
        match fence(&line) {
            Some(block) => open.push(block),
            None => open.last_mut().map_or(&mut output, |b| &mut b.lines).push(line),
        }
    }
    while !open.is_empty() {
        close(&mut output, &mut open);
    }
    output
}

/// Closes the innermost open block: its text goes to the block around it (or the output),
/// between empty lines; an empty block leaves nothing.
fn close(output: &mut Vec<String>, open: &mut Vec<Block>) {
    let Some(block) = open.pop() else { return };
    if block.lines.is_empty() {
        return;
    }
    let text: Vec<String> = match block.kind {
        Kind::Code => vec![String::new()],
        Kind::Quote => block.lines.iter().map(|line| format!("> {line}")).collect(),
        Kind::Spoiler => {
            // Zulip joins placeholder, header, placeholder, text, placeholder with "\n\n".
            let mut parts = vec![String::new()];
            parts.extend(block.header);
            parts.push(String::new());
            parts.push(block.lines.join("\n"));
            parts.push(String::new());
            parts.join("\n\n").split('\n').map(str::to_owned).collect()
        }
    };
    let parent = open.last_mut().map_or(output, |b| &mut b.lines);
    parent.push(String::new());
    parent.extend(text);
    parent.push(String::new());
}

/// Zulip's `FENCE_RE`: three or more backticks or tildes at the very start of the line,
/// then optionally a language (`{.lang}` forms allowed) and a header, with no backtick or
/// tilde after the fence.
fn fence(line: &str) -> Option<Block> {
    let mark = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = line.len() - line.trim_start_matches(mark).len();
    if length < 3 {
        return None;
    }
    let (fence, rest) = line.split_at(length);
    let rest = rest.trim_start_matches(' ');
    let (lang, header) = if rest.is_empty() {
        (String::new(), None)
    } else {
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        let rest = rest.strip_prefix('.').unwrap_or(rest);
        let lang_length = rest.len() - rest.trim_start_matches(is_lang_char).len();
        if lang_length == 0 {
            return None;
        }
        let (lang, rest) = rest.split_at(lang_length);
        let header = rest.trim_start_matches(' ');
        if header.contains(['`', '~']) {
            return None;
        }
        (lang.to_lowercase(), Some(header.to_owned()).filter(|h| !h.is_empty()))
    };
    let kind = match lang.as_str() {
        "quote" | "quoted" => Kind::Quote,
        "spoiler" => Kind::Spoiler,
        _ => Kind::Code,
    };
    Some(Block { fence: fence.to_owned(), kind, header, lines: Vec::new() })
}

/// The characters of a fence's language (`[a-zA-Z0-9_+-./#]`, where `+-.` is a range).
fn is_lang_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | ',' | '-' | '.' | '/' | '#')
}

#[cfg(test)]
mod tests;
