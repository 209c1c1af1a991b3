//! Key order, defaults and validation of the catalog against Zulip's.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

fn config_at(server_generation: i64) -> ServerConfig {
    ServerConfig { server_generation, ..ServerConfig::default() }
}
use crate::ids::{RealmId, UserId};
use crate::realm::model::{EmailVisibility, Realm, Role, User, UserGroup};

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

/// Personal settings added between FL 373 and FL 498, in Zulip's order; they follow
/// `hide_ai_features`.
const NEWER_USER_SETTINGS: &[&str] = &[
    "resolved_topic_notice_auto_read_policy",
    "web_left_sidebar_unreads_count_summary",
    "web_left_sidebar_show_channel_folders",
    "web_inbox_show_channel_folders",
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
    "realm_allow_message_editing", "realm_avatar_changes_disabled", "realm_default_avatar_source",
    "realm_default_code_block_language",
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
    "realm_direct_message_initiator_group", "realm_direct_message_permission_group", "realm_workplace_users_group",
    "realm_create_public_stream_policy", "realm_create_private_stream_policy",
    "realm_create_web_public_stream_policy", "realm_wildcard_mention_policy", "realm_authentication_methods",
    "realm_presence_disabled", "max_avatar_file_size_mib", "max_file_upload_size_mib", "max_icon_file_size_mib",
    "realm_upload_quota_mib", "realm_icon_url", "realm_icon_source", "realm_logo_url", "realm_logo_source",
    "realm_night_logo_url", "realm_night_logo_source", "max_logo_file_size_mib", "realm_url", "realm_uri", "realm_uuid",
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

fn rename(list: &mut [String], old: &str, new: &str) {
    let at = list.iter().position(|k| k == old).unwrap();
    list[at] = new.to_owned();
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
        is_imported_stub: false,
        first_login_pending: false,
        self_edited_settings: Default::default(),
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
        "web_inbox_show_channel_folders": true,
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
    // FL 453 renamed the GIF rating (in place); FL 469 added the media preview size.
    rename(&mut expected, "realm_giphy_rating", "realm_gif_rating_policy");
    rename(&mut expected, "giphy_rating_options", "gif_rating_policy_options");
    insert_after(&mut expected, "realm_jitsi_server_url", &["realm_media_preview_size"]);
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
    // FL 426, 434, 435, 438.
    expected.retain(|k| k != "realm_is_zephyr_mirror_realm");
    insert_after(&mut expected, "realm_require_unique_names", &["realm_send_channel_events_messages"]);
    insert_after(&mut expected, "realm_date_created", &["server_report_message_types"]);
    insert_after(&mut expected, "realm_org_type", &["realm_owner_full_content_access"]);
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
    let methods = data["realm_authentication_methods"].as_object().unwrap();
    let names: Vec<&str> = methods.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "Dev",
            "Email",
            "LDAP",
            "RemoteUser",
            "GitHub",
            "Discord",
            "AzureAD",
            "GitLab",
            "Google",
            "Apple",
            "SAML",
            "OpenID Connect"
        ]
    );
    assert_eq!(methods["Email"], json!({"enabled": true, "available": true}));
    let reason = server_info::UNAVAILABLE_BACKEND;
    assert_eq!(methods["SAML"], json!({"enabled": false, "available": false, "unavailable_reason": reason}));
    // The emoji data file's hashed name (see `crate::emoji`), which Agora serves.
    let emoji_url = data["server_emoji_data_url"].as_str().unwrap();
    assert_eq!(emoji_url, format!("http://acme.localhost:9991{}", crate::emoji::data_file().path));
    assert!(emoji_url.starts_with("http://acme.localhost:9991/static/generated/emoji/emoji_api."), "{emoji_url}");
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
    assert_eq!(all["stream"]["can_administer_channel_group"]["default_group_name"], json!("channel_creator"));
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
