//! `realm.json`: the organization's tables, with Zulip's table and field names.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use super::{float, Scope};
use crate::ids::{ChannelId, UserId};
use crate::realm::catalog::{self, Kind, CHANNEL_PERMISSION_SETTINGS, USER_GROUP_PERMISSION_SETTINGS, USER_SETTINGS};
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::state::RealmState;
use crate::store::{self, Store};
use crate::transfer::ImportError;

/// Zulip's realm fields naming a channel, and Agora's settings for them.
const CHANNEL_FIELDS: [(&str, &str); 4] = [
    ("new_stream_announcements_stream", "new_stream_announcements_stream_id"),
    ("signup_announcements_stream", "signup_announcements_stream_id"),
    ("zulip_update_announcements_stream", "zulip_update_announcements_stream_id"),
    ("moderation_request_channel", "moderation_request_channel_id"),
];

/// Zulip's `topics_policy` numbers.
const TOPICS_POLICIES: [&str; 4] = ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"];

/// The tables being built, and what the message files need from them.
pub struct Tables {
    pub tables: BTreeMap<&'static str, Vec<Value>>,
    /// Recipient of each user (personal), channel and group conversation (by `dm_key`).
    pub personal: HashMap<UserId, i64>,
    pub channel_recipients: HashMap<ChannelId, i64>,
    pub group_recipients: HashMap<String, i64>,
    /// Client name -> id.
    pub clients: HashMap<String, i64>,
    /// Channels whose messages are exported.
    pub exported_channels: Vec<ChannelId>,
    /// Private channels: their messages only from senders whose private data is exported.
    pub private_channels: Vec<ChannelId>,
    /// Users whose private data is exported.
    pub private_ok: Vec<UserId>,
    next_recipient: i64,
    next_group: i64,
    pub users: u64,
    pub channels: u64,
}

