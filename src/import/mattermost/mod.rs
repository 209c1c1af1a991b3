//! Mattermost's bulk export (`mmctl export create`, `mattermost export bulk`): one JSON
//! lines file (`import.jsonl`, `export.json`, ...) and the attachments under `data/`; one
//! team of it becomes an organization.
//!
//! The file is read twice and never held whole. The first pass ([`scan`]) keeps the small
//! things (teams, channels, users, emoji) and, of each post, root or reply (replies are
//! nested in their root's line), one [`scan::Entry`] of 32 bytes (its `create_at`, its
//! line's byte offset and number, its direct conversation, and which part of the line it
//! is: the root or its `n`th reply), plus its writer and attachments. The entries are
//! sorted by time (ties by place in the file, a root before its own replies), and the
//! second pass hands every message over in that order, reading the line at each entry's
//! offset again (the last line read is kept, for a thread's posts in a row) and taking the
//! one post it needs. So message ids, which Agora (as Zulip) takes for time order, grow
//! with time across the whole import; a thread's replies land among the messages written
//! at the same time, in its root's topic. A source id is derived from the place: a root's
//! is its line's offset + 1, its `n`th reply's offset + 2 + `n` ([`scan::message_id`]).
//! A thread whose replies are far apart is read once per run of its posts.
//!
//! As Zulip's converter does: channels are named by their display names, every channel
//! message goes to one topic ([`post::TOPIC`]), replies included, in time order,
//! `@username` mentions name the person, `@all`/`@channel`/`@here` everyone, attachments
//! are linked at the end of their message, people who wrote in the team's channels but
//! left it are deactivated accounts, `town-square` is the announcements channel. Unlike it:
//! line types it does not know (`scheme`, `role`, `bot`, ...) are skipped, direct channels
//! may list `participants`, direct conversations come along when all their people are the
//! organization's (whatever the number of teams), guests' channels are theirs too,
//! archived channels stay archived, saved posts are starred, Mattermost's own notices
//! ("X joined the channel.") are left out, and roles follow [`org`]'s reasoning.

mod lines;
mod org;
mod post;
mod scan;

use std::path::{Path, PathBuf};

use agora_actors::transfer::model::Message;
use agora_actors::transfer::ImportError;

use lines::{PostLine, Reader};
use org::Directory;
use post::Thread;
use scan::Entry;

/// The second pass: every post, replies included, in time order.
struct Posts {
    reader: Reader,
    posts: Vec<Entry>,
    directory: Directory,
}

/// Opens an unpacked Mattermost bulk export, for the team named `team`.
pub fn open(dir: &Path, team: &str) -> Result<super::Opened, ImportError> {
    let (root, path) = find_file(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut reader = Reader::open(&path, name.clone())?;
    let mut found = scan::scan(&mut reader, team)?;
    if found.team.is_none() {
        let teams = match found.teams.as_slice() {
            [] => "none".to_owned(),
            teams => teams.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", "),
        };
        return Err(ImportError::at(name, format!("no team {team:?} (--team): the export's teams are {teams}")));
    }
    let (org, directory) = org::build(&mut found, &name, &root)?;
    let posts = Posts { reader, posts: std::mem::take(&mut found.posts), directory };
    Ok(super::Opened { org, files: Box::new(super::DirFiles { root }), messages: Box::new(posts) })
}

impl super::Messages for Posts {
    fn each(&mut self, f: &mut dyn FnMut(Message) -> Result<(), ImportError>) -> Result<(), ImportError> {
        let file = self.reader.name.clone();
        // The last line read: the next post is often of the same thread.
        let mut last: Option<Thread> = None;
        for entry in std::mem::take(&mut self.posts) {
            let place = || format!("{file}: line {}", entry.line);
            let thread = match last.take() {
                Some(thread) if thread.offset == entry.offset => thread,
                _ => {
                    let bytes = self.reader.line_at(entry.offset)?;
                    let line: PostLine = lines::parse(&file, entry.line.into(), bytes)?;
                    let root =
                        line.post.or(line.direct_post).ok_or_else(|| ImportError::at(place(), "no longer a post"))?;
                    Thread::new(&self.directory, entry.offset, root, &place)?
                }
            };
            let thread = last.insert(thread);
            if let Some(message) = thread.take(&self.directory, &entry, &place)? {
                f(message)?;
            }
        }
        Ok(())
    }
}

/// The directory holding the JSON lines file, and the file: a `*.jsonl` or `export.json`
/// in the directory given, or in the one directory inside it (an archive of a directory).
fn find_file(dir: &Path) -> Result<(PathBuf, PathBuf), ImportError> {
    let list = |dir: &Path| -> Result<Vec<PathBuf>, ImportError> {
        let entries = std::fs::read_dir(dir).map_err(|e| ImportError::at(dir.display().to_string(), e.to_string()))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        Ok(paths)
    };
    let lines_file = |p: &PathBuf| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        p.is_file() && (name.ends_with(".jsonl") || name == "export.json")
    };
    let mut root = dir.to_path_buf();
    let mut entries = list(&root)?;
    if !entries.iter().any(lines_file) {
        if let [only] = entries.iter().filter(|p| p.is_dir() && !p.ends_with("data")).collect::<Vec<_>>().as_slice() {
            root = only.to_path_buf();
            entries = list(&root)?;
        }
    }
    let found: Vec<&PathBuf> = entries.iter().filter(|p| lines_file(p)).collect();
    match found.as_slice() {
        [one] => Ok((root.clone(), one.to_path_buf())),
        [] => Err(ImportError::new(
            "no .jsonl file nor export.json: this is not a Mattermost bulk export (made by `mmctl export create`)",
        )),
        many => Err(ImportError::new(format!(
            "more than one JSON lines file ({}): which one is the export?",
            many.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy()).collect::<Vec<_>>().join(", ")
        ))),
    }
}
