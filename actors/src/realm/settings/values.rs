//! The settings the personal and default-settings endpoints take, in Zulip's order, and
//! the checks of their values.

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::realm::catalog::{self, Kind, Setting};

/// A setting with the value a request gives it, already decoded by its wire type.
pub type SettingValue = (&'static Setting, Value);

// --- Parameter order. ---

/// `json_change_settings`' parameters in Zulip 10.2's order, which is both the order its
/// parameter checks run in and the order of the events (`locals()`); `timezone` is checked
/// here but changed last.
#[rustfmt::skip]
const OWN_SETTINGS_ORDER: &[&str] = &[
    "twenty_four_hour_time", "web_mark_read_on_scroll_policy", "web_channel_default_view", "starred_message_counts",
    "receives_typing_notifications", "fluid_layout_width", "high_contrast_mode", "color_scheme", "web_font_size_px",
    "web_line_height_percent", "translate_emoticons", "display_emoji_reaction_users", "default_language",
    "web_home_view", "web_escape_navigates_to_home_view", "left_side_userlist", "emojiset", "demote_inactive_streams",
    "web_stream_unreads_count_display_policy", "timezone", "email_notifications_batching_period_seconds",
    "enable_drafts_synchronization", "enable_stream_desktop_notifications", "enable_stream_email_notifications",
    "enable_stream_push_notifications", "enable_stream_audible_notifications", "wildcard_mentions_notify",
    "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications",
    "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications",
    "enable_followed_topic_wildcard_mentions_notify", "notification_sound", "enable_desktop_notifications",
    "enable_sounds", "enable_offline_email_notifications", "enable_offline_push_notifications",
    "enable_online_push_notifications", "enable_digest_emails", "enable_login_emails", "enable_marketing_emails",
    "message_content_in_email_notifications", "pm_content_in_desktop_notifications", "desktop_icon_count_display",
    "realm_name_in_email_notifications_policy", "automatically_follow_topics_policy",
    "automatically_unmute_topics_in_muted_streams_policy", "automatically_follow_topics_where_mentioned",
    "presence_enabled", "enter_sends", "send_private_typing_notifications", "send_stream_typing_notifications",
    "send_read_receipts", "allow_private_data_export", "user_list_style", "web_animate_image_previews",
    "email_address_visibility", "web_navigate_to_sent_message", "web_suggest_update_timezone", "hide_ai_features",
];

/// `update_realm_user_settings_defaults`' parameters in Zulip 10.2's order.
#[rustfmt::skip]
const DEFAULTS_ORDER: &[&str] = &[
    "starred_message_counts", "receives_typing_notifications", "web_suggest_update_timezone", "fluid_layout_width",
    "high_contrast_mode", "web_mark_read_on_scroll_policy", "web_channel_default_view", "web_font_size_px",
    "web_line_height_percent", "color_scheme", "enable_drafts_synchronization", "translate_emoticons",
    "display_emoji_reaction_users", "web_home_view", "web_escape_navigates_to_home_view", "left_side_userlist",
    "emojiset", "demote_inactive_streams", "user_list_style", "web_animate_image_previews",
    "web_stream_unreads_count_display_policy", "hide_ai_features", "enable_stream_desktop_notifications",
    "enable_stream_email_notifications", "enable_stream_push_notifications", "enable_stream_audible_notifications",
    "notification_sound", "enable_desktop_notifications", "enable_sounds",
    "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications",
    "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications",
    "email_notifications_batching_period_seconds", "enable_offline_email_notifications",
    "enable_offline_push_notifications", "enable_online_push_notifications", "enable_digest_emails",
    "message_content_in_email_notifications", "pm_content_in_desktop_notifications", "wildcard_mentions_notify",
    "enable_followed_topic_wildcard_mentions_notify", "desktop_icon_count_display",
    "realm_name_in_email_notifications_policy", "automatically_follow_topics_policy",
    "automatically_unmute_topics_in_muted_streams_policy", "automatically_follow_topics_where_mentioned",
    "presence_enabled", "enter_sends", "twenty_four_hour_time", "send_private_typing_notifications",
    "send_stream_typing_notifications", "send_read_receipts", "email_address_visibility",
    "web_navigate_to_sent_message",
];

/// `settings` sorted by their place in `order`; settings newer than Zulip 10.2 follow, in
/// catalog order.
fn in_order(order: &[&str], settings: impl Iterator<Item = &'static Setting>) -> Vec<&'static Setting> {
    let mut list: Vec<&'static Setting> = settings.collect();
    list.sort_by_key(|s| order.iter().position(|name| *name == s.name).unwrap_or(order.len()));
    list
}

/// The settings `PATCH /settings` takes, in the order Zulip reads and applies them.
pub fn own_settings() -> Vec<&'static Setting> {
    in_order(OWN_SETTINGS_ORDER, catalog::USER_SETTINGS.iter())
}

/// The settings `PATCH /realm/user_settings_defaults` takes, in Zulip's order.
pub fn default_settings() -> Vec<&'static Setting> {
    in_order(DEFAULTS_ORDER, catalog::REALM_USER_DEFAULT_SETTINGS.iter().filter(|s| catalog::is_defaultable(s)))
}

// --- Validation. ---

/// Checks setting values in Zulip's order: the allowed values and time zone checked while
/// parsing, then `check_settings_values` (language, notification sound, batching period).
pub fn check_values(settings: &[SettingValue]) -> ApiResult<()> {
    let value_of = |name: &str| settings.iter().find(|(s, _)| s.name == name).map(|(_, v)| v);
    for (setting, value) in settings {
        match (setting.name, setting.kind) {
            ("notification_sound", _) | (_, Kind::IntRange(..)) => {}
            ("timezone", _) if !value.as_str().is_some_and(catalog::is_valid_timezone) => {
                return Err(ApiError::bad_request("Invalid timezone: Value error, Not a recognized time zone"));
            }
            (name, Kind::IntChoice(_) | Kind::StrChoice(_)) if !setting.accepts(value) => {
                return Err(ApiError::not_in_list(name))
            }
            (name, _) if !setting.accepts(value) => return Err(ApiError::bad_request(format!("Invalid {name}"))),
            _ => {}
        }
    }
    if value_of("default_language").is_some_and(|v| v.as_str().and_then(catalog::language_name).is_none()) {
        return Err(ApiError::bad_request("Invalid default_language"));
    }
    if let Some(sound) = value_of("notification_sound") {
        if !catalog::user_setting("notification_sound").is_some_and(|s| s.accepts(sound)) {
            let shown = sound.as_str().map_or_else(|| sound.to_string(), str::to_owned);
            return Err(ApiError::bad_request(format!("Invalid notification sound '{shown}'")));
        }
    }
    if let Some(period) = value_of("email_notifications_batching_period_seconds") {
        if !catalog::user_setting("email_notifications_batching_period_seconds").is_some_and(|s| s.accepts(period)) {
            return Err(ApiError::bad_request(format!("Invalid email batching period: {period} seconds")));
        }
    }
    Ok(())
}

/// The settings whose value differs from the current one (`current`).
pub fn changed(settings: Vec<SettingValue>, current: impl Fn(&Setting) -> Value) -> Vec<SettingValue> {
    settings.into_iter().filter(|(setting, value)| current(setting) != *value).collect()
}
