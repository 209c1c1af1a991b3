//! The lines of a bulk export as Mattermost writes them (`imports/import_types.go`), and a
//! reader that hands them over one at a time with their line number and byte offset.
//!
//! Every line is `{"type": T, T: {...}}`. Only the fields the import uses are declared;
//! the others (preferences, notification settings, ...) are skipped unread.

use std::fs::File;
use std::io::{BufRead, BufReader};

use agora_actors::transfer::ImportError;
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// A line as the first pass reads it: everything but the posts' text.
#[derive(Debug, Deserialize)]
pub struct Line {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub version: Option<i64>,
    pub team: Option<Team>,
    pub channel: Option<ChannelLine>,
    pub user: Option<UserLine>,
    pub emoji: Option<EmojiLine>,
    pub direct_channel: Option<DirectChannel>,
    pub post: Option<PostHead>,
    pub direct_post: Option<PostHead>,
}

/// A post line as the second pass reads it, whole.
#[derive(Debug, Deserialize)]
pub struct PostLine {
    pub post: Option<Post>,
    pub direct_post: Option<Post>,
}

#[derive(Debug, Deserialize)]
pub struct Team {
    pub name: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ChannelLine {
    pub team: String,
    pub name: String,
    pub display_name: Option<String>,
    /// `O` (open) or `P` (private).
    #[serde(rename = "type")]
    pub kind: String,
    pub header: Option<String>,
    pub purpose: Option<String>,
    pub deleted_at: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct UserLine {
    pub username: String,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// Space-separated: `system_admin`, `system_user`, `system_guest`.
    pub roles: Option<String>,
    pub delete_at: Option<i64>,
    pub teams: Option<Vec<UserTeam>>,
}

#[derive(Debug, Deserialize)]
pub struct UserTeam {
    pub name: String,
    /// Space-separated: `team_admin`, `team_user`, `team_guest`.
    pub roles: Option<String>,
    pub channels: Option<Vec<UserChannel>>,
}

#[derive(Debug, Deserialize)]
pub struct UserChannel {
    pub name: String,
    pub favorite: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct EmojiLine {
    pub name: String,
    /// The image's path, relative to the export's directory.
    pub image: String,
}

/// A direct conversation: older exports list `members`, newer ones `participants`.
#[derive(Debug, Deserialize)]
pub struct DirectChannel {
    pub members: Option<Vec<String>>,
    pub participants: Option<Vec<Participant>>,
}

#[derive(Debug, Deserialize)]
pub struct Participant {
    pub username: String,
}

impl DirectChannel {
    pub fn usernames(&self) -> Vec<&str> {
        let members = self.members.iter().flatten().map(String::as_str);
        members.chain(self.participants.iter().flatten().map(|p| p.username.as_str())).collect()
    }
}

/// What the first pass needs of a post (or direct post) and its replies.
#[derive(Debug, Deserialize)]
pub struct PostHead {
    pub team: Option<String>,
    pub channel: Option<String>,
    pub channel_members: Option<Vec<String>>,
    pub user: String,
    pub create_at: i64,
    pub replies: Option<Vec<PostHead>>,
    pub attachments: Option<Vec<AttachmentLine>>,
}

/// A post, a direct post or a reply (replies have no team, channel nor replies).
#[derive(Debug, Deserialize)]
pub struct Post {
    pub channel: Option<String>,
    pub channel_members: Option<Vec<String>>,
    pub user: String,
    /// `system_join_channel` and the like for Mattermost's own notices; absent otherwise.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub message: Option<String>,
    pub create_at: i64,
    pub edit_at: Option<i64>,
    pub flagged_by: Option<Vec<String>>,
    pub reactions: Option<Vec<ReactionLine>>,
    pub replies: Option<Vec<Post>>,
}

#[derive(Debug, Deserialize)]
pub struct ReactionLine {
    pub user: String,
    pub emoji_name: String,
}

#[derive(Debug, Deserialize)]
pub struct AttachmentLine {
    /// Relative to the export's `data/`.
    pub path: String,
}

/// Reads the JSON lines file one line at a time, knowing each line's number and offset.
pub struct Reader {
    pub name: String,
    file: BufReader<File>,
    /// The offset of the next byte the reader hands over.
    position: u64,
    buffer: Vec<u8>,
}

impl Reader {
    pub fn open(path: &std::path::Path, name: String) -> Result<Reader, ImportError> {
        let file = File::open(path).map_err(|e| ImportError::at(name.clone(), format!("cannot be read: {e}")))?;
        Ok(Reader { name, file: BufReader::with_capacity(256 * 1024, file), position: 0, buffer: Vec::new() })
    }

    /// The next line's offset and bytes (without its end of line); `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, ImportError> {
        self.buffer.clear();
        let start = self.position;
        let read = self.file.read_until(b'\n', &mut self.buffer).map_err(|e| self.io_error(e))?;
        if read == 0 {
            return Ok(None);
        }
        self.position += read as u64;
        while matches!(self.buffer.last(), Some(b'\n' | b'\r')) {
            self.buffer.pop();
        }
        Ok(Some((start, &self.buffer)))
    }

    /// Reads the line at `offset` (one the first pass found).
    pub fn line_at(&mut self, offset: u64) -> Result<&[u8], ImportError> {
        if offset != self.position {
            let delta = offset as i64 - self.position as i64;
            self.file.seek_relative(delta).map_err(|e| self.io_error(e))?;
            self.position = offset;
        }
        Ok(self.next_line()?.map(|(_, bytes)| bytes).unwrap_or_default())
    }

    fn io_error(&self, e: std::io::Error) -> ImportError {
        ImportError::at(self.name.clone(), format!("cannot be read: {e}"))
    }
}

/// Parses one line, or says what is wrong with it and where.
pub fn parse<T: DeserializeOwned>(file: &str, line: u64, bytes: &[u8]) -> Result<T, ImportError> {
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        let text = e.to_string();
        let what = text.split(" at line ").next().unwrap_or(&text);
        let what = match e.classify() {
            Category::Syntax | Category::Eof => format!("not valid JSON ({what} at column {})", e.column()),
            Category::Data | Category::Io => format!("{what} (column {})", e.column()),
        };
        ImportError::at(file, format!("line {line}: {what}"))
    })
}
