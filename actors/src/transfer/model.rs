//! An organization as every importer hands it over, whatever it came from. Ids are the
//! source's own (plain numbers, any range): the writer gives each object its new id and
//! rewrites every reference.

use serde_json::{Map, Value};

use crate::realm::model::Role;

/// Everything but the messages and the files' bytes.
#[derive(Debug, Clone, Default)]
pub struct Organization {
    pub name: String,
    /// Markdown.
    pub description: String,
    pub date_created: i64,
    pub deactivated: bool,
    /// Organization settings, as `PATCH /realm` names them. Group-valued ones hold source
    /// group ids (or `{"direct_members", "direct_subgroups"}` of source ids); channel-valued
    /// ones (`*_stream_id`) source channel ids.
    pub settings: Map<String, Value>,
    /// Defaults of personal settings for new users.
    pub user_defaults: Map<String, Value>,
    pub users: Vec<Person>,
    pub profile_fields: Vec<ProfileField>,
    pub groups: Vec<Group>,
    /// Source ids of the source's system groups, by name (`role:members`, ...): settings and
    /// subgroups that name them name this organization's own.
    pub system_groups: Vec<(i64, String)>,
    pub folders: Vec<Folder>,
    pub channels: Vec<Channel>,
    pub subscriptions: Vec<Subscription>,
    /// Source channel ids.
    pub default_channels: Vec<i64>,
    pub user_topics: Vec<UserTopic>,
    pub emoji: Vec<Emoji>,
    /// In order (their ids are the new organization's own).
    pub linkifiers: Vec<crate::markdown::linkifier::Linkifier>,
    /// Code playgrounds (their ids are the new organization's own).
    pub playgrounds: Vec<crate::realm::model::Playground>,
    pub attachments: Vec<Attachment>,
    /// The organization's icon: a file of the source.
    pub icon: Option<String>,
    /// Ids the source's messages give the system bots (Welcome Bot, ...), by address: their
    /// messages are sent by this organization's own.
    pub system_bots: Vec<(i64, String)>,
    /// In the source, the realm's id in upload paths (`/user_uploads/<id>/...`), to point
    /// them at the new organization.
    pub upload_realm_id: Option<i64>,
}

/// A user account, human or bot.
#[derive(Debug, Clone)]
pub struct Person {
    pub id: i64,
    /// The real address.
    pub email: String,
    pub full_name: String,
    pub role: Role,
    pub is_active: bool,
    /// 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded; `None` for humans.
    pub bot_type: Option<i64>,
    /// Source user id.
    pub bot_owner: Option<i64>,
    /// Kept when no other account of the server has it (bots keep working); a new one
    /// otherwise.
    pub api_key: Option<String>,
    pub timezone: String,
    pub date_joined: i64,
    /// Who may see the real address (1 everyone ... 5 moderators); `None`: the organization's
    /// default.
    pub email_address_visibility: Option<i64>,
    pub settings: Map<String, Value>,
    /// An uploaded avatar: a file of the source.
    pub avatar: Option<String>,
    /// Outgoing-webhook bots: `(base_url, interface, token)`.
    pub service: Option<(String, i64, String)>,
    /// `(source field id, value as the API shows it)`; person pickers list source user ids.
    pub profile_values: Vec<(i64, String)>,
    /// A placeholder for someone of another chat system who has not logged in yet (Zulip's
    /// `is_imported_stub`, FL 433): their first login makes it an ordinary account and sets
    /// `date_joined` (FL 475).
    pub is_imported_stub: bool,
}

impl Person {
    /// An active human of role `role` with nothing else known (the readers set the rest).
    pub fn new(id: i64, email: String, full_name: String, role: Role) -> Self {
        Person {
            id,
            email,
            full_name,
            role,
            is_active: true,
            bot_type: None,
            bot_owner: None,
            api_key: None,
            timezone: String::new(),
            date_joined: 0,
            email_address_visibility: None,
            settings: Map::new(),
            avatar: None,
            service: None,
            profile_values: Vec::new(),
            is_imported_stub: false,
        }
    }

    /// An ownerless generic bot.
    pub fn bot(id: i64, email: String, full_name: String) -> Self {
        Person { bot_type: Some(1), ..Person::new(id, email, full_name, Role::Member) }
    }
}

/// A custom profile field.
#[derive(Debug, Clone)]
pub struct ProfileField {
    pub id: i64,
    pub name: String,
    pub hint: String,
    pub field_type: i64,
    /// JSON text as the API shows it, `""` when the type has none.
    pub field_data: String,
    pub display_in_profile_summary: bool,
    pub required: bool,
    pub editable_by_user: bool,
    /// FL 455.
    pub use_for_user_matching: bool,
}

