//! [`RealmState`]: one organization in memory, answering reads without the database.
//!
//! The state is plain data. Changes go through the features' operations, which
//! validate against this state, write to SQLite and only then apply the change here, so
//! memory never holds anything the database does not.
//!
//! Its collections are persistent (structurally shared) maps, so a clone costs a few
//! reference counts whatever the organization's size: the realm actor publishes a clone
//! after each commit for the readers on other threads, and the next change copies only the
//! few tree nodes it touches.

use std::sync::Arc;

use imbl::{HashMap, OrdMap, OrdSet};

use super::bot_data::BotsData;
use super::invite_data::Invites;
use super::model::{
    Channel, ChannelFolder, CustomProfileField, Playground, Realm, Subscription, User, UserGroup, UserTopic,
};
use super::scheduled_data::ScheduledData;
use super::uploads_data::UploadsData;
use super::user_data::UserData;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, FolderId, GroupId, MessageId, UserId};
use crate::markdown::linkifier::Linkifiers;

mod active;
mod channel_json;
mod channels;
mod load;
mod parts;
mod user_json;

pub use channels::Channels;

/// An organization: its row, users and user groups, with lookup indexes.
#[derive(Debug, Clone)]
pub struct RealmState {
    realm: Arc<Realm>,
    users: OrdMap<UserId, Arc<User>>,
    /// The system bots: found by id, but not among [`RealmState::users`].
    pub(super) system_bots: OrdMap<UserId, Arc<User>>,
    /// Lower-cased delivery email -> user.
    by_delivery_email: HashMap<String, UserId>,
    /// Lower-cased API email -> user.
    by_api_email: HashMap<String, UserId>,
    groups: OrdMap<GroupId, Arc<UserGroup>>,
    /// System group name -> id.
    system_groups: HashMap<String, GroupId>,
    /// Custom profile fields, in their `order`.
    profile_fields: Arc<Vec<CustomProfileField>>,
    /// The channels layer (channels, subscriptions, folders, topic policies).
    channels: Channels,
    /// No committed message of the organization is newer: history reads against a snapshot
    /// of this state see no message sent after it (whose channel's rules it may not know).
    last_message_id: MessageId,
    /// Users' statuses, alert words and mutes.
    user_data: UserData,
    /// Ids of the active users, ascending (`None` after [`RealmState::user_mut`], which may
    /// change who is active, until [`RealmState::tidy`]). Organization-wide events go to
    /// them all: a copy of this list is much cheaper than a walk over every user.
    active_ids: Arc<Vec<UserId>>,
    /// Users and channels as JSON, and channels' active subscribers, shared by every copy
    /// of the state.
    user_json: Arc<user_json::UserJsonCache>,
    channel_json: Arc<channel_json::ChannelJsonCache>,
    subscriber_cache: Arc<active::SubscriberCache>,
    /// Invitations and the recent invitation mails (for the daily limit).
    pub(super) invites: Invites,
    /// Attachments and custom emoji.
    uploads: UploadsData,
    /// Pending scheduled messages and reminders.
    pub(super) scheduled: ScheduledData,
    /// The number of each group direct-message conversation (`dm_key` -> id), for its
    /// messages' `recipient_id`.
    dm_groups: HashMap<String, i64>,
    /// Linkifiers in their order, compiled (once per change of the list).
    linkifiers: Linkifiers,
    /// Code playgrounds, by id.
    playgrounds: Arc<Vec<Playground>>,
    /// Bots' default channels, services and configuration.
    pub(super) bots: BotsData,
}

impl RealmState {
    /// Builds the state from its parts (as loaded, or as just created).
    pub fn new(realm: Realm, users: Vec<User>, groups: std::collections::BTreeMap<GroupId, UserGroup>) -> Self {
        let mut state = RealmState {
            realm: Arc::new(realm),
            users: OrdMap::new(),
            system_bots: OrdMap::new(),
            by_delivery_email: HashMap::new(),
            by_api_email: HashMap::new(),
            system_groups: groups.values().filter(|g| g.is_system_group).map(|g| (g.name.clone(), g.id)).collect(),
            groups: groups.into_iter().map(|(id, g)| (id, Arc::new(g))).collect(),
            profile_fields: Arc::default(),
            channels: Channels::default(),
            last_message_id: MessageId(0),
            user_data: UserData::default(),
            active_ids: Arc::default(),
            user_json: Arc::default(),
            channel_json: Arc::default(),
            subscriber_cache: Arc::default(),
            invites: Invites::default(),
            uploads: UploadsData::default(),
            scheduled: ScheduledData::default(),
            dm_groups: HashMap::new(),
            linkifiers: Linkifiers::default(),
            playgrounds: Arc::default(),
            bots: BotsData::default(),
        };
        for user in users {
            if user.is_system_bot() {
                state.system_bots.insert(user.id, Arc::new(user));
            } else {
                state.put_user(user);
            }
        }
        state
    }