impl Tables {
    pub fn build(store: &Store, state: &RealmState, scope: &Scope) -> Result<Tables, ImportError> {
        let conn = store.conn()?;
        let realm = state.realm();
        let max_group = state.groups().map(|g| g.id.0).max().unwrap_or(0);
        let mut t = Tables {
            tables: BTreeMap::new(),
            personal: HashMap::new(),
            channel_recipients: HashMap::new(),
            group_recipients: HashMap::new(),
            clients: HashMap::new(),
            exported_channels: Vec::new(),
            private_channels: Vec::new(),
            private_ok: Vec::new(),
            next_recipient: 1,
            next_group: max_group + 1,
            users: 0,
            channels: 0,
        };
        for table in [
            "zerver_realmdomain",
            "zerver_realmplayground",
            "zerver_userpresence",
            "zerver_useractivity",
            "zerver_useractivityinterval",
            "zerver_userprofile_mirrordummy",
            "zerver_huddle",
            "zerver_client",
            "zerver_reaction",
            "zerver_subscription",
            "zerver_recipient",
            "zerver_usergroup",
            "zerver_usergroupmembership",
            "zerver_groupgroupmembership",
            "zerver_userprofile_crossrealm",
        ] {
            t.tables.insert(table, Vec::new());
        }
        t.push("zerver_realmauthenticationmethod", json!({"id": 1, "realm": realm.id.0, "name": "Email"}));
        // People: personal recipients and their "glue" subscriptions.
        for user in state.users() {
            let recipient = t.recipient(1, user.id.0);
            t.personal.insert(user.id, recipient);
            t.subscription(user.id.0, recipient, json!({}));
            if user.is_system_bot() {
                t.push(
                    "zerver_userprofile_crossrealm",
                    json!({"id": user.id.0, "email": user.delivery_email, "recipient_id": recipient}),
                );
                continue;
            }
            let private_ok = *scope == Scope::Full
                || (*scope == Scope::Standard
                    && user.settings.get("allow_private_data_export").and_then(Value::as_bool).unwrap_or(false));
            if private_ok {
                t.private_ok.push(user.id);
            }
            let mut row = json!({
                "id": user.id.0, "realm": realm.id.0, "email": user.email, "delivery_email": user.delivery_email,
                "full_name": user.full_name, "role": user.role.as_i64(), "is_active": user.is_active, "is_bot": user.is_bot,
                "bot_type": user.bot_type, "bot_owner": user.bot_owner_id.map(|o| o.0), "is_mirror_dummy": false,
                "avatar_source": user.avatar_source, "avatar_version": user.avatar_version, "timezone": user.timezone,
                "date_joined": float(user.date_joined), "last_login": null, "last_reminder": null,
                "default_sending_stream": null, "default_events_register_stream": null, "default_all_public_streams": false,
                "last_active_message_id": null, "groups": [], "user_permissions": [], "recipient": recipient,
                "can_create_users": user.can_create_users, "can_change_user_emails": user.can_change_user_emails,
                "tos_version": null, "is_staff": false, "is_superuser": false, "long_term_idle": false, "can_forge_sender": false,
                "is_imported_stub": user.is_imported_stub,
            });
            for setting in USER_SETTINGS.iter().filter(|s| s.name != "timezone") {
                row[setting.name] = catalog::user_value(user, setting);
            }
            t.push("zerver_userprofile", row);
            t.users += 1;
        }
        for bot in state.users().filter(|u| u.is_bot) {
            if let Some(service) = state.bots().service(bot.id) {
                let id = t.len("zerver_service") as i64 + 1;
                t.push("zerver_service", json!({"id": id, "name": service.name, "base_url": service.base_url, "token": service.token, "interface": service.interface, "user_profile": bot.id.0}));
            }
        }
        t.groups(state);
        t.realm_row(state);
        t.channels_and_subscriptions(state, scope);
        for (order, field) in state.profile_fields().iter().enumerate() {
            t.push("zerver_customprofilefield", json!({
                "id": field.id.0, "realm": realm.id.0, "name": field.name, "hint": field.hint, "order": order as i64 + 1,
                "display_in_profile_summary": field.display_in_profile_summary, "required": field.required,
                "editable_by_user": field.editable_by_user, "field_type": field.field_type, "field_data": field.field_data,
                "use_for_user_matching": field.use_for_user_matching,
            }));
        }
        let mut value_id = 0;
        for user in state.users() {
            for (field, value) in &user.profile_data {
                value_id += 1;
                t.push("zerver_customprofilefieldvalue", json!({"id": value_id, "user_profile": user.id.0, "field": field.0, "value": value.value, "rendered_value": value.rendered_value}));
            }
        }
        for (i, l) in store::linkifiers::in_realm(&conn, realm.id)?.iter().enumerate() {
            t.push("zerver_realmfilter", json!({"id": l.id, "realm": realm.id.0, "pattern": l.pattern, "url_template": l.url_template, "order": i,
                "example_input": l.example_input, "reverse_template": l.reverse_template, "alternative_url_templates": l.alternative_url_templates}));
        }
        for p in state.playgrounds() {
            t.push("zerver_realmplayground", json!({"id": p.id, "realm": realm.id.0, "name": p.name, "pygments_language": p.pygments_language, "url_template": p.url_template}));
        }
        for e in store::attachments::emoji_in_realm(&conn, realm.id)? {
            t.push("zerver_realmemoji", json!({"id": e.id, "realm": realm.id.0, "author": e.author_id.map(|a| a.0), "name": e.name, "file_name": e.file_name, "is_animated": e.is_animated, "deactivated": e.deactivated}));
        }
        let mut defaults = json!({"id": 1, "realm": realm.id.0});
        for (key, value) in catalog::realm_user_settings_defaults(realm) {
            defaults[key.as_str()] = value;
        }
        t.push("zerver_realmuserdefault", defaults);
        Ok(t)
    }

    fn push(&mut self, table: &'static str, row: Value) {
        self.tables.entry(table).or_default().push(row);
    }

    fn len(&self, table: &str) -> usize {
        self.tables.get(table).map_or(0, Vec::len)
    }

    fn recipient(&mut self, kind: i64, type_id: i64) -> i64 {
        let id = self.next_recipient;
        self.next_recipient += 1;
        self.push("zerver_recipient", json!({"id": id, "type": kind, "type_id": type_id}));
        id
    }

    fn subscription(&mut self, user: i64, recipient: i64, extra: Value) {
        let id = self.len("zerver_subscription") as i64 + 1;
        let mut row = json!({"id": id, "user_profile": user, "recipient": recipient, "active": true, "is_user_active": true,
            "is_muted": false, "color": "#c2c2c2", "pin_to_top": false, "desktop_notifications": null,
            "audible_notifications": null, "push_notifications": null, "email_notifications": null, "wildcard_mentions_notify": null});
        if let (Some(row), Some(extra)) = (row.as_object_mut(), extra.as_object()) {
            row.extend(extra.clone());
        }
        self.push("zerver_subscription", row);
    }

