//! Slack's message markup (`mrkdwn`) to Zulip's Markdown, as Zulip's Slack converter
//! (`convert_to_zulip_markdown`) does it: `*bold*`, `_italic_`, `~strike~` with its
//! exact rules for what may stand around the markers; `<@U…>` mentions, `<#C…|name>`
//! channel links, `<!here>` and the like, `<url|text>` links and `<mailto:…>` addresses.
//!
//! Unlike Zulip's regular expressions, which run over the whole text, code (`` `x` `` and
//! ```` ``` ```` blocks) is left as it is, and what a `<…>` becomes is never reformatted
//! (an `_` in a URL stays). Slack escapes `<`, `>` and `&` as HTML entities: they are left
//! so (Markdown shows them as the characters, as Zulip does) except in code, where Markdown
//! would show them as written, and for a `&gt;` starting a line, Slack's quote.

use std::collections::HashMap;

use super::people::People;

/// What the conversion needs to know of the workspace.
pub struct Workspace<'a> {
    pub people: &'a People,
    /// Slack channel id -> name.
    pub channels: &'a HashMap<String, String>,
}

/// A message's text in Zulip's Markdown, and who it mentions (person ids).
#[derive(Debug, PartialEq, Eq)]
pub struct Converted {
    pub text: String,
    pub mentioned: Vec<i64>,
}

/// A piece of the text: a character the formatting rules look at, or something already
/// converted (code, a mention, a link) that they pass over like a letter.
#[derive(Debug, Clone)]
enum Unit {
    Char(char),
    Done(String),
}

/// Converts one message's `text`.
pub fn convert(text: &str, workspace: &Workspace<'_>) -> Converted {
    let mut mentioned = Vec::new();
    let mut units = tokenize(text, workspace, &mut mentioned);
    for (mark, with) in [('*', "**"), ('~', "~~"), ('_', "*")] {
        units = emphasis(&units, mark, with);
    }
    let mut out = String::with_capacity(text.len());
    for unit in units {
        match unit {
            Unit::Char(c) => out.push(c),
            Unit::Done(s) => out.push_str(&s),
        }
    }
    mentioned.dedup();
    Converted { text: out, mentioned }
}

fn tokenize(text: &str, workspace: &Workspace<'_>, mentioned: &mut Vec<i64>) -> Vec<Unit> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| chars.get(i + k) == Some(&c));
    let find = |from: usize, s: &str, within_line: bool| {
        (from..n).take_while(|&k| !(within_line && chars[k] == '\n')).find(|&k| at(k, s))
    };
    let mut units = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let line_start = i == 0 || chars[i - 1] == '\n';
        if at(i, "```") {
            if let Some(end) = find(i + 3, "```", false) {
                let body: String = chars[i + 3..end].iter().collect();
                let next = chars.get(end + 3).copied();
                units.push(Unit::Done(code_block(&body, line_start, next)));
                i = end + 3;
                continue;
            }
        } else if chars[i] == '`' {
            if let Some(end) = find(i + 1, "`", true).filter(|&end| end > i + 1) {
                let body: String = chars[i + 1..end].iter().collect();
                units.push(Unit::Done(format!("`{}`", decode(&body))));
                i = end + 1;
                continue;
            }
        } else if chars[i] == '<' {
            let end = (i + 1..n).take_while(|&k| chars[k] != '\n' && chars[k] != '<').find(|&k| chars[k] == '>');
            if let Some(end) = end {
                let inner: String = chars[i + 1..end].iter().collect();
                if let Some(done) = angle(&inner, workspace, mentioned) {
                    units.push(Unit::Done(done));
                    i = end + 1;
                    continue;
                }
            }
        } else if line_start && at(i, "&gt;") {
            units.push(Unit::Char('>'));
            i += 4;
            continue;
        }
        units.push(Unit::Char(chars[i]));
        i += 1;
    }
    units
}

/// A ```` ``` ```` block, its fences on lines of their own (Slack allows text right after
/// the fence, Markdown does not).
fn code_block(body: &str, line_start: bool, next: Option<char>) -> String {
    let body = decode(body);
    let body = body.strip_prefix('\n').unwrap_or(&body);
    let body = body.strip_suffix('\n').unwrap_or(body);
    let before = if line_start { "" } else { "\n" };
    let after = if next.is_none_or(|c| c == '\n') { "" } else { "\n" };
    format!("{before}```\n{body}\n```{after}")
}