    /// The realm row.
    pub fn realm(&self) -> &Realm {
        &self.realm
    }

    /// The organization's `message_retention_days` (-1: forever).
    pub fn realm_retention_days(&self) -> i64 {
        self.realm.settings.get("message_retention_days").and_then(serde_json::Value::as_i64).unwrap_or(-1)
    }

    /// A user of this realm, or one of its system bots.
    pub fn user(&self, id: UserId) -> Option<&User> {
        self.users.get(&id).or_else(|| self.system_bots.get(&id)).map(|u| &**u)
    }

    /// A user of this realm, or Zulip's "No such user".
    pub fn user_or_err(&self, id: UserId) -> ApiResult<&User> {
        self.user(id).ok_or_else(|| ApiError::bad_request("No such user"))
    }

    /// The users by id, as shared (for telling what changed between two states).
    /// [`RealmState::user`], as the state holds it (a system bot too).
    pub(crate) fn user_arc(&self, id: UserId) -> Option<&Arc<User>> {
        self.users.get(&id).or_else(|| self.system_bots.get(&id))
    }

    pub(crate) fn user_map(&self) -> &OrdMap<UserId, Arc<User>> {
        &self.users
    }

    /// Every user, by id.
    pub fn users(&self) -> impl Iterator<Item = &User> {
        self.users.values().map(|u| &**u)
    }

    /// `event` for every active user (most organization-wide events go to them).
    pub fn to_everyone(&self, event: Event) -> Outgoing {
        Outgoing::to(self.active_user_ids(), event)
    }

    /// The user with this delivery (real) email, compared case-insensitively.
    pub fn user_by_delivery_email(&self, email: &str) -> Option<&User> {
        self.by_delivery_email.get(&email.to_lowercase()).and_then(|id| self.user(*id))
    }

    /// The user with this API email, compared case-insensitively.
    pub fn user_by_api_email(&self, email: &str) -> Option<&User> {
        self.by_api_email.get(&email.to_lowercase()).and_then(|id| self.user(*id))
    }

    /// Whether `email` is already some other account's address (other than `except`'s): its
    /// real one, or the API address (`user<ID>@<domain>`) another account goes by, which
    /// must stay unique too.
    pub fn email_taken(&self, email: &str, except: Option<UserId>) -> bool {
        let o = |u: &User| Some(u.id) != except;
        let own = self.user_by_delivery_email(email).is_some_and(o) || self.user_by_api_email(email).is_some_and(o);
        own || self.system_bot(email).is_some()
    }

    /// A group of this realm.
    pub fn group(&self, id: GroupId) -> Option<&UserGroup> {
        self.groups.get(&id).map(|g| &**g)
    }

    /// Every group, by id.
    pub fn groups(&self) -> impl Iterator<Item = &UserGroup> {
        self.groups.values().map(|g| &**g)
    }

    // --- Channels. ---

    /// A channel of this realm (archived ones included).
    pub fn channel(&self, id: ChannelId) -> Option<&Channel> {
        self.channels.by_id.get(&id).map(|c| &**c)
    }

    /// Every channel, by id (archived ones included).
    pub fn channels(&self) -> impl Iterator<Item = &Channel> {
        self.channels.by_id.values().map(|c| &**c)
    }

    /// The channel with this name, compared case-insensitively.
    pub fn channel_by_name(&self, name: &str) -> Option<&Channel> {
        self.channels.by_name.get(&name.to_lowercase()).and_then(|id| self.channel(*id))
    }

    /// A user's subscription row for a channel (active or not).
    pub fn subscription(&self, user: UserId, channel: ChannelId) -> Option<&Subscription> {
        self.channels.subscriptions.get(&(user, channel)).map(|s| &**s)
    }

    /// Whether `user` is actively subscribed to `channel`.
    pub fn is_subscribed(&self, user: UserId, channel: ChannelId) -> bool {
        self.channels.subscribed.get(&user).is_some_and(|set| set.contains(&channel))
    }

