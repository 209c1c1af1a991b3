//! The first pass over the export: teams, channels, users, emoji and direct conversations
//! (small) are kept whole; of every post (each root and each of its replies) only an
//! [`Entry`] (when it was written and where it is), and who wrote it and what it attaches.

use std::collections::HashMap;

use agora_actors::transfer::ImportError;

use super::lines::{self, ChannelLine, EmojiLine, Line, PostHead, Reader, Team, UserLine};

/// The bulk export format this reads (the `version` line).
const VERSION: i64 = 1;

/// `Entry::conversation` of a post in a channel.
pub const IN_CHANNEL: u32 = u32::MAX;

/// `Entry::part` of a thread's root; its `n`th reply's is `n + 1`.
pub const ROOT: u32 = 0;

/// One post of the chosen team (or a direct post): a thread's root or one of its replies,
/// found again by its line's offset and its part of the line. 32 bytes (checked below).
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Its `create_at` (milliseconds).
    pub at: i64,
    /// The byte offset of its line.
    pub offset: u64,
    /// Its line's number, for errors.
    pub line: u32,
    /// The index of its direct conversation in [`Scan::conversations`], or [`IN_CHANNEL`].
    pub conversation: u32,
    /// [`ROOT`], or `n + 1` for the line's `n`th reply (in the export's order).
    pub part: u32,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);

impl Entry {
    /// Time order: by `create_at`, then by place in the file (a root before its replies,
    /// replies in the export's order).
    pub fn order(&self) -> (i64, u64, u32) {
        (self.at, self.offset, self.part)
    }

    /// The `n` of the `n`th reply; `None` for a root.
    pub fn reply(&self) -> Option<usize> {
        self.part.checked_sub(1).map(|n| n as usize)
    }

    /// Its source message id.
    pub fn id(&self) -> i64 {
        message_id(self.offset, self.reply())
    }
}

/// A file a post attaches, as the export names it.
#[derive(Debug)]
pub struct RawAttachment {
    pub user: String,
    pub path: String,
    pub at: i64,
    pub message: i64,
    pub conversation: u32,
}

/// What the first pass found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every team of the export, by name, in order.
    pub teams: Vec<String>,
    /// The chosen team.
    pub team: Option<Team>,
    /// The chosen team's channels, with their line.
    pub channels: Vec<(u64, ChannelLine)>,
    /// Other teams' channels: name -> team.
    pub foreign_channels: HashMap<String, String>,
    pub users: Vec<(u64, UserLine)>,
    pub emoji: Vec<(u64, EmojiLine)>,
    /// The chosen team's posts and every direct post, roots and replies, in file order.
    pub posts: Vec<Entry>,
    /// Direct conversations (their usernames, sorted) with the line first naming them.
    pub conversations: Vec<(u64, Vec<String>)>,
    conversation_index: HashMap<Vec<String>, u32>,
    /// Usernames that posts and direct channels name: the first line naming each, and
    /// whether they wrote in one of the team's channels.
    pub named: HashMap<String, (u64, bool)>,
    /// Channel names the team's posts name, with the first line naming each.
    pub post_channels: HashMap<String, u64>,
    pub attachments: Vec<RawAttachment>,
}

/// The source id of a thread's root (`offset + 1`) and of its `n`th reply (`offset + 2 +
/// n`): a reply takes more than one byte of its line, so ids never meet the next line's.
pub fn message_id(offset: u64, reply: Option<usize>) -> i64 {
    offset as i64 + 1 + reply.map_or(0, |n| n as i64 + 1)
}

