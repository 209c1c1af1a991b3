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

use super::model::{Realm, SystemGroup, User};
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::ids::GroupId;
use crate::{json_object, server_info};

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
    /// A system group name, or `stream_creator_or_nobody` / `group_creator`.
    pub default_group_name: &'static str,
    /// For user-group settings: the default on system groups.
    pub default_for_system_groups: Option<&'static str>,
}

// --- Allowed values. ---

const COLOR_SCHEMES: &[i64] = &[1, 2, 3];
const ONE_TO_THREE: &[i64] = &[1, 2, 3];
const ONE_TO_FOUR: &[i64] = &[1, 2, 3, 4];
const EMAIL_VISIBILITIES: &[i64] = &[1, 2, 3, 4, 5];
const WEB_HOME_VIEWS: &[&str] = &["recent_topics", "inbox", "all_messages"];
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
const GIPHY_RATINGS: &[i64] = &[0, 1, 2, 3, 4, 5];
/// Video chat providers a self-hosted server without Zoom or BigBlueButton offers.
const VIDEO_CHAT_PROVIDERS: &[i64] = &[0, 1];
const ORG_TYPES: &[i64] = &[0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
const EDIT_HISTORY_VISIBILITY: &[&str] = &["all", "moves", "none"];
const TOPICS_POLICIES: &[&str] = &["allow_empty_topic", "disable_empty_topic"];
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

// --- Personal settings. ---

/// Personal settings in Zulip's order (`UserBaseSettings.property_types`: the legacy display
/// settings, the legacy notification settings, the newer notification settings, the newer
/// general settings), then `timezone`, which `user_settings` places after `emojiset_choices`.
const USER_SETTING_LIST: &[Setting] = &[
    display("color_scheme", Kind::IntChoice(COLOR_SCHEMES), int(1)),
    display("default_language", Kind::Str, text("en")),
    display("web_home_view", Kind::StrChoice(WEB_HOME_VIEWS), text("inbox")),
    display("demote_inactive_streams", Kind::IntChoice(ONE_TO_THREE), int(1)),
    display("emojiset", Kind::StrChoice(EMOJISETS), text("google")),
    display("enable_drafts_synchronization", Kind::Bool, ON),
    display("enter_sends", Kind::Bool, OFF),
    display("fluid_layout_width", Kind::Bool, OFF),
    display("high_contrast_mode", Kind::Bool, OFF),
    display("left_side_userlist", Kind::Bool, OFF),
    display("starred_message_counts", Kind::Bool, ON),
    display("translate_emoticons", Kind::Bool, OFF),
    display("twenty_four_hour_time", Kind::Bool, OFF),
    notification("desktop_icon_count_display", Kind::IntChoice(ONE_TO_FOUR), int(1)),
    notification(
        "email_notifications_batching_period_seconds",
        Kind::IntRange(1, MAX_BATCHING_PERIOD_SECONDS),
        int(120),
    ),
    notification("enable_desktop_notifications", Kind::Bool, ON),
    notification("enable_digest_emails", Kind::Bool, ON),
    notification("enable_login_emails", Kind::Bool, ON),
    notification("enable_marketing_emails", Kind::Bool, ON),
    notification("enable_offline_email_notifications", Kind::Bool, ON),
    notification("enable_offline_push_notifications", Kind::Bool, ON),
    notification("enable_online_push_notifications", Kind::Bool, ON),
    notification("enable_sounds", Kind::Bool, ON),
    notification("enable_stream_audible_notifications", Kind::Bool, OFF),
    notification("enable_stream_desktop_notifications", Kind::Bool, OFF),
    notification("enable_stream_email_notifications", Kind::Bool, OFF),
    notification("enable_stream_push_notifications", Kind::Bool, OFF),
    notification("message_content_in_email_notifications", Kind::Bool, ON),
    notification("notification_sound", Kind::StrChoice(NOTIFICATION_SOUND_CHOICES), text("zulip")),
    notification("pm_content_in_desktop_notifications", Kind::Bool, ON),
    notification("presence_enabled", Kind::Bool, ON),
    notification("realm_name_in_email_notifications_policy", Kind::IntChoice(ONE_TO_THREE), int(1)),
    notification("wildcard_mentions_notify", Kind::Bool, ON),
    modern("enable_followed_topic_desktop_notifications", Kind::Bool, ON),
    modern("enable_followed_topic_email_notifications", Kind::Bool, ON),
    modern("enable_followed_topic_push_notifications", Kind::Bool, ON),
    modern("enable_followed_topic_audible_notifications", Kind::Bool, ON),
    modern("enable_followed_topic_wildcard_mentions_notify", Kind::Bool, ON),
    modern("automatically_follow_topics_policy", Kind::IntChoice(ONE_TO_FOUR), int(3)),
    modern("automatically_unmute_topics_in_muted_streams_policy", Kind::IntChoice(ONE_TO_FOUR), int(2)),
    modern("automatically_follow_topics_where_mentioned", Kind::Bool, ON),
    modern("display_emoji_reaction_users", Kind::Bool, ON),
    // Zulip's model default; Zulip's realm creation picks 3 (administrators) for most
    // organization types, but Agora shows real addresses to everyone unless told otherwise.
    modern("email_address_visibility", Kind::IntChoice(EMAIL_VISIBILITIES), int(1)),
    modern("web_escape_navigates_to_home_view", Kind::Bool, ON),
    modern("receives_typing_notifications", Kind::Bool, ON),
    modern("send_private_typing_notifications", Kind::Bool, ON),
    modern("send_read_receipts", Kind::Bool, ON),
    modern("send_stream_typing_notifications", Kind::Bool, ON),
    modern("allow_private_data_export", Kind::Bool, OFF),
    modern("web_mark_read_on_scroll_policy", Kind::IntChoice(ONE_TO_THREE), int(1)),
    modern("web_channel_default_view", Kind::IntChoice(ONE_TO_FOUR), int(1)),
    modern("user_list_style", Kind::IntChoice(ONE_TO_THREE), int(3)),
    modern("web_animate_image_previews", Kind::StrChoice(ANIMATE_IMAGE_PREVIEWS), text("on_hover")),
    modern("web_stream_unreads_count_display_policy", Kind::IntChoice(ONE_TO_THREE), int(2)),
    modern("web_font_size_px", Kind::Int, int(16)),
    modern("web_line_height_percent", Kind::Int, int(140)),
    modern("web_navigate_to_sent_message", Kind::Bool, ON),
    modern("web_suggest_update_timezone", Kind::Bool, ON),
    modern("hide_ai_features", Kind::Bool, OFF),
    // FL 385: stored as an integer by Zulip, sent by its name.
    modern(
        "resolved_topic_notice_auto_read_policy",
        Kind::StrChoice(RESOLVED_TOPIC_NOTICE_AUTO_READ),
        text("except_followed"),
    ),
    // FL 398.
    modern("web_left_sidebar_unreads_count_summary", Kind::Bool, ON),
    // FL 411.
    modern("web_left_sidebar_show_channel_folders", Kind::Bool, ON),
    // Not a realm-level default; an IANA zone name, or "" when unset.
    display("timezone", Kind::Str, text("")),
];

/// Every personal setting (`PATCH /settings`), in the order of the `user_settings` object.
pub static USER_SETTINGS: &[Setting] = USER_SETTING_LIST;

/// The personal settings an organization sets defaults for (`PATCH
/// /realm/user_settings_defaults`), in the order of `realm_user_settings_defaults`: all of them
/// but `timezone`.
pub static REALM_USER_DEFAULT_SETTINGS: &[Setting] = USER_SETTING_LIST.split_at(USER_SETTING_LIST.len() - 1).0;

/// The personal setting with this name.
pub fn user_setting(name: &str) -> Option<&'static Setting> {
    USER_SETTINGS.iter().find(|s| s.name == name)
}

/// Which legacy data set (and legacy event) a personal setting belongs to; `Legacy::None` for
/// newer settings and unknown names.
pub fn legacy_kind(property: &str) -> Legacy {
    user_setting(property).map_or(Legacy::None, |s| s.legacy)
}

