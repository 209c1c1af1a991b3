//! The plain data of an organization: the realm row, users, roles and user groups.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::ids::{ChannelId, FieldId, FolderId, GroupId, RealmId, UserId};

/// An organization role (spec 2.2). Lower numbers carry more power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Owner,
    Administrator,
    Moderator,
    Member,
    Guest,
}

impl Role {
    /// Every role, most powerful first.
    pub const ALL: [Role; 5] = [Role::Owner, Role::Administrator, Role::Moderator, Role::Member, Role::Guest];

    /// The wire value (100, 200, 300, 400, 600).
    pub fn as_i64(self) -> i64 {
        match self {
            Role::Owner => 100,
            Role::Administrator => 200,
            Role::Moderator => 300,
            Role::Member => 400,
            Role::Guest => 600,
        }
    }

    /// The role for a wire value.
    pub fn from_i64(v: i64) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_i64() == v)
    }

    /// Parses `owner`, `administrator`/`admin`, `moderator`, `member`, `guest` or a number.
    pub fn parse(s: &str) -> Option<Role> {
        match s.trim().to_ascii_lowercase().as_str() {
            "owner" => Some(Role::Owner),
            "administrator" | "admin" => Some(Role::Administrator),
            "moderator" => Some(Role::Moderator),
            "member" => Some(Role::Member),
            "guest" => Some(Role::Guest),
            other => other.parse().ok().and_then(Role::from_i64),
        }
    }

    /// Owners and administrators (`is_realm_admin`).
    pub fn is_admin(self) -> bool {
        matches!(self, Role::Owner | Role::Administrator)
    }

    /// Moderators or more.
    pub fn is_moderator_or_above(self) -> bool {
        matches!(self, Role::Owner | Role::Administrator | Role::Moderator)
    }

    /// The name of the system group whose direct members hold this role.
    pub fn system_group(self) -> &'static str {
        match self {
            Role::Owner => SystemGroup::OWNERS,
            Role::Administrator => SystemGroup::ADMINISTRATORS,
            Role::Moderator => SystemGroup::MODERATORS,
            Role::Member => SystemGroup::MEMBERS,
            Role::Guest => SystemGroup::EVERYONE,
        }
    }
}

/// Who may see a user's real email address (`email_address_visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailVisibility {
    Everyone = 1,
    Members = 2,
    Administrators = 3,
    Nobody = 4,
    Moderators = 5,
}

impl EmailVisibility {
    /// The setting for a wire value.
    pub fn from_i64(v: i64) -> Option<Self> {
        match v {
            1 => Some(Self::Everyone),
            2 => Some(Self::Members),
            3 => Some(Self::Administrators),
            4 => Some(Self::Nobody),
            5 => Some(Self::Moderators),
            _ => None,
        }
    }
}

/// An organization's own row.
#[derive(Debug, Clone, PartialEq)]
pub struct Realm {
    pub id: RealmId,
    /// `""` for the root organization.
    pub subdomain: String,
    pub name: String,
    /// Markdown.
    pub description: String,
    /// Organization settings; absent keys take their defaults.
    pub settings: Map<String, Value>,
    /// Defaults of personal settings for new users; absent keys take Zulip's defaults.
    pub user_defaults: Map<String, Value>,
    pub deactivated: bool,
    /// Unix seconds.
    pub date_created: i64,
}

/// The stored setting key of [`Realm::owner_full_content_access`].
pub const OWNER_FULL_CONTENT_ACCESS: &str = "owner_full_content_access";

impl Realm {
    /// Who may see a new user's real email address, unless the organization says otherwise.
    pub fn default_email_visibility(&self) -> EmailVisibility {
        self.user_defaults
            .get("email_address_visibility")
            .and_then(Value::as_i64)
            .and_then(EmailVisibility::from_i64)
            .unwrap_or(EmailVisibility::Everyone)
    }

    /// Days a new member waits before joining `role:fullmembers`.
    pub fn waiting_period_threshold(&self) -> i64 {
        self.settings.get("waiting_period_threshold").and_then(Value::as_i64).unwrap_or(0)
    }

    /// Zulip's `Realm.presence_disabled`: nobody's presence is shown. Not an API setting (a
    /// server administrator sets it in the organization's stored settings).
    pub fn presence_disabled(&self) -> bool {
        self.settings.get("presence_disabled").and_then(Value::as_bool).unwrap_or(false)
    }

    /// Zulip's `owner_full_content_access` (FL 438): whether the organization's owners may
    /// reach all its private content, e.g. a full export without members' consent. Not an
    /// API setting (Zulip's management command sets it; here a server administrator sets it
    /// in the organization's stored settings); off by default.
    pub fn owner_full_content_access(&self) -> bool {
        self.settings.get(OWNER_FULL_CONTENT_ACCESS).and_then(Value::as_bool).unwrap_or(false)
    }
}

