//! Zulip's Markdown dialect for messages: CommonMark (pulldown-cmark) plus mentions,
//! channel and topic links, emoji shortcodes and bare-URL links, written as Zulip writes
//! them.
//!
//! Zulip's own syntax is found first and replaced by placeholders (private-use
//! characters) that the CommonMark pass leaves alone; the placeholders are then replaced
//! by their HTML, except inside code, where the original text comes back.
//!
//! The organization's linkifiers then run over what that left, one after the other in
//! their order (as Zulip's inline patterns of equal priority do, after mentions, channel
//! links and URLs): each match becomes a token too, a link whose text is the match. In code,
//! in a link's text or destination it goes back to its source.

use std::collections::BTreeSet;
use std::fmt::Write;

use pulldown_cmark::{html, CowStr, Event, Parser};

use crate::ids::{GroupId, UserId};
use crate::markdown::html::Writer;
use crate::markdown::linkifier::Linkifiers;
use crate::markdown::url::link_href;
use crate::markdown::{escape_attr, escape_text, normalize_input, sanitize, OPTIONS};
use crate::realm::state::RealmState;
use crate::realm::uploads_data::previews::{add_previews, audio_controls, is_audio};

const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// A rendered message and what its content refers to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub html: String,
    /// Users mentioned by name (not silently).
    pub mentioned_users: BTreeSet<UserId>,
    /// Groups mentioned (not silently).
    pub mentioned_groups: BTreeSet<GroupId>,
    /// `@**all**`, `@**everyone**`, `@**channel**` or `@**stream**`.
    pub stream_wildcard: bool,
    /// `@**topic**`.
    pub topic_wildcard: bool,
    pub has_link: bool,
    pub has_image: bool,
    pub has_attachment: bool,
    /// Users whose alert words the message contains (Zulip's `user_ids_with_alert_words`).
    pub alert_word_users: BTreeSet<UserId>,
}

/// One piece of Zulip syntax: its source text, its HTML, and what it means for the
/// message (mentions, links), counted only where the token is rendered (not in code).
struct Token {
    source: String,
    html: String,
    effects: Rendered,
    /// Its HTML is a link (`<a>`).
    is_link: bool,
}

/// Renders a message's Markdown as Zulip does.
pub fn render(state: &RealmState, source: &str) -> Rendered {
    let mut out = render_unsanitized(state, source);
    let (html, images) = add_previews(state.uploads(), &out.html);
    // An audio player is no image.
    out.has_image = images;
    out.html = audio_controls(&sanitize::clean(&html));
    out.alert_word_users = state.user_data().alerted_users(source);
    out
}

/// `render` before its last step, the sanitizer (which must change nothing of it).
pub(crate) fn render_unsanitized(state: &RealmState, source: &str) -> Rendered {
    let cleaned: String =
        normalize_input(source).chars().map(|c| if c == OPEN || c == CLOSE { '\u{FFFD}' } else { c }).collect();
    let mut out = Rendered::default();
    let mut tokens = Vec::new();
    let marked = mark_tokens(state, &cleaned, &mut tokens);
    let marked = linkify(state.linkifiers(), marked, &mut tokens);
    let restore = |text: &str| restore_source(text, &tokens);
    // Markdown images show only the organization's uploaded images (FL 437, 467), and
    // its uploaded audio files, as players (FL 405; see `uploads_data::previews`).
    let uploaded_image = |src: &str| {
        src.strip_prefix("/user_uploads/")
            .and_then(|path| state.uploads().by_path(path))
            .is_some_and(|a| a.image.is_some() || is_audio(a))
    };
    let mut writer = Writer::new(&marked, &restore, "<br>\n", code_block).only_images(&uploaded_image);
    for (event, range) in Parser::new_ext(&marked, OPTIONS).into_offset_iter() {
        // A link's text makes no other link (Zulip's link text is atomic, and `<a>` inside
        // `<a>` is not HTML): bare URLs and channel links there stay as written.
        let event = match event {
            Event::Text(text) if writer.in_link() => Event::Text(CowStr::from(restore_links(&text, &tokens))),
            other => other,
        };
        writer.push(event, range);
    }
    out.has_link = writer.has_link;
    out.has_image = writer.has_image;
    let mut html_out = String::with_capacity(marked.len() + 32);
    html::push_html(&mut html_out, writer.finish().into_iter());
    html_out.truncate(html_out.trim_end().len());
    out.html = replace_tokens(&html_out, &tokens, &mut out);
    if cleaned.contains("/user_uploads/") {
        out.has_attachment = true;
        out.has_link = true;
    }
    out
}

