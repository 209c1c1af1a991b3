//! HTML escaping in the canonical form: the one the HTML sanitizer (html5ever's serializer)
//! writes, so that rendered HTML passes through the sanitizer unchanged.
//!
//! Text escapes `&`, `<` and `>` only, as Python-Markdown does for Zulip (quotes stay
//! quotes); attribute values escape `"` too, and `<` and `>` as current HTML serializers
//! do. A no-break space is written `&nbsp;` in both (the sanitizer's serializer does).
//! Carriage returns and U+0000 are written as an HTML parser reads them: `\r\n` and `\r` as
//! `\n`, U+0000 as U+FFFD.

/// Escapes text content.
pub fn escape_text(text: &str) -> String {
    escape(text, false)
}

/// Escapes a double-quoted attribute value.
pub fn escape_attr(text: &str) -> String {
    escape(text, true)
}

fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(at) = rest.find(|c| matches!(c, '&' | '<' | '>' | '\u{a0}' | '\r' | '\0') || (attribute && c == '"'))
    {
        out.push_str(&rest[..at]);
        let c = rest[at..].chars().next().unwrap_or('&');
        let mut len = c.len_utf8();
        out.push_str(match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\r' => {
                if rest[at + 1..].starts_with('\n') {
                    len += 1;
                }
                "\n"
            }
            '\0' => "\u{FFFD}",
            _ => "&nbsp;",
        });
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_quotes_and_attributes_do_not() {
        assert_eq!(escape_text("a & <b> \"c\" 'd'\u{a0}é"), "a &amp; &lt;b&gt; \"c\" 'd'&nbsp;é");
        assert_eq!(escape_attr("a & <b> \"c\" 'd'\u{a0}é"), "a &amp; &lt;b&gt; &quot;c&quot; 'd'&nbsp;é");
        assert_eq!(escape_text("a\r\nb\rc\n\r\0"), "a\nb\nc\n\n\u{FFFD}");
    }
}