/// A user account, human or bot.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: UserId,
    pub realm_id: RealmId,
    pub delivery_email: String,
    /// The API email: the real one, or `user<ID>@<domain>` when the real one is hidden.
    pub email: String,
    pub full_name: String,
    pub role: Role,
    pub is_active: bool,
    pub is_bot: bool,
    /// 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded.
    pub bot_type: Option<i64>,
    pub bot_owner_id: Option<UserId>,
    /// IANA zone name, or `""` when unset.
    pub timezone: String,
    /// Unix seconds.
    pub date_joined: i64,
    /// `G` gravatar, `U` uploaded.
    pub avatar_source: String,
    pub avatar_version: i64,
    pub api_key: String,
    pub password_hash: Option<String>,
    pub can_create_users: bool,
    pub can_change_user_emails: bool,
    pub email_address_visibility: EmailVisibility,
    /// Personal preferences; absent keys take their defaults.
    pub settings: Map<String, Value>,
    /// Values of custom profile fields, by field id.
    pub profile_data: BTreeMap<FieldId, ProfileValue>,
    /// A placeholder made by an import from another chat system, until its owner's first
    /// login (FL 433).
    pub is_imported_stub: bool,
    /// `date_joined` becomes the time of the first login (FL 475): imported stubs and
    /// accounts created through `POST /users`, until they log in.
    pub first_login_pending: bool,
    /// The personal settings the user changed themselves (FL 444's
    /// `skip_if_already_edited`).
    pub self_edited_settings: BTreeSet<String>,
}

/// A user's value of one custom profile field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileValue {
    /// As the user gave it (a JSON list of user ids for person pickers).
    pub value: String,
    /// HTML, for the types whose values are Markdown.
    pub rendered_value: Option<String>,
}

/// A custom profile field of an organization (spec 2.12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomProfileField {
    pub id: FieldId,
    pub name: String,
    pub hint: String,
    /// 1 short text, 2 long text, 3 list of options, 4 date, 5 link, 6 person picker,
    /// 7 external account, 8 pronouns.
    pub field_type: i64,
    /// JSON text as the API shows it; `""` when the type has none.
    pub field_data: String,
    /// 1-based position in the organization's list.
    pub order: i64,
    pub display_in_profile_summary: bool,
    pub required: bool,
    pub editable_by_user: bool,
    /// Typeahead matches users by this field's values (FL 455).
    pub use_for_user_matching: bool,
}

impl CustomProfileField {
    /// `field_data` as an object (empty when the type has none).
    pub fn field_data_map(&self) -> Map<String, Value> {
        serde_json::from_str(&self.field_data).unwrap_or_default()
    }
}

/// A channel (Zulip's stream).
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    pub id: ChannelId,
    pub name: String,
    /// Markdown.
    pub description: String,
    pub rendered_description: String,
    pub invite_only: bool,
    pub is_web_public: bool,
    pub history_public_to_subscribers: bool,
    /// `None` inherits the organization's setting; -1 keeps messages forever.
    pub message_retention_days: Option<i64>,
    /// `inherit`, `allow_empty_topic`, `disable_empty_topic` or `empty_topic_only`.
    pub topics_policy: String,
    pub folder_id: Option<FolderId>,
    pub creator_id: Option<UserId>,
    /// Unix seconds.
    pub date_created: i64,
    pub is_archived: bool,
    /// The `can_*_group` permission settings (API group-setting values); absent ones take
    /// their defaults.
    pub settings: Map<String, Value>,
}

/// A user's subscription to a channel, with its personal settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub user_id: UserId,
    pub channel_id: ChannelId,
    /// False once the user unsubscribed; the personal settings are kept.
    pub active: bool,
    /// `#rrggbb`.
    pub color: String,
    pub is_muted: bool,
    pub pin_to_top: bool,
    /// `None` inherits the user's setting.
    pub desktop_notifications: Option<bool>,
    pub audible_notifications: Option<bool>,
    pub push_notifications: Option<bool>,
    pub email_notifications: Option<bool>,
    pub wildcard_mentions_notify: Option<bool>,
}