/// Zulip's code block markup (the language is the info string, trimmed).
fn code_block(info: &str, body: &str) -> String {
    let lang = info.trim();
    let lang_attr =
        if lang.is_empty() { String::new() } else { format!(" data-code-language=\"{}\"", escape_attr(lang)) };
    let body = body.strip_suffix('\n').unwrap_or(body);
    format!("<div class=\"codehilite\"{lang_attr}><pre><span></span><code>{}\n</code></pre></div>\n", escape_text(body))
}

/// The placeholder for token `n`.
fn placeholder(n: usize) -> String {
    format!("{OPEN}{n}{CLOSE}")
}

/// Replaces every placeholder in `text` by what `f` gives for its token (and its number).
fn substitute(text: &str, tokens: &[Token], mut f: impl FnMut(usize, &Token) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len_utf8()..];
        let Some(end) = after.find(CLOSE) else {
            rest = after;
            continue;
        };
        if let Some((n, token)) = after[..end].parse::<usize>().ok().and_then(|n| Some((n, tokens.get(n)?))) {
            out.push_str(&f(n, token));
        }
        rest = &after[end + CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

fn restore_source(text: &str, tokens: &[Token]) -> String {
    substitute(text, tokens, |_, t| t.source.clone())
}

/// `text` with the tokens that are links (bare URLs, channel links) back as their source.
fn restore_links(text: &str, tokens: &[Token]) -> String {
    substitute(text, tokens, |n, t| if t.is_link { t.source.clone() } else { placeholder(n) })
}

/// The final HTML: each remaining placeholder becomes its token's HTML, and the token's
/// mentions and links count for the message.
fn replace_tokens(html: &str, tokens: &[Token], out: &mut Rendered) -> String {
    substitute(html, tokens, |_, t| {
        let e = &t.effects;
        out.mentioned_users.extend(e.mentioned_users.iter().copied());
        out.mentioned_groups.extend(e.mentioned_groups.iter().copied());
        out.stream_wildcard |= e.stream_wildcard;
        out.topic_wildcard |= e.topic_wildcard;
        out.has_link |= e.has_link;
        t.html.clone()
    })
}

/// Finds Zulip's syntax in `source`, records each piece in `tokens` and returns the
/// source with placeholders in their place.
fn mark_tokens(state: &RealmState, source: &str, tokens: &mut Vec<Token>) -> String {
    let mut marked = String::with_capacity(source.len());
    let mut i = 0;
    while i < source.len() {
        let rest = &source[i..];
        let prev = source[..i].chars().next_back();
        let mut effects = Rendered::default();
        if let Some((len, html)) = match_token(state, rest, prev, &mut effects) {
            marked.push_str(&placeholder(tokens.len()));
            let is_link = html.starts_with("<a ");
            tokens.push(Token { source: rest[..len].to_string(), html, effects, is_link });
            i += len;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            marked.push(c);
            i += c.len_utf8();
        }
    }
    marked
}

/// A global time (`<time:...>`, Zulip's `Timestamp` pattern): `<time datetime="...Z">` with
/// the text as written, for an ISO 8601 date and time (UTC unless it has an offset) or a
/// Unix timestamp. One that is not a time stays as written (plain escaped text, FL 451).
fn global_time(text: &str) -> Option<String> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
    let trimmed = text.trim();
    let naive = |at: NaiveDateTime| at.and_utc();
    let at: DateTime<Utc> = DateTime::parse_from_rfc3339(trimmed)
        .ok()
        .or_else(|| {
            ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M%:z", "%Y-%m-%dT%H:%M:%S%.f%z"]
                .iter()
                .find_map(|f| DateTime::parse_from_str(trimmed, f).ok())
        })
        .map(|at| at.with_timezone(&Utc))
        .or_else(|| {
            ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]
                .iter()
                .find_map(|f| NaiveDateTime::parse_from_str(trimmed, f).ok())
                .map(naive)
        })
        .or_else(|| NaiveDate::parse_from_str(trimmed, "%Y-%m-%d").ok()?.and_hms_opt(0, 0, 0).map(naive))
        .or_else(|| {
            let seconds: f64 = trimmed.parse().ok().filter(|s: &f64| s.is_finite())?;
            DateTime::from_timestamp_micros((seconds * 1e6).round() as i64)
        })?;
    // Python's `isoformat()`: microseconds only when there are some.
    let datetime = at.to_rfc3339_opts(
        if at.timestamp_subsec_micros() == 0 { SecondsFormat::Secs } else { SecondsFormat::Micros },
        true,
    );
    Some(format!("<time datetime=\"{datetime}\">{}</time>", escape_text(text)))
}

