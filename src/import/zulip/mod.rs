//! Zulip's export format (what `manage.py export` writes), unpacked: `realm.json`,
//! `attachment.json`, `messages-NNNNNN.json`, `migration_status.json`, and `uploads/`,
//! `avatars/`, `emoji/`, `realm_icons/` with their `records.json`.

mod convert;
mod tables;

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use agora_actors::transfer::model::{Destination, Message, Organization, Reaction};
use agora_actors::transfer::ImportError;
use serde::de::DeserializeOwned;

use tables::{MessagesJson, MigrationStatus, RealmJson};

/// The Zulip releases whose exports are read (their major versions).
pub const ACCEPTED_VERSIONS: std::ops::RangeInclusive<u32> = 10..=12;

/// An unpacked Zulip export, read up to its messages.
pub struct ZulipExport {
    dir: PathBuf,
    /// Recipient id -> where its messages go (a channel, or the users of a conversation).
    recipients: HashMap<i64, Target>,
    reactions: HashMap<i64, Vec<Reaction>>,
    clients: HashMap<i64, String>,
    /// How many message files there are (`messages-000001.json` ... with no gap).
    pub message_files: usize,
}

enum Target {
    Channel(i64),
    User(i64),
    Group(Vec<i64>),
}

/// Reads a JSON file of the export whole (the tables other than messages).
fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<T, ImportError> {
    let path = dir.join(name);
    let file = File::open(&path).map_err(|e| ImportError::at(name, format!("cannot be read: {e}")))?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| ImportError::at(name, json_error(&e)))
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

impl ZulipExport {
    /// Reads everything but the messages; checks the export's Zulip version first.
    pub fn open(dir: &Path) -> Result<(ZulipExport, Organization), ImportError> {
        let dir = find_root(dir)?;
        let status: MigrationStatus = read_json(&dir, "migration_status.json")?;
        let version = status.zulip_version.unwrap_or_default();
        let major = version.split('.').next().and_then(|m| m.parse::<u32>().ok());
        if !major.is_some_and(|m| ACCEPTED_VERSIONS.contains(&m)) {
            return Err(ImportError::at(
                "migration_status.json",
                format!(
                    "the export was made by Zulip {version:?}; Agora reads exports of Zulip {} to {}",
                    ACCEPTED_VERSIONS.start(),
                    ACCEPTED_VERSIONS.end()
                ),
            ));
        }
        let realm: RealmJson = read_json(&dir, "realm.json")?;
        let attachments: tables::AttachmentJson =
            if dir.join("attachment.json").exists() { read_json(&dir, "attachment.json")? } else { Default::default() };
        let records = |name: &str| -> Result<Vec<tables::Record>, ImportError> {
            let file = format!("{name}/records.json");
            if dir.join(&file).exists() {
                read_json(&dir, &file)
            } else {
                Ok(Vec::new())
            }
        };
        let files = convert::FileRecords {
            uploads: records("uploads")?,
            avatars: records("avatars")?,
            emoji: records("emoji")?,
            icons: records("realm_icons")?,
        };
        let org = convert::organization(&realm, &attachments, &files)?;
        let mut message_files = 0;
        while dir.join(message_file(message_files + 1)).exists() {
            message_files += 1;
        }
        let export = ZulipExport {
            recipients: targets(&realm),
            reactions: convert::reactions(&realm),
            clients: realm.zerver_client.iter().map(|c| (c.id, c.name.clone())).collect(),
            dir,
            message_files,
        };
        Ok((export, org))
    }

