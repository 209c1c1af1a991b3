//! Markdown to HTML for descriptions and profile text.
//!
//! CommonMark through pulldown-cmark, with raw HTML shown as text (Zulip never lets user
//! HTML through). Zulip's own syntax (mentions, channel links, emoji) is added on top of
//! this by the message renderer.

use pulldown_cmark::{html, Event, Options, Parser};

/// Renders Markdown to HTML the way Zulip presents descriptions: no trailing newline, and
/// the empty string for empty input.
pub fn render(source: &str) -> String {
    if source.trim().is_empty() {
        return String::new();
    }
    let parser = Parser::new_ext(source, Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES).map(|ev| match ev {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::with_capacity(source.len() + 16);
    html::push_html(&mut out, parser);
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_paragraphs_and_escapes_html() {
        assert_eq!(render(""), "");
        assert_eq!(render("Hello *world*"), "<p>Hello <em>world</em></p>");
        assert_eq!(render("<b>x</b>"), "<p>&lt;b&gt;x&lt;/b&gt;</p>");
    }
}