    /// A group-setting value as Zulip stores it: a named group's id, or a new anonymous
    /// group's.
    fn group_value(&mut self, state: &RealmState, value: &GroupSettingValue) -> i64 {
        match state.group_setting_api_value(value) {
            GroupSettingValue::Group(id) => id.0,
            GroupSettingValue::Anonymous { direct_members, direct_subgroups } => {
                let id = self.next_group;
                self.next_group += 1;
                self.push("zerver_usergroup", json!({"id": id, "realm": state.realm().id.0}));
                for user in direct_members {
                    self.membership(id, user.0);
                }
                for sub in direct_subgroups {
                    let n = self.len("zerver_groupgroupmembership") as i64 + 1;
                    self.push("zerver_groupgroupmembership", json!({"id": n, "supergroup": id, "subgroup": sub.0}));
                }
                id
            }
        }
    }

    fn membership(&mut self, group: i64, user: i64) {
        let n = self.len("zerver_usergroupmembership") as i64 + 1;
        self.push("zerver_usergroupmembership", json!({"id": n, "user_group": group, "user_profile": user}));
    }

    fn groups(&mut self, state: &RealmState) {
        let realm = state.realm().id.0;
        let groups: Vec<_> = state.groups().cloned().collect();
        for g in &groups {
            self.push("zerver_usergroup", json!({"id": g.id.0, "realm": realm}));
            for user in &g.members {
                self.membership(g.id.0, user.0);
            }
            for sub in &g.subgroups {
                let n = self.len("zerver_groupgroupmembership") as i64 + 1;
                self.push("zerver_groupgroupmembership", json!({"id": n, "supergroup": g.id.0, "subgroup": sub.0}));
            }
        }
        for g in &groups {
            let mut row = json!({"id": g.id.0, "usergroup_ptr": g.id.0, "name": g.name, "description": g.description,
                "date_created": g.date_created.map(float), "creator": g.creator_id.map(|c| c.0),
                "is_system_group": g.is_system_group, "realm_for_sharding": realm, "deactivated": g.deactivated});
            for p in USER_GROUP_PERMISSION_SETTINGS {
                let value = state.group_setting_of(g, p.name);
                row[p.name] = json!(self.group_value(state, &value));
            }
            self.push("zerver_namedusergroup", row);
        }
    }

    fn realm_row(&mut self, state: &RealmState) {
        let realm = state.realm();
        let mut row = json!({"id": realm.id.0, "name": realm.name, "string_id": realm.subdomain, "description": realm.description,
            "date_created": float(realm.date_created), "deactivated": realm.deactivated});
        for setting in catalog::REALM_SETTINGS {
            if matches!(setting.name, "name" | "description") {
                continue;
            }
            let value = setting.value(&realm.settings, Some(state));
            if let Some((field, _)) = CHANNEL_FIELDS.iter().find(|(_, s)| *s == setting.name) {
                row[*field] = json!(value.as_i64().filter(|id| *id > 0));
                continue;
            }
            let value = match (&setting.kind, setting.name) {
                (Kind::Group(_), _) => match GroupSettingValue::from_json(&value) {
                    Some(v) => json!(self.group_value(state, &v)),
                    None => continue,
                },
                (_, "message_edit_history_visibility_policy") => {
                    json!(["all", "moves", "none"].iter().position(|p| value == *p).map_or(1, |i| i + 1))
                }
                _ => value,
            };
            row[setting.name] = value;
        }
        self.tables.insert("zerver_realm", vec![row]);
    }

