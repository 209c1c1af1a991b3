//! Tests of the description renderer and of what every renderer must keep to.

use super::*;

#[test]
fn renders_paragraphs_and_escapes_html() {
    assert_eq!(render(""), "");
    assert_eq!(render("Hello *world*"), "<p>Hello <em>world</em></p>");
    assert_eq!(render("<b>x</b>"), "<p>&lt;b&gt;x&lt;/b&gt;</p>");
}

/// Hostile link and image destinations, each with what a renderer must write: the link
/// is not made and stays as written (Zulip's `[foo](javascript://foo.com)` case).
pub(crate) const HOSTILE: &[(&str, &str)] = &[
    ("[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>"),
    ("[x](JaVaScRiPt:alert(1))", "<p>[x](JaVaScRiPt:alert(1))</p>"),
    ("[x](vbscript:msgbox(1))", "<p>[x](vbscript:msgbox(1))</p>"),
    ("[x](data:text/html;base64,PHNjcmlwdD4=)", "<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>"),
    // Character references are decoded first, as the browser would decode the attribute.
    ("[x](&#106;avascript:alert(1))", "<p>[x](&amp;#106;avascript:alert(1))</p>"),
    ("[x](&#x6A;avascript:alert(1))", "<p>[x](&amp;#x6A;avascript:alert(1))</p>"),
    ("[x](javascript&colon;alert(1))", "<p>[x](javascript&amp;colon;alert(1))</p>"),
    // Tabs, line breaks, leading spaces and control characters, which browsers drop.
    ("[x](<java\tscript:alert(1)>)", "<p>[x](&lt;java\tscript:alert(1)&gt;)</p>"),
    ("[x](java&#9;script:alert(1))", "<p>[x](java&amp;#9;script:alert(1))</p>"),
    ("[x](java&NewLine;script:alert(1))", "<p>[x](java&amp;NewLine;script:alert(1))</p>"),
    ("[x](< javascript:alert(1)>)", "<p>[x](&lt; javascript:alert(1)&gt;)</p>"),
    ("[x](&#32;javascript:alert(1))", "<p>[x](&amp;#32;javascript:alert(1))</p>"),
    ("[x](&#1;javascript:alert(1))", "<p>[x](&amp;#1;javascript:alert(1))</p>"),
    // Percent-encoding is no scheme: Zulip makes it http://javascript%3Aalert(1), whose
    // host is invalid, so no link at all.
    ("[x](javascript%3Aalert(1))", "<p>[x](javascript%3Aalert(1))</p>"),
    ("[x](%6Aavascript:alert(1))", "<p>[x](%6Aavascript:alert(1))</p>"),
    // Images, autolinks and reference links.
    ("![x](javascript:alert(1))", "<p>![x](javascript:alert(1))</p>"),
    ("![x](data:image/svg+xml;base64,PHN2Zz4=)", "<p>![x](data:image/svg+xml;base64,PHN2Zz4=)</p>"),
    ("<javascript:alert(1)>", "<p>&lt;javascript:alert(1)&gt;</p>"),
    ("[x][r]\n\n[r]: javascript:alert(1)", "<p>[x][r]</p>"),
    ("[r]\n\n[r]: &#106;avascript:alert(1)", "<p>[r]</p>"),
    // The content of a refused link is Markdown as usual.
    ("[**b**](javascript:alert(1) \"t\")", "<p>[<strong>b</strong>](javascript:alert(1) \"t\")</p>"),
];

/// Destinations that are links, as Zulip's `sanitize_url` makes them.
pub(crate) const SAFE: &[(&str, &str)] = &[
    ("[x](https://zulip.com/a?b=c&d=e)", "<p><a href=\"https://zulip.com/a?b=c&amp;d=e\">x</a></p>"),
    ("[x](example.com)", "<p><a href=\"http://example.com\">x</a></p>"),
    ("[x](/user_uploads/1/ab/a.pdf)", "<p><a href=\"/user_uploads/1/ab/a.pdf\">x</a></p>"),
    ("[x](#narrow/channel/1-a)", "<p><a href=\"#narrow/channel/1-a\">x</a></p>"),
    ("[x](a@b.com)", "<p><a href=\"mailto:a@b.com\">x</a></p>"),
    (
        "[x](tel:+14155551234 \"a \\\"q\\\" <b>\")",
        "<p><a href=\"tel:+14155551234\" title=\"a &quot;q&quot; &lt;b&gt;\">x</a></p>",
    ),
    ("<https://a.b/c>", "<p><a href=\"https://a.b/c\">https://a.b/c</a></p>"),
    ("<a@b.com>", "<p><a href=\"mailto:a@b.com\">a@b.com</a></p>"),
    ("![a *b* [c](d)](https://a.b/i.png \"t\")", "<p><img src=\"https://a.b/i.png\" alt=\"a b c\" title=\"t\"></p>"),
    ("[![i](/i.png)](https://a.b)", "<p><a href=\"https://a.b\"><img src=\"/i.png\" alt=\"i\"></a></p>"),
];

#[test]
fn hostile_urls_make_no_link_in_descriptions() {
    for (source, html) in HOSTILE.iter().chain(SAFE) {
        assert_eq!(render(source), *html, "{source}");
    }
}

#[test]
fn output_is_in_the_sanitizers_canonical_form() {
    let cases = [
        ("it's \"quoted\"\u{a0}&", "<p>it's \"quoted\"&nbsp;&amp;</p>"),
        ("a  \nb\r\nc\rd\n\n---", "<p>a<br>\nb\nc\nd</p>\n<hr>"),
        ("```it's\n\"x\" < y\n```", "<pre><code class=\"language-it's\">\"x\" &lt; y\n</code></pre>"),
        ("| a | b |\n|:-|-:|\n| 1 | 2 |", "<table><thead><tr><th style=\"text-align: left\">a</th><th style=\"text-align: right\">b</th></tr></thead><tbody>\n<tr><td style=\"text-align: left\">1</td><td style=\"text-align: right\">2</td></tr>\n</tbody></table>"),
    ];
    for (source, html) in cases {
        assert_eq!(render_unsanitized(source), html, "{source:?}");
        assert_eq!(render(source), html, "{source:?}");
    }
}
