//! Zulip's organization settings and personal settings: names, wire types, allowed values
//! and defaults, and the register data sets built from them.
//!
//! Everything here follows Zulip at feature level 419 (11.0-dev). Key order matters: Zulip
//! builds these objects from ordered Python dicts and clients see that order, so every table
//! below is in Zulip's order (`UserBaseSettings.property_types`, `Realm.property_types`,
//! `Realm.REALM_PERMISSION_GROUP_SETTINGS`) and the builders insert keys in the order of
//! `fetch_initial_state_data` (`zerver/lib/events.py`).
//!
//! Stored maps hold only what differs from the defaults: a `Realm`'s `settings` (by their
//! `PATCH /realm` names, without the `realm_` prefix) and `user_defaults`, and a `User`'s
//! `settings`. A stored value of the wrong type is ignored in favour of the default, so a bad
//! row can never produce a response a client fails to parse.

use serde_json::{json, Map, Value};

use super::model::SystemGroup;
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::ids::GroupId;
use crate::{json_object, server_info};

mod locale;
mod realm;
#[cfg(test)]
mod tests;
mod user;

pub use realm::*;
pub use user::*;

// --- Server limits (sent with `realm`, and by Agora always; see `always_present_limits`). ---

/// Longest channel name, in Unicode code points.
pub const MAX_STREAM_NAME_LENGTH: usize = 60;
/// Longest channel description, in Unicode code points.
pub const MAX_STREAM_DESCRIPTION_LENGTH: usize = 1024;
/// Longest channel folder name, in Unicode code points.
pub const MAX_CHANNEL_FOLDER_NAME_LENGTH: usize = 60;
/// Longest channel folder description, in Unicode code points.
pub const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH: usize = 1024;
/// Longest topic, in Unicode code points.
pub const MAX_TOPIC_LENGTH: usize = 60;
/// Longest message, in Unicode code points (Zulip truncates longer content).
pub const MAX_MESSAGE_LENGTH: usize = 10_000;
/// Longest reminder note, in Unicode code points.
pub const MAX_REMINDER_NOTE_LENGTH: usize = 1000;
/// Most new subscribers for whom `send_new_subscription_messages` is honoured.
pub const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES: usize = 100;
/// Largest avatar upload, in MiB.
pub const MAX_AVATAR_FILE_SIZE_MIB: i64 = 5;
/// Largest file upload, in MiB (Zulip's `MAX_FILE_UPLOAD_SIZE` on a self-hosted plan).
pub const MAX_FILE_UPLOAD_SIZE_MIB: i64 = 100;
/// Largest organization icon upload, in MiB.
pub const MAX_ICON_FILE_SIZE_MIB: i64 = 5;
/// Largest organization logo upload, in MiB.
pub const MAX_LOGO_FILE_SIZE_MIB: i64 = 5;
/// How long `GET /events` holds a request open before answering with a heartbeat.
pub const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS: i64 = 90;
/// How clients without the `empty_topic_name` capability see the empty topic.
pub const EMPTY_TOPIC_DISPLAY_NAME: &str = "general chat";
/// Shortest acceptable password (Zulip's production default).
pub const PASSWORD_MIN_LENGTH: usize = 6;
/// Longest acceptable password.
pub const PASSWORD_MAX_LENGTH: usize = 100;
/// zxcvbn guesses a password must withstand (Zulip's production default).
pub const PASSWORD_MIN_GUESSES: i64 = 10_000;
/// Zulip's `Realm.REPORT_MESSAGE_REASONS`: each message report's `report_type` and how the
/// report names it (`server_report_message_types` since FL 435).
pub const REPORT_REASONS: [(&str, &str); 5] = [
    ("spam", "Spam"),
    ("harassment", "Harassment"),
    ("inappropriate", "Inappropriate content"),
    ("norms", "Violates community norms"),
    ("other", "Other reason"),
];
/// The server's default Jitsi Meet instance.
pub const JITSI_SERVER_URL: &str = "https://meet.jit.si";

// --- The descriptor. ---

/// What values a setting accepts on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// Any integer.
    Int,
    /// An integer within the inclusive bounds.
    IntRange(i64, i64),
    /// One of these integers.
    IntChoice(&'static [i64]),
    /// A non-negative integer, or `null` for "no limit".
    OptionalInt,
    /// Any string.
    Str,
    /// A string, or `null` for "the server's default".
    OptionalStr,
    /// One of these strings.
    StrChoice(&'static [&'static str]),
    /// A group-setting value: a group id, or `{"direct_members": [..], "direct_subgroups": [..]}`.
    Group(GroupRule),
    /// A channel id, `-1` meaning none.
    ChannelId,
}