    fn channels_and_subscriptions(&mut self, state: &RealmState, scope: &Scope) {
        let realm = state.realm().id.0;
        let channels: Vec<_> = state.channels().cloned().collect();
        for c in &channels {
            let recipient = self.recipient(2, c.id.0);
            self.channel_recipients.insert(c.id, recipient);
            if !c.invite_only || *scope != Scope::Public {
                self.exported_channels.push(c.id);
            }
            if c.invite_only {
                self.private_channels.push(c.id);
            }
            let policy = TOPICS_POLICIES.iter().position(|p| *p == c.topics_policy).map_or(1, |i| i + 1);
            let mut row = json!({"id": c.id.0, "realm": realm, "name": c.name, "date_created": float(c.date_created),
                "creator": c.creator_id.map(|u| u.0), "deactivated": c.is_archived, "description": c.description,
                "rendered_description": c.rendered_description, "recipient": recipient, "invite_only": c.invite_only,
                "history_public_to_subscribers": c.history_public_to_subscribers, "is_web_public": c.is_web_public,
                "is_in_zephyr_realm": false, "message_retention_days": c.message_retention_days, "first_message_id": null,
                "is_recently_active": true, "folder": c.folder_id.map(|f| f.0), "topics_policy": policy});
            for p in CHANNEL_PERMISSION_SETTINGS {
                let value = state.channel_setting(c, p.name);
                row[p.name] = json!(self.group_value(state, &value));
            }
            self.push("zerver_stream", row);
            self.channels += 1;
        }
        // Each person's subscriptions and topic policies, in one pass over the people.
        for user in state.users() {
            for sub in state.subscriptions_of(user.id).cloned().collect::<Vec<_>>() {
                let Some(recipient) = self.channel_recipients.get(&sub.channel_id).copied() else { continue };
                self.subscription(user.id.0, recipient, json!({"active": sub.active, "color": sub.color, "is_muted": sub.is_muted,
                    "pin_to_top": sub.pin_to_top, "desktop_notifications": sub.desktop_notifications,
                    "audible_notifications": sub.audible_notifications, "push_notifications": sub.push_notifications,
                    "email_notifications": sub.email_notifications, "wildcard_mentions_notify": sub.wildcard_mentions_notify}));
            }
            for topic in state.user_topics_of(user.id).cloned().collect::<Vec<_>>() {
                let Some(recipient) = self.channel_recipients.get(&topic.channel_id).copied() else { continue };
                let n = self.len("zerver_usertopic") as i64 + 1;
                self.push("zerver_usertopic", json!({"id": n, "user_profile": user.id.0, "stream": topic.channel_id.0, "recipient": recipient,
                    "topic_name": topic.topic, "last_updated": float(topic.last_updated), "visibility_policy": topic.visibility_policy}));
            }
        }
        for (i, channel) in state.default_channels().iter().enumerate() {
            self.push("zerver_defaultstream", json!({"id": i + 1, "realm": realm, "stream": channel.0}));
        }
        for (order, f) in state.folders().enumerate() {
            self.push(
                "zerver_channelfolder",
                json!({"id": f.id.0, "realm": realm, "name": f.name, "description": f.description,
                "rendered_description": f.rendered_description, "order": order, "date_created": float(f.date_created),
                "creator": f.creator_id.map(|u| u.0), "is_archived": f.is_archived}),
            );
        }
    }

    /// The recipient of a group conversation (`dm_key` of three or more), made on first use.
    pub fn group_recipient(&mut self, dm_key: &str) -> i64 {
        if let Some(id) = self.group_recipients.get(dm_key) {
            return *id;
        }
        let members: Vec<i64> = dm_key.split(',').filter_map(|u| u.parse().ok()).collect();
        let huddle = self.len("zerver_huddle") as i64 + 1;
        let recipient = self.recipient(3, huddle);
        self.push(
            "zerver_huddle",
            json!({"id": huddle, "huddle_hash": dm_key, "recipient": recipient, "group_size": members.len()}),
        );
        for user in members {
            self.subscription(user, recipient, json!({}));
        }
        self.group_recipients.insert(dm_key.to_owned(), recipient);
        recipient
    }

    /// The id of a sending client, made on first use.
    pub fn client(&mut self, name: &str) -> i64 {
        if let Some(id) = self.clients.get(name) {
            return *id;
        }
        let id = self.clients.len() as i64 + 1;
        self.clients.insert(name.to_owned(), id);
        self.push("zerver_client", json!({"id": id, "name": name}));
        id
    }

    /// Adds reactions (from the message files) to `realm.json`.
    pub fn reaction(&mut self, row: Value) {
        self.push("zerver_reaction", row);
    }

    pub fn realm_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("import_source".into(), json!("zulip"));
        out.insert("sort_by_date".into(), json!(true));
        for (table, rows) in &self.tables {
            out.insert((*table).to_owned(), Value::Array(rows.clone()));
        }
        Value::Object(out)
    }
}
