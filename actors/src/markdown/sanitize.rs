//! The last step of every renderer: an HTML sanitizer (ammonia) that keeps exactly the
//! tags, attributes, classes and URL schemes our renderers write, so that a rendering
//! rule added later cannot let script through.
//!
//! Rendered HTML is written in the sanitizer's own canonical form (see `escape`), so on
//! what the renderers produce the sanitizer changes nothing; the property tests check that.

use std::borrow::Cow;
use std::sync::OnceLock;

use ammonia::{Builder, UrlRelative};

use super::url::ALLOWED_SCHEMES;

/// The elements the renderers write.
const TAGS: &[&str] = &[
    "a",
    "audio",
    "blockquote",
    "br",
    "code",
    "del",
    "div",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "img",
    "li",
    "ol",
    "p",
    "pre",
    "span",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "time",
    "tr",
    "ul",
    "video",
];

/// Each element's attributes (`class` values are checked by `filter`).
const ATTRIBUTES: &[(&str, &[&str])] = &[
    ("a", &["href", "title", "class", "data-stream-id"]),
    (
        "img",
        &[
            "src",
            "alt",
            "title",
            "class",
            "data-original-content-type",
            "data-original-dimensions",
            "data-original-src",
            "data-animated",
        ],
    ),
    ("span", &["class", "data-user-id", "data-user-group-id", "aria-label", "role", "title"]),
    ("div", &["class", "data-code-language"]),
    ("video", &["preload", "src"]),
    ("audio", &["controls", "preload", "src", "title"]),
    ("code", &["class"]),
    ("time", &["datetime"]),
    ("ol", &["start"]),
    ("th", &["style"]),
    ("td", &["style"]),
];

/// Each element's classes (besides `emoji-<code point>` on `span` and `language-<name>` on
/// `code`).
const CLASSES: &[(&str, &[&str])] = &[
    ("a", &["stream", "stream-topic"]),
    (
        "span",
        &[
            "user-mention",
            "user-group-mention",
            "channel-wildcard-mention",
            "topic-mention",
            "silent",
            "emoji",
            "highlight",
        ],
    ),
    ("div", &["codehilite", "message_inline_image", "message_inline_video"]),
    ("img", &["image-loading-placeholder", "emoji", "inline-image"]),
];

/// Cleans rendered HTML: anything our renderers do not write is removed.
pub fn clean(html: &str) -> String {
    builder().clean(html).to_string()
}

fn builder() -> &'static Builder<'static> {
    static BUILDER: OnceLock<Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let mut builder = Builder::empty();
        builder
            .tags(TAGS.iter().copied().collect())
            .generic_attributes(Default::default())
            .tag_attributes(ATTRIBUTES.iter().map(|(tag, attrs)| (*tag, attrs.iter().copied().collect())).collect())
            .url_schemes(ALLOWED_SCHEMES.iter().copied().collect())
            .url_relative(UrlRelative::PassThrough)
            .link_rel(None)
            .strip_comments(true)
            .attribute_filter(filter);
        builder
    })
}

/// Restricts attribute values: only known classes, only text alignment as a style.
fn filter<'v>(element: &str, attribute: &str, value: &'v str) -> Option<Cow<'v, str>> {
    match attribute {
        "class" => {
            let allowed: Vec<&str> =
                value.split_ascii_whitespace().filter(|class| class_allowed(element, class)).collect();
            if allowed.is_empty() {
                None
            } else if allowed.join(" ") == value {
                Some(Cow::Borrowed(value))
            } else {
                Some(Cow::Owned(allowed.join(" ")))
            }
        }
        "style" => matches!(value, "text-align: left" | "text-align: center" | "text-align: right")
            .then_some(Cow::Borrowed(value)),
        "role" => (value == "img").then_some(Cow::Borrowed(value)),
        _ => Some(Cow::Borrowed(value)),
    }
}

fn class_allowed(element: &str, class: &str) -> bool {
    let listed = CLASSES.iter().any(|(tag, classes)| *tag == element && classes.contains(&class));
    listed
        || match element {
            "span" => class
                .strip_prefix("emoji-")
                .is_some_and(|code| !code.is_empty() && code.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')),
            "code" => class.strip_prefix("language-").is_some_and(|lang| !lang.is_empty()),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_and_unknown_markup_are_removed() {
        let cases = [
            ("<p>a<script>alert(1)</script></p>", "<p>a</p>"),
            ("<a href=\"javascript:alert(1)\">x</a>", "<a>x</a>"),
            ("<a href=\" java\tscript:alert(1)\">x</a>", "<a>x</a>"),
            ("<a href=\"&#106;avascript:alert(1)\">x</a>", "<a>x</a>"),
            ("<img src=\"data:image/png;base64,AA\" alt=\"a\">", "<img alt=\"a\">"),
            ("<a href=\"vbscript:x\" onclick=\"x()\" class=\"stream evil\">x</a>", "<a class=\"stream\">x</a>"),
            (
                "<span class=\"emoji emoji-1f600 x\" style=\"color: red\" role=\"button\">:)</span>",
                "<span class=\"emoji emoji-1f600\">:)</span>",
            ),
            ("<td style=\"background: url(x)\">a</td>", "a"),
            ("<iframe src=\"https://a\"></iframe><svg><a href=\"https://b\">b</a></svg>", ""),
        ];
        for (html, clean_html) in cases {
            assert_eq!(clean(html), clean_html, "{html}");
        }
    }

    #[test]
    fn what_the_renderers_write_is_kept() {
        let html = "<p><a href=\"/#narrow/channel/1-a\" class=\"stream\" data-stream-id=\"1\">#a</a> \
            <a href=\"mailto:a@b.c\" title=\"t\">m</a> <a href=\"#x\">f</a> <img src=\"/user_uploads/1/a.png\" alt=\"a\">\
            <span class=\"user-mention silent\" data-user-id=\"*\">x</span> &amp; \"q\" &lt;</p>\n\
            <div class=\"codehilite\" data-code-language=\"rust\"><pre><span></span><code>x\n</code></pre></div>\n\
            <pre><code class=\"language-rust\">y\n</code></pre>\n\
            <table>\n<thead>\n<tr>\n<th style=\"text-align: left\">h</th>\n</tr>\n</thead>\n</table>\n\
            <ol start=\"3\">\n<li>x</li>\n</ol>\n<hr>\n<h1>t</h1><p>a<br>\nb <del>c</del> <em>d</em> <strong>e</strong></p>";
        assert_eq!(clean(html), html);
    }
}
