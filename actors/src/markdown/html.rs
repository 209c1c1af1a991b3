//! The renderers' common writer: pulldown-cmark events in, events whose text, code, links
//! and images are already HTML (in the sanitizer's canonical form) out, for
//! `pulldown_cmark::html::push_html` to write along with the block structure.
//!
//! Links and images are made only to URLs `url::link_href` allows. A refused one is shown
//! as Zulip shows it: the link is not made and its text stays as written (`[x](javascript:…)`),
//! with its content rendered as ordinary Markdown.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Tag, TagEnd};

use super::escape::{escape_attr, escape_text};
use super::url::link_href;

/// Writes a code block from its info string and body (both restored).
pub type CodeBlockFn = fn(info: &str, body: &str) -> String;

/// An element the writer is inside of.
enum Open {
    /// A link that was made: `</a>` at its end.
    Link,
    /// A refused link or image: its opening (`[` or `![`) was written as text, then its
    /// content; at its end the rest of its source, from the end of its content.
    Refused { end: usize, inner_end: usize },
    /// An image that is made at its end, once its alt text is known.
    Image { src: String, title: String, alt: String },
    /// A link or image inside an image's description: it only adds to the alt text.
    InAlt,
    /// A refused autolink, written whole as its source text: its content is skipped.
    Skip,
}

/// Turns one document's events into HTML events. `source` is the text the event ranges
/// refer to; `restore` gives back the text a renderer replaced by placeholders, for
/// everything that must not contain them (attributes, code, text shown as written).
pub struct Writer<'a, 'r> {
    source: &'a str,
    restore: &'r dyn Fn(&str) -> String,
    soft_break: &'static str,
    code_block: CodeBlockFn,
    events: Vec<Event<'a>>,
    open: Vec<Open>,
    code: Option<(String, String)>,
    /// Which image sources may be shown (`None`: any the URL rules allow).
    image_filter: Option<&'r dyn Fn(&str) -> bool>,
    /// A link was made.
    pub has_link: bool,
    /// An image was made.
    pub has_image: bool,
}

impl<'a, 'r> Writer<'a, 'r> {
    /// A writer for `source`, writing soft line breaks as `soft_break` and code blocks with
    /// `code_block`.
    pub fn new(
        source: &'a str,
        restore: &'r dyn Fn(&str) -> String,
        soft_break: &'static str,
        code_block: CodeBlockFn,
    ) -> Self {
        Writer {
            source,
            restore,
            soft_break,
            code_block,
            events: Vec::new(),
            open: Vec::new(),
            code: None,
            image_filter: None,
            has_link: false,
            has_image: false,
        }
    }

    /// Shows only the images whose source `allowed` accepts; the others are refused (kept as
    /// written), as messages refuse images that are not uploaded (Zulip's FL 467).
    pub fn only_images(mut self, allowed: &'r dyn Fn(&str) -> bool) -> Self {
        self.image_filter = Some(allowed);
        self
    }

    /// Whether the next event is inside a link that was made (where nothing may make
    /// another link: nested `<a>` elements are not HTML).
    pub fn in_link(&self) -> bool {
        self.open.iter().any(|o| matches!(o, Open::Link))
    }

    /// Takes one event and its source range.
    pub fn push(&mut self, event: Event<'a>, range: Range<usize>) {
        match event {
            Event::Start(Tag::Link { link_type, dest_url, title, .. }) => {
                self.saw(range.end);
                self.start(false, link_type, &dest_url, &title, range);
            }
            Event::Start(Tag::Image { link_type, dest_url, title, .. }) => {
                self.saw(range.end);
                self.start(true, link_type, &dest_url, &title, range);
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                self.end();
                self.saw(range.end);
            }
            other => {
                self.saw(range.end);
                self.content(other);
            }
        }
    }