/// `emojiset_choices`.
pub fn emojiset_choices() -> Value {
    EMOJISET_CHOICES.iter().map(|(key, name)| json!({"key": key, "text": name})).collect()
}

/// `available_notification_sounds`.
pub fn available_notification_sounds() -> Value {
    Value::from(NOTIFICATION_SOUNDS)
}

/// A user's value of a personal setting. `email_address_visibility` and `timezone` live in
/// their own columns.
fn user_value(user: &User, setting: &Setting) -> Value {
    match setting.name {
        "email_address_visibility" => Value::from(user.email_address_visibility as i64),
        "timezone" => Value::from(user.timezone.as_str()),
        _ => setting.value(&user.settings, None),
    }
}

/// The `user_settings` register object.
pub fn user_settings(user: &User) -> Map<String, Value> {
    let mut map = Map::new();
    for setting in USER_SETTINGS.iter().filter(|s| s.name != "timezone") {
        map.insert(setting.name.to_owned(), user_value(user, setting));
    }
    map.insert("emojiset_choices".to_owned(), emojiset_choices());
    map.insert("timezone".to_owned(), Value::from(user.timezone.as_str()));
    map.insert("available_notification_sounds".to_owned(), available_notification_sounds());
    map
}

/// The top-level copies of personal settings that Zulip sends to clients without the
/// `user_settings_object` capability (the `update_display_settings` and
/// `update_global_notifications` fetch types), in Zulip's order.
pub fn legacy_user_settings(user: &User) -> Map<String, Value> {
    let mut map = Map::new();
    for setting in USER_SETTINGS.iter().filter(|s| s.legacy == Legacy::Display && s.name != "timezone") {
        map.insert(setting.name.to_owned(), user_value(user, setting));
    }
    map.insert("emojiset_choices".to_owned(), emojiset_choices());
    map.insert("timezone".to_owned(), Value::from(user.timezone.as_str()));
    for setting in USER_SETTINGS.iter().filter(|s| s.legacy == Legacy::Notification) {
        map.insert(setting.name.to_owned(), user_value(user, setting));
    }
    map.insert("available_notification_sounds".to_owned(), available_notification_sounds());
    map
}

/// The `realm_user_settings_defaults` register object.
pub fn realm_user_settings_defaults(realm: &Realm) -> Map<String, Value> {
    let mut map = Map::new();
    for setting in REALM_USER_DEFAULT_SETTINGS {
        map.insert(setting.name.to_owned(), setting.value(&realm.user_defaults, None));
    }
    map.insert("emojiset_choices".to_owned(), emojiset_choices());
    map.insert("available_notification_sounds".to_owned(), available_notification_sounds());
    map
}

// --- Organization settings. ---

