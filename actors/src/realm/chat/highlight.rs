//! Search highlighting: `match_content` and `match_subject` of search narrows, the
//! matched words wrapped in `<span class="highlight">` as Zulip marks them. Both end with
//! the HTML sanitizer, as every renderer does.

use crate::markdown::{escape_text, sanitize};

/// `match_content`: the rendered message with the matched words marked.
pub fn match_content(rendered: &str, words: &[String]) -> String {
    sanitize::clean(&highlight_html(rendered, words))
}

/// `match_subject`: the topic, as HTML, with the matched words marked (without a leading
/// U+FEFF, which an HTML parser drops: there may be several).
pub fn match_subject(topic: &str, words: &[String]) -> String {
    let topic = topic.trim_start_matches('\u{feff}');
    sanitize::clean(&highlight_text(&escape_text(topic), words))
}

/// Wraps each whole-word, case-insensitive occurrence of `words` in the text of `html`
/// (never inside tags).
pub fn highlight_html(html: &str, words: &[String]) -> String {
    let mut out = String::with_capacity(html.len() + 32);
    let mut rest = html;
    while !rest.is_empty() {
        match rest.find('<') {
            Some(0) => {
                let end = rest.find('>').map_or(rest.len(), |i| i + 1);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            }
            Some(start) => {
                out.push_str(&highlight_text(&rest[..start], words));
                rest = &rest[start..];
            }
            None => {
                out.push_str(&highlight_text(rest, words));
                rest = "";
            }
        }
    }
    out
}

/// Wraps matching words of already-escaped text.
pub fn highlight_text(text: &str, words: &[String]) -> String {
    if words.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut word_start: Option<usize> = None;
    let flush = |out: &mut String, word: &str| {
        if words.iter().any(|w| w.to_lowercase() == word.to_lowercase()) {
            out.push_str("<span class=\"highlight\">");
            out.push_str(word);
            out.push_str("</span>");
        } else {
            out.push_str(word);
        }
    };
    let mut in_entity = false;
    for (i, c) in text.char_indices() {
        // Character references (`&amp;`, `&#39;`) are opaque: no word inside them.
        if in_entity {
            out.push(c);
            in_entity = c != ';' && (c.is_alphanumeric() || c == '#');
            continue;
        }
        if c == '&' {
            if let Some(start) = word_start.take() {
                flush(&mut out, &text[start..i]);
            }
            out.push(c);
            in_entity = true;
            continue;
        }
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
        } else {
            if let Some(start) = word_start.take() {
                flush(&mut out, &text[start..i]);
            }
            out.push(c);
        }
    }
    if let Some(start) = word_start {
        flush(&mut out, &text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn character_references_stay_whole() {
        let words = vec!["amp".to_owned(), "39".to_owned()];
        assert_eq!(
            highlight_text("a &amp; b &#39; amp 39", &words),
            "a &amp; b &#39; <span class=\"highlight\">amp</span> <span class=\"highlight\">39</span>"
        );
    }

    #[test]
    fn words_are_highlighted_outside_tags_only() {
        let words = vec!["ghost".to_owned()];
        assert_eq!(
            highlight_html("<p class=\"ghost\">The Ghost, ghosts</p>", &words),
            "<p class=\"ghost\">The <span class=\"highlight\">Ghost</span>, ghosts</p>"
        );
        assert_eq!(highlight_text("no match", &words), "no match");
    }
}