/// A user group that is not a system group (those follow the roles).
#[derive(Debug, Clone)]
pub struct Group {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub deactivated: bool,
    pub date_created: Option<i64>,
    /// Source user id.
    pub creator: Option<i64>,
    /// Source user ids.
    pub members: Vec<i64>,
    /// Source group ids (system groups included).
    pub subgroups: Vec<i64>,
    /// The group's `can_*_group` settings, in source group ids.
    pub settings: Map<String, Value>,
}

/// A channel folder.
#[derive(Debug, Clone)]
pub struct Folder {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub is_archived: bool,
    pub creator: Option<i64>,
    pub date_created: i64,
}

/// A channel.
#[derive(Debug, Clone)]
pub struct Channel {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub invite_only: bool,
    pub is_web_public: bool,
    pub history_public_to_subscribers: bool,
    pub message_retention_days: Option<i64>,
    pub topics_policy: String,
    pub folder: Option<i64>,
    pub creator: Option<i64>,
    pub date_created: i64,
    pub is_archived: bool,
    /// `can_*_group` settings, in source group ids.
    pub settings: Map<String, Value>,
}

/// A user's subscription, with its personal settings.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub user: i64,
    pub channel: i64,
    pub active: bool,
    /// `#rrggbb`; `None` picks one.
    pub color: Option<String>,
    pub is_muted: bool,
    pub pin_to_top: bool,
    pub desktop_notifications: Option<bool>,
    pub audible_notifications: Option<bool>,
    pub push_notifications: Option<bool>,
    pub email_notifications: Option<bool>,
    pub wildcard_mentions_notify: Option<bool>,
}

impl Subscription {
    /// An active subscription with default personal settings.
    pub fn new(user: i64, channel: i64) -> Self {
        Subscription {
            user,
            channel,
            active: true,
            color: None,
            is_muted: false,
            pin_to_top: false,
            desktop_notifications: None,
            audible_notifications: None,
            push_notifications: None,
            email_notifications: None,
            wildcard_mentions_notify: None,
        }
    }
}

/// A user's visibility policy for a topic (1 muted, 2 unmuted, 3 followed).
#[derive(Debug, Clone)]
pub struct UserTopic {
    pub user: i64,
    pub channel: i64,
    pub topic: String,
    pub visibility_policy: i64,
    pub last_updated: i64,
}

/// A custom emoji.
#[derive(Debug, Clone)]
pub struct Emoji {
    pub id: i64,
    pub name: String,
    pub author: Option<i64>,
    pub deactivated: bool,
    pub is_animated: bool,
    /// Its image: a file of the source, with the name to keep.
    pub file: Option<String>,
    pub file_name: String,
}

/// An uploaded file.
#[derive(Debug, Clone)]
pub struct Attachment {
    pub id: i64,
    pub owner: i64,
    /// The path id in the source (`<realm id>/xx/yyy/name.png`); links in messages use it.
    pub path_id: String,
    pub name: String,
    pub size: i64,
    pub content_type: Option<String>,
    pub create_time: i64,
    /// Source message ids that link to it.
    pub messages: Vec<i64>,
    /// The file of the source holding its bytes, when it has them.
    pub file: Option<String>,
}

/// Where a message went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Source channel id and topic.
    Channel(i64, String),
    /// Source user ids of every participant (the sender included).
    Direct(Vec<i64>),
}

/// One message, with what every user has of it.
#[derive(Debug, Clone)]
pub struct Message {
    pub id: i64,
    pub sender: i64,
    pub to: Destination,
    /// Markdown.
    pub content: String,
    /// HTML as the source rendered it; `None` renders it here.
    pub rendered_content: Option<String>,
    pub date_sent: i64,
    pub sending_client: String,
    pub last_edit_time: Option<i64>,
    pub last_moved_time: Option<i64>,
    /// Zulip's `edit_history` JSON (a list, newest first), in source user and channel ids.
    pub edit_history: Option<Value>,
    /// `(source user id, flags)`: the users who have it, with Zulip's flag bits.
    pub recipients: Vec<(i64, i64)>,
    pub reactions: Vec<Reaction>,
    /// `(source sender id, msg_type, content)`.
    pub submessages: Vec<(i64, String, String)>,
}

/// An emoji reaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    pub user: i64,
    pub emoji_name: String,
    pub emoji_code: String,
    /// `unicode_emoji`, `realm_emoji` (code: the source emoji id) or `zulip_extra_emoji`.
    pub reaction_type: String,
}