    /// The active subscribers of a channel, ascending.
    pub fn subscribers(&self, channel: ChannelId) -> impl Iterator<Item = UserId> + '_ {
        self.channels.subscribers.get(&channel).into_iter().flatten().copied()
    }

    /// How many active subscribers a channel has.
    pub fn subscriber_count(&self, channel: ChannelId) -> usize {
        self.channels.subscribers.get(&channel).map_or(0, OrdSet::len)
    }

    /// The channels `user` is actively subscribed to, ascending.
    pub fn subscribed_channels(&self, user: UserId) -> impl Iterator<Item = ChannelId> + '_ {
        self.channels.subscribed.get(&user).into_iter().flatten().copied()
    }

    /// Every subscription row of `user` (active or not), by channel id.
    pub fn subscriptions_of(&self, user: UserId) -> impl Iterator<Item = &Subscription> + '_ {
        self.channels.rows_of.get(&user).into_iter().flatten().filter_map(move |c| self.subscription(user, *c))
    }

    /// The newest message committed when this state was (no message of the organization is
    /// newer).
    pub fn last_message_id(&self) -> MessageId {
        self.last_message_id
    }

    /// The number of the group direct-message conversation `dm_key`, once it has one.
    pub fn dm_group(&self, dm_key: &str) -> Option<i64> {
        self.dm_groups.get(dm_key).copied()
    }

    /// Records the number of a group direct-message conversation.
    pub fn put_dm_group(&mut self, dm_key: String, id: i64) {
        self.dm_groups.insert(dm_key, id);
    }

    /// The id of a channel's first message, if it has any.
    pub fn first_message_id(&self, channel: ChannelId) -> Option<MessageId> {
        self.channels.first_messages.get(&channel).copied()
    }

    /// The organization's default channels.
    pub fn default_channels(&self) -> &OrdSet<ChannelId> {
        &self.channels.defaults
    }

    /// A channel folder.
    pub fn folder(&self, id: FolderId) -> Option<&ChannelFolder> {
        self.channels.folders.get(&id).map(|f| &**f)
    }

    /// Every channel folder, by id (order them by `order` for the API).
    pub fn folders(&self) -> impl Iterator<Item = &ChannelFolder> {
        self.channels.folders.values().map(|f| &**f)
    }

    /// A user's policy for a topic (compared case-insensitively), if one is set.
    pub fn user_topic(&self, user: UserId, channel: ChannelId, topic: &str) -> Option<&UserTopic> {
        self.channels.user_topics.get(&(user, channel, topic.to_lowercase())).map(|t| &**t)
    }

    /// Every topic policy of `user`.
    pub fn user_topics_of(&self, user: UserId) -> impl Iterator<Item = &UserTopic> + '_ {
        let start = (user, ChannelId(i64::MIN), String::new());
        self.channels.user_topics.range(start..).take_while(move |((u, _, _), _)| *u == user).map(|(_, t)| &**t)
    }

    /// The custom profile fields, in their `order`.
    pub fn profile_fields(&self) -> &[CustomProfileField] {
        &self.profile_fields
    }

    /// The id of a system group (`role:members`, ...).
    pub fn system_group_id(&self, name: &str) -> Option<GroupId> {
        self.system_groups.get(name).copied()
    }

    /// Whether `other` holds the very same users (a snapshot no user change came between),
    /// told in constant time: what the presence actor derives from users stays valid.
    pub fn same_users(&self, other: &RealmState) -> bool {
        self.users.ptr_eq(&other.users)
    }

    // --- Changes. Only `ops` calls these, after the database has committed. ---

    /// Marks the realm deactivated or active.
    pub(crate) fn set_deactivated(&mut self, deactivated: bool) {
        Arc::make_mut(&mut self.realm).deactivated = deactivated;
    }

    /// Replaces the organization's row (name, description, settings...).
    pub(crate) fn set_realm(&mut self, realm: Realm) {
        self.realm = Arc::new(realm);
    }

    /// Replaces the organization's defaults of personal settings for new users.
    pub(crate) fn set_user_defaults(&mut self, defaults: serde_json::Map<String, serde_json::Value>) {
        Arc::make_mut(&mut self.realm).user_defaults = defaults;
    }

    /// Adds or replaces a user and its index entries.
    pub(crate) fn put_user(&mut self, user: User) {
        if let Some(old) = self.users.get(&user.id) {
            self.by_delivery_email.remove(&old.delivery_email.to_lowercase());
            self.by_api_email.remove(&old.email.to_lowercase());
        }
        self.by_delivery_email.insert(user.delivery_email.to_lowercase(), user.id);
        self.by_api_email.insert(user.email.to_lowercase(), user.id);
        self.note_active(user.id, user.is_active);
        self.users.insert(user.id, Arc::new(user));
    }

    /// Mutable access to a user for field changes that touch no index (not `is_active`:
    /// [`RealmState::set_user_active`]).
    pub(crate) fn user_mut(&mut self, id: UserId) -> Option<&mut User> {
        self.users.get_mut(&id).map(Arc::make_mut)
    }

    /// Adds or replaces a channel and its name index.
    pub(crate) fn put_channel(&mut self, channel: Channel) {
        if let Some(old) = self.channels.by_id.get(&channel.id) {
            self.channels.by_name.remove(&old.name.to_lowercase());
        }
        self.channels.by_name.insert(channel.name.to_lowercase(), channel.id);
        self.channels.by_id.insert(channel.id, Arc::new(channel));
    }

    /// Adds or replaces a subscription row and the subscriber indexes.
    pub(crate) fn put_subscription(&mut self, sub: Subscription) {
        let (user, channel) = (sub.user_id, sub.channel_id);
        if sub.active {
            self.channels.subscribers.entry(channel).or_default().insert(user);
            self.channels.subscribed.entry(user).or_default().insert(channel);
        } else {
            if let Some(set) = self.channels.subscribers.get_mut(&channel) {
                set.remove(&user);
            }
            if let Some(set) = self.channels.subscribed.get_mut(&user) {
                set.remove(&channel);
            }
        }
        self.channels.rows_of.entry(user).or_default().insert(channel);
        self.channels.subscriptions.insert((user, channel), Arc::new(sub));
    }

    /// After messages of `channel` were deleted: its first message is now `first`.
    pub(crate) fn set_first_channel_message(&mut self, channel: ChannelId, first: Option<MessageId>) {
        match first {
            Some(id) => self.channels.first_messages.insert(channel, id),
            None => self.channels.first_messages.remove(&channel),
        };
    }

    /// Records a committed message of the organization (the newest one so far).
    pub(crate) fn note_message(&mut self, id: MessageId) {
        self.last_message_id = self.last_message_id.max(id);
    }

    /// Records a message sent to a channel (its first one becomes `first_message_id`).
    pub(crate) fn note_channel_message(&mut self, channel: ChannelId, message_id: MessageId) {
        self.channels.first_messages.entry(channel).or_insert(message_id);
    }

    /// Makes a channel a default channel (or no longer one).
    pub(crate) fn set_default_channel(&mut self, channel: ChannelId, default: bool) {
        if default {
            self.channels.defaults.insert(channel);
        } else {
            self.channels.defaults.remove(&channel);
        }
    }

    /// Adds or replaces a channel folder.
    pub(crate) fn put_folder(&mut self, folder: ChannelFolder) {
        self.channels.folders.insert(folder.id, Arc::new(folder));
    }

    /// Sets a user's topic policy; policy 0 removes it.
    pub(crate) fn put_user_topic(&mut self, topic: UserTopic) {
        let key = (topic.user_id, topic.channel_id, topic.topic.to_lowercase());
        if topic.visibility_policy == 0 {
            self.channels.user_topics.remove(&key);
        } else {
            self.channels.user_topics.insert(key, Arc::new(topic));
        }
    }

    /// Replaces the custom profile fields (sorted here by `order`).
    pub(crate) fn set_profile_fields(&mut self, mut fields: Vec<CustomProfileField>) {
        fields.sort_by_key(|f| (f.order, f.id));
        self.profile_fields = Arc::new(fields);
    }

    /// Adds direct members to a group.
    pub(crate) fn add_group_members(&mut self, group: GroupId, users: &[UserId]) {
        if let Some(g) = self.groups.get_mut(&group).map(Arc::make_mut) {
            g.members.extend(users.iter().copied());
        }
    }

    /// Removes direct members from a group.
    pub(crate) fn remove_group_members(&mut self, group: GroupId, users: &[UserId]) {
        if let Some(g) = self.groups.get_mut(&group).map(Arc::make_mut) {
            for user in users {
                g.members.remove(user);
            }
        }
    }

    /// Adds or replaces a group (system groups keep their name index).
    pub(crate) fn put_group(&mut self, group: UserGroup) {
        if group.is_system_group {
            self.system_groups.insert(group.name.clone(), group.id);
        }
        self.groups.insert(group.id, Arc::new(group));
    }
}

#[cfg(test)]
mod tests;
