//! Mattermost's bulk export (`mmctl export create`, `mattermost export bulk`): one JSON
//! lines file (`import.jsonl`, `export.json`, ...) and the attachments under `data/`; one
//! team of it becomes an organization.
//!
//! The file is read twice and never held whole: the first pass ([`scan`]) keeps the small
//! things (teams, channels, users, emoji) and, of each post, only its offset, time, writers
//! and attachments; the second hands the posts over in time order, reading each one again
//! at its offset (sorted by time first when the file is not in order). A post line is a
//! thread: threads go in the order of their roots, and each root's replies (by time) come
//! right after it, so that a thread reads whole in the one topic.
//!
//! As Zulip's converter does: channels are named by their display names, every channel
//! message goes to one topic ([`post::TOPIC`]) with replies right after their root,
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
use scan::Entry;

/// The second pass: the posts, in time order.
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
        for entry in std::mem::take(&mut self.posts) {
            let bytes = self.reader.line_at(entry.offset)?;
            let line: PostLine = lines::parse(&file, entry.line.into(), bytes)?;
            let place = || format!("{file}: line {}", entry.line);
            let post = line.post.or(line.direct_post).ok_or_else(|| ImportError::at(place(), "no longer a post"))?;
            for message in post::thread(&self.directory, entry.offset, post, &place)? {
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
