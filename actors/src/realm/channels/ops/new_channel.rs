//! A channel about to be created: its settings checked against the organization's
//! policies, and the colors of new subscriptions.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::checks::{check_channel_group_setting, check_topics_policy, parse_retention};
use crate::error::{ApiError, ApiResult};
use crate::ids::ChannelId;
use crate::realm::folders::ops::check_folder_for_channel;
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Role, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;

/// Zulip's palette of personal channel colors (`STREAM_ASSIGNMENT_COLORS`).
pub const STREAM_ASSIGNMENT_COLORS: [&str; 24] = [
    "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5", "#f5ce6e", "#c2726a",
    "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063", "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4",
    "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
];

/// The settings of channels created by a request (`POST /users/me/subscriptions`,
/// `POST /channels/create`), as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct ChannelOptions {
    pub invite_only: bool,
    pub is_web_public: bool,
    pub is_default_stream: bool,
    pub history_public_to_subscribers: Option<bool>,
    /// A number, `"realm_default"` or `"unlimited"`, as given.
    pub message_retention_days: Option<Value>,
    pub topics_policy: Option<String>,
    pub folder_id: Option<i64>,
    /// Raw API values of the `can_*_group` parameters given, by setting name.
    pub settings: Vec<(String, Value)>,
}

/// A channel about to be created, validated (its id comes with the write).
pub fn new_channel(
    state: &RealmState,
    acting: &User,
    name: &str,
    description: &str,
    options: &ChannelOptions,
    now: i64,
) -> ApiResult<Channel> {
    let public_or_private =
        if options.invite_only { "can_create_private_channel_group" } else { "can_create_public_channel_group" };
    if !has_realm_permission(state, public_or_private, acting.id) {
        return Err(ApiError::bad_request("Insufficient permission"));
    }
    if options.is_web_public {
        return Err(ApiError::bad_request("Web-public channels are not enabled."));
    }
    if options.is_default_stream {
        if !acting.role.is_admin() {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
        if options.invite_only {
            return Err(ApiError::bad_request("A default channel cannot be private."));
        }
    }
    let message_retention_days = match &options.message_retention_days {
        Some(value) => {
            // Zulip's `list_to_streams`: parsed first; only a value other than the
            // organization's default needs an owner.
            let days = parse_retention(value)?;
            if days.is_some() && acting.role != Role::Owner {
                return Err(ApiError::must_be_owner());
            }
            days
        }
        None => None,
    };
    let topics_policy = options.topics_policy.clone().unwrap_or_else(|| "inherit".to_owned());
    // A new channel has no messages: `empty_topic_only` needs no look at the database.
    check_topics_policy(state, acting, &topics_policy)?;
    let folder_id = options.folder_id.map(|id| check_folder_for_channel(state, id)).transpose()?;
    let mut settings = Map::new();
    for (name, value) in &options.settings {
        let value = check_channel_group_setting(state, name, value)?;
        settings.insert(name.clone(), value.to_json());
    }
    if !settings.contains_key("can_administer_channel_group") {
        let creator = GroupSettingValue::Anonymous {
            direct_members: BTreeSet::from([acting.id]),
            direct_subgroups: BTreeSet::new(),
        };
        settings.insert("can_administer_channel_group".into(), creator.to_json());
    }
    let channel = Channel {
        id: ChannelId(0),
        name: name.to_owned(),
        description: description.to_owned(),
        rendered_description: crate::markdown::render(description),
        invite_only: options.invite_only,
        is_web_public: false,
        history_public_to_subscribers: !options.invite_only || options.history_public_to_subscribers.unwrap_or(false),
        message_retention_days,
        topics_policy,
        folder_id,
        creator_id: Some(acting.id),
        date_created: now,
        is_archived: false,
        settings,
    };
    super::checks::check_topic_creation_with_history(state, &channel)?;
    Ok(channel)
}

/// The next color for a user: the first of the palette they do not use yet, else the
/// palette in turn (Zulip's `pick_colors`).
pub fn pick_color(used: &mut Vec<String>) -> String {
    let color = STREAM_ASSIGNMENT_COLORS
        .iter()
        .find(|c| !used.iter().any(|u| u == *c))
        .copied()
        .unwrap_or_else(|| STREAM_ASSIGNMENT_COLORS[used.len() % STREAM_ASSIGNMENT_COLORS.len()])
        .to_owned();
    used.push(color.clone());
    color
}
