//! The plain text of a notification, from a message's rendered HTML (Zulip's
//! `get_mobile_push_content`): emoji as their characters, images as their alt text, quotes
//! as `> ` lines, tags dropped, entities decoded.

/// The text a notification shows for rendered `html`.
pub fn mobile_push_content(html: &str) -> String {
    let mut out = String::new();
    let mut quote_depth = 0usize;
    let mut quoted = String::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        push_text(&rest[..lt], quote_depth, &mut out, &mut quoted);
        let Some(gt) = rest[lt..].find('>') else {
            rest = &rest[lt..];
            break;
        };
        let tag = &rest[lt + 1..lt + gt];
        rest = &rest[lt + gt + 1..];
        let name = tag.trim_start_matches('/').split([' ', '/']).next().unwrap_or("").to_ascii_lowercase();
        let closing = tag.starts_with('/');
        match name.as_str() {
            "blockquote" if !closing => quote_depth += 1,
            "blockquote" => {
                quote_depth = quote_depth.saturating_sub(1);
                if quote_depth == 0 {
                    for line in quoted.lines().filter(|l| !l.is_empty()) {
                        out.push_str("> ");
                        out.push_str(line);
                        out.push('\n');
                    }
                    quoted.clear();
                }
            }
            "img" => push_text(&attribute(tag, "alt").unwrap_or_default(), quote_depth, &mut out, &mut quoted),
            "span" if !closing => {
                if let Some(emoji) = attribute(tag, "class").and_then(|c| emoji_of(&c)) {
                    push_text(&emoji, quote_depth, &mut out, &mut quoted);
                    // The span's own text (`:name:`) is replaced by the character.
                    if let Some(end) = rest.find("</span>") {
                        rest = &rest[end + "</span>".len()..];
                    }
                }
            }
            _ => {}
        }
    }
    push_text(rest, quote_depth, &mut out, &mut quoted);
    out
}

fn push_text(raw: &str, quote_depth: usize, out: &mut String, quoted: &mut String) {
    let text = decode_entities(raw);
    if quote_depth > 0 {
        quoted.push_str(&text);
    } else {
        out.push_str(&text);
    }
}

/// The value of attribute `name` of a tag's source.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')?;
    Some(decode_entities(&tag[start..start + end]))
}

/// The character of an `emoji emoji-1f600` class (several code points joined by `-`).
fn emoji_of(class: &str) -> Option<String> {
    if !class.split(' ').any(|c| c == "emoji") {
        return None;
    }
    let code = class.split(' ').find_map(|c| c.strip_prefix("emoji-"))?;
    code.split('-').map(|hex| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)).collect()
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.find(';').filter(|i| *i <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" | "#x27" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_go_and_entities_come_back() {
        assert_eq!(mobile_push_content("<p>Hello <strong>world</strong> &amp; &lt;you&gt;</p>"), "Hello world & <you>");
        assert_eq!(
            mobile_push_content("<p><span aria-label=\"smile\" class=\"emoji emoji-1f604\" role=\"img\" title=\"smile\">:smile:</span> hi</p>"),
            "😄 hi"
        );
        assert_eq!(
            mobile_push_content("<blockquote>\n<p>quoted</p>\n</blockquote>\n<p>reply</p>"),
            "> quoted\n\nreply"
        );
        assert_eq!(mobile_push_content("<p><img alt=\"cat\" src=\"x\"></p>"), "cat");
    }
}
