//! Zulip's tables to the organization an import writes.

use std::collections::{HashMap, HashSet};

use agora_actors::realm::catalog::{
    realm_setting, user_setting, CHANNEL_PERMISSION_SETTINGS, USER_GROUP_PERMISSION_SETTINGS,
};
use agora_actors::realm::model::{Playground, Role};
use agora_actors::transfer::model::{
    Attachment, Channel, Emoji, Folder, Group, Organization, Person, ProfileField, Reaction, Subscription, UserTopic,
};
use agora_actors::transfer::ImportError;
use serde_json::{json, Map, Value};

use super::tables::{seconds, AttachmentJson, RealmJson, Record};

/// The `UserMessage` flags Agora keeps (Zulip's bits): read, starred, collapsed, mentioned,
/// wildcard mentioned, has alert word, historical, private, topic wildcard and group
/// mentioned.
pub const FLAGS: i64 = 1 | 2 | 4 | 8 | 16 | 512 | 1024 | 2048 | 8192 | 16384;

/// The `records.json` of each kind of file.
pub struct FileRecords {
    pub uploads: Vec<Record>,
    pub avatars: Vec<Record>,
    pub emoji: Vec<Record>,
    pub icons: Vec<Record>,
}

fn int(row: &Map<String, Value>, key: &str) -> Option<i64> {
    row.get(key).and_then(Value::as_i64)
}

