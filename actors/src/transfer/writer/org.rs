//! Everything of an organization but its messages and files' bytes, in one transaction.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Transaction;
use serde_json::Value;

use super::Writer;
use crate::config::ServerConfig;
use crate::ids::{ChannelId, FieldId, FolderId, GroupId, UserId};
use crate::realm::bot_data::{BotProfile, Service};
use crate::realm::channels::ops::new_channel::pick_color;
use crate::realm::format::api_email_in;
use crate::realm::model::{
    self as m, ChannelFolder, CustomProfileField, EmailVisibility, ProfileValue, Role, SystemGroup, User, UserGroup,
};
use crate::realm::uploads_data::Attachment;
use crate::store;
use crate::transfer::model::{Organization, Person};
use crate::transfer::ImportError;

impl Writer<'_> {
    pub(super) fn write_organization(
        &mut self,
        config: &ServerConfig,
        org: &Organization,
        now: i64,
    ) -> Result<(), ImportError> {
        let domain = config.fake_email_domain(&self.subdomain);
        let realm_id = self.realm_id;
        let this = &mut *self;
        this.store.write(|tx| -> Result<(), ImportError> {
            let groups = store::groups::in_realm(tx, realm_id)?;
            let system: HashMap<String, GroupId> =
                groups.values().filter(|g| g.is_system_group).map(|g| (g.name.clone(), g.id)).collect();
            for (source, name) in &org.system_groups {
                if let Some(id) = system.get(name) {
                    this.ids.groups.insert(*source, id.0);
                }
            }
            let bots: HashMap<String, UserId> = store::users::in_realm(tx, realm_id)?
                .into_iter()
                .filter(|u| u.is_system_bot())
                .map(|u| (u.delivery_email.to_lowercase(), u.id))
                .collect();
            for (source, email) in &org.system_bots {
                if let Some(id) = bots.get(&email.to_lowercase()) {
                    this.ids.users.insert(*source, id.0);
                }
            }
            this.write_people(tx, org, &domain, &system, now)?;
            this.write_profile_fields(tx, org)?;
            this.write_groups(tx, org)?;
            this.write_channels(tx, org)?;
            this.write_extras(tx, org)?;
            let mut realm =
                store::realms::by_id(tx, realm_id)?.ok_or_else(|| ImportError::new("the organization vanished"))?;
            realm.settings = this.ids.settings(&org.settings);
            store::realms::save_settings(tx, &realm)?;
            Ok(())
        })?;
        self.state = crate::realm::state::RealmState::load(&*self.store.conn()?, realm_id)?
            .ok_or_else(|| ImportError::new("the organization vanished"))?;
        Ok(())
    }

    fn write_people(
        &mut self,
        tx: &Transaction<'_>,
        org: &Organization,
        domain: &str,
        system: &HashMap<String, GroupId>,
        now: i64,
    ) -> Result<(), ImportError> {
        let threshold = org.settings.get("waiting_period_threshold").and_then(Value::as_i64).unwrap_or(0);
        let mut seen: HashMap<String, i64> = HashMap::new();
        for person in &org.users {
            let place = || format!("user {} ({})", person.id, person.email);
            if m::SystemBot::is_reserved(&person.email) {
                continue;
            }
            if let Some(first) = seen.insert(person.email.to_lowercase(), person.id) {
                return Err(ImportError::at(place(), format!("the same address as user {first}")));
            }
            let user = self.user_row(tx, person, now)?;
            let id = store::users::insert(tx, &user).map_err(|e| ImportError::at(place(), e.to_string()))?;
            let user = User { id, ..user };
            store::users::set_email(tx, id, &api_email_in(domain, &user))?;
            self.ids.users.insert(person.id, id.0);
            let mut names = vec![person.role.system_group()];
            if person.role == Role::Member && (now - person.date_joined).div_euclid(86_400) >= threshold {
                names.push(SystemGroup::FULL_MEMBERS);
            }
            for name in names {
                if let Some(group) = system.get(name) {
                    store::groups::add_members(tx, *group, &[id])?;
                }
            }
            self.summary.users += 1;
        }
        for person in &org.users {
            let Some(id) = self.ids.users.get(&person.id).copied() else { continue };
            if let Some(owner) = person.bot_owner {
                let owner = self.user(owner).ok_or_else(|| {
                    ImportError::at(
                        format!("bot {} ({})", person.id, person.email),
                        format!("its owner {owner} is not a user"),
                    )
                })?;
                store::users::set_bot_owner(tx, UserId(id), owner)?;
            }
            if person.bot_type.is_some() {
                let mut profile = BotProfile::new(UserId(id));
                if let Some((base_url, interface, token)) = &person.service {
                    profile.service = Some(Service {
                        name: person.full_name.clone(),
                        base_url: base_url.clone(),
                        interface: *interface,
                        token: token.clone(),
                    });
                }
                store::bots::put_profile(tx, &profile)?;
            }
        }
        Ok(())
    }

    fn user_row(&self, tx: &Transaction<'_>, person: &Person, now: i64) -> Result<User, ImportError> {
        let place = || format!("user {} ({})", person.id, person.email);
        if !crate::validate::is_valid_email(&person.email) {
            return Err(ImportError::at(place(), "not a valid email address"));
        }
        let api_key = match &person.api_key {
            Some(key) if key.len() == 32 && store::transfer::api_key_user(tx, key)?.is_none() => key.clone(),
            _ => crate::secrets::new_api_key(),
        };
        let visibility = person
            .email_address_visibility
            .and_then(EmailVisibility::from_i64)
            .unwrap_or_else(|| self.state.realm().default_email_visibility());
        Ok(User {
            id: UserId(0),
            realm_id: self.realm_id,
            delivery_email: person.email.trim().to_owned(),
            email: format!("pending-{api_key}"),
            full_name: person.full_name.trim().to_owned(),
            role: person.role,
            is_active: person.is_active,
            is_bot: person.bot_type.is_some(),
            bot_type: person.bot_type,
            bot_owner_id: None,
            timezone: person.timezone.clone(),
            date_joined: if person.date_joined > 0 { person.date_joined } else { now },
            avatar_source: "G".to_owned(),
            avatar_version: 1,
            api_key,
            // Exports carry no passwords: people set theirs through a reset mail.
            password_hash: None,
            can_create_users: false,
            can_change_user_emails: false,
            email_address_visibility: if person.bot_type.is_some() { EmailVisibility::Everyone } else { visibility },
            settings: person.settings.clone(),
            profile_data: Default::default(),
            is_imported_stub: person.is_imported_stub,
            first_login_pending: person.is_imported_stub,
            self_edited_settings: Default::default(),
        })
    }

    fn write_profile_fields(&mut self, tx: &Transaction<'_>, org: &Organization) -> Result<(), ImportError> {
        for (order, field) in org.profile_fields.iter().enumerate() {
            let row = CustomProfileField {
                id: FieldId(0),
                name: field.name.clone(),
                hint: field.hint.clone(),
                field_type: field.field_type,
                field_data: field.field_data.clone(),
                order: order as i64 + 1,
                display_in_profile_summary: field.display_in_profile_summary,
                required: field.required,
                editable_by_user: field.editable_by_user,
                use_for_user_matching: field.use_for_user_matching,
            };
            if !(1..=8).contains(&field.field_type) {
                return Err(ImportError::at(
                    format!("custom profile field {}", field.id),
                    format!("unknown type {}", field.field_type),
                ));
            }
            let id = store::profile_fields::insert(tx, self.realm_id, &row)?;
            store::profile_fields::set_order(tx, id, order as i64 + 1)?;
            self.ids.fields.insert(field.id, id.0);
        }
        for person in &org.users {
            let Some(user) = self.user(person.id) else { continue };
            for (field, value) in &person.profile_values {
                let Some(spec) = org.profile_fields.iter().find(|f| f.id == *field) else { continue };
                let Some(new_field) = self.ids.fields.get(field).copied() else { continue };
                let value = if spec.field_type == 6 { self.ids.person_list(value) } else { value.clone() };
                let rendered = matches!(spec.field_type, 1 | 2).then(|| crate::markdown::render(&value));
                store::profile_fields::put_value(
                    tx,
                    user,
                    FieldId(new_field),
                    &ProfileValue { value, rendered_value: rendered },
                )?;
            }
        }
        Ok(())
    }

    fn write_groups(&mut self, tx: &Transaction<'_>, org: &Organization) -> Result<(), ImportError> {
        for group in &org.groups {
            let row = UserGroup {
                id: GroupId(0),
                name: group.name.clone(),
                description: group.description.clone(),
                is_system_group: false,
                creator_id: group.creator.and_then(|u| self.user(u)),
                date_created: group.date_created,
                deactivated: group.deactivated,
                settings: Default::default(),
                members: Default::default(),
                subgroups: Default::default(),
            };
            let id = store::groups::insert(tx, self.realm_id, &row)
                .map_err(|e| ImportError::at(format!("user group {} ({})", group.id, group.name), e.to_string()))?;
            self.ids.groups.insert(group.id, id.0);
        }
        let mut rows = store::groups::in_realm(tx, self.realm_id)?;
        for group in &org.groups {
            let Some(id) = self.ids.groups.get(&group.id).map(|g| GroupId(*g)) else { continue };
            let members: Vec<UserId> = group.members.iter().filter_map(|u| self.user(*u)).collect();
            store::groups::add_members(tx, id, &members)?;
            let subgroups: Vec<GroupId> =
                group.subgroups.iter().filter_map(|g| self.ids.groups.get(g)).map(|g| GroupId(*g)).collect();
            store::groups::add_subgroups(tx, id, &subgroups)?;
            let settings = self.ids.settings(&group.settings);
            if let Some(row) = rows.remove(&id).filter(|_| !settings.is_empty()) {
                store::groups::update(tx, &UserGroup { settings, ..row })?;
            }
        }
        Ok(())
    }

    fn write_channels(&mut self, tx: &Transaction<'_>, org: &Organization) -> Result<(), ImportError> {
        for (order, folder) in org.folders.iter().enumerate() {
            let row = ChannelFolder {
                id: FolderId(0),
                name: folder.name.clone(),
                description: folder.description.clone(),
                rendered_description: crate::markdown::render(&folder.description),
                order: order as i64,
                is_archived: folder.is_archived,
                creator_id: folder.creator.and_then(|u| self.user(u)),
                date_created: folder.date_created,
            };
            let id = store::channels::insert_folder(tx, self.realm_id, &row)?;
            self.ids.folders.insert(folder.id, id.0);
        }
        for channel in &org.channels {
            let row = m::Channel {
                id: ChannelId(0),
                name: channel.name.clone(),
                description: channel.description.clone(),
                rendered_description: crate::markdown::render(&channel.description),
                invite_only: channel.invite_only,
                is_web_public: channel.is_web_public,
                history_public_to_subscribers: channel.history_public_to_subscribers,
                message_retention_days: channel.message_retention_days,
                topics_policy: channel.topics_policy.clone(),
                folder_id: channel.folder.and_then(|f| self.ids.folders.get(&f)).map(|f| FolderId(*f)),
                creator_id: channel.creator.and_then(|u| self.user(u)),
                date_created: channel.date_created,
                is_archived: channel.is_archived,
                settings: self.ids.settings(&channel.settings),
            };
            let id = store::channels::insert(tx, self.realm_id, &row)
                .map_err(|e| ImportError::at(format!("channel {} ({})", channel.id, channel.name), e.to_string()))?;
            self.ids.channels.insert(channel.id, id.0);
            self.summary.channels += 1;
        }
        let mut colors: BTreeMap<UserId, Vec<String>> = BTreeMap::new();
        for sub in &org.subscriptions {
            let place = || format!("subscription of user {} to channel {}", sub.user, sub.channel);
            let user = self.user(sub.user).ok_or_else(|| ImportError::at(place(), "no such user"))?;
            let channel = self.channel(sub.channel).ok_or_else(|| ImportError::at(place(), "no such channel"))?;
            let used = colors.entry(user).or_default();
            let color = match &sub.color {
                Some(c) => {
                    used.push(c.clone());
                    c.clone()
                }
                None => pick_color(used),
            };
            let row = m::Subscription {
                user_id: user,
                channel_id: channel,
                active: sub.active,
                color,
                is_muted: sub.is_muted,
                pin_to_top: sub.pin_to_top,
                desktop_notifications: sub.desktop_notifications,
                audible_notifications: sub.audible_notifications,
                push_notifications: sub.push_notifications,
                email_notifications: sub.email_notifications,
                wildcard_mentions_notify: sub.wildcard_mentions_notify,
            };
            store::channels::put_subscription(tx, &row)?;
        }
        for channel in &org.default_channels {
            if let Some(id) = self.channel(*channel) {
                store::channels::set_default_channel(tx, self.realm_id, id, true)?;
            }
        }
        for topic in &org.user_topics {
            let (Some(user), Some(channel)) = (self.user(topic.user), self.channel(topic.channel)) else { continue };
            let row = m::UserTopic {
                user_id: user,
                channel_id: channel,
                topic: topic.topic.clone(),
                visibility_policy: topic.visibility_policy,
                last_updated: topic.last_updated,
            };
            store::channels::put_user_topic(tx, &row)?;
        }
        Ok(())
    }

    fn write_extras(&mut self, tx: &Transaction<'_>, org: &Organization) -> Result<(), ImportError> {
        for linkifier in &org.linkifiers {
            store::linkifiers::add(tx, self.realm_id, linkifier)
                .map_err(|e| ImportError::at(format!("linkifier {:?}", linkifier.pattern), e.to_string()))?;
        }
        for playground in &org.playgrounds {
            store::playgrounds::add(tx, self.realm_id, playground)
                .map_err(|e| ImportError::at(format!("playground {:?}", playground.name), e.to_string()))?;
        }
        for emoji in &org.emoji {
            let id = store::attachments::insert_emoji(
                tx,
                self.realm_id,
                &emoji.name,
                &emoji.file_name,
                emoji.author.and_then(|u| self.user(u)),
            )?;
            if emoji.deactivated {
                store::attachments::deactivate_emoji(tx, id)?;
            }
            self.ids.emoji.insert(emoji.id, id);
        }
        for a in &org.attachments {
            let place = || format!("attachment {} ({})", a.id, a.path_id);
            let owner = self
                .user(a.owner)
                .ok_or_else(|| ImportError::at(place(), format!("its owner {} is not a user", a.owner)))?;
            let path_id = self.ids.path_id(&a.path_id);
            if !crate::uploads::storage::valid_path_id(&path_id) {
                return Err(ImportError::at(place(), "not a valid upload path"));
            }
            let row = Attachment {
                id: 0,
                owner_id: owner,
                path_id,
                name: a.name.clone(),
                size: a.size,
                content_type: a.content_type.clone(),
                create_time: a.create_time,
                is_realm_public: false,
                is_web_public: false,
                image: None,
            };
            let id = store::attachments::insert(tx, self.realm_id, &row)
                .map_err(|e| ImportError::at(place(), e.to_string()))?;
            self.attachments.insert(a.id, id);
            self.claims.push((id, a.messages.clone()));
        }
        Ok(())
    }

    /// The new id of a source user.
    pub(super) fn user(&self, source: i64) -> Option<UserId> {
        self.ids.users.get(&source).map(|id| UserId(*id))
    }

    /// The new id of a source channel.
    pub(super) fn channel(&self, source: i64) -> Option<ChannelId> {
        self.ids.channels.get(&source).map(|id| ChannelId(*id))
    }
}