    /// The HTML events, for `push_html`.
    pub fn finish(self) -> Vec<Event<'a>> {
        self.events
    }

    /// Notes that a refused element's content reaches `end`.
    fn saw(&mut self, end: usize) {
        for open in &mut self.open {
            if let Open::Refused { inner_end, .. } = open {
                *inner_end = (*inner_end).max(end);
            }
        }
    }

    fn html(&mut self, html: String) {
        self.events.push(Event::Html(CowStr::from(html)));
    }

    fn text(&mut self, text: &str) {
        self.html(escape_text(text));
    }

    /// The source text of `range`, restored.
    fn source_text(&self, range: Range<usize>) -> String {
        (self.restore)(self.source.get(range).unwrap_or_default())
    }

    fn alt(&mut self) -> Option<&mut String> {
        self.open.iter_mut().rev().find_map(|o| match o {
            Open::Image { alt, .. } => Some(alt),
            _ => None,
        })
    }

    fn start(&mut self, image: bool, link_type: LinkType, dest: &str, title: &str, range: Range<usize>) {
        if matches!(self.open.last(), Some(Open::Skip)) {
            self.open.push(Open::Skip);
            return;
        }
        if self.alt().is_some() {
            self.open.push(Open::InAlt);
            return;
        }
        let dest = (self.restore)(dest);
        let title = (self.restore)(title);
        let href = match link_type {
            // No link inside a link (`<a>` inside `<a>` is not HTML): it stays as written.
            _ if !image && self.in_link() => None,
            LinkType::Email => link_href(&format!("mailto:{dest}")),
            _ => link_href(&dest),
        };
        let href = match (image, self.image_filter) {
            (true, Some(allowed)) => href.filter(|src| allowed(src)),
            _ => href,
        };
        match href {
            Some(src) if image => {
                self.has_image = true;
                self.open.push(Open::Image { src, title, alt: String::new() });
            }
            Some(href) => {
                self.has_link = true;
                self.html(format!("<a href=\"{}\"{}>", escape_attr(&href), title_attr(&title)));
                self.open.push(Open::Link);
            }
            None if matches!(link_type, LinkType::Autolink | LinkType::Email) => {
                let text = self.source_text(range);
                self.text(&text);
                self.open.push(Open::Skip);
            }
            None => {
                let opening = (range.start + if image { 2 } else { 1 }).min(range.end);
                let text = self.source_text(range.start..opening);
                self.text(&text);
                self.open.push(Open::Refused { end: range.end, inner_end: opening });
            }
        }
    }

    fn end(&mut self) {
        match self.open.pop() {
            Some(Open::Link) => self.html("</a>".into()),
            Some(Open::Refused { end, inner_end }) => {
                let text = self.source_text(inner_end..end);
                self.text(&text);
            }
            Some(Open::Image { src, title, alt }) => self.html(format!(
                "<img src=\"{}\" alt=\"{}\"{}>",
                escape_attr(&src),
                escape_attr(&alt),
                title_attr(&title)
            )),
            Some(Open::InAlt | Open::Skip) | None => {}
        }
    }

    fn content(&mut self, event: Event<'a>) {
        if matches!(self.open.last(), Some(Open::Skip)) {
            return;
        }
        if let Some((_, body)) = self.code.as_mut() {
            match event {
                Event::Text(text) => body.push_str(&(self.restore)(&text)),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((info, body)) = self.code.take() {
                        self.html((self.code_block)(&info, &body));
                    }
                }
                _ => {}
            }
            return;
        }
        let restore = self.restore;
        if let Some(alt) = self.alt() {
            match event {
                Event::Text(text) | Event::Code(text) | Event::Html(text) | Event::InlineHtml(text) => {
                    alt.push_str(&restore(&text));
                }
                Event::SoftBreak | Event::HardBreak => alt.push(' '),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => restore(&info),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((info, String::new()));
            }
            Event::Text(text) => self.text(&text),
            // Raw HTML is never let through: it is shown as the text it was written as.
            Event::Html(raw) | Event::InlineHtml(raw) => {
                let text = restore(&raw);
                self.text(&text);
            }
            Event::Code(code) => {
                let code = format!("<code>{}</code>", escape_text(&restore(&code)));
                self.html(code);
            }
            Event::SoftBreak => self.html(self.soft_break.into()),
            Event::HardBreak => self.html("<br>\n".into()),
            Event::Rule => self.html("<hr>\n".into()),
            other => self.events.push(other),
        }
    }
}

fn title_attr(title: &str) -> String {
    if title.is_empty() {
        String::new()
    } else {
        format!(" title=\"{}\"", escape_attr(title))
    }
}