/// Applies each linkifier in turn to `text` (Zulip's `LinkifierPattern`): a match whose
/// URL may be linked becomes a token; the search goes on after it. A refused URL leaves the
/// text as it is, and the search resumes as Python-Markdown's does (`startIndex +=
/// match.end()`).
fn linkify(linkifiers: &Linkifiers, mut text: String, tokens: &mut Vec<Token>) -> String {
    for linkifier in linkifiers.compiled() {
        let mut pos = 0;
        while pos < text.len() {
            let Some(found) = linkifier.find_at(&text, pos) else { break };
            let matched = &text[found.text_start..found.text_end];
            // A match may not cut through another token's placeholder.
            let href = link_href(&found.url).filter(|_| !matched.is_empty() && !matched.contains([OPEN, CLOSE]));
            let Some(href) = href else {
                pos += found.end.max(1);
                while !text.is_char_boundary(pos.min(text.len())) {
                    pos += 1;
                }
                continue;
            };
            let html = format!("<a href=\"{}\">{}</a>", escape_attr(&href), escape_text(matched));
            let effects = Rendered { has_link: true, ..Rendered::default() };
            let mark = placeholder(tokens.len());
            tokens.push(Token { source: matched.to_owned(), html, effects, is_link: true });
            text.replace_range(found.text_start..found.text_end, &mark);
            pos = found.text_start + mark.len();
        }
    }
    text
}

/// The piece of Zulip syntax at the start of `rest`, as its length and HTML.
fn match_token(state: &RealmState, rest: &str, prev: Option<char>, out: &mut Rendered) -> Option<(usize, String)> {
    if let Some(inner) = rest.strip_prefix("<time:") {
        let end = inner.find('>')?;
        return global_time(&inner[..end]).map(|html| (end + "<time:>".len(), html));
    }
    if rest.starts_with('@') {
        return mention(state, rest, out);
    }
    if let Some(inner) = rest.strip_prefix("#**") {
        let end = inner.find("**")?;
        return channel_link(state, &inner[..end]).map(|html| (end + 5, html));
    }
    if rest.starts_with(':') {
        return emoji(state, rest);
    }
    if (rest.starts_with("https://") || rest.starts_with("http://")) && prev.is_none_or(char::is_whitespace) {
        let len = url_length(rest);
        let url = &rest[..len];
        // As Zulip's `url_to_a`: the link goes where `sanitize_url` says, the text is the
        // URL as written.
        let href = link_href(url)?;
        out.has_link = true;
        return Some((len, format!("<a href=\"{}\">{}</a>", escape_attr(&href), escape_text(url))));
    }
    None
}

/// The length of a bare URL: up to whitespace, without trailing punctuation.
fn url_length(rest: &str) -> usize {
    let end = rest.find(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '"').unwrap_or(rest.len());
    rest[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'']).len()
}

/// `@**Name**`, `@**Name|id**`, `@_**Name**`, wildcards and `@*group*` / `@_*group*`.
fn mention(state: &RealmState, rest: &str, out: &mut Rendered) -> Option<(usize, String)> {
    let (silent, body) = match rest.strip_prefix("@_") {
        Some(body) => (true, body),
        None => (false, &rest[1..]),
    };
    let prefix = rest.len() - body.len();
    if let Some(inner) = body.strip_prefix("**") {
        let end = inner.find("**")?;
        let html = user_mention(state, &inner[..end], silent, out)?;
        return Some((prefix + end + 4, html));
    }
    let inner = body.strip_prefix('*')?;
    let end = inner.find('*')?;
    let name = &inner[..end];
    let group = state.groups().find(|g| !g.is_system_group && !g.deactivated && g.name == name)?;
    if !silent {
        out.mentioned_groups.insert(group.id);
    }
    let (class, at) = if silent { (" silent", "") } else { ("", "@") };
    let html = format!(
        "<span class=\"user-group-mention{class}\" data-user-group-id=\"{}\">{at}{}</span>",
        group.id,
        escape_text(&group.name)
    );
    Some((prefix + end + 2, html))
}

