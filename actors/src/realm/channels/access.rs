//! Who may see and do what in a channel (spec 2.5; Zulip's `user_has_content_access`,
//! `user_has_metadata_access` and the channel permission groups).
//!
//! - **Content access** (messages, history, subscribing oneself to a public channel): a
//!   web-public channel, a subscriber, or a non-guest for a public channel or as a member
//!   of the channel's `can_add_subscribers_group` or `can_subscribe_group`.
//! - **Metadata access** (name, description, settings, subscribers): content access, or an
//!   organization administrator, or a member of `can_administer_channel_group`.
//! - Organization administrators act as members of `can_administer_channel_group` and
//!   `can_remove_subscribers_group` without being listed.

use crate::error::{ApiError, ApiResult};
use crate::ids::ChannelId;
use crate::realm::catalog::{self, GroupPermission};
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Role, User};
use crate::realm::state::RealmState;

impl RealmState {
    /// A channel permission setting's value: the stored one, else the default (a system
    /// group; `channel_creator` resolves to nobody when no value was stored).
    pub fn channel_setting(&self, channel: &Channel, name: &str) -> GroupSettingValue {
        if let Some(value) = channel.settings.get(name).and_then(GroupSettingValue::from_json) {
            return value;
        }
        let default = channel_permission(name).map_or("", |p| p.default_group_name);
        GroupSettingValue::Group(self.system_group_id(default).unwrap_or_else(|| self.nobody_group_id()))
    }

    /// Whether `user` is in the channel's permission group `name` (recursively; guests
    /// only where the setting allows `role:everyone`).
    pub fn in_channel_group(&self, channel: &Channel, name: &str, user: &User) -> bool {
        let value = self.channel_setting(channel, name);
        match channel_permission(name) {
            Some(permission) => self.has_group_permission(&value, &permission.rule, user.id),
            None => false,
        }
    }

    /// Whether `user` may read the channel's messages (and subscribe themselves to it).
    pub fn has_content_access(&self, user: &User, channel: &Channel) -> bool {
        if channel.is_web_public || self.is_subscribed(user.id, channel.id) {
            return true;
        }
        if user.role == Role::Guest {
            return false;
        }
        !channel.invite_only
            || self.in_channel_group(channel, "can_add_subscribers_group", user)
            || self.in_channel_group(channel, "can_subscribe_group", user)
    }

    /// Whether `user` may know the channel exists and see its settings and subscribers.
    pub fn has_metadata_access(&self, user: &User, channel: &Channel) -> bool {
        self.has_content_access(user, channel)
            || user.role.is_admin()
            || self.in_channel_group(channel, "can_administer_channel_group", user)
    }

    /// Whether `user` may change the channel's settings: metadata access and
    /// administrator or member of `can_administer_channel_group`.
    pub fn can_administer_channel(&self, user: &User, channel: &Channel) -> bool {
        self.has_metadata_access(user, channel)
            && (user.role.is_admin() || self.in_channel_group(channel, "can_administer_channel_group", user))
    }

    /// The channels `user` may know of (metadata access), ascending.
    pub fn visible_channels<'a>(&'a self, user: &'a User) -> impl Iterator<Item = &'a Channel> + 'a {
        self.channels().filter(move |c| self.has_metadata_access(user, c))
    }

    /// The active users who may know of a channel: who receives its metadata events.
    pub fn channel_metadata_audience(&self, channel: ChannelId) -> Vec<crate::ids::UserId> {
        let Some(channel) = self.channel(channel) else { return Vec::new() };
        self.users().filter(|u| u.is_active && self.has_metadata_access(u, channel)).map(|u| u.id).collect()
    }
}

/// A channel the user may know of, or Zulip's "Invalid channel ID".
pub fn visible_channel<'s>(state: &'s RealmState, user: &User, id: ChannelId) -> ApiResult<&'s Channel> {
    state
        .channel(id)
        .filter(|c| state.has_metadata_access(user, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))
}

/// A channel the user may administer (Zulip's
/// `access_stream_for_delete_or_update_requiring_metadata_access`).
pub fn administered_channel<'s>(state: &'s RealmState, user: &User, id: ChannelId) -> ApiResult<&'s Channel> {
    let channel = visible_channel(state, user, id)?;
    if !state.can_administer_channel(user, channel) {
        return Err(ApiError::bad_request("You do not have permission to administer this channel."));
    }
    Ok(channel)
}

/// The channel permission setting called `name`.
pub fn channel_permission(name: &str) -> Option<&'static GroupPermission> {
    catalog::CHANNEL_PERMISSION_SETTINGS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests;
