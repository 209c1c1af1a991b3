//! The posts of one post line (a thread: its root and its replies) to messages, one at a
//! time: mentions, attachment links, reactions and everyone's flags.

use agora_actors::transfer::model::{Destination, Message, Reaction};
use agora_actors::transfer::ImportError;

use super::lines::Post;
use super::org::Directory;
use super::scan::Entry;

/// Every channel message goes to this one topic, as Zulip's converter does (Mattermost's
/// threads have no titles to name topics by).
pub const TOPIC: &str = "imported from mattermost";

/// Zulip's flags: read, starred, mentioned, wildcard mentioned.
const READ: i64 = 1;
const STARRED: i64 = 2;
const MENTIONED: i64 = 8;
const WILDCARD_MENTIONED: i64 = 16;

/// One post line (a thread) read again, whole, for the messages of its root and replies:
/// the second pass takes them one at a time, in time order, between other lines' posts.
pub struct Thread {
    /// The line's offset.
    pub offset: u64,
    to: Destination,
    recipients: Vec<i64>,
    /// The root, then the replies in the export's order (indexed by [`Entry::part`]), each
    /// taken when its turn comes.
    posts: Vec<Option<Post>>,
}

impl Thread {
    /// The thread of the line at `offset`, going where its root goes.
    pub fn new(
        dir: &Directory,
        offset: u64,
        mut root: Post,
        place: &dyn Fn() -> String,
    ) -> Result<Thread, ImportError> {
        let (to, recipients) = match (&root.channel, &root.channel_members) {
            (Some(channel), _) => {
                let (id, subscribers) = dir
                    .channels
                    .get(channel)
                    .ok_or_else(|| ImportError::at(place(), format!("no channel {channel:?}")))?;
                (Destination::Channel(*id, TOPIC.to_owned()), subscribers.clone())
            }
            (None, Some(members)) => {
                let mut ids = Vec::with_capacity(members.len() + 1);
                for name in members.iter().chain([&root.user]) {
                    ids.push(user(dir, name, place)?.0);
                }
                ids.sort();
                ids.dedup();
                (Destination::Direct(ids.clone()), ids)
            }
            (None, None) => return Err(ImportError::at(place(), "a post with neither a channel nor channel_members")),
        };
        let replies = root.replies.take().unwrap_or_default();
        let posts = std::iter::once(Some(root)).chain(replies.into_iter().map(Some)).collect();
        Ok(Thread { offset, to, recipients, posts })
    }

    /// The message of one entry of this line; `None` for a post Mattermost wrote itself
    /// (`system_*`: "X joined the channel."), which is left out.
    pub fn take(
        &mut self,
        dir: &Directory,
        entry: &Entry,
        place: &dyn Fn() -> String,
    ) -> Result<Option<Message>, ImportError> {
        let what = || match entry.reply() {
            None => "the post".to_owned(),
            Some(n) => format!("the post's reply {}", n + 1),
        };
        let p = self
            .posts
            .get_mut(entry.part as usize)
            .and_then(Option::take)
            .ok_or_else(|| ImportError::at(place(), format!("{} is no longer there: the file changed", what())))?;
        if p.kind.as_deref().is_some_and(|k| k.starts_with("system_")) {
            return Ok(None);
        }
        message(dir, entry.id(), p, &self.to, &self.recipients, place).map(Some)
    }
}

fn user(dir: &Directory, name: &str, place: &dyn Fn() -> String) -> Result<(i64, String), ImportError> {
    dir.users.get(name).cloned().ok_or_else(|| ImportError::at(place(), format!("{name:?} is not a user of the team")))
}

fn message(
    dir: &Directory,
    id: i64,
    p: Post,
    to: &Destination,
    recipients: &[i64],
    place: &dyn Fn() -> String,
) -> Result<Message, ImportError> {
    let (sender, _) = user(dir, &p.user, place)?;
    let (mut content, mentioned, wildcard) = mentions(p.message.as_deref().unwrap_or_default(), dir);
    let links: Vec<String> = dir
        .links
        .get(&id)
        .into_iter()
        .flatten()
        .map(|(name, path_id)| format!("[{}](/user_uploads/{path_id})", escape(name)))
        .collect();
    if !links.is_empty() {
        if !content.is_empty() {
            content.push_str("\n\n");
        }
        content.push_str(&links.join("\n"));
    }
    let starred: Vec<i64> =
        p.flagged_by.iter().flatten().filter_map(|name| dir.users.get(name).map(|(id, _)| *id)).collect();
    let flags = |user: i64| {
        let mut flags = READ;
        if mentioned.contains(&user) {
            flags |= MENTIONED;
        }
        if wildcard {
            flags |= WILDCARD_MENTIONED;
        }
        if starred.contains(&user) {
            flags |= STARRED;
        }
        flags
    };
    let mut who: Vec<i64> = recipients.to_vec();
    if !who.contains(&sender) && matches!(to, Destination::Direct(_)) {
        who.push(sender);
    }
    let mut reactions = Vec::new();
    for r in p.reactions.into_iter().flatten() {
        let Some((user, _)) = dir.users.get(&r.user) else { continue };
        if let Some(reaction) = reaction(dir, *user, &r.emoji_name) {
            reactions.push(reaction);
        }
    }
    Ok(Message {
        id,
        sender,
        to: to.clone(),
        content,
        rendered_content: None,
        date_sent: p.create_at.div_euclid(1000),
        sending_client: "Mattermost".into(),
        last_edit_time: p.edit_at.filter(|e| *e > 0).map(|e| e.div_euclid(1000)),
        last_moved_time: None,
        edit_history: None,
        recipients: who.into_iter().map(|u| (u, flags(u))).collect(),
        reactions,
        submessages: Vec::new(),
    })
}