impl Subscription {
    /// An active subscription with default personal settings (notifications inherit the
    /// user's settings).
    pub fn new(user_id: UserId, channel_id: ChannelId, color: String) -> Self {
        Subscription {
            user_id,
            channel_id,
            active: true,
            color,
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

/// A channel folder (spec 2.14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelFolder {
    pub id: FolderId,
    pub name: String,
    pub description: String,
    pub rendered_description: String,
    /// Position in the organization's list.
    pub order: i64,
    pub is_archived: bool,
    pub creator_id: Option<UserId>,
    pub date_created: i64,
}

/// A user's visibility policy for one topic (spec 2.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTopic {
    pub user_id: UserId,
    pub channel_id: ChannelId,
    /// As the user last wrote it; compared case-insensitively.
    pub topic: String,
    /// 0 none, 1 muted, 2 unmuted, 3 followed.
    pub visibility_policy: i64,
    pub last_updated: i64,
}

/// A code playground (Zulip's `RealmPlayground`): an external site that code blocks of one
/// language can be opened in, through a URL template whose one variable is `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playground {
    pub id: i64,
    pub name: String,
    pub pygments_language: String,
    pub url_template: String,
}

/// Bot type of incoming-webhook bots, which may not use the general API.
pub const INCOMING_WEBHOOK_BOT: i64 = 2;

/// Zulip's cross-realm bots: the server's own voice (Zulip's `CROSS_REALM_BOT_EMAILS`, with
/// their names). Each organization holds a copy of them; they are not among its users.
pub struct SystemBot;

impl SystemBot {
    pub const EMAIL_GATEWAY: &'static str = "emailgateway@zulip.com";
    pub const NOTIFICATION_BOT: &'static str = "notification-bot@zulip.com";
    pub const WELCOME_BOT: &'static str = "welcome-bot@zulip.com";

    /// Each system bot's address and full name, in the order `cross_realm_bots` lists them
    /// (by full name).
    pub const ALL: [(&'static str, &'static str); 3] = [
        (Self::EMAIL_GATEWAY, "Email Gateway"),
        (Self::NOTIFICATION_BOT, "Notification Bot"),
        (Self::WELCOME_BOT, "Welcome Bot"),
    ];

    /// Whether an address is reserved for a system bot (Zulip's `is_cross_realm_bot_email`).
    pub fn is_reserved(email: &str) -> bool {
        Self::ALL.iter().any(|(e, _)| e.eq_ignore_ascii_case(email.trim()))
    }
}

impl User {
    /// Whether this account is one of the organization's system bots (a bot without an owner
    /// holding a system bot's address).
    pub fn is_system_bot(&self) -> bool {
        self.is_bot && self.bot_owner_id.is_none() && SystemBot::is_reserved(&self.delivery_email)
    }
}

/// A user group; system groups (`role:*`) included.
#[derive(Debug, Clone, PartialEq)]
pub struct UserGroup {
    pub id: GroupId,
    pub name: String,
    pub description: String,
    pub is_system_group: bool,
    pub creator_id: Option<UserId>,
    pub date_created: Option<i64>,
    pub deactivated: bool,
    /// The group's own permission settings (`can_*_group`).
    pub settings: Map<String, Value>,
    pub members: BTreeSet<UserId>,
    pub subgroups: BTreeSet<GroupId>,
}

/// The system groups every organization has, by name.
pub struct SystemGroup;

impl SystemGroup {
    pub const INTERNET: &'static str = "role:internet";
    pub const EVERYONE: &'static str = "role:everyone";
    pub const MEMBERS: &'static str = "role:members";
    pub const FULL_MEMBERS: &'static str = "role:fullmembers";
    pub const MODERATORS: &'static str = "role:moderators";
    pub const ADMINISTRATORS: &'static str = "role:administrators";
    pub const OWNERS: &'static str = "role:owners";
    pub const NOBODY: &'static str = "role:nobody";

    /// Each system group with its description and its direct subgroup, in creation order
    /// (each group's subgroup is created before it).
    pub const DEFINITIONS: [(&'static str, &'static str, Option<&'static str>); 8] = [
        (Self::OWNERS, "Owners of this organization", None),
        (Self::ADMINISTRATORS, "Administrators of this organization, including owners", Some(Self::OWNERS)),
        (Self::MODERATORS, "Moderators of this organization, including administrators", Some(Self::ADMINISTRATORS)),
        (
            Self::FULL_MEMBERS,
            "Members of this organization, not including new accounts and guests",
            Some(Self::MODERATORS),
        ),
        (Self::MEMBERS, "Members of this organization, not including guests", Some(Self::FULL_MEMBERS)),
        (Self::EVERYONE, "Everyone in this organization, including guests", Some(Self::MEMBERS)),
        (Self::INTERNET, "Everyone on the Internet", Some(Self::EVERYONE)),
        (Self::NOBODY, "Nobody", None),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip() {
        for r in Role::ALL {
            assert_eq!(Role::from_i64(r.as_i64()), Some(r));
        }
        assert_eq!(Role::from_i64(500), None);
        assert_eq!(Role::parse("admin"), Some(Role::Administrator));
        assert_eq!(Role::parse("600"), Some(Role::Guest));
        assert_eq!(Role::parse("king"), None);
        assert!(Role::Owner.is_admin() && !Role::Moderator.is_admin());
    }
}