    /// The export's directory (its files are named from here).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Hands over every message, file by file, in the order of their ids. The next file is
    /// read and parsed on a second thread while this one's messages are written.
    pub fn messages(&mut self, each: &mut dyn FnMut(Message) -> Result<(), ImportError>) -> Result<(), ImportError> {
        let (dir, files) = (self.dir.clone(), self.message_files);
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<(String, Result<MessagesJson, ImportError>)>(1);
            scope.spawn(move || {
                for n in 1..=files {
                    let name = message_file(n);
                    let parsed = read_json(&dir, &name);
                    let failed = parsed.is_err();
                    if tx.send((name, parsed)).is_err() || failed {
                        return;
                    }
                }
            });
            for (name, parsed) in rx {
                self.file_messages(&name, parsed?, each)?;
            }
            Ok(())
        })
    }

    fn file_messages(
        &mut self,
        name: &str,
        file: MessagesJson,
        each: &mut dyn FnMut(Message) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let mut received: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for row in file.zerver_usermessage {
            received.entry(row.message).or_default().push((row.user_profile, row.flags_mask & convert::FLAGS));
        }
        let mut messages = file.zerver_message;
        messages.sort_by_key(|m| m.id);
        for m in messages {
            let place = || format!("{name}: message {}", m.id);
            let to = match self.recipients.get(&m.recipient) {
                Some(Target::Channel(channel)) => Destination::Channel(*channel, m.subject.clone()),
                Some(Target::User(user)) => Destination::Direct(vec![*user]),
                Some(Target::Group(users)) => Destination::Direct(users.clone()),
                None => return Err(ImportError::at(place(), format!("its recipient {} does not exist", m.recipient))),
            };
            let edit_history = match m.edit_history.as_deref() {
                Some(text) => Some(
                    serde_json::from_str(text)
                        .map_err(|e| ImportError::at(place(), format!("its edit_history is not JSON: {e}")))?,
                ),
                None => None,
            };
            let message = Message {
                id: m.id,
                sender: m.sender,
                to,
                content: m.content,
                rendered_content: m.rendered_content,
                date_sent: tables::seconds(Some(m.date_sent)),
                sending_client: m
                    .sending_client
                    .and_then(|c| self.clients.get(&c).cloned())
                    .unwrap_or_else(|| "Zulip".into()),
                last_edit_time: m.last_edit_time.map(|t| tables::seconds(Some(t))),
                last_moved_time: None,
                edit_history,
                recipients: received.remove(&m.id).unwrap_or_default(),
                reactions: self.reactions.remove(&m.id).unwrap_or_default(),
                submessages: Vec::new(),
            };
            each(message)?;
        }
        Ok(())
    }
}

/// Opens an unpacked Zulip export for [`super::run`].
pub fn open(dir: &Path) -> Result<super::Opened, ImportError> {
    let (export, org) = ZulipExport::open(dir)?;
    let files = Box::new(super::DirFiles { root: export.dir().to_path_buf() });
    Ok(super::Opened { org, files, messages: Box::new(export) })
}

impl super::Messages for ZulipExport {
    fn each(&mut self, f: &mut dyn FnMut(Message) -> Result<(), ImportError>) -> Result<(), ImportError> {
        self.messages(f)
    }
}

/// `messages-000001.json` and so on.
fn message_file(n: usize) -> String {
    format!("messages-{n:06}.json")
}

/// The directory holding `realm.json`: the one given, or the one directory inside it (an
/// archive unpacks to `zulip-export-xxxx/`).
fn find_root(dir: &Path) -> Result<PathBuf, ImportError> {
    if dir.join("realm.json").is_file() {
        return Ok(dir.to_path_buf());
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ImportError::at(dir.display().to_string(), e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    match entries.as_slice() {
        [only] if only.join("realm.json").is_file() => Ok(only.clone()),
        _ => Err(ImportError::new("no realm.json: this is not a Zulip export (made by `manage.py export`)")),
    }
}

/// Where each recipient's messages go.
fn targets(realm: &RealmJson) -> HashMap<i64, Target> {
    let mut members: HashMap<i64, Vec<i64>> = HashMap::new();
    for sub in &realm.zerver_subscription {
        members.entry(sub.recipient).or_default().push(sub.user_profile);
    }
    realm
        .zerver_recipient
        .iter()
        .filter_map(|r| {
            let target = match r.kind {
                1 => Target::User(r.type_id),
                2 => Target::Channel(r.type_id),
                3 => Target::Group(members.get(&r.id).cloned().unwrap_or_default()),
                _ => return None,
            };
            Some((r.id, target))
        })
        .collect()
}