/// Mattermost's names (emoji-datasource's short names) of common emoji that Agora's table
/// (Zulip's names) calls otherwise.
const MATTERMOST_NAMES: [(&str, &str); 12] = [
    ("thumbsup", "1f44d"),
    ("thumbsdown", "1f44e"),
    ("white_check_mark", "2705"),
    ("heavy_check_mark", "2714"),
    ("x", "274c"),
    ("grin", "1f601"),
    ("slightly_smiling_face", "1f642"),
    ("thinking_face", "1f914"),
    ("ok_hand", "1f44c"),
    ("raised_hands", "1f64c"),
    ("white_frowning_face", "2639"),
    ("confused", "1f615"),
];

/// A reaction with a Unicode emoji (by Agora's or Mattermost's names) or a custom one of
/// the export; `None` for a name neither knows (as Zulip's converter does).
fn reaction(dir: &Directory, user: i64, name: &str) -> Option<Reaction> {
    let alias = MATTERMOST_NAMES.iter().find(|(n, _)| *n == name).map(|(_, code)| *code);
    if let Some(code) = agora_actors::emoji::code_of(name).or(alias).filter(|c| agora_actors::emoji::is_code(c)) {
        let canonical = agora_actors::emoji::names_of(code).and_then(|n| n.first()).copied().unwrap_or(name);
        return Some(Reaction {
            user,
            emoji_name: canonical.to_owned(),
            emoji_code: code.to_owned(),
            reaction_type: "unicode_emoji".into(),
        });
    }
    dir.emoji.get(name).map(|id| Reaction {
        user,
        emoji_name: name.to_owned(),
        emoji_code: id.to_string(),
        reaction_type: "realm_emoji".into(),
    })
}

/// A file name as a Markdown link's text.
fn escape(name: &str) -> String {
    name.chars().flat_map(|c| if matches!(c, '[' | ']' | '\\') { vec!['\\', c] } else { vec![c] }).collect()
}

/// A character of a Mattermost username.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Mattermost's mentions in Agora's Markdown: `@username` of a person of the organization
/// becomes `@**Full Name|id**`, `@all`, `@channel` and `@here` become `@**all**`. A mention
/// starts where no name character precedes `@` (not in `me@example.com`); a name's
/// trailing `.`, `_` or `-` is punctuation unless the name with it is a user's. Returns the
/// text, who is mentioned, and whether everyone is.
pub fn mentions(text: &str, dir: &Directory) -> (String, Vec<i64>, bool) {
    let mut out = String::with_capacity(text.len());
    let (mut mentioned, mut wildcard) = (Vec::new(), false);
    let mut previous: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '@' && !previous.is_some_and(name_char) {
            let after = &rest[1..];
            let run = &after[..after.find(|c: char| !name_char(c)).unwrap_or(after.len())];
            let mut candidate = run;
            while !candidate.is_empty() {
                let lower = candidate.to_ascii_lowercase();
                if matches!(lower.as_str(), "all" | "channel" | "here") {
                    out.push_str("@**all**");
                    wildcard = true;
                    break;
                }
                if let Some((id, name)) = dir.users.get(&lower) {
                    let name: String = name.chars().filter(|c| !matches!(c, '*' | '|' | '\n')).collect();
                    out.push_str(&format!("@**{name}|{id}**"));
                    mentioned.push(*id);
                    break;
                }
                match candidate.strip_suffix(['.', '_', '-']) {
                    Some(shorter) => candidate = shorter,
                    None => candidate = "",
                }
            }
            if !candidate.is_empty() {
                previous = candidate.chars().last();
                rest = &after[candidate.len()..];
                continue;
            }
        }
        out.push(c);
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    (out, mentioned, wildcard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_become_agoras() {
        let mut dir = Directory::default();
        dir.users.insert("harry".into(), (3, "Harry Potter".into()));
        dir.users.insert("ron_".into(), (4, "Ron".into()));
        let (text, who, all) = mentions("@harry, hi. @ron_ and @ron. me@harry.com @harry.com @nobody @Here!", &dir);
        assert_eq!(text, "@**Harry Potter|3**, hi. @**Ron|4** and @ron. me@harry.com @harry.com @nobody @**all**!");
        assert_eq!((who, all), (vec![3, 4], true));
        let (text, who, _) = mentions("(@harry.) é@harry", &dir);
        assert_eq!((text.as_str(), who), ("(@**Harry Potter|3**.) é@**Harry Potter|3**", vec![3, 3]));
    }
}