/// Reads the whole file once.
pub fn scan(reader: &mut Reader, team: &str) -> Result<Scan, ImportError> {
    let mut scan = Scan::default();
    let file = reader.name.clone();
    let mut number: u64 = 0;
    let mut seen_version = false;
    while let Some((offset, bytes)) = reader.next_line()? {
        number += 1;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = |what: String| ImportError::at(file.clone(), format!("line {number}: {what}"));
        let line: Line = lines::parse(&file, number, bytes)?;
        let kind = line.kind.as_deref().ok_or_else(|| at("a line without a \"type\"".into()))?;
        if !seen_version {
            match (kind, line.version) {
                ("version", Some(VERSION)) => seen_version = true,
                ("version", v) => {
                    return Err(at(format!(
                        "bulk export version {}; Agora reads version {VERSION}",
                        v.map_or("(none)".into(), |v| v.to_string())
                    )))
                }
                _ => {
                    return Err(at(format!(
                        "a {kind:?} line before the \"version\" line: is this a Mattermost bulk export?"
                    )))
                }
            }
            continue;
        }
        let missing = || at(format!("a {kind:?} line without its {kind:?} object"));
        match kind {
            "team" => {
                let t = line.team.ok_or_else(missing)?;
                scan.teams.push(t.name.clone());
                if t.name == team {
                    scan.team = Some(t);
                }
            }
            "channel" => {
                let c = line.channel.ok_or_else(missing)?;
                if c.team == team {
                    scan.channels.push((number, c));
                } else {
                    scan.foreign_channels.entry(c.name.clone()).or_insert(c.team);
                }
            }
            "user" => scan.users.push((number, line.user.ok_or_else(missing)?)),
            "emoji" => scan.emoji.push((number, line.emoji.ok_or_else(missing)?)),
            "direct_channel" => {
                let d = line.direct_channel.ok_or_else(missing)?;
                for name in d.usernames() {
                    scan.named.entry(name.to_owned()).or_insert((number, false));
                }
            }
            "post" => {
                let post = line.post.ok_or_else(missing)?;
                let post_team = post.team.as_deref().ok_or_else(|| at("a post without its \"team\"".into()))?;
                if post_team == team {
                    let channel = post.channel.as_deref().ok_or_else(|| at("a post without its \"channel\"".into()))?;
                    scan.post_channels.entry(channel.to_owned()).or_insert(number);
                    scan.thread(&post, offset, number, IN_CHANNEL);
                }
            }
            "direct_post" => {
                let post = line.direct_post.ok_or_else(missing)?;
                let members = post
                    .channel_members
                    .as_ref()
                    .ok_or_else(|| at("a direct post without its \"channel_members\"".into()))?;
                let mut key: Vec<String> = members.iter().chain([&post.user]).cloned().collect();
                key.sort();
                key.dedup();
                let next = scan.conversations.len() as u32;
                let conversation = *scan.conversation_index.entry(key.clone()).or_insert(next);
                if conversation == next {
                    for name in &key {
                        scan.named.entry(name.clone()).or_insert((number, false));
                    }
                    scan.conversations.push((number, key));
                }
                scan.thread(&post, offset, number, conversation);
            }
            // `version` again, `scheme`, `role`, `bot` and whatever newer exports add.
            _ => {}
        }
    }
    if !seen_version {
        return Err(ImportError::at(file, "empty: this is not a Mattermost bulk export"));
    }
    Ok(scan)
}

impl Scan {
    /// Notes one post line: an entry for its root and for each reply, their writers and
    /// their attachments.
    fn thread(&mut self, post: &PostHead, offset: u64, number: u64, conversation: u32) {
        let in_channel = conversation == IN_CHANNEL;
        let replies = post.replies.iter().flatten().enumerate().map(|(n, r)| (Some(n), r));
        for (reply, p) in [(None, post)].into_iter().chain(replies) {
            let part = reply.map_or(ROOT, |n| n as u32 + 1);
            self.posts.push(Entry { at: p.create_at, offset, line: number as u32, conversation, part });
            let named = self.named.entry(p.user.clone()).or_insert((number, in_channel));
            named.1 |= in_channel;
            for a in p.attachments.iter().flatten() {
                self.attachments.push(RawAttachment {
                    user: p.user.clone(),
                    path: a.path.clone(),
                    at: p.create_at,
                    message: message_id(offset, reply),
                    conversation,
                });
            }
        }
    }
}
