//! Markdown to HTML for descriptions and profile text, and what every renderer shares.
//!
//! CommonMark through pulldown-cmark, with raw HTML shown as text (Zulip never lets user
//! HTML through) and links only to the URLs Zulip allows (`url`). Zulip's own syntax
//! (mentions, channel links, emoji) is added on top of this by the message renderer. Every
//! renderer ends with the HTML sanitizer (`sanitize`), as a second line of defence.

mod escape;
pub(crate) mod html;
pub mod linkifier;
mod re2;
pub mod sanitize;
pub mod uri_template;
pub mod url;

pub use escape::{escape_attr, escape_text};

use std::borrow::Cow;

use pulldown_cmark::{Options, Parser};

/// The CommonMark extensions every renderer uses.
pub(crate) const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH.union(Options::ENABLE_TABLES);

/// Renders Markdown to HTML the way Zulip presents descriptions: no trailing newline, and
/// the empty string for empty input.
pub fn render(source: &str) -> String {
    sanitize::clean(&render_unsanitized(source))
}

/// `render` before its last step, the sanitizer (which must change nothing of it).
pub(crate) fn render_unsanitized(source: &str) -> String {
    if source.trim().is_empty() {
        return String::new();
    }
    let source = normalize_input(source);
    let restore = |text: &str| text.to_owned();
    let mut writer = html::Writer::new(&source, &restore, "\n", code_block);
    for (event, range) in Parser::new_ext(&source, OPTIONS).into_offset_iter() {
        writer.push(event, range);
    }
    let mut out = String::with_capacity(source.len() + 16);
    pulldown_cmark::html::push_html(&mut out, writer.finish().into_iter());
    out.truncate(out.trim_end().len());
    out
}

/// The source as the renderers read it: `\r\n` and `\r` are `\n`, as for Zulip's Markdown
/// (Python-Markdown's `NormalizeWhitespace`) and for an HTML parser; U+0000 is U+FFFD, as
/// CommonMark requires and an HTML parser would make it.
pub(crate) fn normalize_input(source: &str) -> Cow<'_, str> {
    if source.contains(['\r', '\0']) {
        Cow::Owned(source.replace("\r\n", "\n").replace('\r', "\n").replace('\0', "\u{FFFD}"))
    } else {
        Cow::Borrowed(source)
    }
}

/// CommonMark's code block markup: the info string's first word names the language (one
/// class: a word ends at any ASCII whitespace).
fn code_block(info: &str, body: &str) -> String {
    let lang = info.split_ascii_whitespace().next().unwrap_or_default();
    let class = if lang.is_empty() { String::new() } else { format!(" class=\"language-{}\"", escape_attr(lang)) };
    format!("<pre><code{class}>{}</code></pre>\n", escape_text(body))
}

#[cfg(test)]
pub(crate) mod prop_tests;
#[cfg(test)]
pub(crate) mod tests;