/// A setting's value when nothing is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    Bool(bool),
    Int(i64),
    Str(&'static str),
    Null,
    /// A group setting: the id of this system group (`role:members`, ...).
    SystemGroup(&'static str),
}

/// The legacy data set (and legacy event) a personal setting also belongs to, for clients
/// without the `user_settings_object` capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legacy {
    /// Only in `user_settings`.
    None,
    /// Also a top-level register key; changes also go out as `update_display_settings`.
    Display,
    /// Also a top-level register key; changes also go out as `update_global_notifications`.
    Notification,
}

/// One setting: its wire name, what it accepts, its default and its legacy data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    pub legacy: Legacy,
}

impl Setting {
    /// Whether `value` is a valid wire value of this setting.
    pub fn accepts(&self, value: &Value) -> bool {
        match self.kind {
            Kind::Bool => value.is_boolean(),
            Kind::Int | Kind::ChannelId => value.as_i64().is_some(),
            Kind::IntRange(lo, hi) => value.as_i64().is_some_and(|v| (lo..=hi).contains(&v)),
            Kind::IntChoice(choices) => value.as_i64().is_some_and(|v| choices.contains(&v)),
            Kind::OptionalInt => value.is_null() || value.as_i64().is_some_and(|v| v >= 0),
            Kind::Str => value.is_string(),
            Kind::OptionalStr => value.is_null() || value.is_string(),
            Kind::StrChoice(choices) => value.as_str().is_some_and(|v| choices.contains(&v)),
            Kind::Group(_) => is_group_setting_value(value),
        }
    }

    /// The default on the wire. A group setting's default is its system group's id, found in
    /// `state`; without a state (or without that group) it is `null`.
    pub fn default_value(&self, state: Option<&RealmState>) -> Value {
        match self.default {
            DefaultValue::Bool(b) => Value::Bool(b),
            DefaultValue::Int(i) => Value::from(i),
            DefaultValue::Str(s) => Value::from(s),
            DefaultValue::Null => Value::Null,
            DefaultValue::SystemGroup(name) => {
                state.and_then(|s| s.system_group_id(name)).map_or(Value::Null, |GroupId(id)| Value::from(id))
            }
        }
    }

    /// The value in `stored` when it is valid for this setting, else the default.
    pub fn value(&self, stored: &Map<String, Value>, state: Option<&RealmState>) -> Value {
        match stored.get(self.name) {
            Some(v) if self.accepts(v) => v.clone(),
            _ => self.default_value(state),
        }
    }
}

/// Whether `value` is a group-setting value: a group id, or an anonymous group given by its
/// direct members and direct subgroups.
fn is_group_setting_value(value: &Value) -> bool {
    let ids = |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|a| a.iter().all(|x| x.as_i64().is_some()));
    match value {
        Value::Number(n) => n.as_i64().is_some(),
        Value::Object(o) => o.len() == 2 && ids(o.get("direct_members")) && ids(o.get("direct_subgroups")),
        _ => false,
    }
}

/// Which groups a group setting may name (Zulip's `GroupPermissionSetting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRule {
    pub require_system_group: bool,
    pub allow_internet_group: bool,
    pub allow_nobody_group: bool,
    pub allow_everyone_group: bool,
    /// When non-empty, the only system groups allowed.
    pub allowed_system_groups: &'static [&'static str],
}

impl GroupRule {
    /// The common case: any group, with or without `role:nobody` and `role:everyone`.
    const fn new(allow_nobody_group: bool, allow_everyone_group: bool) -> Self {
        GroupRule {
            require_system_group: false,
            allow_internet_group: false,
            allow_nobody_group,
            allow_everyone_group,
            allowed_system_groups: &[],
        }
    }

    /// Only the listed system groups.
    const fn system(allow_nobody_group: bool, allow_everyone_group: bool, only: &'static [&'static str]) -> Self {
        GroupRule {
            require_system_group: true,
            allowed_system_groups: only,
            ..Self::new(allow_nobody_group, allow_everyone_group)
        }
    }

    /// The entry of `server_supported_permission_settings` for a setting with this rule.
    fn describe(&self, default_group_name: &str, default_for_system_groups: Option<&str>) -> Value {
        json!({
            "require_system_group": self.require_system_group,
            "allow_internet_group": self.allow_internet_group,
            "allow_nobody_group": self.allow_nobody_group,
            "allow_everyone_group": self.allow_everyone_group,
            "default_group_name": default_group_name,
            "default_for_system_groups": default_for_system_groups,
            "allowed_system_groups": self.allowed_system_groups,
        })
    }
}

