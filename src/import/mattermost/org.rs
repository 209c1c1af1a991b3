//! The first pass's findings to the organization an import writes, and the directory the
//! second pass converts posts with.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path};

use agora_actors::ids::RealmId;
use agora_actors::realm::model::Role;
use agora_actors::transfer::model::{Attachment, Channel, Emoji, Organization, Person, Subscription};
use agora_actors::transfer::ImportError;
use agora_actors::uploads::names::{base_name, new_path_id, sanitize_name};
use serde_json::{json, Map};

use super::lines::UserLine;
use super::scan::{Scan, IN_CHANNEL};

/// The realm id in the upload paths this gives (the writer points them at the new
/// organization).
const UPLOAD_REALM: i64 = 1;

/// Who and what posts name, by their names in the export.
#[derive(Debug, Default)]
pub struct Directory {
    /// Username -> (source id, full name): the organization's people.
    pub users: HashMap<String, (i64, String)>,
    /// Channel name -> (source id, subscribers).
    pub channels: HashMap<String, (i64, Vec<i64>)>,
    /// Custom emoji name -> source id.
    pub emoji: HashMap<String, i64>,
    /// Source message id -> its attachments' (name, path id).
    pub links: HashMap<i64, Vec<(String, String)>>,
}

fn has_role(roles: Option<&str>, role: &str) -> bool {
    roles.unwrap_or_default().split_whitespace().any(|r| r == role)
}

/// The role of a member of the team.
///
/// Mattermost's system administrator runs the whole server, every team included, and no
/// team administrator can demote them: that is an owner. A team administrator manages the
/// team's members and settings but not the server: an administrator. (Zulip's converter
/// makes team administrators owners and ignores system administrators; an owner's powers
/// over other owners go beyond what a team administrator had.) Guests stay guests.
fn role(user: &UserLine, team_roles: Option<&str>) -> Role {
    if has_role(user.roles.as_deref(), "system_admin") {
        Role::Owner
    } else if has_role(team_roles, "team_admin") {
        Role::Administrator
    } else if has_role(user.roles.as_deref(), "system_guest") || has_role(team_roles, "team_guest") {
        Role::Guest
    } else {
        Role::Member
    }
}

fn full_name(user: &UserLine) -> String {
    let name = format!("{} {}", user.first_name.as_deref().unwrap_or(""), user.last_name.as_deref().unwrap_or(""));
    match name.trim() {
        "" => user.username.clone(),
        name => name.to_owned(),
    }
}

