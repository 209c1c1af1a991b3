//! Property tests shared by the renderers: arbitrary Markdown, weighted towards links and
//! images with hostile destinations, never panics, never yields an `href` or `src` whose
//! scheme (as the browser decodes the attribute) is outside Zulip's list, and comes out of
//! the sanitizer unchanged.

use ammonia::url::{ParseError, Url};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::sanitize;
use super::url::ALLOWED_SCHEMES;

/// How many inputs each property test tries: enough to hit every kind of fragment in many
/// arrangements, few enough to run in about a second in a debug build.
pub const CASES: u32 = 384;

/// What a destination may start with: hostile schemes and their disguises, and the
/// allowed kinds of URL.
const SCHEMES: &[&str] = &[
    "javascript:",
    "JaVaScRiPt:",
    "vbscript:",
    "data:text/html,",
    "data:image/svg+xml;base64,",
    "&#106;avascript:",
    "&#x6A;avascript:",
    "&#0000106;avascript:",
    "javascript&colon;",
    "javascript&#58;",
    "javascript&#x3a;",
    "java\tscript:",
    "java&#9;script:",
    "java&Tab;script:",
    "java&#x0A;script:",
    "java&NewLine;script:",
    "java\\\nscript:",
    " javascript:",
    "&#32;javascript:",
    "&nbsp;javascript:",
    "\u{1}javascript:",
    "&#1;javascript:",
    "&#0;javascript:",
    "%6Aavascript:",
    "javascript%3A",
    "java<x>script:",
    "javascript\\:",
    "\\javascript:",
    "jav&amp;ascript:",
    "https://",
    "http:",
    "mailto:",
    "tel:",
    "file:///",
    "ftp://",
    "//",
    "/",
    "#",
    "",
    "a@",
];

/// What follows a scheme in a destination.
const PAYLOADS: &[&str] = &["alert(1)", "a.b/c?d=e&f=g#h", "x", "", "a b", "(1)", "'\"<>", "%0a", "&amp;", "@b.c"];

/// Other pieces of Markdown and of Zulip's syntax.
const PIECES: &[&str] = &[
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "!",
    "*",
    "**",
    "_",
    "`",
    "```",
    "~~~",
    "\n",
    "\n\n",
    "  \n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "> ",
    "- ",
    "1. ",
    "# ",
    "---",
    "| a | b |\n|-|:-:|\n| c | d |\n",
    "\\",
    "&",
    "&amp;",
    "&#39;",
    "&quot;",
    "&lt;",
    "\"",
    "'",
    "\u{a0}",
    "\u{0}",
    "\u{b}",
    "\u{c}",
    "\u{feff}",
    "\u{e000}",
    "\u{e001}",
    "é",
    "💩",
    "@**all**",
    "@_**topic**",
    "@*group*",
    "#**general**",
    "#**general>t**",
    ":smile:",
    ":+1:",
    "https://a.b/c",
    "http://x.y/(z)",
    "http://",
    "<b>",
    "</p>",
    "<!--",
    "-->",
    "<script>",
    "<a href=\"javascript:x\">",
    "[r]: ",
    "\n[r]: javascript:x\n",
    "\n\n[r]: /ok \"t\"\n",
    "[r]",
    "[x][r]",
    "[]",
    "![",
    "](",
    "<https://a.b>",
    "<javascript:alert(1)>",
    "<a@b.c>",
    "<mailto:x>",
];

/// How a link or image starts.
const OPENINGS: &[&str] = &["[", "![", "[![i](/i.png)", "[**b** "];

/// Words (that the highlighting tests search for).
pub const WORDS: &[&str] = &["ghost", "amp", "script", "href", "39", "nbsp", "lt"];

fn destination() -> impl Strategy<Value = String> {
    (
        prop::sample::select(SCHEMES),
        prop::sample::select(PAYLOADS),
        any::<bool>(),
        prop::option::of(prop::sample::select(PAYLOADS)),
    )
        .prop_map(|(scheme, payload, pointy, title)| {
            let dest = if pointy { format!("<{scheme}{payload}>") } else { format!("{scheme}{payload}") };
            match title {
                Some(title) => format!("{dest} \"{title}\""),
                None => dest,
            }
        })
}

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (prop::sample::select(OPENINGS), prop::sample::select(PIECES), destination())
            .prop_map(|(open, text, dest)| format!("{open}{text}]({dest})")),
        1 => destination().prop_map(|dest| format!("<{dest}>")),
        1 => destination().prop_map(|dest| format!("[x][r]\n\n[r]: {dest}\n")),
        4 => prop::sample::select(PIECES).prop_map(str::to_owned),
        2 => any::<char>().prop_map(String::from),
        2 => prop::sample::select(WORDS).prop_map(str::to_owned),
    ]
}

/// Arbitrary Markdown made of the fragments above.
pub fn markdown() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..16).prop_map(|parts| parts.concat())
}

/// Runs `check` on `CASES` inputs (or `PROPTEST_CASES`, for a longer run by hand).
pub fn run(check: impl Fn(&str) -> Result<(), TestCaseError>) {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES);
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let result = TestRunner::new(config).run(&markdown(), |source| check(&source));
    if let Err(err) = result {
        panic!("{err}");
    }
}

/// What every renderer's output must keep to: unchanged by the sanitizer, and every URL
/// attribute (decoded as a browser decodes it) of an allowed scheme or relative.
pub fn check_html(source: &str, html: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(&sanitize::clean(html), html, "not a fixed point of the sanitizer: {:?}", source);
    for url in url_attributes(html) {
        let url =
            decode_attribute(&url).map_err(|e| TestCaseError::fail(format!("{e} in {html:?} from {source:?}")))?;
        match Url::parse(&url) {
            Ok(parsed) => prop_assert!(
                ALLOWED_SCHEMES.contains(&parsed.scheme()),
                "scheme {} in {:?} from {:?}",
                parsed.scheme(),
                html,
                source
            ),
            Err(ParseError::RelativeUrlWithoutBase) => {}
            Err(e) => prop_assert!(false, "malformed URL {:?} ({}) in {:?} from {:?}", url, e, html, source),
        }
    }
    Ok(())
}

/// The raw values of every `href` and `src` attribute. In the canonical form text has no
/// raw `<` and attribute values no raw `>`, so a tag runs from `<` to the next `>`.
fn url_attributes(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let tag_end = rest[start..].find('>').map_or(rest.len(), |end| start + end);
        let mut tag = &rest[start..tag_end];
        while let Some(at) = [" href=\"", " src=\""].iter().filter_map(|name| Some((tag.find(name)?, name.len()))).min()
        {
            let value = &tag[at.0 + at.1..];
            let end = value.find('"').unwrap_or(value.len());
            found.push(value[..end].to_owned());
            tag = &value[end..];
        }
        rest = &rest[tag_end..];
    }
    found
}

/// An attribute value decoded as a browser decodes it, for the references our escaping
/// writes; any other character reference is an error (it would mean text reached an
/// attribute unescaped).
fn decode_attribute(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let (reference, c) = [("&amp;", '&'), ("&quot;", '"'), ("&lt;", '<'), ("&gt;", '>'), ("&nbsp;", '\u{a0}')]
            .into_iter()
            .find(|(r, _)| after.starts_with(r))
            .ok_or_else(|| format!("unexpected character reference at {after:?}"))?;
        out.push(c);
        rest = &after[reference.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

#[test]
fn descriptions_and_profile_text_keep_to_the_properties() {
    run(|source| {
        let html = super::render_unsanitized(source);
        check_html(source, &html)?;
        prop_assert_eq!(super::render(source), html);
        Ok(())
    });
}