/// What `<inner>` stands for; `None` leaves it as written.
fn angle(inner: &str, workspace: &Workspace<'_>, mentioned: &mut Vec<i64>) -> Option<String> {
    let (target, label) = match inner.split_once('|') {
        Some((target, label)) => (target, Some(label)),
        None => (inner, None),
    };
    if let Some(slack_id) = target.strip_prefix('@') {
        let id = workspace.people.user(slack_id)?;
        if !mentioned.contains(&id) {
            mentioned.push(id);
        }
        return Some(format!("@**{}|{id}**", workspace.people.full_name(id)));
    }
    if let Some(channel) = target.strip_prefix('#') {
        let name = workspace.channels.get(channel).map(String::as_str).or(label)?;
        return Some(format!("#**{name}**"));
    }
    if let Some(special) = target.strip_prefix('!') {
        return match special {
            "here" | "channel" | "everyone" => Some("@**all**".into()),
            // `<!subteam^S1|@team>`, `<!date^…|fallback>`: what Slack shows.
            _ => label.map(decode),
        };
    }
    if let Some(address) = target.strip_prefix("mailto:") {
        return Some(decode(address));
    }
    let scheme = target.split_once("://").map(|(s, _)| s)?;
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return None;
    }
    let url = decode(target);
    let destination = if url.contains([' ', '(', ')']) { format!("<{url}>") } else { url.clone() };
    match label.filter(|l| !l.is_empty() && decode(l) != url) {
        Some(label) => Some(format!("[{}]({destination})", escape_label(label))),
        None => Some(url),
    }
}

pub(super) fn escape_label(label: &str) -> String {
    label.replace('[', "\\[").replace(']', "\\]")
}

/// Slack's three entities decoded.
fn decode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('&') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let (c, len) = if rest.starts_with("&lt;") {
            ('<', 4)
        } else if rest.starts_with("&gt;") {
            ('>', 4)
        } else if rest.starts_with("&amp;") {
            ('&', 5)
        } else {
            ('&', 1)
        };
        out.push(c);
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

/// One of Zulip's `convert_slack_formatting` passes: `mark`…`mark` becomes
/// `with`…`with` when the text between holds no `mark`, the marker before is at a line's
/// start or after punctuation, a symbol or a space (but not the marker, `` ` ``, `@`, `\`
/// or a closing bracket or quote), and the one after is at a line's end or before
/// punctuation, a symbol or a space (but not the marker, `` ` ``, `@`, `\` or an opening
/// bracket or quote).
fn emphasis(units: &[Unit], mark: char, with: &str) -> Vec<Unit> {
    let n = units.len();
    let is_mark = |k: usize| matches!(units[k], Unit::Char(c) if c == mark);
    let refused = |c: char| c == mark || matches!(c, '`' | '@' | '\\');
    let opens = |i: usize| {
        i == 0
            || match units[i - 1] {
                Unit::Char('\n') => true,
                Unit::Char(c) => is_boundary(c) && !refused(c) && !is_closing(c),
                Unit::Done(_) => false,
            }
    };
    let closes = |j: usize| {
        j + 1 == n
            || match units[j + 1] {
                Unit::Char('\n') => true,
                Unit::Char(c) => is_boundary(c) && !refused(c) && !is_opening(c),
                Unit::Done(_) => false,
            }
    };
    let mut out = Vec::with_capacity(n + 8);
    let mut i = 0;
    while i < n {
        if is_mark(i) && opens(i) {
            if let Some(j) = (i + 1..n).find(|&k| is_mark(k)).filter(|&j| j > i + 1 && closes(j)) {
                out.extend(with.chars().map(Unit::Char));
                out.extend_from_slice(&units[i + 1..j]);
                out.extend(with.chars().map(Unit::Char));
                i = j + 1;
                continue;
            }
        }
        out.push(units[i].clone());
        i += 1;
    }
    out
}

/// Punctuation, a symbol or a space separator (`[\p{P}\p{S}\p{Zs}]`), near enough: other
/// characters than letters, digits and controls.
fn is_boundary(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation() || c == ' ';
    }
    if c.is_whitespace() {
        return !matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}');
    }
    !c.is_alphanumeric() && !c.is_control()
}

/// Closing brackets and quotes (`\p{Pe}`, `\p{Pf}`).
fn is_closing(c: char) -> bool {
    ")]}»’”›⁆〉》」』】〕〗〙〛〞〟）］｝｣⸃⸅⸊⸍⸝⸡".contains(c)
}

