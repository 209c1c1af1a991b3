//! The messages: every conversation's day files (`general/2017-06-25.json`), merged day by
//! day and sorted by time across conversations (so ids grow with time), one day in memory
//! at a time; each turned into a message as Zulip's Slack converter does.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use agora_actors::transfer::model::{Destination, Message, Reaction};
use agora_actors::transfer::ImportError;

use super::channels::{Place, Target};
use super::markup::{self, Workspace};
use super::people::{People, SLACKBOT};
use super::read_json;
use super::tables::{micros, utc_date, SlackFile, SlackMessage};

/// Zulip's `read` flag. Imported history is marked read for everyone (as Zulip's
/// converter does): years of messages should not greet each person as unread.
const READ: i64 = 1;
/// Zulip's `mentioned` flag, for the people a message mentions by `<@U…>`.
const MENTIONED: i64 = 8;

/// The topic of a channel's messages outside threads (Zulip's name for it).
pub const TOPIC: &str = "imported from Slack";

/// Topics are at most this long (in characters), as in Zulip.
const MAX_TOPIC: usize = 60;

/// Subtypes that are not messages people wrote (joins, renames, pins), skipped as Zulip's
/// converter skips them.
const SKIPPED: [&str; 5] = ["channel_join", "channel_leave", "channel_name", "pinned_item", "unpinned_item"];

/// Who sent a message, as Slack names them.
enum Sender<'a> {
    User(&'a str),
    Bot(&'a str),
}

/// Whether Zulip's converter leaves the message out: skipped subtypes, the `U00` user of
/// rename notices, Slack "Posts".
fn skipped(m: &SlackMessage) -> bool {
    m.subtype.as_deref().is_some_and(|s| SKIPPED.contains(&s))
        || m.user.as_deref() == Some("U00")
        || files(m).iter().any(|f| f.mimetype.as_deref() == Some("application/vnd.slack-docs"))
}

/// The sender: the `user` (a file comment's commenter, a shared file's owner), else the bot.
fn sender(m: &SlackMessage) -> Option<Sender<'_>> {
    let user = if m.subtype.as_deref() == Some("file_comment") {
        m.comment.as_ref().and_then(|c| c.user.as_deref())
    } else {
        m.user.as_deref().or_else(|| m.file.as_ref().and_then(|f| f.user.as_deref()))
    };
    match user {
        Some(user) => Some(Sender::User(user)),
        None => m.bot_id.as_deref().map(Sender::Bot),
    }
}

/// A message's files: `files`, or the one `file` of older exports' `file_share`.
fn files(m: &SlackMessage) -> Vec<&SlackFile> {
    match &m.files {
        Some(files) if !files.is_empty() => files.iter().collect(),
        _ => m.file.iter().collect(),
    }
}