/// A group setting of channels or user groups, whose default may be a creator-based group
/// rather than a system group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupPermission {
    pub name: &'static str,
    pub rule: GroupRule,
    /// A system group name, or `channel_creator` / `group_creator`.
    pub default_group_name: &'static str,
    /// For user-group settings: the default on system groups.
    pub default_for_system_groups: Option<&'static str>,
}

// --- Allowed values. ---

const COLOR_SCHEMES: &[i64] = &[1, 2, 3];
const ONE_TO_THREE: &[i64] = &[1, 2, 3];
const ONE_TO_FOUR: &[i64] = &[1, 2, 3, 4];
const EMAIL_VISIBILITIES: &[i64] = &[1, 2, 3, 4, 5];
/// FL 454 named the recent conversations view `recent` (it was `recent_topics`).
const WEB_HOME_VIEWS: &[&str] = &["recent", "inbox", "all_messages"];
const ANIMATE_IMAGE_PREVIEWS: &[&str] = &["always", "on_hover", "never"];
const RESOLVED_TOPIC_NOTICE_AUTO_READ: &[&str] = &["always", "except_followed", "never"];
/// Emoji sets with their display names, in Zulip's order.
const EMOJISET_CHOICES: &[(&str, &str)] =
    &[("google", "Google"), ("twitter", "Twitter"), ("text", "Plain text"), ("google-blob", "Google blobs")];
const EMOJISETS: &[&str] = &["google", "twitter", "text", "google-blob"];
/// The notification sounds the server offers, then `none` (also accepted by `PATCH /settings`).
#[rustfmt::skip]
const NOTIFICATION_SOUND_CHOICES: &[&str] = &[
    "ascend", "beep_boop", "bink", "bright", "brlip", "chime", "deep tom", "ding", "double tap",
    "down", "dry bongos", "dutdut", "fast ascend", "flute", "friendly", "kick roll", "loud tintong",
    "metallic snare", "pan", "shaker", "simple", "stairs", "subtle", "swish", "tintong", "up",
    "wood block", "zaping", "zing", "zulip", "none",
];
/// `available_notification_sounds`: every choice but `none`.
const NOTIFICATION_SOUNDS: &[&str] = NOTIFICATION_SOUND_CHOICES.split_at(NOTIFICATION_SOUND_CHOICES.len() - 1).0;
const DIGEST_WEEKDAYS: &[i64] = &[0, 1, 2, 3, 4, 5, 6];
const GIF_RATINGS: &[i64] = &[0, 1, 2, 3, 4, 5];
/// `media_preview_size`: 100%, 150% or 200% of the default height.
const MEDIA_PREVIEW_SIZES: &[i64] = &[100, 150, 200];
/// Video chat providers a self-hosted server without Zoom or BigBlueButton offers.
const VIDEO_CHAT_PROVIDERS: &[i64] = &[0, 1];
const ORG_TYPES: &[i64] = &[0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
const EDIT_HISTORY_VISIBILITY: &[&str] = &["all", "moves", "none"];
const TOPICS_POLICIES: &[&str] = &["allow_empty_topic", "disable_empty_topic"];
/// `default_avatar_source` (FL 456): Gravatar or Jdenticon; never `U`.
const DEFAULT_AVATAR_SOURCES: &[&str] = &["G", "J"];
/// A week, the longest email batching period.
const MAX_BATCHING_PERIOD_SECONDS: i64 = 7 * 24 * 60 * 60;
const DEFAULT_MOVE_LIMIT_SECONDS: i64 = 7 * 24 * 60 * 60;

const ON: DefaultValue = DefaultValue::Bool(true);
const OFF: DefaultValue = DefaultValue::Bool(false);

const fn int(v: i64) -> DefaultValue {
    DefaultValue::Int(v)
}

const fn text(v: &'static str) -> DefaultValue {
    DefaultValue::Str(v)
}

const fn display(name: &'static str, kind: Kind, default: DefaultValue) -> Setting {
    Setting { name, kind, default, legacy: Legacy::Display }
}

const fn notification(name: &'static str, kind: Kind, default: DefaultValue) -> Setting {
    Setting { name, kind, default, legacy: Legacy::Notification }
}

const fn modern(name: &'static str, kind: Kind, default: DefaultValue) -> Setting {
    Setting { name, kind, default, legacy: Legacy::None }
}

const fn org(name: &'static str, kind: Kind, default: DefaultValue) -> Setting {
    Setting { name, kind, default, legacy: Legacy::None }
}

const fn flag(name: &'static str, default: bool) -> Setting {
    org(name, Kind::Bool, DefaultValue::Bool(default))
}

const fn group(name: &'static str, default: &'static str, rule: GroupRule) -> Setting {
    org(name, Kind::Group(rule), DefaultValue::SystemGroup(default))
}
