//! Organization settings (`Realm.property_types`, group permission settings) and the `realm`
//! register data set.

use serde_json::{json, Map, Value};

use super::*;

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
    // FL 456: the avatar of new users, `G` (Gravatar) or `J` (Jdenticon).
    // Jdenticon for new organizations, as in Zulip 12 (migration 0027 keeps Gravatar for
    // those that existed before).
    org("default_avatar_source", Kind::StrChoice(DEFAULT_AVATAR_SOURCES), text("J")),
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
    // FL 453: `giphy_rating` before (FL 442: it rates Tenor's GIFs too).
    org("gif_rating_policy", Kind::IntChoice(GIF_RATINGS), int(2)),
    flag("inline_image_preview", true),
    flag("inline_url_embed_preview", false),
    flag("invite_required", true),
    org("jitsi_server_url", Kind::OptionalStr, DefaultValue::Null),
    // FL 469: the height of image and video previews, in percent.
    org("media_preview_size", Kind::IntChoice(MEDIA_PREVIEW_SIZES), int(100)),
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
    // FL 434: Notification Bot's notices in a channel's "channel events" topic. Off in a
    // realm Zulip creates (Zulip turns it on only in its development and test data).
    flag("send_channel_events_messages", false),
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
    // FL 477: who counts as a workplace user for billing. Zulip's default and rule are not
    // in its published description: members (guests excluded), `role:nobody` allowed.
    group("workplace_users_group", SystemGroup::MEMBERS, GroupRule::new(true, false)),
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

/// The avatar an organization's new accounts get (`default_avatar_source`, FL 456): `G`
/// (Gravatar) or `J` (Jdenticon).
pub fn default_avatar_source(realm: &crate::realm::model::Realm) -> String {
    let value = realm_setting("default_avatar_source").map(|s| s.value(&realm.settings, None));
    value.as_ref().and_then(Value::as_str).unwrap_or("G").to_owned()
}

/// Whether a setting is one of `Realm.property_types`, sent in the first block of `realm`.
fn is_realm_property(setting: &Setting) -> bool {
    !matches!(setting.kind, Kind::Group(_) | Kind::ChannelId) && setting.name != "org_type"
}

/// Channel permission settings (`Stream.stream_permission_group_settings`): FL 419's, then
/// `can_create_topic_group` (FL 441); `channel_creator` was `stream_creator_or_nobody`
/// before FL 427.
pub static CHANNEL_PERMISSION_SETTINGS: &[GroupPermission] = &[
    channel_permission("can_add_subscribers_group", SystemGroup::NOBODY, false),
    channel_permission("can_administer_channel_group", "channel_creator", false),
    channel_permission("can_create_topic_group", SystemGroup::EVERYONE, true),
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
        "realm_authentication_methods": server_info::realm_authentication_methods(),
        "realm_presence_disabled": realm.presence_disabled(),
        "max_avatar_file_size_mib": MAX_AVATAR_FILE_SIZE_MIB,
        "max_file_upload_size_mib": config.uploads.max_file_upload_size_mib,
        "max_icon_file_size_mib": MAX_ICON_FILE_SIZE_MIB,
        "realm_upload_quota_mib": null,
    })));
    data.extend(json_object(json!({
        "realm_icon_url": server_info::realm_icon_url(state),
        "realm_icon_source": server_info::realm_icon_source(state),
        "realm_logo_url": logo_url,
        "realm_logo_source": "D",
        "realm_night_logo_url": logo_url,
        "realm_night_logo_source": "D",
        "max_logo_file_size_mib": MAX_LOGO_FILE_SIZE_MIB,
        "realm_url": url,
        "realm_uri": url,
        // FL 466: the salt of Jdenticon avatars (`{realm_uuid}:{user_id}`); the same UUID the
        // push bouncer knows the organization by.
        "realm_uuid": crate::push::identity::realm_uuid(config.push.org_id.as_deref().unwrap_or(""), realm.id),
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
        // `realm_is_zephyr_mirror_realm` went at FL 426.
        "development_environment": false,
        "realm_org_type": realm_value_of(state, "org_type"),
        // FL 438: not an API setting (Zulip sets it with a management command).
        "realm_owner_full_content_access": realm.owner_full_content_access(),
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
        // The formats the thumbnail worker makes (`crate::uploads::images::THUMBNAIL_FORMATS`).
        "server_thumbnail_formats": crate::uploads::images::THUMBNAIL_FORMATS.iter().map(|f| json!({
            "name": f.name(), "max_width": f.max_width, "max_height": f.max_height,
            "format": f.extension, "animated": f.animated,
        })).collect::<Vec<_>>(),
        "server_avatar_changes_disabled": false,
        "server_name_changes_disabled": false,
        "server_web_public_streams_enabled": false,
        "gif_rating_policy_options": gif_rating_policy_options(),
        "server_emoji_data_url": format!("{url}{}", crate::emoji::data_file().path),
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
        // FL 435.
        "server_report_message_types":
            REPORT_REASONS.iter().map(|(key, name)| json!({"key": key, "name": name})).collect::<Vec<_>>(),
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

/// `gif_rating_policy_options` (FL 453; `gif_rating_options` at FL 442, `giphy_rating_options`
/// before).
fn gif_rating_policy_options() -> Value {
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
