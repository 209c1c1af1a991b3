//! The conversation lists: public channels (`channels.json`) and private ones
//! (`groups.json`) become channels with their members subscribed; DMs (`dms.json`) and
//! group DMs (`mpims.json`) become direct conversations. Each names the folder of its
//! messages.

use std::collections::HashMap;
use std::path::Path;

use agora_actors::transfer::model::{Channel, Subscription};
use agora_actors::transfer::ImportError;
use serde_json::Map;

use super::people::People;
use super::tables::{seconds, Conversation};

/// Where a conversation's messages go.
#[derive(Debug, Clone)]
pub enum Target {
    /// A channel (its id) and its members (person ids).
    Channel { id: i64, members: Vec<i64> },
    /// A DM or group DM: its participants (person ids).
    Direct(Vec<i64>),
}

/// A conversation with messages: its folder in the export and where its messages go.
#[derive(Debug, Clone)]
pub struct Place {
    pub folder: String,
    pub target: Target,
}

/// The conversations of an export.
#[derive(Debug, Default)]
pub struct Conversations {
    pub places: Vec<Place>,
    /// Slack channel id -> its name (for `<#C…>` links).
    pub names: HashMap<String, String>,
    pub channels: Vec<Channel>,
    pub subscriptions: Vec<Subscription>,
    /// Channel ids.
    pub default_channels: Vec<i64>,
    /// The channel that gets announcements (`#general`, as Zulip's converter chooses).
    pub general: Option<i64>,
}

/// The four lists, as read (`None` when the file is absent).
pub struct Lists {
    pub channels: Vec<Conversation>,
    pub groups: Vec<Conversation>,
    pub dms: Vec<Conversation>,
    pub mpims: Vec<Conversation>,
}

/// Reads the lists; every member must be a user of `users.json`.
pub fn read(dir: &Path, people: &People, lists: &Lists) -> Result<Conversations, ImportError> {
    let mut out = Conversations::default();
    for (file, list, private) in [("channels.json", &lists.channels, false), ("groups.json", &lists.groups, true)] {
        for c in list {
            let name = c.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| c.id.clone());
            let place = || format!("channel {name} ({})", c.id);
            let members = members(people, file, c, &place())?;
            let id = out.channels.len() as i64 + 1;
            let text = |d: &Option<super::tables::Described>| {
                d.as_ref().and_then(|d| d.value.clone()).map(|v| v.trim().to_owned()).unwrap_or_default()
            };
            // Zulip's converter takes the purpose; the topic stands in when there is none.
            let purpose = text(&c.purpose);
            let description = if purpose.is_empty() { text(&c.topic) } else { purpose };
            let archived = c.is_archived.unwrap_or(false);
            let creator = c.creator.as_deref().and_then(|u| people.user(u));
            out.channels.push(Channel {
                id,
                name: name.clone(),
                description,
                invite_only: private,
                is_web_public: false,
                history_public_to_subscribers: true,
                message_retention_days: None,
                topics_policy: "inherit".into(),
                folder: None,
                creator,
                date_created: seconds(c.created.as_ref()),
                is_archived: archived,
                settings: Map::new(),
            });
            out.subscriptions.extend(members.iter().map(|user| Subscription::new(*user, id)));
            let general = c.is_general.unwrap_or(false) || name == "general";
            // Zulip makes #general and #random default channels; Slack marks its own.
            if !archived && !private && (general || name == "random") {
                out.default_channels.push(id);
            }
            if general && !archived && out.general.is_none() {
                out.general = Some(id);
            }
            out.names.insert(c.id.clone(), name.clone());
            out.places.push(Place { folder: folder(dir, &name, &c.id), target: Target::Channel { id, members } });
        }
    }
    for (file, list) in [("mpims.json", &lists.mpims), ("dms.json", &lists.dms)] {
        for c in list {
            let name = c.name.clone().filter(|n| !n.is_empty());
            let place = match &name {
                Some(name) => format!("conversation {name} ({})", c.id),
                None => format!("conversation {}", c.id),
            };
            let members = members(people, file, c, &place)?;
            if members.is_empty() {
                return Err(ImportError::at(file, format!("{place}: it has no members")));
            }
            // A group DM's folder is its name; a DM's its id.
            let folder = folder(dir, name.as_deref().unwrap_or(&c.id), &c.id);
            out.places.push(Place { folder, target: Target::Direct(members) });
        }
    }
    Ok(out)
}

/// A conversation's members as person ids, each once.
fn members(people: &People, file: &str, c: &Conversation, place: &str) -> Result<Vec<i64>, ImportError> {
    let mut ids = Vec::new();
    for member in c.members.iter().flatten() {
        let id = people
            .user(member)
            .ok_or_else(|| ImportError::at(file, format!("{place}: its member {member} is not in users.json")))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// The folder of a conversation's messages: named as Slack names it, or by its id when
/// only that exists; `""` (none) when neither can be a folder's name.
fn folder(dir: &Path, name: &str, id: &str) -> String {
    let plain = |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\']);
    if plain(name) && (dir.join(name).is_dir() || !plain(id) || !dir.join(id).is_dir()) {
        name.to_owned()
    } else if plain(id) {
        id.to_owned()
    } else {
        String::new()
    }
}