/// The organization of team `team`, and the directory to convert its posts.
pub fn build(scan: &mut Scan, file: &str, root: &Path) -> Result<(Organization, Directory), ImportError> {
    let at = |line: u64, what: String| ImportError::at(file, format!("line {line}: {what}"));
    let now = agora_actors::clock::now();
    let team = scan.team.take().ok_or_else(|| ImportError::new("no team chosen"))?;
    let mut org = Organization {
        name: team.display_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| team.name.clone()),
        description: team.description.clone().unwrap_or_default(),
        date_created: now,
        upload_realm_id: Some(UPLOAD_REALM),
        ..Default::default()
    };
    let mut dir = Directory::default();

    // Channels, named by their display names as Mattermost shows them (one taken twice
    // gets its unique name added).
    let mut taken = HashSet::new();
    for (n, (line, c)) in scan.channels.iter().enumerate() {
        let id = n as i64 + 1;
        let shown = c.display_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| c.name.clone());
        let name = if taken.insert(shown.to_lowercase()) { shown } else { format!("{shown} ({})", c.name) };
        let invite_only = match c.kind.as_str() {
            "O" => false,
            "P" => true,
            other => {
                return Err(at(*line, format!("channel {:?} has type {other:?}; expected \"O\" or \"P\"", c.name)))
            }
        };
        if dir.channels.insert(c.name.clone(), (id, Vec::new())).is_some() {
            return Err(at(*line, format!("a second channel {:?} in team {:?}", c.name, team.name)));
        }
        if c.name == "town-square" {
            for setting in ["new_stream_announcements_stream_id", "zulip_update_announcements_stream_id"] {
                org.settings.insert(setting.to_owned(), json!(id));
            }
        }
        // Mattermost puts every new member of a team in these two.
        if matches!(c.name.as_str(), "town-square" | "off-topic") && !invite_only {
            org.default_channels.push(id);
        }
        org.channels.push(Channel {
            id,
            name,
            description: c
                .purpose
                .clone()
                .filter(|p| !p.trim().is_empty())
                .or_else(|| c.header.clone())
                .unwrap_or_default(),
            invite_only,
            is_web_public: false,
            // A private channel's new members see its whole history in Mattermost.
            history_public_to_subscribers: true,
            message_retention_days: None,
            topics_policy: "inherit".into(),
            folder: None,
            creator: None,
            date_created: now,
            is_archived: c.deleted_at.is_some_and(|d| d > 0),
            settings: Map::new(),
        });
    }
    let channel_error = |line: u64, whose: String, name: &str| match scan.foreign_channels.get(name) {
        Some(other) => at(line, format!("{whose} channel {name:?} of team {other:?}, not of team {:?}", team.name)),
        None => at(line, format!("{whose} channel {name:?}, which team {:?} does not have", team.name)),
    };

    // The team's members, with their subscriptions; then the people who wrote in its
    // channels but left the team, as deactivated accounts (as Zulip's converter does).
    let mut by_name: HashMap<&str, (u64, &UserLine)> = HashMap::new();
    for (line, user) in &scan.users {
        if by_name.insert(&user.username, (*line, user)).is_some() {
            return Err(at(*line, format!("a second user {:?}", user.username)));
        }
    }
    let mut people: Vec<(&UserLine, u64, Role, bool)> = Vec::new();
    for (line, user) in &scan.users {
        let Some(membership) = user.teams.iter().flatten().find(|t| t.name == team.name) else { continue };
        let id = people.len() as i64 + 1;
        for channel in membership.channels.iter().flatten() {
            let Some((channel_id, subscribers)) = dir.channels.get_mut(&channel.name) else {
                return Err(channel_error(*line, format!("user {:?} is in", user.username), &channel.name));
            };
            subscribers.push(id);
            let mut sub = Subscription::new(id, *channel_id);
            sub.pin_to_top = channel.favorite == Some(true);
            org.subscriptions.push(sub);
        }
        let active = user.delete_at.unwrap_or(0) == 0;
        people.push((user, *line, role(user, membership.roles.as_deref()), active));
    }
    let mut members: HashSet<&str> = people.iter().map(|p| p.0.username.as_str()).collect();
    let mut named: Vec<(&String, &(u64, bool))> = scan.named.iter().collect();
    named.sort_by_key(|(_, (line, _))| *line);
    for (name, (line, in_channel)) in named {
        let Some((_, user)) = by_name.get(name.as_str()) else {
            return Err(at(*line, format!("{name:?} is not a user of the export")));
        };
        if *in_channel && members.insert(name.as_str()) {
            people.push((user, *line, Role::Member, false));
        }
    }
    // An organization needs an owner: without a system administrator among the members,
    // the team's administrators are its owners.
    if !people.iter().any(|p| p.2 == Role::Owner && p.3) {
        for p in people.iter_mut().filter(|p| p.2 == Role::Administrator && p.3) {
            p.2 = Role::Owner;
        }
    }
    for (n, (user, line, role, active)) in people.into_iter().enumerate() {
        let id = n as i64 + 1;
        let email = user.email.clone().filter(|e| !e.trim().is_empty());
        let email = email.ok_or_else(|| at(line, format!("user {:?} has no email address", user.username)))?;
        dir.users.insert(user.username.clone(), (id, full_name(user)));
        // Zulip's converter makes every member a stub (FL 433) until they log in.
        org.users.push(Person {
            is_active: active,
            is_imported_stub: true,
            ..Person::new(id, email, full_name(user), role)
        });
    }
    for (name, line) in &scan.post_channels {
        if !dir.channels.contains_key(name) {
            return Err(channel_error(*line, "a post in".into(), name));
        }
    }

    // Direct conversations come along when all their people are the organization's.
    let kept: Vec<bool> =
        scan.conversations.iter().map(|(_, names)| names.iter().all(|n| dir.users.contains_key(n))).collect();
    let keep = |conversation: u32| conversation == IN_CHANNEL || kept[conversation as usize];
    scan.posts.retain(|e| keep(e.conversation));
    // Every post, replies included, in time order (quick when the file is in order).
    scan.posts.sort_unstable_by_key(|e| e.order());

    for (n, (line, e)) in scan.emoji.iter().enumerate() {
        let id = n as i64 + 1;
        let file = [e.image.clone(), format!("data/{}", e.image)]
            .into_iter()
            .find(|f| safe(f) && root.join(f).is_file())
            .ok_or_else(|| {
                at(*line, format!("the image of emoji {:?}, {:?}, is not in the export", e.name, e.image))
            })?;
        let extension = image_extension(&root.join(&file));
        dir.emoji.insert(e.name.clone(), id);
        org.emoji.push(Emoji {
            id,
            name: e.name.clone(),
            author: None,
            deactivated: false,
            is_animated: false,
            file_name: format!("{}.{extension}", sanitize_name(&e.name)),
            file: Some(file),
        });
    }

    for (n, a) in scan.attachments.iter().filter(|a| keep(a.conversation)).enumerate() {
        let Some((owner, _)) = dir.users.get(&a.user) else { continue };
        let name = base_name(&a.path);
        let path_id = new_path_id(RealmId(UPLOAD_REALM), &name);
        let file = format!("data/{}", a.path);
        let size =
            if safe(&file) { std::fs::metadata(root.join(&file)).map(|m| m.len() as i64).unwrap_or(0) } else { 0 };
        dir.links.entry(a.message).or_default().push((name.clone(), path_id.clone()));
        org.attachments.push(Attachment {
            id: n as i64 + 1,
            owner: *owner,
            path_id,
            content_type: mime_guess::from_path(&name).first().map(|m| m.essence_str().to_owned()),
            name,
            size,
            create_time: a.at.div_euclid(1000),
            messages: vec![a.message],
            file: Some(file),
        });
    }
    Ok((org, dir))
}

/// A relative path that stays inside the export.
fn safe(path: &str) -> bool {
    Path::new(path).components().all(|c| matches!(c, Component::Normal(_)))
}

/// The extension an image's first bytes call for (Mattermost names emoji images `image`).
fn image_extension(path: &Path) -> &'static str {
    let mut head = [0u8; 12];
    let read = std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).unwrap_or(0);
    match &head[..read] {
        [b'G', b'I', b'F', ..] => "gif",
        [0xff, 0xd8, ..] => "jpg",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P'] => "webp",
        _ => "png",
    }
}