/// The HTML of a user or wildcard mention of `name` (`Name` or `Name|id`).
fn user_mention(state: &RealmState, name: &str, silent: bool, out: &mut Rendered) -> Option<String> {
    let (class, at) = if silent { (" silent", "") } else { ("", "@") };
    match name {
        "all" | "everyone" | "channel" | "stream" => {
            out.stream_wildcard |= !silent;
            return Some(format!(
                "<span class=\"user-mention channel-wildcard-mention{class}\" data-user-id=\"*\">{at}{name}</span>"
            ));
        }
        "topic" => {
            out.topic_wildcard |= !silent;
            return Some(format!("<span class=\"topic-mention{class}\">{at}{name}</span>"));
        }
        _ => {}
    }
    let user = match name.rsplit_once('|') {
        Some((_, id)) => {
            let id = id.parse::<i64>().ok()?;
            state.user(UserId(id)).filter(|u| u.is_active)?
        }
        None => {
            let lower = name.to_lowercase();
            let mut found = state.users().filter(|u| u.is_active && u.full_name.to_lowercase() == lower);
            let user = found.next()?;
            if found.next().is_some() {
                return None;
            }
            user
        }
    };
    if !silent {
        out.mentioned_users.insert(user.id);
    }
    Some(format!(
        "<span class=\"user-mention{class}\" data-user-id=\"{}\">{at}{}</span>",
        user.id,
        escape_text(&user.full_name)
    ))
}

/// `#**channel**` and `#**channel>topic**`.
fn channel_link(state: &RealmState, inner: &str) -> Option<String> {
    let (name, topic) = match inner.split_once('>') {
        Some((name, topic)) => (name, Some(topic)),
        None => (inner, None),
    };
    // Only public channels are linked: rendering a private channel's id for anyone who
    // types its name would reveal that it exists (the renderer does not know the sender).
    let channel = state.channel_by_name(name).filter(|c| !c.invite_only)?;
    let base = format!("/#narrow/channel/{}-{}", channel.id, hash_encode(&channel.name));
    let name_html = escape_text(&channel.name);
    Some(match topic {
        None => format!("<a class=\"stream\" data-stream-id=\"{}\" href=\"{base}\">#{name_html}</a>", channel.id),
        Some(topic) => format!(
            "<a class=\"stream-topic\" data-stream-id=\"{}\" href=\"{base}/topic/{}\">#{name_html} &gt; {}</a>",
            channel.id,
            hash_encode(topic),
            escape_text(topic)
        ),
    })
}

/// Zulip's URL-hash encoding of a name: percent-encoding with `.` for `%`.
fn hash_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'~' => out.push(byte as char),
            b' ' => out.push('-'),
            _ => {
                let _ = write!(out, ".{byte:02X}");
            }
        }
    }
    out
}

/// `:name:` for a known emoji (Zulip's `:[\w\-\+]+:`: names may have letters of any script):
/// the organization's active custom emoji first, then Unicode emoji.
fn emoji(state: &RealmState, rest: &str) -> Option<(usize, String)> {
    let inner = &rest[1..];
    let end = inner.find(':')?;
    let name = &inner[..end];
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '+' | '-')) {
        return None;
    }
    if let Some(custom) = state.uploads().active_emoji(name) {
        let src = custom.source_url(state.realm().id);
        let name = escape_attr(name);
        return Some((end + 2, format!("<img alt=\":{name}:\" class=\"emoji\" src=\"{src}\" title=\"{name}\">")));
    }
    let code = crate::emoji::code_of(name)?;
    Some((
        end + 2,
        format!(
            "<span aria-label=\"{label}\" class=\"emoji emoji-{code}\" role=\"img\" title=\"{label}\">:{name}:</span>",
            label = name.replace('_', " ")
        ),
    ))
}
