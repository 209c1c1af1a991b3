//! Slack's workspace export: `users.json`, `channels.json`, `groups.json`, `dms.json`,
//! `mpims.json`, and a folder of daily JSON files per conversation. Read as Zulip's own
//! Slack converter reads it (roles, names, addresses, topics, markup), so that people who
//! move from Slack find what a Zulip import would have given them.
//!
//! An export carries no files (only links to Slack's servers), no avatars and no custom
//! emoji: shared files stay links, avatars are the default ones, reactions with the
//! workspace's own emoji are left out.

mod channels;
mod markup;
mod messages;
mod people;
mod tables;

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use agora_actors::transfer::model::Organization;
use agora_actors::transfer::ImportError;
use serde::de::DeserializeOwned;
use serde_json::{json, Map};

use channels::Lists;
use messages::SlackMessages;
use people::People;
use tables::{Conversation, User};

/// The organization's name: the export does not hold the workspace's (an administrator
/// renames it in the settings).
const NAME: &str = "Imported from Slack";

/// Zulip's description of an organization imported from Slack.
const DESCRIPTION: &str = "Organization imported from Slack!";

/// Reads a JSON file of the export whole.
fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<T, ImportError> {
    let file = File::open(dir.join(name)).map_err(|e| ImportError::at(name, format!("cannot be read: {e}")))?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| ImportError::at(name, json_error(&e)))
}

/// A list file that an export may leave out (`groups.json` and the like): empty then.
fn read_list(dir: &Path, name: &str) -> Result<Vec<Conversation>, ImportError> {
    if dir.join(name).exists() {
        read_json(dir, name)
    } else {
        Ok(Vec::new())
    }
}

/// A JSON error as a person can act on it: what, and where in the file.
fn json_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Eof => "the file ends early (is it cut short?)".to_owned(),
        Category::Syntax => "not valid JSON".to_owned(),
        Category::Data => {
            let text = e.to_string();
            text.split(" at line").next().unwrap_or(&text).to_owned()
        }
        Category::Io => "cannot be read".to_owned(),
    };
    format!("line {}, column {}: {what}", e.line(), e.column())
}

/// The directory holding the export: the one given, or the one directory inside it (a
/// folder zipped again).
fn find_root(dir: &Path) -> Result<PathBuf, ImportError> {
    let is_export = |d: &Path| d.join("channels.json").is_file() || d.join("users.json").is_file();
    let root = if is_export(dir) {
        dir.to_path_buf()
    } else {
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| ImportError::at(dir.display().to_string(), e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        match entries.as_slice() {
            [only] if only.is_dir() && is_export(only) => only.clone(),
            _ => {
                return Err(ImportError::new(
                    "no users.json and channels.json: this is not a Slack export (made by Slack's \
                     \"Export data\", its .zip or the folder it unpacks to)",
                ))
            }
        }
    };
    for name in ["users.json", "channels.json"] {
        if !root.join(name).is_file() {
            return Err(ImportError::at(name, "missing: a Slack export has users.json and channels.json"));
        }
    }
    Ok(root)
}

/// Opens an unpacked Slack export for [`super::run`]: reads the people and conversations,
/// and finds the days that have messages (read one day at a time as they are written).
pub fn open(dir: &Path) -> Result<super::Opened, ImportError> {
    let root = find_root(dir)?;
    let users: Vec<User> = read_json(&root, "users.json")?;
    let mut people = People::new(&users)?;
    let lists = Lists {
        channels: read_json(&root, "channels.json")?,
        groups: read_list(&root, "groups.json")?,
        dms: read_list(&root, "dms.json")?,
        mpims: read_list(&root, "mpims.json")?,
    };
    let conversations = channels::read(&root, &people, &lists)?;
    let days = messages::days(&root, &conversations.places)?;
    messages::find_bots(&root, &conversations.places, &days, &mut people)?;

    let mut settings = Map::new();
    if let Some(general) = conversations.general {
        // Zulip's converter announces new channels and Zulip's updates in #general.
        settings.insert("new_stream_announcements_stream_id".into(), json!(general));
        settings.insert("zulip_update_announcements_stream_id".into(), json!(general));
    }
    let date_created = conversations
        .channels
        .iter()
        .map(|c| c.date_created)
        .filter(|t| *t > 0)
        .min()
        .unwrap_or_else(agora_actors::clock::now);
    let org = Organization {
        name: NAME.into(),
        description: DESCRIPTION.into(),
        date_created,
        settings,
        users: people.persons.clone(),
        channels: conversations.channels,
        subscriptions: conversations.subscriptions,
        default_channels: conversations.default_channels,
        ..Default::default()
    };
    let messages = SlackMessages {
        dir: root.clone(),
        places: conversations.places,
        days,
        people,
        channel_names: conversations.names,
    };
    let files = Box::new(super::DirFiles { root });
    Ok(super::Opened { org, files, messages: Box::new(messages) })
}
