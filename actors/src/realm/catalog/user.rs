//! Personal settings: `UserBaseSettings` in Zulip's order, and the register objects built
//! from them.

use serde_json::{json, Map, Value};

use super::locale::{LANGUAGES, TIMEZONES};
use super::*;
use crate::realm::model::{Realm, User};

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
    // FL 431.
    modern("web_inbox_show_channel_folders", Kind::Bool, ON),
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
pub fn user_value(user: &User, setting: &Setting) -> Value {
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

/// Personal settings an organization may not set defaults for through `PATCH
/// /realm/user_settings_defaults` (Zulip's endpoint has no parameter for them), although
/// `realm_user_settings_defaults` shows them.
const NOT_DEFAULTABLE: &[&str] =
    &["allow_private_data_export", "default_language", "enable_login_emails", "enable_marketing_emails"];

/// Whether `PATCH /realm/user_settings_defaults` accepts this setting.
pub fn is_defaultable(setting: &Setting) -> bool {
    !NOT_DEFAULTABLE.contains(&setting.name)
}

/// The name `language_name` shows for an interface language, if Zulip offers it.
pub fn language_name(code: &str) -> Option<&'static str> {
    LANGUAGES.binary_search_by(|(c, _)| (*c).cmp(code)).ok().map(|i| LANGUAGES[i].1)
}

/// Whether `name` is an IANA time zone name.
pub fn is_valid_timezone(name: &str) -> bool {
    TIMEZONES.binary_search(&name).is_ok()
}