/// The days that have messages, with the conversations (indexes into `places`) that have
/// a file for each.
pub fn days(dir: &Path, places: &[Place]) -> Result<BTreeMap<String, Vec<usize>>, ImportError> {
    let mut days: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, place) in places.iter().enumerate() {
        let path = dir.join(&place.folder);
        if place.folder.is_empty() || !path.is_dir() {
            continue;
        }
        let entries = std::fs::read_dir(&path).map_err(|e| ImportError::at(&place.folder, e.to_string()))?;
        for entry in entries {
            let entry = entry.map_err(|e| ImportError::at(&place.folder, e.to_string()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(date) = name.strip_suffix(".json").filter(|d| is_date(d)) {
                days.entry(date.to_owned()).or_default().push(index);
            }
        }
    }
    for conversations in days.values_mut() {
        conversations.sort_unstable();
    }
    Ok(days)
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Reads the day files in time order, handing each day's messages sorted by time, with
/// where each is (`folder/date.json: message N (ts …)`) and its time in microseconds.
fn each_day(
    dir: &Path,
    places: &[Place],
    days: &BTreeMap<String, Vec<usize>>,
    f: &mut dyn FnMut(usize, String, i64, SlackMessage) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    for (date, conversations) in days {
        let mut day: Vec<(i64, usize, usize, String, SlackMessage)> = Vec::new();
        for &index in conversations {
            let file = format!("{}/{date}.json", places[index].folder);
            let messages: Vec<SlackMessage> = read_json(dir, &file)?;
            for (n, m) in messages.into_iter().enumerate() {
                let at = format!("{file}: message {}", n + 1);
                let Some(ts) = m.ts.clone() else {
                    return Err(ImportError::at(at, "it has no ts (its time)"));
                };
                let at = format!("{at} (ts {ts})");
                let time = micros(&ts).ok_or_else(|| ImportError::at(&at, "its ts is not a Slack timestamp"))?;
                day.push((time, index, n, at, m));
            }
        }
        day.sort_by_key(|(time, index, n, _, _)| (*time, *index, *n));
        for (time, index, _, at, m) in day {
            f(index, at, time, m)?;
        }
    }
    Ok(())
}

/// Gives a person to every bot that messages name by `bot_id` only (integrations, which
/// `users.json` does not list), and to Slackbot when it is missing: a first pass over the
/// messages, before the people are written.
pub fn find_bots(
    dir: &Path,
    places: &[Place],
    days: &BTreeMap<String, Vec<usize>>,
    people: &mut People,
) -> Result<(), ImportError> {
    each_day(dir, places, days, &mut |_, _, _, m| {
        if skipped(&m) {
            return Ok(());
        }
        match sender(&m) {
            Some(Sender::Bot(bot_id)) if people.bot(bot_id).is_none() => {
                let name = m.bot_profile.as_ref().and_then(|b| b.name.as_deref()).or(m.username.as_deref());
                people.add_integration_bot(bot_id, name);
            }
            Some(Sender::User(SLACKBOT)) => people.add_slackbot(),
            _ => {}
        }
        Ok(())
    })
}

/// An unpacked Slack export, read up to its messages.
pub struct SlackMessages {
    pub dir: PathBuf,
    pub places: Vec<Place>,
    pub days: BTreeMap<String, Vec<usize>>,
    pub people: People,
    /// Slack channel id -> name.
    pub channel_names: HashMap<String, String>,
}

/// Threads' topics as they are named.
#[derive(Default)]
struct Threads {
    /// (conversation, thread_ts) -> topic.
    topics: HashMap<(usize, String), String>,
    /// (conversation, topic name before its number) -> how many threads have it.
    counts: HashMap<(usize, String), usize>,
}

impl Threads {
    /// The topic of a thread, named when first met (Zulip's `get_zulip_thread_topic_name`):
    /// the thread's date and the start of its first message, numbered `(2)`, `(3)` ...
    /// when another thread of the channel has the same. Unlike Zulip's, line breaks become
    /// spaces (a topic is one line), and numbers count per channel.
    fn topic(&mut self, conversation: usize, thread_ts: &str, content: &str) -> String {
        let key = (conversation, thread_ts.to_owned());
        if let Some(topic) = self.topics.get(&key) {
            return topic.clone();
        }
        let date = utc_date(micros(thread_ts).unwrap_or(0).div_euclid(1_000_000));
        let words = markup::without_mention_ids(content).split_whitespace().collect::<Vec<_>>().join(" ");
        let full = format!("{date} {words}").trim().to_owned();
        let base = truncate(&full, MAX_TOPIC);
        let count = self.counts.entry((conversation, base)).or_insert(0);
        *count += 1;
        let topic = if *count > 1 {
            let suffix = format!(" ({count})");
            truncate(&full, MAX_TOPIC - suffix.chars().count()) + &suffix
        } else {
            truncate(&full, MAX_TOPIC)
        };
        self.topics.insert(key, topic.clone());
        topic
    }
}

/// Zulip's `truncate_content`: cut to `max` characters, the last one `…`.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

impl super::super::Messages for SlackMessages {
    fn each(&mut self, f: &mut dyn FnMut(Message) -> Result<(), ImportError>) -> Result<(), ImportError> {
        let mut threads = Threads::default();
        let mut next_id = 0;
        let this = &*self;
        each_day(&this.dir, &this.places, &this.days, &mut |index, at, time, m| {
            if let Some(message) = this.message(&mut threads, index, &at, time, &m)? {
                next_id += 1;
                f(Message { id: next_id, ..message })?;
            }
            Ok(())
        })
    }
}

impl SlackMessages {
    /// One message; `None` when Zulip's converter leaves it out (or it says nothing).
    fn message(
        &self,
        threads: &mut Threads,
        index: usize,
        at: &str,
        time: i64,
        m: &SlackMessage,
    ) -> Result<Option<Message>, ImportError> {
        if skipped(m) {
            return Ok(None);
        }
        let sender = match sender(m) {
            Some(Sender::User(user)) => self
                .people
                .user(user)
                .ok_or_else(|| ImportError::at(at, format!("its user {user} is not in users.json")))?,
            Some(Sender::Bot(bot)) => {
                self.people.bot(bot).ok_or_else(|| ImportError::at(at, format!("its bot {bot} is unknown")))?
            }
            None => return Ok(None),
        };
        let mut text = m.text.clone().unwrap_or_default();
        if text.trim().is_empty() {
            let fallbacks: Vec<&str> = m
                .attachments
                .iter()
                .flatten()
                .filter_map(|a| a.fallback.as_deref())
                .filter(|f| !f.is_empty())
                .collect();
            text = fallbacks.join("\n");
        }
        let workspace = Workspace { people: &self.people, channels: &self.channel_names };
        let converted = markup::convert(&text, &workspace);
        let mut content = converted.text;
        if matches!(m.subtype.as_deref(), Some("me_message" | "bot_add" | "sh_room_created")) {
            content = format!("/me {content}");
        }
        let links: Vec<String> = files(m).into_iter().filter_map(file_link).collect();
        if !links.is_empty() {
            if !content.is_empty() {
                content.push('\n');
            }
            content.push_str(&links.join("\n"));
        }
        if content.trim().is_empty() {
            return Ok(None);
        }
        let (to, mut members) = match &self.places[index].target {
            Target::Channel { id, members } => {
                let topic = match m.thread_ts.as_deref() {
                    Some(thread_ts) => threads.topic(index, thread_ts, &content),
                    None => TOPIC.to_owned(),
                };
                (Destination::Channel(*id, topic), members.clone())
            }
            Target::Direct(members) => {
                let mut all = members.clone();
                if !all.contains(&sender) {
                    all.push(sender);
                }
                (Destination::Direct(all.clone()), all)
            }
        };
        if !members.contains(&sender) {
            members.push(sender);
        }
        let recipients = members
            .into_iter()
            .map(|user| (user, if converted.mentioned.contains(&user) { READ | MENTIONED } else { READ }))
            .collect();
        let last_edit_time =
            m.edited.as_ref().and_then(|e| e.ts.as_deref()).and_then(micros).map(|t| t.div_euclid(1_000_000));
        Ok(Some(Message {
            id: 0,
            sender,
            to,
            content,
            rendered_content: None,
            date_sent: time.div_euclid(1_000_000),
            sending_client: "Slack".into(),
            last_edit_time,
            last_moved_time: None,
            edit_history: None,
            recipients,
            reactions: self.reactions(m),
            submessages: Vec::new(),
        }))
    }

    /// Reactions by their emoji's name (a skin tone, `clap::skin-tone-2`, dropped), as the
    /// Unicode emoji of that name; other names (the workspace's own emoji, which the export
    /// does not hold) and people who are not in `users.json` are left out.
    fn reactions(&self, m: &SlackMessage) -> Vec<Reaction> {
        let mut out: Vec<Reaction> = Vec::new();
        for r in m.reactions.iter().flatten() {
            let base = r.name.split("::").next().unwrap_or_default();
            let Some(code) = agora_actors::emoji::code_of(base) else { continue };
            let name = agora_actors::emoji::names_of(code).and_then(|names| names.first()).copied().unwrap_or(base);
            for user in r.users.iter().flatten().filter_map(|u| self.people.user(u)) {
                let reaction = Reaction {
                    user,
                    emoji_name: name.to_owned(),
                    emoji_code: code.to_owned(),
                    reaction_type: "unicode_emoji".into(),
                };
                if !out.contains(&reaction) {
                    out.push(reaction);
                }
            }
        }
        out
    }
}

/// A shared file as a link to where Slack keeps it (its bytes are not in the export):
/// `[title](url_private)`, the name when it has no title. Deleted and hidden files are
/// left out, as Zulip's converter does.
fn file_link(file: &SlackFile) -> Option<String> {
    if matches!(file.mode.as_deref(), Some("tombstone" | "hidden_by_limit"))
        || matches!(file.file_access.as_deref(), Some("access_denied" | "file_not_found"))
    {
        return None;
    }
    let url = file.url_private.as_deref().filter(|u| !u.is_empty())?;
    let label =
        [&file.title, &file.name].into_iter().flatten().map(|s| s.trim()).find(|s| !s.is_empty()).unwrap_or("file");
    Some(format!("[{}]({url})", markup::escape_label(label)))
}