/// Opening brackets and quotes (`\p{Ps}`, `\p{Pi}`).
fn is_opening(c: char) -> bool {
    "([{«‘‛“‟‹‚„⁅〈《「『【〔〖〘〚〝（［｛｢⸂⸄⸉⸌⸜⸠".contains(c)
}

/// `text` with mentions as Zulip's converter writes them in topics (`@**Name**`, without
/// the id).
pub fn without_mention_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("@**") {
        out.push_str(&rest[..start + 3]);
        rest = &rest[start + 3..];
        if let Some(end) = rest.find("**") {
            let inner = &rest[..end];
            match inner.rsplit_once('|') {
                Some((name, id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => out.push_str(name),
                _ => out.push_str(inner),
            }
            out.push_str("**");
            rest = &rest[end + 2..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::slack::tables::User;

    fn people() -> People {
        let users: Vec<User> = serde_json::from_str(
            r#"[{"id": "U1", "name": "jon", "real_name": "John Doe", "profile": {"email": "jon@x.test"}},
                {"id": "U2", "name": "ann", "real_name": "Ann", "profile": {"email": "ann@x.test"}}]"#,
        )
        .unwrap();
        People::new(&users).unwrap()
    }

    fn md(text: &str) -> String {
        let people = people();
        let channels = HashMap::from([("C1".to_owned(), "general".to_owned())]);
        convert(text, &Workspace { people: &people, channels: &channels }).text
    }

    #[test]
    fn formatting_follows_zulips_fixtures() {
        assert_eq!(md("(~str ike!~, text. ~Also ~)"), "(~~str ike!~~, text. ~~Also ~~)");
        assert_eq!(md("Mid~word~"), "Mid~word~");
        assert_eq!(md("ital ^_lic_, _wo r@d_."), "ital ^*lic*, *wo r@d*.");
        assert_eq!(md("@_italics_"), "@_italics_");
        assert_eq!(md("*mid*word **word**"), "*mid*word **word**");
        assert_eq!(md("***word***"), "***word***");
        assert_eq!(md("*_x_*"), "***x***");
        assert_eq!(md("~*bold*~ and *~strike~*."), "~~**bold**~~ and **~~strike~~**.");
        assert_eq!(md("*a*\n_b_"), "**a**\n*b*");
    }

    #[test]
    fn mentions_links_and_code() {
        let people = people();
        let channels = HashMap::from([("C1".to_owned(), "general".to_owned())]);
        let out = convert(
            "Hi <@U1|jon>: see <#C1|general> <!here> <@U2> <@U1>",
            &Workspace { people: &people, channels: &channels },
        );
        assert_eq!(out.text, "Hi @**John Doe|1**: see #**general** @**all** @**Ann|2** @**John Doe|1**");
        assert_eq!(out.mentioned, [1, 2]);
        assert_eq!(md("<@U9> <#C9|old-name> <#C9>"), "<@U9> #**old-name** <#C9>");
        assert_eq!(
            md("<https://foo.com/a_b_c|foo|oof> <https://foo.com>"),
            "[foo|oof](https://foo.com/a_b_c) https://foo.com"
        );
        assert_eq!(md("<https://x.org/?a=1&amp;b=2|x_y>"), "[x_y](https://x.org/?a=1&b=2)");
        assert_eq!(md("<mailto:a@b.com|a@b.com>"), "a@b.com");
        assert_eq!(md("*see <https://x.org|here>*"), "**see [here](https://x.org)**");
        assert_eq!(md("`*not* &lt;b&gt;` *yes*"), "`*not* <b>` **yes**");
        assert_eq!(md("look:```let _x_ = 1;\n*y*```done"), "look:\n```\nlet _x_ = 1;\n*y*\n```\ndone");
        assert_eq!(md("&gt; quoted &amp; more\na &gt; b"), "> quoted &amp; more\na &gt; b");
        assert_eq!(md("<!subteam^S1|@devs> <!date^1|Jan 1>"), "@devs Jan 1");
        assert_eq!(md("a < b > c"), "a < b > c");
    }

    #[test]
    fn topics_name_people_without_ids() {
        assert_eq!(
            without_mention_ids("@**John Doe|1** and @**Ann|22** **b|x** @**x"),
            "@**John Doe** and @**Ann** **b|x** @**x"
        );
    }
}