fn text(row: &Map<String, Value>, key: &str) -> String {
    row.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn flag(row: &Map<String, Value>, key: &str, default: bool) -> bool {
    row.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn time(row: &Map<String, Value>, key: &str) -> i64 {
    seconds(row.get(key).and_then(Value::as_f64))
}

/// Zulip's realm fields that name a channel, and Agora's settings for them.
const CHANNEL_FIELDS: [(&str, &str); 4] = [
    ("new_stream_announcements_stream", "new_stream_announcements_stream_id"),
    ("signup_announcements_stream", "signup_announcements_stream_id"),
    ("zulip_update_announcements_stream", "zulip_update_announcements_stream_id"),
    ("moderation_request_channel", "moderation_request_channel_id"),
];

/// Reads groups: named ones by id, and anonymous ones (what a setting names when it is "these
/// users and these groups") as their members and subgroups.
struct Groups {
    named: HashSet<i64>,
    members: HashMap<i64, Vec<i64>>,
    subgroups: HashMap<i64, Vec<i64>>,
}

impl Groups {
    fn new(realm: &RealmJson) -> Self {
        let mut members: HashMap<i64, Vec<i64>> = HashMap::new();
        for m in &realm.zerver_usergroupmembership {
            members.entry(m.user_group).or_default().push(m.user_profile);
        }
        let mut subgroups: HashMap<i64, Vec<i64>> = HashMap::new();
        for m in &realm.zerver_groupgroupmembership {
            subgroups.entry(m.supergroup).or_default().push(m.subgroup);
        }
        let named = realm
            .zerver_namedusergroup
            .iter()
            .filter_map(|g| int(g, "id").or_else(|| int(g, "usergroup_ptr")))
            .collect();
        Groups { named, members, subgroups }
    }

    /// A group setting's value: a named group's id, or an anonymous group's parts.
    fn setting(&self, id: i64) -> Value {
        if self.named.contains(&id) {
            return json!(id);
        }
        json!({
            "direct_members": self.members.get(&id).cloned().unwrap_or_default(),
            "direct_subgroups": self.subgroups.get(&id).cloned().unwrap_or_default(),
        })
    }
}

/// Copies the `names` group settings of `row` (where present) into `out`.
fn group_settings<'a>(
    groups: &Groups,
    row: &Map<String, Value>,
    names: impl Iterator<Item = &'a str>,
    out: &mut Map<String, Value>,
) {
    for name in names {
        if let Some(id) = int(row, name) {
            out.insert(name.to_owned(), groups.setting(id));
        }
    }
}

pub fn organization(
    realm: &RealmJson,
    attachments: &AttachmentJson,
    files: &FileRecords,
) -> Result<Organization, ImportError> {
    let [row] = realm.zerver_realm.as_slice() else {
        return Err(ImportError::at("realm.json", "zerver_realm must hold exactly one organization"));
    };
    let groups = Groups::new(realm);
    let mut settings = Map::new();
    for (key, value) in row {
        if matches!(key.as_str(), "name" | "description") {
            continue;
        }
        if let Some((_, setting)) = CHANNEL_FIELDS.iter().find(|(field, _)| field == key) {
            settings.insert((*setting).to_owned(), json!(value.as_i64().unwrap_or(-1)));
            continue;
        }
        // Exports of Zulip before 12.0 (FL 453) name the GIF rating `giphy_rating`.
        let key = &if key == "giphy_rating" && !row.contains_key("gif_rating_policy") {
            "gif_rating_policy".to_owned()
        } else {
            key.clone()
        };
        let Some(setting) = realm_setting(key) else { continue };
        if key.ends_with("_group") || key == "can_create_groups" || key == "can_manage_all_groups" {
            if let Some(id) = value.as_i64() {
                settings.insert(key.clone(), groups.setting(id));
            }
            continue;
        }
        let value = match (key.as_str(), value.as_i64()) {
            // Stored as a number, shown by the API as a word.
            ("message_edit_history_visibility_policy", Some(n)) => {
                json!(["all", "moves", "none"].get((n - 1).max(0) as usize))
            }
            _ => value.clone(),
        };
        if setting.accepts(&value) {
            settings.insert(key.clone(), value);
        }
    }
    let mut user_defaults = Map::new();
    if let Some(defaults) = realm.zerver_realmuserdefault.first() {
        for (key, value) in defaults {
            let value = current_setting_value(key, value);
            if user_setting(key).is_some_and(|s| s.accepts(&value)) || key == "email_address_visibility" {
                user_defaults.insert(key.clone(), value);
            }
        }
    }
    let realm_id = int(row, "id");
    let mut org = Organization {
        name: text(row, "name"),
        description: text(row, "description"),
        date_created: time(row, "date_created"),
        deactivated: flag(row, "deactivated", false),
        settings,
        user_defaults,
        upload_realm_id: realm_id,
        system_bots: realm.zerver_userprofile_crossrealm.iter().map(|b| (b.id, b.email.clone())).collect(),
        ..Default::default()
    };
    org.users = people(realm, files)?;
    org.profile_fields = realm
        .zerver_customprofilefield
        .iter()
        .map(|f| ProfileField {
            id: f.id,
            name: f.name.clone(),
            hint: f.hint.clone(),
            field_type: f.field_type,
            field_data: f.field_data.clone(),
            display_in_profile_summary: f.display_in_profile_summary,
            required: f.required,
            editable_by_user: f.editable_by_user,
            use_for_user_matching: f.use_for_user_matching,
        })
        .collect();
    org.profile_fields.sort_by_key(|f| realm.zerver_customprofilefield.iter().find(|r| r.id == f.id).map(|r| r.order));
    for value in &realm.zerver_customprofilefieldvalue {
        if let Some(person) = org.users.iter_mut().find(|p| p.id == value.user_profile) {
            person.profile_values.push((value.field, value.value.clone()));
        }
    }
    for g in &realm.zerver_namedusergroup {
        let id = int(g, "id").or_else(|| int(g, "usergroup_ptr")).unwrap_or(0);
        if flag(g, "is_system_group", false) {
            org.system_groups.push((id, text(g, "name")));
            continue;
        }
        let mut group_settings_map = Map::new();
        group_settings(&groups, g, USER_GROUP_PERMISSION_SETTINGS.iter().map(|p| p.name), &mut group_settings_map);
        org.groups.push(Group {
            id,
            name: text(g, "name"),
            description: text(g, "description"),
            deactivated: flag(g, "deactivated", false),
            date_created: Some(time(g, "date_created")),
            creator: int(g, "creator"),
            members: groups.members.get(&id).cloned().unwrap_or_default(),
            subgroups: groups.subgroups.get(&id).cloned().unwrap_or_default(),
            settings: group_settings_map,
        });
    }
    let mut folders: Vec<_> = realm.zerver_channelfolder.iter().collect();
    folders.sort_by_key(|f| (f.order, f.id));
    org.folders = folders
        .into_iter()
        .map(|f| Folder {
            id: f.id,
            name: f.name.clone(),
            description: f.description.clone(),
            is_archived: f.is_archived,
            creator: f.creator,
            date_created: seconds(f.date_created),
        })
        .collect();
    for s in &realm.zerver_stream {
        let mut channel_settings = Map::new();
        group_settings(&groups, s, CHANNEL_PERMISSION_SETTINGS.iter().map(|p| p.name), &mut channel_settings);
        let topics_policy = match s.get("topics_policy") {
            Some(Value::String(p)) => p.clone(),
            Some(Value::Number(n)) => ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"]
                .get((n.as_i64().unwrap_or(1) - 1).max(0) as usize)
                .unwrap_or(&"inherit")
                .to_string(),
            _ => "inherit".to_owned(),
        };
        org.channels.push(Channel {
            id: int(s, "id").unwrap_or(0),
            name: text(s, "name"),
            description: text(s, "description"),
            invite_only: flag(s, "invite_only", false),
            is_web_public: flag(s, "is_web_public", false),
            history_public_to_subscribers: flag(s, "history_public_to_subscribers", true),
            message_retention_days: int(s, "message_retention_days"),
            topics_policy,
            folder: int(s, "folder"),
            creator: int(s, "creator"),
            date_created: time(s, "date_created"),
            is_archived: flag(s, "deactivated", false),
            settings: channel_settings,
        });
    }
    let channel_of: HashMap<i64, i64> =
        realm.zerver_recipient.iter().filter(|r| r.kind == 2).map(|r| (r.id, r.type_id)).collect();
    for sub in &realm.zerver_subscription {
        let Some(channel) = channel_of.get(&sub.recipient) else { continue };
        org.subscriptions.push(Subscription {
            active: sub.active,
            color: sub.color.clone(),
            is_muted: sub.is_muted,
            pin_to_top: sub.pin_to_top,
            desktop_notifications: sub.desktop_notifications,
            audible_notifications: sub.audible_notifications,
            push_notifications: sub.push_notifications,
            email_notifications: sub.email_notifications,
            wildcard_mentions_notify: sub.wildcard_mentions_notify,
            ..Subscription::new(sub.user_profile, *channel)
        });
    }
    org.default_channels = realm.zerver_defaultstream.iter().map(|d| d.stream).collect();
    org.user_topics = realm
        .zerver_usertopic
        .iter()
        .map(|t| UserTopic {
            user: t.user_profile,
            channel: t.stream,
            topic: t.topic_name.clone(),
            visibility_policy: t.visibility_policy,
            last_updated: seconds(t.last_updated),
        })
        .collect();
    let mut linkifiers: Vec<_> = realm.zerver_realmfilter.iter().collect();
    linkifiers.sort_by_key(|l| l.order);
    org.linkifiers = linkifiers
        .into_iter()
        .map(|l| agora_actors::markdown::linkifier::Linkifier {
            id: 0,
            pattern: l.pattern.clone(),
            url_template: l.url_template.clone(),
            example_input: l.example_input.clone(),
            reverse_template: l.reverse_template.clone(),
            alternative_url_templates: l.alternative_url_templates.clone(),
        })
        .collect();
    org.playgrounds = realm
        .zerver_realmplayground
        .iter()
        .map(|p| Playground {
            id: 0,
            name: p.name.clone(),
            pygments_language: p.pygments_language.clone(),
            url_template: p.url_template.clone(),
        })
        .collect();
    org.emoji = realm
        .zerver_realmemoji
        .iter()
        .map(|e| {
            let file_name = e.file_name.clone().unwrap_or_else(|| format!("{}.png", e.id));
            let record = files
                .emoji
                .iter()
                .find(|r| r.file_name.as_deref() == Some(&file_name) && !r.path.ends_with(".original"));
            Emoji {
                id: e.id,
                name: e.name.clone(),
                author: e.author,
                deactivated: e.deactivated,
                is_animated: e.is_animated,
                file: record.map(|r| format!("emoji/{}", r.path)),
                file_name,
            }
        })
        .collect();
    let uploads: HashMap<&str, &Record> =
        files.uploads.iter().map(|r| (r.s3_path.as_deref().unwrap_or(&r.path), r)).collect();
    org.attachments = attachments
        .zerver_attachment
        .iter()
        .map(|a| Attachment {
            id: a.id,
            owner: a.owner,
            path_id: a.path_id.clone(),
            name: a.file_name.clone(),
            size: a.size,
            content_type: a.content_type.clone(),
            create_time: seconds(a.create_time),
            messages: a.messages.clone(),
            file: uploads.get(a.path_id.as_str()).map(|r| format!("uploads/{}", r.path)),
        })
        .collect();
    org.icon = files
        .icons
        .iter()
        .find(|r| r.path.ends_with("icon.original") || r.path.ends_with("icon.png"))
        .map(|r| format!("realm_icons/{}", r.path));
    Ok(org)
}

fn people(realm: &RealmJson, files: &FileRecords) -> Result<Vec<Person>, ImportError> {
    let services: HashMap<i64, (String, i64, String)> = realm
        .zerver_service
        .iter()
        .map(|s| (s.user_profile, (s.base_url.clone(), s.interface, s.token.clone())))
        .collect();
    let avatar = |id: i64| -> Option<String> {
        let mine = files.avatars.iter().filter(|r| r.user_profile_id == Some(id));
        let mut best: Option<&Record> = None;
        for r in mine {
            if r.path.ends_with(".original")
                || (best.is_none() && r.path.ends_with(".png") && !r.path.ends_with("-medium.png"))
            {
                best = Some(r);
            }
        }
        best.map(|r| format!("avatars/{}", r.path))
    };
    let mut people = Vec::new();
    let rows = realm
        .zerver_userprofile
        .iter()
        .map(|r| (r, false))
        .chain(realm.zerver_userprofile_mirrordummy.iter().map(|r| (r, true)));
    for (index, (row, dummy)) in rows.enumerate() {
        let id = int(row, "id")
            .ok_or_else(|| ImportError::at(format!("realm.json: zerver_userprofile[{index}]"), "no id"))?;
        let email = match text(row, "delivery_email") {
            e if e.is_empty() => text(row, "email"),
            e => e,
        };
        let role = int(row, "role").and_then(Role::from_i64).unwrap_or(Role::Member);
        let bot_type = if flag(row, "is_bot", false) { Some(int(row, "bot_type").unwrap_or(1)) } else { None };
        let mut settings = Map::new();
        for (key, value) in row {
            let value = current_setting_value(key, value);
            if user_setting(key).is_some_and(|s| s.accepts(&value)) {
                settings.insert(key.clone(), value);
            }
        }
        people.push(Person {
            id,
            email,
            full_name: text(row, "full_name"),
            role,
            is_active: flag(row, "is_active", true) && !dummy,
            bot_type,
            bot_owner: int(row, "bot_owner"),
            api_key: row.get("api_key").and_then(Value::as_str).map(str::to_owned),
            timezone: text(row, "timezone"),
            date_joined: time(row, "date_joined"),
            email_address_visibility: int(row, "email_address_visibility"),
            settings,
            avatar: (text(row, "avatar_source") == "U").then(|| avatar(id)).flatten(),
            service: services.get(&id).cloned(),
            profile_values: Vec::new(),
            // Zulip 12 exports say (FL 433); before, its mirror dummies were the placeholders.
            is_imported_stub: row.get("is_imported_stub").and_then(Value::as_bool).unwrap_or(dummy),
        });
    }
    Ok(people)
}

/// Reactions, by message.
pub fn reactions(realm: &RealmJson) -> HashMap<i64, Vec<Reaction>> {
    let mut out: HashMap<i64, Vec<Reaction>> = HashMap::new();
    for r in &realm.zerver_reaction {
        out.entry(r.message).or_default().push(Reaction {
            user: r.user_profile,
            emoji_name: r.emoji_name.clone(),
            emoji_code: r.emoji_code.clone(),
            reaction_type: r.reaction_type.clone(),
        });
    }
    out
}

/// A personal setting's value from an export of an older Zulip, as this level spells it:
/// `web_home_view`'s `recent_topics` became `recent` at FL 454.
fn current_setting_value(key: &str, value: &Value) -> Value {
    match (key, value.as_str()) {
        ("web_home_view", Some("recent_topics")) => Value::from("recent"),
        _ => value.clone(),
    }
}