/// Organization settings by their `PATCH /realm` names: first `Realm.property_types` (sent as
/// `realm_<name>` in this order), then the group permission settings (sent next, in this
/// order), then `org_type` and the announcement channels, which `realm_data` places itself.
///
/// `name` and `description` are columns of the realm row, listed here for their place in the
/// register response and for validation. Defaults are those of a realm Zulip creates with no
/// options (`do_create_realm`), e.g. `invite_required` and `enable_read_receipts` on.
pub static REALM_SETTINGS: &[Setting] = &[
    flag("allow_message_editing", true),
    flag("avatar_changes_disabled", false),
    org("default_code_block_language", Kind::Str, text("")),
    org("default_language", Kind::Str, text("en")),
    org("description", Kind::Str, text("")),
    flag("digest_emails_enabled", false),
    org("digest_weekday", Kind::IntChoice(DIGEST_WEEKDAYS), int(1)),
    flag("disallow_disposable_email_addresses", true),
    flag("email_changes_disabled", false),
    flag("emails_restricted_to_domains", false),
    flag("enable_guest_user_dm_warning", true),
    flag("enable_guest_user_indicator", true),
    flag("enable_read_receipts", true),
    flag("enable_spectator_access", false),
    org("giphy_rating", Kind::IntChoice(GIPHY_RATINGS), int(2)),
    flag("inline_image_preview", true),
    flag("inline_url_embed_preview", false),
    flag("invite_required", true),
    org("jitsi_server_url", Kind::OptionalStr, DefaultValue::Null),
    flag("message_content_allowed_in_email_notifications", true),
    org("message_content_edit_limit_seconds", Kind::OptionalInt, int(600)),
    org("message_content_delete_limit_seconds", Kind::OptionalInt, int(600)),
    org("message_edit_history_visibility_policy", Kind::StrChoice(EDIT_HISTORY_VISIBILITY), text("all")),
    org("move_messages_between_streams_limit_seconds", Kind::OptionalInt, int(DEFAULT_MOVE_LIMIT_SECONDS)),
    org("move_messages_within_stream_limit_seconds", Kind::OptionalInt, int(DEFAULT_MOVE_LIMIT_SECONDS)),
    // -1 keeps messages forever.
    org("message_retention_days", Kind::Int, int(-1)),
    org("name", Kind::Str, text("")),
    flag("name_changes_disabled", false),
    flag("push_notifications_enabled", false),
    // FL 409.
    flag("require_e2ee_push_notifications", false),
    flag("require_unique_names", false),
    flag("send_welcome_emails", true),
    // FL 392, replacing the boolean `mandatory_topics` (still sent, derived from this).
    org("topics_policy", Kind::StrChoice(TOPICS_POLICIES), text("allow_empty_topic")),
    org("video_chat_provider", Kind::IntChoice(VIDEO_CHAT_PROVIDERS), int(1)),
    org("waiting_period_threshold", Kind::IntRange(0, i64::MAX), int(0)),
    flag("want_advertise_in_communities_directory", false),
    // FL 416.
    org("welcome_message_custom_text", Kind::Str, text("")),
    // Group permission settings (`Realm.REALM_PERMISSION_GROUP_SETTINGS`).
    group("create_multiuse_invite_group", SystemGroup::ADMINISTRATORS, GroupRule::new(true, false)),
    group(
        "can_access_all_users_group",
        SystemGroup::EVERYONE,
        GroupRule::system(false, true, &[SystemGroup::EVERYONE, SystemGroup::MEMBERS]),
    ),
    group("can_add_subscribers_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_add_custom_emoji_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_create_bots_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_create_groups", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_create_public_channel_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_create_private_channel_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group(
        "can_create_web_public_channel_group",
        SystemGroup::OWNERS,
        GroupRule::system(
            true,
            false,
            &[SystemGroup::MODERATORS, SystemGroup::ADMINISTRATORS, SystemGroup::OWNERS, SystemGroup::NOBODY],
        ),
    ),
    group("can_create_write_only_bots_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_delete_any_message_group", SystemGroup::ADMINISTRATORS, GroupRule::new(true, false)),
    group("can_delete_own_message_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    group("can_invite_users_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_manage_all_groups", SystemGroup::OWNERS, GroupRule::new(false, false)),
    group("can_manage_billing_group", SystemGroup::ADMINISTRATORS, GroupRule::new(false, false)),
    group("can_mention_many_users_group", SystemGroup::ADMINISTRATORS, GroupRule::new(true, true)),
    group("can_move_messages_between_channels_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
    group("can_move_messages_between_topics_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    group("can_resolve_topics_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    // FL 407.
    group("can_set_delete_message_policy_group", SystemGroup::MODERATORS, GroupRule::new(true, false)),
    // FL 392.
    group("can_set_topics_policy_group", SystemGroup::MEMBERS, GroupRule::new(true, true)),
    group("can_summarize_topics_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    group("direct_message_initiator_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    group("direct_message_permission_group", SystemGroup::EVERYONE, GroupRule::new(true, true)),
    // Settings `realm_data` sends outside the two blocks above.
    org("org_type", Kind::IntChoice(ORG_TYPES), int(0)),
    org("moderation_request_channel_id", Kind::ChannelId, int(-1)),
    org("new_stream_announcements_stream_id", Kind::ChannelId, int(-1)),
    org("signup_announcements_stream_id", Kind::ChannelId, int(-1)),
    org("zulip_update_announcements_stream_id", Kind::ChannelId, int(-1)),
];

/// The organization setting with this name (without the `realm_` prefix).
pub fn realm_setting(name: &str) -> Option<&'static Setting> {
    REALM_SETTINGS.iter().find(|s| s.name == name)
}

/// Whether a setting is one of `Realm.property_types`, sent in the first block of `realm`.
fn is_realm_property(setting: &Setting) -> bool {
    !matches!(setting.kind, Kind::Group(_) | Kind::ChannelId) && setting.name != "org_type"
}

/// Channel permission settings (`Stream.stream_permission_group_settings`) at FL 419.
pub static CHANNEL_PERMISSION_SETTINGS: &[GroupPermission] = &[
    channel_permission("can_add_subscribers_group", SystemGroup::NOBODY, false),
    channel_permission("can_administer_channel_group", "stream_creator_or_nobody", false),
    channel_permission("can_delete_any_message_group", SystemGroup::NOBODY, true),
    channel_permission("can_delete_own_message_group", SystemGroup::NOBODY, true),
    channel_permission("can_move_messages_out_of_channel_group", SystemGroup::NOBODY, true),
    channel_permission("can_move_messages_within_channel_group", SystemGroup::NOBODY, true),
    channel_permission("can_remove_subscribers_group", SystemGroup::ADMINISTRATORS, true),
    channel_permission("can_send_message_group", SystemGroup::EVERYONE, true),
    channel_permission("can_subscribe_group", SystemGroup::NOBODY, false),
    channel_permission("can_resolve_topics_group", SystemGroup::NOBODY, true),
];

/// User group permission settings (`NamedUserGroup.GROUP_PERMISSION_SETTINGS`); on system
/// groups every one of them is `role:nobody`.
pub static USER_GROUP_PERMISSION_SETTINGS: &[GroupPermission] = &[
    group_permission("can_add_members_group", "group_creator", false),
    group_permission("can_join_group", SystemGroup::NOBODY, false),
    group_permission("can_leave_group", SystemGroup::EVERYONE, true),
    group_permission("can_manage_group", "group_creator", false),
    group_permission("can_mention_group", SystemGroup::EVERYONE, true),
    group_permission("can_remove_members_group", SystemGroup::NOBODY, false),
];

const fn channel_permission(name: &'static str, default: &'static str, allow_everyone: bool) -> GroupPermission {
    GroupPermission {
        name,
        rule: GroupRule::new(true, allow_everyone),
        default_group_name: default,
        default_for_system_groups: None,
    }
}

const fn group_permission(name: &'static str, default: &'static str, allow_everyone: bool) -> GroupPermission {
    GroupPermission {
        name,
        rule: GroupRule::new(true, allow_everyone),
        default_group_name: default,
        default_for_system_groups: Some(SystemGroup::NOBODY),
    }
}

/// `server_supported_permission_settings`: the rules of every group setting, for realms,
/// channels and user groups.
pub fn server_supported_permission_settings() -> Map<String, Value> {
    let realm: Map<String, Value> = REALM_SETTINGS
        .iter()
        .filter_map(|s| match (s.kind, s.default) {
            (Kind::Group(rule), DefaultValue::SystemGroup(default)) => {
                Some((s.name.to_owned(), rule.describe(default, None)))
            }
            _ => None,
        })
        .collect();
    let describe = |list: &[GroupPermission]| -> Map<String, Value> {
        list.iter()
            .map(|p| (p.name.to_owned(), p.rule.describe(p.default_group_name, p.default_for_system_groups)))
            .collect()
    };
    let mut map = Map::new();
    map.insert("realm".to_owned(), Value::Object(realm));
    map.insert("stream".to_owned(), Value::Object(describe(CHANNEL_PERMISSION_SETTINGS)));
    map.insert("group".to_owned(), Value::Object(describe(USER_GROUP_PERMISSION_SETTINGS)));
    map
}

/// The organization's value of a setting: the row's name and description, else the stored
/// value, else the default.
fn realm_value(state: &RealmState, setting: &Setting) -> Value {
    let realm = state.realm();
    match setting.name {
        "name" => Value::from(realm.name.as_str()),
        "description" => Value::from(realm.description.as_str()),
        _ => setting.value(&realm.settings, Some(state)),
    }
}

/// The organization's value of the setting with this name (`null` for unknown names).
fn realm_value_of(state: &RealmState, name: &str) -> Value {
    realm_setting(name).map_or(Value::Null, |s| realm_value(state, s))
}

/// The pre-group-settings enum a legacy client reads for a group setting
/// (`get_corresponding_policy_value_for_group_setting`).
#[derive(Clone, Copy)]
enum LegacyPolicy {
    /// `create_public_stream_policy`, `create_private_stream_policy`: 1 members, 2 admins,
    /// 3 full members, 4 moderators.
    Common,
    /// `create_web_public_stream_policy`: 2 admins, 4 moderators, 6 nobody, 7 owners.
    WebPublic,
    /// `wildcard_mention_policy`: 1 everyone, 2 members, 3 full members, 5 admins, 6 nobody,
    /// 7 moderators.
    WildcardMention,
}

/// The legacy enum value of a group setting: the one its system group maps to, or the one
/// for the largest group the old enum allowed when the group is not one of those.
fn legacy_policy(state: &RealmState, setting: &str, policy: LegacyPolicy) -> i64 {
    let system_group = realm_value_of(state, setting)
        .as_i64()
        .and_then(|id| state.group(GroupId(id)))
        .filter(|g| g.is_system_group)
        .map(|g| g.name.as_str());
    match policy {
        LegacyPolicy::WildcardMention => match system_group {
            Some(SystemGroup::MEMBERS) => 2,
            Some(SystemGroup::FULL_MEMBERS) => 3,
            Some(SystemGroup::ADMINISTRATORS) => 5,
            Some(SystemGroup::NOBODY) => 6,
            Some(SystemGroup::MODERATORS) => 7,
            _ => 1,
        },
        LegacyPolicy::WebPublic => match system_group {
            Some(SystemGroup::ADMINISTRATORS) => 2,
            Some(SystemGroup::NOBODY) => 6,
            Some(SystemGroup::OWNERS) => 7,
            _ => 4,
        },
        LegacyPolicy::Common => match system_group {
            Some(SystemGroup::ADMINISTRATORS) => 2,
            Some(SystemGroup::FULL_MEMBERS) => 3,
            Some(SystemGroup::MODERATORS) => 4,
            _ => 1,
        },
    }
}

/// Every key of the `realm` fetch type, in Zulip's order, for this organization.
pub fn realm_data(state: &RealmState, config: &ServerConfig) -> Map<String, Value> {
    let realm = state.realm();
    let url = config.realm_url(&realm.subdomain);
    let logo_url = format!("{url}/static/images/logo/zulip-org-logo.svg?version=0");
    let topics_policy = realm_value_of(state, "topics_policy");
    let edit_history = realm_value_of(state, "message_edit_history_visibility_policy");
    let jitsi_url = match realm_value_of(state, "jitsi_server_url") {
        Value::String(s) => s,
        _ => JITSI_SERVER_URL.to_owned(),
    };

    let mut data = Map::new();
    for setting in REALM_SETTINGS.iter().filter(|s| is_realm_property(s)) {
        data.insert(format!("realm_{}", setting.name), realm_value(state, setting));
    }
    for setting in REALM_SETTINGS.iter().filter(|s| matches!(s.kind, Kind::Group(_))) {
        data.insert(format!("realm_{}", setting.name), realm_value(state, setting));
    }
    data.extend(json_object(json!({
        "realm_create_public_stream_policy":
            legacy_policy(state, "can_create_public_channel_group", LegacyPolicy::Common),
        "realm_create_private_stream_policy":
            legacy_policy(state, "can_create_private_channel_group", LegacyPolicy::Common),
        "realm_create_web_public_stream_policy":
            legacy_policy(state, "can_create_web_public_channel_group", LegacyPolicy::WebPublic),
        "realm_wildcard_mention_policy":
            legacy_policy(state, "can_mention_many_users_group", LegacyPolicy::WildcardMention),
        // The only authentication backend is email and password.
        "realm_authentication_methods": {"Email": {"enabled": true, "available": true}},
        "realm_presence_disabled": false,
        "max_avatar_file_size_mib": MAX_AVATAR_FILE_SIZE_MIB,
        "max_file_upload_size_mib": MAX_FILE_UPLOAD_SIZE_MIB,
        "max_icon_file_size_mib": MAX_ICON_FILE_SIZE_MIB,
        "realm_upload_quota_mib": null,
    })));
    data.extend(json_object(json!({
        "realm_icon_url": server_info::realm_icon_url(state),
        "realm_icon_source": "G",
        "realm_logo_url": logo_url,
        "realm_logo_source": "D",
        "realm_night_logo_url": logo_url,
        "realm_night_logo_source": "D",
        "max_logo_file_size_mib": MAX_LOGO_FILE_SIZE_MIB,
        "realm_url": url,
        "realm_uri": url,
        "realm_bot_domain": config.fake_email_domain(&realm.subdomain),
        "realm_available_video_chat_providers": {
            "disabled": {"name": "None", "id": 0},
            "jitsi_meet": {"name": "Jitsi Meet", "id": 1},
        },
        "settings_send_digest_emails": true,
        "realm_email_auth_enabled": true,
        "realm_password_auth_enabled": true,
    })));
    data.extend(json_object(json!({
        "server_generation": config.server_generation,
        "realm_is_zephyr_mirror_realm": false,
        "development_environment": false,
        "realm_org_type": realm_value_of(state, "org_type"),
        "realm_plan_type": 1,
        "zulip_plan_is_not_limited": true,
        "upgrade_text_for_wide_organization_logo": "Available on Zulip Cloud Standard. Upgrade to access.",
        "realm_push_notifications_enabled_end_timestamp": null,
        "password_min_length": PASSWORD_MIN_LENGTH,
        "password_max_length": PASSWORD_MAX_LENGTH,
        "password_min_guesses": PASSWORD_MIN_GUESSES,
        "server_inline_image_preview": true,
        "server_inline_url_embed_preview": true,
    })));
    data.extend(json_object(json!({
        "server_thumbnail_formats": [
            {"name": "840x560-anim.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": true},
            {"name": "840x560.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": false},
        ],
        "server_avatar_changes_disabled": false,
        "server_name_changes_disabled": false,
        "server_web_public_streams_enabled": false,
        "giphy_rating_options": giphy_rating_options(),
        "server_emoji_data_url": format!("{url}/static/generated/emoji/emoji_api.json"),
        "server_needs_upgrade": false,
        "event_queue_longpoll_timeout_seconds": EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
        "realm_default_external_accounts": default_external_accounts(),
        "server_jitsi_server_url": JITSI_SERVER_URL,
        "jitsi_server_url": jitsi_url,
        "server_can_summarize_topics": false,
    })));
    for name in REALM_SETTINGS.iter().filter(|s| s.kind == Kind::ChannelId).map(|s| s.name) {
        data.insert(format!("realm_{name}"), realm_value_of(state, name));
    }
    data.extend(json_object(json!({
        "max_stream_name_length": MAX_STREAM_NAME_LENGTH,
        "max_stream_description_length": MAX_STREAM_DESCRIPTION_LENGTH,
        "max_bulk_new_subscription_messages": MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
        "max_topic_length": MAX_TOPIC_LENGTH,
        "max_message_length": MAX_MESSAGE_LENGTH,
        "max_channel_folder_name_length": MAX_CHANNEL_FOLDER_NAME_LENGTH,
        "max_channel_folder_description_length": MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
        "max_reminder_note_length": MAX_REMINDER_NOTE_LENGTH,
        "realm_date_created": realm.date_created,
        "server_presence_ping_interval_seconds": 60,
        "server_presence_offline_threshold_seconds": 200,
        "server_typing_started_expiry_period_milliseconds": 45000,
        "server_typing_stopped_wait_period_milliseconds": 12000,
        "server_typing_started_wait_period_milliseconds": 30000,
    })));
    data.insert(
        "server_supported_permission_settings".to_owned(),
        Value::Object(server_supported_permission_settings()),
    );
    data.extend(json_object(json!({
        "server_min_deactivated_realm_deletion_days": 14,
        "server_max_deactivated_realm_deletion_days": null,
        "realm_empty_topic_display_name": EMPTY_TOPIC_DISPLAY_NAME,
        "realm_allow_edit_history": edit_history.as_str() != Some("none"),
        // Deprecated at FL 392; Zulip now computes it last, from `topics_policy`.
        "realm_mandatory_topics": topics_policy.as_str() == Some("disable_empty_topic"),
    })));
    data
}

/// `giphy_rating_options`.
fn giphy_rating_options() -> Value {
    json!({
        "disabled": {"name": "GIPHY integration disabled", "id": 0},
        "y": {"name": "Allow GIFs rated Y (Very young audience)", "id": 1},
        "g": {"name": "Allow GIFs rated G (General audience)", "id": 2},
        "pg": {"name": "Allow GIFs rated PG (Parental guidance)", "id": 3},
        "pg-13": {"name": "Allow GIFs rated PG-13 (Parental guidance - under 13)", "id": 4},
        "r": {"name": "Allow GIFs rated R (Restricted)", "id": 5},
    })
}

/// `realm_default_external_accounts`: the external-account profile field presets.
fn default_external_accounts() -> Value {
    json!({
        "twitter": {
            "text": "Twitter",
            "url_pattern": "https://twitter.com/%(username)s",
            "name": "Twitter username",
            "hint": "",
        },
        "github": {
            "text": "GitHub",
            "url_pattern": "https://github.com/%(username)s",
            "name": "GitHub username",
            "hint": "",
        },
    })
}

/// The server limits Agora sends in every register response, whether or not `realm` was
/// fetched (Zulip ties them to `realm`; clients need them regardless).
pub fn always_present_limits() -> Map<String, Value> {
    json_object(json!({
        "max_stream_name_length": MAX_STREAM_NAME_LENGTH,
        "max_stream_description_length": MAX_STREAM_DESCRIPTION_LENGTH,
        "max_channel_folder_name_length": MAX_CHANNEL_FOLDER_NAME_LENGTH,
        "max_channel_folder_description_length": MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
        "max_topic_length": MAX_TOPIC_LENGTH,
        "max_message_length": MAX_MESSAGE_LENGTH,
        "max_avatar_file_size_mib": MAX_AVATAR_FILE_SIZE_MIB,
        "max_file_upload_size_mib": MAX_FILE_UPLOAD_SIZE_MIB,
        "max_icon_file_size_mib": MAX_ICON_FILE_SIZE_MIB,
        "max_logo_file_size_mib": MAX_LOGO_FILE_SIZE_MIB,
        "max_bulk_new_subscription_messages": MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
        "max_reminder_note_length": MAX_REMINDER_NOTE_LENGTH,
        "event_queue_longpoll_timeout_seconds": EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
    }))
}

/// `custom_profile_field_types`: each field type by its constant name, in Zulip's order
/// (sorted by display name).
pub fn custom_profile_field_types() -> Map<String, Value> {
    json_object(json!({
        "DATE": {"id": 4, "name": "Date"},
        "EXTERNAL_ACCOUNT": {"id": 7, "name": "External account"},
        "URL": {"id": 5, "name": "Link"},
        "SELECT": {"id": 3, "name": "List of options"},
        "PRONOUNS": {"id": 8, "name": "Pronouns"},
        "LONG_TEXT": {"id": 2, "name": "Text (long)"},
        "SHORT_TEXT": {"id": 1, "name": "Text (short)"},
        "USER": {"id": 6, "name": "Users"},
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn config_at(server_generation: i64) -> ServerConfig {
        ServerConfig { server_generation, ..ServerConfig::default() }
    }
    use crate::ids::{RealmId, UserId};
    use crate::realm::model::{EmailVisibility, Role, UserGroup};

    /// The keys of `user_settings` in Zulip 10.2 (FL 372), as the golden response has them.
    #[rustfmt::skip]
    const GOLDEN_USER_SETTINGS: &[&str] = &[
        "color_scheme", "default_language", "web_home_view", "demote_inactive_streams", "emojiset",
        "enable_drafts_synchronization", "enter_sends", "fluid_layout_width", "high_contrast_mode",
        "left_side_userlist", "starred_message_counts", "translate_emoticons", "twenty_four_hour_time",
        "desktop_icon_count_display", "email_notifications_batching_period_seconds", "enable_desktop_notifications",
        "enable_digest_emails", "enable_login_emails", "enable_marketing_emails",
        "enable_offline_email_notifications", "enable_offline_push_notifications",
        "enable_online_push_notifications", "enable_sounds", "enable_stream_audible_notifications",
        "enable_stream_desktop_notifications", "enable_stream_email_notifications",
        "enable_stream_push_notifications", "message_content_in_email_notifications", "notification_sound",
        "pm_content_in_desktop_notifications", "presence_enabled", "realm_name_in_email_notifications_policy",
        "wildcard_mentions_notify", "enable_followed_topic_desktop_notifications",
        "enable_followed_topic_email_notifications", "enable_followed_topic_push_notifications",
        "enable_followed_topic_audible_notifications", "enable_followed_topic_wildcard_mentions_notify",
        "automatically_follow_topics_policy", "automatically_unmute_topics_in_muted_streams_policy",
        "automatically_follow_topics_where_mentioned", "display_emoji_reaction_users", "email_address_visibility",
        "web_escape_navigates_to_home_view", "receives_typing_notifications", "send_private_typing_notifications",
        "send_read_receipts", "send_stream_typing_notifications", "allow_private_data_export",
        "web_mark_read_on_scroll_policy", "web_channel_default_view", "user_list_style",
        "web_animate_image_previews", "web_stream_unreads_count_display_policy", "web_font_size_px",
        "web_line_height_percent", "web_navigate_to_sent_message", "web_suggest_update_timezone",
        "hide_ai_features", "emojiset_choices", "timezone", "available_notification_sounds",
    ];

    /// Personal settings added between FL 373 and FL 419, in Zulip's order; they follow
    /// `hide_ai_features`.
    const NEWER_USER_SETTINGS: &[&str] = &[
        "resolved_topic_notice_auto_read_policy",
        "web_left_sidebar_unreads_count_summary",
        "web_left_sidebar_show_channel_folders",
    ];

    /// The top-level legacy keys of the golden response, `color_scheme` to
    /// `available_notification_sounds`.
    #[rustfmt::skip]
    const GOLDEN_LEGACY: &[&str] = &[
        "color_scheme", "default_language", "web_home_view", "demote_inactive_streams", "emojiset",
        "enable_drafts_synchronization", "enter_sends", "fluid_layout_width", "high_contrast_mode",
        "left_side_userlist", "starred_message_counts", "translate_emoticons", "twenty_four_hour_time",
        "emojiset_choices", "timezone", "desktop_icon_count_display", "email_notifications_batching_period_seconds",
        "enable_desktop_notifications", "enable_digest_emails", "enable_login_emails", "enable_marketing_emails",
        "enable_offline_email_notifications", "enable_offline_push_notifications",
        "enable_online_push_notifications", "enable_sounds", "enable_stream_audible_notifications",
        "enable_stream_desktop_notifications", "enable_stream_email_notifications",
        "enable_stream_push_notifications", "message_content_in_email_notifications", "notification_sound",
        "pm_content_in_desktop_notifications", "presence_enabled", "realm_name_in_email_notifications_policy",
        "wildcard_mentions_notify", "available_notification_sounds",
    ];

    /// The keys of the golden response's `realm` block, `realm_allow_message_editing` to
    /// `realm_allow_edit_history`.
    #[rustfmt::skip]
    const GOLDEN_REALM: &[&str] = &[
        "realm_allow_message_editing", "realm_avatar_changes_disabled", "realm_default_code_block_language",
        "realm_default_language", "realm_description", "realm_digest_emails_enabled", "realm_digest_weekday",
        "realm_disallow_disposable_email_addresses", "realm_email_changes_disabled",
        "realm_emails_restricted_to_domains", "realm_enable_guest_user_dm_warning",
        "realm_enable_guest_user_indicator", "realm_enable_read_receipts", "realm_enable_spectator_access",
        "realm_giphy_rating", "realm_inline_image_preview", "realm_inline_url_embed_preview",
        "realm_invite_required", "realm_jitsi_server_url", "realm_mandatory_topics",
        "realm_message_content_allowed_in_email_notifications", "realm_message_content_edit_limit_seconds",
        "realm_message_content_delete_limit_seconds", "realm_message_edit_history_visibility_policy",
        "realm_move_messages_between_streams_limit_seconds", "realm_move_messages_within_stream_limit_seconds",
        "realm_message_retention_days", "realm_name", "realm_name_changes_disabled",
        "realm_push_notifications_enabled", "realm_require_unique_names", "realm_send_welcome_emails",
        "realm_video_chat_provider", "realm_waiting_period_threshold",
        "realm_want_advertise_in_communities_directory", "realm_create_multiuse_invite_group",
        "realm_can_access_all_users_group", "realm_can_add_subscribers_group", "realm_can_add_custom_emoji_group",
        "realm_can_create_bots_group", "realm_can_create_groups", "realm_can_create_public_channel_group",
        "realm_can_create_private_channel_group", "realm_can_create_web_public_channel_group",
        "realm_can_create_write_only_bots_group", "realm_can_delete_any_message_group",
        "realm_can_delete_own_message_group", "realm_can_invite_users_group", "realm_can_manage_all_groups",
        "realm_can_manage_billing_group", "realm_can_mention_many_users_group",
        "realm_can_move_messages_between_channels_group", "realm_can_move_messages_between_topics_group",
        "realm_can_resolve_topics_group", "realm_can_summarize_topics_group",
        "realm_direct_message_initiator_group", "realm_direct_message_permission_group",
        "realm_create_public_stream_policy", "realm_create_private_stream_policy",
        "realm_create_web_public_stream_policy", "realm_wildcard_mention_policy", "realm_authentication_methods",
        "realm_presence_disabled", "max_avatar_file_size_mib", "max_file_upload_size_mib", "max_icon_file_size_mib",
        "realm_upload_quota_mib", "realm_icon_url", "realm_icon_source", "realm_logo_url", "realm_logo_source",
        "realm_night_logo_url", "realm_night_logo_source", "max_logo_file_size_mib", "realm_url", "realm_uri",
        "realm_bot_domain", "realm_available_video_chat_providers", "settings_send_digest_emails",
        "realm_email_auth_enabled", "realm_password_auth_enabled", "server_generation",
        "realm_is_zephyr_mirror_realm", "development_environment", "realm_org_type", "realm_plan_type",
        "zulip_plan_is_not_limited", "upgrade_text_for_wide_organization_logo",
        "realm_push_notifications_enabled_end_timestamp", "password_min_length", "password_max_length",
        "password_min_guesses", "server_inline_image_preview", "server_inline_url_embed_preview",
        "server_thumbnail_formats", "server_avatar_changes_disabled", "server_name_changes_disabled",
        "server_web_public_streams_enabled", "giphy_rating_options", "server_emoji_data_url",
        "server_needs_upgrade", "event_queue_longpoll_timeout_seconds", "realm_default_external_accounts",
        "server_jitsi_server_url", "jitsi_server_url", "server_can_summarize_topics",
        "realm_moderation_request_channel_id", "realm_new_stream_announcements_stream_id",
        "realm_signup_announcements_stream_id", "realm_zulip_update_announcements_stream_id",
        "max_stream_name_length", "max_stream_description_length", "max_topic_length", "max_message_length",
        "realm_date_created", "server_presence_ping_interval_seconds", "server_presence_offline_threshold_seconds",
        "server_typing_started_expiry_period_milliseconds", "server_typing_stopped_wait_period_milliseconds",
        "server_typing_started_wait_period_milliseconds", "server_supported_permission_settings",
        "server_min_deactivated_realm_deletion_days", "server_max_deactivated_realm_deletion_days",
        "realm_empty_topic_display_name", "realm_allow_edit_history",
    ];

    /// `list` with `new` inserted right after `anchor`.
    fn insert_after(list: &mut Vec<String>, anchor: &str, new: &[&str]) {
        let at = list.iter().position(|k| k == anchor).unwrap() + 1;
        for (i, key) in new.iter().enumerate() {
            list.insert(at + i, (*key).to_owned());
        }
    }

    fn owned(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    fn keys(map: &Map<String, Value>) -> Vec<String> {
        map.keys().cloned().collect()
    }

    fn realm() -> Realm {
        Realm {
            id: RealmId(1),
            subdomain: "acme".into(),
            name: "Acme".into(),
            description: "We make **everything**.".into(),
            settings: Map::new(),
            user_defaults: Map::new(),
            deactivated: false,
            date_created: 1_795_238_495,
        }
    }

    /// A realm with the eight system groups, ids 10 (owners) to 17 (nobody).
    fn state_with(realm: Realm) -> RealmState {
        let groups: BTreeMap<GroupId, UserGroup> = SystemGroup::DEFINITIONS
            .iter()
            .enumerate()
            .map(|(i, (name, description, _))| {
                let id = GroupId(10 + i as i64);
                let group = UserGroup {
                    id,
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    is_system_group: true,
                    creator_id: None,
                    date_created: None,
                    deactivated: false,
                    settings: Map::new(),
                    members: BTreeSet::new(),
                    subgroups: BTreeSet::new(),
                };
                (id, group)
            })
            .collect();
        RealmState::new(realm, Vec::new(), groups)
    }

    fn group_id(state: &RealmState, name: &str) -> Value {
        json!(state.system_group_id(name).unwrap())
    }

    fn user() -> User {
        User {
            id: UserId(7),
            realm_id: RealmId(1),
            delivery_email: "iago@acme.test".into(),
            email: "iago@acme.test".into(),
            full_name: "Iago".into(),
            role: Role::Administrator,
            is_active: true,
            is_bot: false,
            bot_type: None,
            bot_owner_id: None,
            timezone: "America/New_York".into(),
            date_joined: 1_795_238_495,
            avatar_source: "G".into(),
            avatar_version: 1,
            api_key: "k".repeat(32),
            password_hash: None,
            can_create_users: false,
            can_change_user_emails: false,
            email_address_visibility: EmailVisibility::Everyone,
            settings: Map::new(),
            profile_data: Default::default(),
        }
    }

    /// The golden `user_settings` values, except `enter_sends` (the development server's
    /// organization turns it on; Zulip's default is off) and `email_address_visibility`
    /// (Agora's default is everyone), plus the FL 373-419 settings.
    fn expected_user_settings() -> Value {
        // In parts: one `json!` this size exceeds the macro recursion limit.
        let mut all = json_object(json!({
            "color_scheme": 1, "default_language": "en", "web_home_view": "inbox", "demote_inactive_streams": 1,
            "emojiset": "google", "enable_drafts_synchronization": true, "enter_sends": false,
            "fluid_layout_width": false, "high_contrast_mode": false, "left_side_userlist": false,
            "starred_message_counts": true, "translate_emoticons": false, "twenty_four_hour_time": false,
            "desktop_icon_count_display": 1, "email_notifications_batching_period_seconds": 120,
            "enable_desktop_notifications": true, "enable_digest_emails": true, "enable_login_emails": true,
            "enable_marketing_emails": true, "enable_offline_email_notifications": true,
            "enable_offline_push_notifications": true, "enable_online_push_notifications": true,
            "enable_sounds": true, "enable_stream_audible_notifications": false,
            "enable_stream_desktop_notifications": false, "enable_stream_email_notifications": false,
            "enable_stream_push_notifications": false, "message_content_in_email_notifications": true,
            "notification_sound": "zulip", "pm_content_in_desktop_notifications": true, "presence_enabled": true,
            "realm_name_in_email_notifications_policy": 1, "wildcard_mentions_notify": true,
        }));
        all.extend(json_object(json!({
            "enable_followed_topic_desktop_notifications": true, "enable_followed_topic_email_notifications": true,
            "enable_followed_topic_push_notifications": true, "enable_followed_topic_audible_notifications": true,
            "enable_followed_topic_wildcard_mentions_notify": true, "automatically_follow_topics_policy": 3,
            "automatically_unmute_topics_in_muted_streams_policy": 2,
            "automatically_follow_topics_where_mentioned": true, "display_emoji_reaction_users": true,
            "email_address_visibility": 1, "web_escape_navigates_to_home_view": true,
            "receives_typing_notifications": true, "send_private_typing_notifications": true,
            "send_read_receipts": true, "send_stream_typing_notifications": true, "allow_private_data_export": false,
            "web_mark_read_on_scroll_policy": 1, "web_channel_default_view": 1, "user_list_style": 3,
            "web_animate_image_previews": "on_hover", "web_stream_unreads_count_display_policy": 2,
            "web_font_size_px": 16, "web_line_height_percent": 140, "web_navigate_to_sent_message": true,
            "web_suggest_update_timezone": true, "hide_ai_features": false,
        })));
        all.extend(json_object(json!({
            "resolved_topic_notice_auto_read_policy": "except_followed",
            "web_left_sidebar_unreads_count_summary": true, "web_left_sidebar_show_channel_folders": true,
            "emojiset_choices": [
                {"key": "google", "text": "Google"}, {"key": "twitter", "text": "Twitter"},
                {"key": "text", "text": "Plain text"}, {"key": "google-blob", "text": "Google blobs"},
            ],
            "timezone": "America/New_York",
            "available_notification_sounds": [
                "ascend", "beep_boop", "bink", "bright", "brlip", "chime", "deep tom", "ding", "double tap", "down",
                "dry bongos", "dutdut", "fast ascend", "flute", "friendly", "kick roll", "loud tintong",
                "metallic snare", "pan", "shaker", "simple", "stairs", "subtle", "swish", "tintong", "up",
                "wood block", "zaping", "zing", "zulip",
            ],
        })));
        Value::Object(all)
    }

    #[test]
    fn user_settings_have_zulips_keys_order_and_defaults() {
        let mut expected_keys = owned(GOLDEN_USER_SETTINGS);
        insert_after(&mut expected_keys, "hide_ai_features", NEWER_USER_SETTINGS);
        let settings = user_settings(&user());
        assert_eq!(keys(&settings), expected_keys);
        assert_eq!(Value::Object(settings), expected_user_settings());
    }

    #[test]
    fn realm_user_settings_defaults_have_zulips_keys_order_and_defaults() {
        let mut expected_keys = owned(GOLDEN_USER_SETTINGS);
        expected_keys.retain(|k| k != "timezone");
        insert_after(&mut expected_keys, "hide_ai_features", NEWER_USER_SETTINGS);
        let defaults = realm_user_settings_defaults(&realm());
        assert_eq!(keys(&defaults), expected_keys);
        let mut expected = expected_user_settings();
        expected.as_object_mut().unwrap().remove("timezone");
        assert_eq!(Value::Object(defaults), expected);
    }

    #[test]
    fn legacy_settings_have_zulips_keys_order_and_values() {
        let legacy = legacy_user_settings(&user());
        assert_eq!(keys(&legacy), owned(GOLDEN_LEGACY));
        let all = expected_user_settings();
        for (key, value) in &legacy {
            assert_eq!(value, &all[key], "{key}");
        }
    }

    #[test]
    fn stored_personal_settings_override_defaults_when_valid() {
        let mut u = user();
        u.email_address_visibility = EmailVisibility::Administrators;
        u.timezone = String::new();
        u.settings = json_object(json!({
            "color_scheme": 2,
            "emojiset": "comic-sans",
            "enter_sends": "yes",
            "web_font_size_px": 14,
            "email_address_visibility": 4,
            "resolved_topic_notice_auto_read_policy": "never",
            "notification_sound": "none",
            "email_notifications_batching_period_seconds": 0,
        }));
        let settings = user_settings(&u);
        assert_eq!(settings["color_scheme"], json!(2));
        assert_eq!(settings["emojiset"], json!("google"));
        assert_eq!(settings["enter_sends"], json!(false));
        assert_eq!(settings["web_font_size_px"], json!(14));
        assert_eq!(settings["email_address_visibility"], json!(3), "the column wins over the map");
        assert_eq!(settings["resolved_topic_notice_auto_read_policy"], json!("never"));
        assert_eq!(settings["notification_sound"], json!("none"));
        assert_eq!(settings["email_notifications_batching_period_seconds"], json!(120));
        assert_eq!(settings["timezone"], json!(""));
        let legacy = legacy_user_settings(&u);
        assert_eq!((&legacy["color_scheme"], &legacy["timezone"]), (&json!(2), &json!("")));

        let mut r = realm();
        r.user_defaults = json_object(json!({"color_scheme": 3, "email_address_visibility": 2, "emojiset": 5}));
        let defaults = realm_user_settings_defaults(&r);
        assert_eq!(defaults["color_scheme"], json!(3));
        assert_eq!(defaults["email_address_visibility"], json!(2));
        assert_eq!(defaults["emojiset"], json!("google"));
    }

    #[test]
    fn legacy_kinds_name_the_legacy_event() {
        assert_eq!(legacy_kind("emojiset"), Legacy::Display);
        assert_eq!(legacy_kind("timezone"), Legacy::Display);
        assert_eq!(legacy_kind("enable_sounds"), Legacy::Notification);
        assert_eq!(legacy_kind("presence_enabled"), Legacy::Notification);
        assert_eq!(legacy_kind("enable_followed_topic_email_notifications"), Legacy::None);
        assert_eq!(legacy_kind("web_font_size_px"), Legacy::None);
        assert_eq!(legacy_kind("no_such_setting"), Legacy::None);
        let display = USER_SETTINGS.iter().filter(|s| s.legacy == Legacy::Display).count();
        let notification = USER_SETTINGS.iter().filter(|s| s.legacy == Legacy::Notification).count();
        assert_eq!((display, notification), (14, 20));
    }

    #[test]
    fn realm_data_has_zulips_keys_in_order() {
        // From the golden FL 372 block to FL 419: `mandatory_topics` left `property_types` for
        // `topics_policy` (FL 392) and is now sent last; new settings join `property_types`
        // and the group settings in their alphabetical places; new limits join the others.
        let mut expected = owned(GOLDEN_REALM);
        expected.retain(|k| k != "realm_mandatory_topics");
        insert_after(&mut expected, "realm_push_notifications_enabled", &["realm_require_e2ee_push_notifications"]);
        insert_after(&mut expected, "realm_send_welcome_emails", &["realm_topics_policy"]);
        insert_after(
            &mut expected,
            "realm_want_advertise_in_communities_directory",
            &["realm_welcome_message_custom_text"],
        );
        insert_after(
            &mut expected,
            "realm_can_resolve_topics_group",
            &["realm_can_set_delete_message_policy_group", "realm_can_set_topics_policy_group"],
        );
        insert_after(&mut expected, "max_stream_description_length", &["max_bulk_new_subscription_messages"]);
        insert_after(
            &mut expected,
            "max_message_length",
            &["max_channel_folder_name_length", "max_channel_folder_description_length", "max_reminder_note_length"],
        );
        expected.push("realm_mandatory_topics".to_owned());
        let data = realm_data(&state_with(realm()), &config_at(1_795_238_523));
        assert_eq!(keys(&data), expected);
    }

    #[test]
    fn realm_data_values_for_a_new_organization() {
        let state = state_with(realm());
        let data = realm_data(&state, &config_at(1_795_238_523));
        assert_eq!(data["realm_name"], json!("Acme"));
        assert_eq!(data["realm_description"], json!("We make **everything**."));
        assert_eq!(data["realm_date_created"], json!(1_795_238_495));
        assert_eq!(data["realm_url"], json!("http://acme.localhost:9991"));
        assert_eq!(data["realm_uri"], json!("http://acme.localhost:9991"));
        assert_eq!(data["realm_bot_domain"], json!("acme.localhost"));
        assert_eq!(data["realm_icon_url"], json!(server_info::realm_icon_url(&state)));
        assert_eq!(data["server_generation"], json!(1_795_238_523));
        assert_eq!(data["realm_authentication_methods"], json!({"Email": {"enabled": true, "available": true}}));
        assert_eq!(
            data["server_emoji_data_url"],
            json!("http://acme.localhost:9991/static/generated/emoji/emoji_api.json")
        );
        assert_eq!(data["realm_message_edit_history_visibility_policy"], json!("all"));
        assert_eq!(data["realm_topics_policy"], json!("allow_empty_topic"));
        assert_eq!(data["realm_mandatory_topics"], json!(false));
        assert_eq!(data["realm_allow_edit_history"], json!(true));
        assert_eq!(data["realm_jitsi_server_url"], json!(null));
        assert_eq!(data["jitsi_server_url"], json!("https://meet.jit.si"));
        assert_eq!(data["realm_message_content_edit_limit_seconds"], json!(600));
        assert_eq!(data["realm_move_messages_within_stream_limit_seconds"], json!(604_800));
        assert_eq!(data["realm_message_retention_days"], json!(-1));
        assert_eq!(data["realm_invite_required"], json!(true));
        assert_eq!(data["realm_enable_read_receipts"], json!(true));
        assert_eq!(data["realm_org_type"], json!(0));
        assert_eq!(data["realm_new_stream_announcements_stream_id"], json!(-1));
        assert_eq!(data["realm_empty_topic_display_name"], json!("general chat"));
        assert_eq!(data["development_environment"], json!(false));
        assert_eq!(data["max_file_upload_size_mib"], json!(100));
        // The legacy policies of the default groups, as in the golden response.
        assert_eq!(data["realm_create_public_stream_policy"], json!(1));
        assert_eq!(data["realm_create_private_stream_policy"], json!(1));
        assert_eq!(data["realm_create_web_public_stream_policy"], json!(7));
        assert_eq!(data["realm_wildcard_mention_policy"], json!(5));
        for (key, value) in always_present_limits() {
            assert_eq!(data[&key], value, "{key}");
        }
    }

    #[test]
    fn group_settings_are_system_group_ids_unless_stored() {
        let state = state_with(realm());
        let data = realm_data(&state, &config_at(0));
        assert_eq!(data["realm_can_create_groups"], group_id(&state, SystemGroup::MEMBERS));
        assert_eq!(data["realm_create_multiuse_invite_group"], group_id(&state, SystemGroup::ADMINISTRATORS));
        assert_eq!(data["realm_can_access_all_users_group"], group_id(&state, SystemGroup::EVERYONE));
        assert_eq!(data["realm_can_create_web_public_channel_group"], group_id(&state, SystemGroup::OWNERS));
        assert_eq!(data["realm_can_set_delete_message_policy_group"], group_id(&state, SystemGroup::MODERATORS));
        assert_eq!(data["realm_can_set_topics_policy_group"], group_id(&state, SystemGroup::MEMBERS));

        let moderators = state.system_group_id(SystemGroup::MODERATORS).unwrap();
        let everyone = state.system_group_id(SystemGroup::EVERYONE).unwrap();
        let anonymous = json!({"direct_members": [7], "direct_subgroups": [moderators]});
        let mut r = realm();
        r.settings = json_object(json!({
            "can_create_groups": moderators,
            "can_create_public_channel_group": moderators,
            "can_create_private_channel_group": anonymous,
            "can_create_web_public_channel_group": everyone,
            "can_mention_many_users_group": everyone,
            "can_invite_users_group": "role:members",
            "topics_policy": "disable_empty_topic",
            "message_edit_history_visibility_policy": "none",
            "jitsi_server_url": "https://jitsi.acme.test",
            "waiting_period_threshold": -3,
            "new_stream_announcements_stream_id": 12,
        }));
        let state = state_with(r);
        let data = realm_data(&state, &config_at(0));
        assert_eq!(data["realm_can_create_groups"], json!(moderators));
        assert_eq!(data["realm_can_create_private_channel_group"], anonymous);
        assert_eq!(data["realm_can_invite_users_group"], group_id(&state, SystemGroup::MEMBERS), "bad value ignored");
        assert_eq!(data["realm_create_public_stream_policy"], json!(4));
        assert_eq!(data["realm_create_private_stream_policy"], json!(1), "anonymous group: members");
        assert_eq!(data["realm_create_web_public_stream_policy"], json!(4), "not allowed before: moderators");
        assert_eq!(data["realm_wildcard_mention_policy"], json!(1));
        assert_eq!(data["realm_topics_policy"], json!("disable_empty_topic"));
        assert_eq!(data["realm_mandatory_topics"], json!(true));
        assert_eq!(data["realm_allow_edit_history"], json!(false));
        assert_eq!(data["jitsi_server_url"], json!("https://jitsi.acme.test"));
        assert_eq!(data["server_jitsi_server_url"], json!("https://meet.jit.si"));
        assert_eq!(data["realm_waiting_period_threshold"], json!(0));
        assert_eq!(data["realm_new_stream_announcements_stream_id"], json!(12));
    }

    #[test]
    fn supported_permission_settings_follow_zulip() {
        let all = server_supported_permission_settings();
        assert_eq!(keys(&all), ["realm", "stream", "group"]);
        let realm_keys: Vec<String> = all["realm"].as_object().unwrap().keys().cloned().collect();
        let expected: Vec<String> = GOLDEN_REALM
            .iter()
            .filter(|k| k.ends_with("_group") || k.ends_with("_groups"))
            .map(|k| k.trim_start_matches("realm_").to_owned())
            .collect();
        let mut expected = expected;
        insert_after(
            &mut expected,
            "can_resolve_topics_group",
            &["can_set_delete_message_policy_group", "can_set_topics_policy_group"],
        );
        assert_eq!(realm_keys, expected);
        let entry = &all["realm"]["can_create_web_public_channel_group"];
        assert_eq!(
            entry.as_object().map(keys).unwrap(),
            [
                "require_system_group",
                "allow_internet_group",
                "allow_nobody_group",
                "allow_everyone_group",
                "default_group_name",
                "default_for_system_groups",
                "allowed_system_groups"
            ]
        );
        assert_eq!(
            *entry,
            json!({
                "require_system_group": true, "allow_internet_group": false, "allow_nobody_group": true,
                "allow_everyone_group": false, "default_group_name": "role:owners", "default_for_system_groups": null,
                "allowed_system_groups": ["role:moderators", "role:administrators", "role:owners", "role:nobody"],
            })
        );
        assert_eq!(
            all["realm"]["can_access_all_users_group"],
            json!({
                "require_system_group": true, "allow_internet_group": false, "allow_nobody_group": false,
                "allow_everyone_group": true, "default_group_name": "role:everyone", "default_for_system_groups": null,
                "allowed_system_groups": ["role:everyone", "role:members"],
            })
        );
        assert_eq!(all["realm"]["can_manage_all_groups"]["allow_nobody_group"], json!(false));
        assert_eq!(
            all["stream"]["can_administer_channel_group"]["default_group_name"],
            json!("stream_creator_or_nobody")
        );
        assert_eq!(
            all["group"]["can_leave_group"],
            json!({
                "require_system_group": false, "allow_internet_group": false, "allow_nobody_group": true,
                "allow_everyone_group": true, "default_group_name": "role:everyone",
                "default_for_system_groups": "role:nobody", "allowed_system_groups": [],
            })
        );
    }

    #[test]
    fn catalog_is_consistent() {
        let mut names = BTreeSet::new();
        for s in USER_SETTINGS {
            assert!(names.insert(s.name), "duplicate personal setting {}", s.name);
        }
        assert_eq!(USER_SETTINGS.last().map(|s| s.name), Some("timezone"));
        assert_eq!(REALM_USER_DEFAULT_SETTINGS.len(), USER_SETTINGS.len() - 1);
        let mut names = BTreeSet::new();
        for s in REALM_SETTINGS {
            assert!(names.insert(s.name), "duplicate organization setting {}", s.name);
        }
        for list in [CHANNEL_PERMISSION_SETTINGS, USER_GROUP_PERMISSION_SETTINGS] {
            let mut names = BTreeSet::new();
            for p in list {
                assert!(names.insert(p.name), "duplicate group permission {}", p.name);
            }
        }
        let system_groups: Vec<&str> = SystemGroup::DEFINITIONS.iter().map(|d| d.0).collect();
        for s in USER_SETTINGS.iter().chain(REALM_SETTINGS) {
            match (s.kind, s.default) {
                (Kind::Group(rule), DefaultValue::SystemGroup(name)) => {
                    assert!(system_groups.contains(&name), "{}", s.name);
                    for allowed in rule.allowed_system_groups {
                        assert!(system_groups.contains(allowed), "{}", s.name);
                    }
                }
                (Kind::Group(_), _) | (_, DefaultValue::SystemGroup(_)) => panic!("{}: group kind and default", s.name),
                _ => assert!(s.accepts(&s.default_value(None)), "{}: default not allowed", s.name),
            }
        }
        assert_eq!(EMOJISETS, EMOJISET_CHOICES.iter().map(|c| c.0).collect::<Vec<_>>());
        assert_eq!(NOTIFICATION_SOUNDS.len(), 30);
        assert!(!NOTIFICATION_SOUNDS.contains(&"none"));
    }

    #[test]
    fn kinds_accept_only_their_values() {
        let sound = user_setting("notification_sound").unwrap();
        assert!(sound.accepts(&json!("ding")) && sound.accepts(&json!("none")) && !sound.accepts(&json!("boom")));
        let scheme = user_setting("color_scheme").unwrap();
        assert!(scheme.accepts(&json!(3)) && !scheme.accepts(&json!(4)) && !scheme.accepts(&json!("1")));
        let limit = realm_setting("message_content_edit_limit_seconds").unwrap();
        assert!(limit.accepts(&json!(null)) && limit.accepts(&json!(60)) && !limit.accepts(&json!(-1)));
        let group = realm_setting("can_create_groups").unwrap();
        assert!(group.accepts(&json!(12)));
        assert!(group.accepts(&json!({"direct_members": [], "direct_subgroups": [3]})));
        assert!(!group.accepts(&json!({"direct_members": []})));
        assert!(!group.accepts(&json!("role:members")));
        assert_eq!(group.default_value(None), json!(null));
    }

    #[test]
    fn fixed_register_objects() {
        assert_eq!(
            keys(&custom_profile_field_types()),
            ["DATE", "EXTERNAL_ACCOUNT", "URL", "SELECT", "PRONOUNS", "LONG_TEXT", "SHORT_TEXT", "USER"]
        );
        assert_eq!(custom_profile_field_types()["PRONOUNS"], json!({"id": 8, "name": "Pronouns"}));
        assert_eq!(
            keys(&always_present_limits()),
            [
                "max_stream_name_length",
                "max_stream_description_length",
                "max_channel_folder_name_length",
                "max_channel_folder_description_length",
                "max_topic_length",
                "max_message_length",
                "max_avatar_file_size_mib",
                "max_file_upload_size_mib",
                "max_icon_file_size_mib",
                "max_logo_file_size_mib",
                "max_bulk_new_subscription_messages",
                "max_reminder_note_length",
                "event_queue_longpoll_timeout_seconds"
            ]
        );
        assert_eq!(always_present_limits()["max_reminder_note_length"], json!(1000));
    }
}
