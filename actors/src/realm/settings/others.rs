//! `PATCH /settings` with `target_users` (FL 444): an administrator changes other users'
//! preferences in bulk (Zulip's `json_change_settings` with `target_users`, and
//! `bulk_change_user_setting`).

use std::collections::BTreeSet;

use rusqlite::Transaction;

use super::format::setting_events;
use super::personal::apply_setting;
use super::values::{check_values, SettingValue};
use crate::error::{ApiError, ApiResult};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Settings whose security policy keeps administrators from changing them for others
/// (Zulip's `UserBaseSettings.SECURITY_SENSITIVE_USER_SETTINGS`).
pub const SECURITY_SENSITIVE_USER_SETTINGS: &[&str] = &[
    "allow_private_data_export",
    "email_address_visibility",
    "enable_digest_emails",
    "enable_login_emails",
    "enable_marketing_emails",
    "presence_enabled",
    "send_private_typing_notifications",
    "send_read_receipts",
    "send_stream_typing_notifications",
];

/// The `target_users` parameter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetUsers {
    pub user_ids: Vec<i64>,
    pub group_ids: Vec<i64>,
    /// Leave alone the users who changed a setting themselves.
    pub skip_if_already_edited: bool,
}

/// What the request asks besides preferences, refused for other users.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountFields {
    pub email: bool,
    pub new_password: bool,
}

/// Planned: the users whose preferences change, before and after, and each one's changed
/// settings in request order.
#[derive(Debug, Clone)]
pub struct OthersSettings {
    changes: Vec<(User, Vec<SettingValue>)>,
}

/// Plans `PATCH /settings` with `target_users` by `acting`, in Zulip's order: the
/// administrator role, the fields that may not be changed for others (`email`,
/// `new_password`, `timezone`, the security-sensitive settings), the targets (unknown user
/// ids refused, unknown groups ignored, bots left out, deactivated users kept), then per
/// setting the users it changes.
pub fn plan_others_settings(
    state: &RealmState,
    acting: UserId,
    target: &TargetUsers,
    fields: AccountFields,
    settings: Vec<SettingValue>,
) -> ApiResult<OthersSettings> {
    let acting = state.user_or_err(acting)?;
    if !acting.role.is_admin() {
        return Err(ApiError::must_be_admin());
    }
    let cannot = || ApiError::bad_request("Cannot change this setting for other users.");
    if fields.email || fields.new_password || settings.iter().any(|(s, _)| s.name == "timezone") {
        return Err(cannot());
    }
    if settings.iter().any(|(s, _)| SECURITY_SENSITIVE_USER_SETTINGS.contains(&s.name)) {
        return Err(cannot());
    }
    // Agora checks the values as for one's own settings (Zulip skips
    // `check_settings_values` here).
    check_values(&settings)?;
    let groups: Vec<GroupId> =
        target.group_ids.iter().map(|id| GroupId(*id)).filter(|g| state.group(*g).is_some()).collect();
    let mut ids: BTreeSet<UserId> = state.recursive_members(groups);
    for id in &target.user_ids {
        state.user(UserId(*id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID: {id}")))?;
        ids.insert(UserId(*id));
    }
    let mut changes: Vec<(User, Vec<SettingValue>)> = Vec::new();
    for user in ids.into_iter().filter_map(|id| state.user(id)).filter(|u| !u.is_bot) {
        let mut after = user.clone();
        let mut changed = Vec::new();
        for (setting, value) in &settings {
            if target.skip_if_already_edited && user.self_edited_settings.contains(setting.name) {
                continue;
            }
            if catalog::user_value(&after, setting) != *value {
                apply_setting(&mut after, setting, value);
                changed.push((*setting, value.clone()));
            }
        }
        if !changed.is_empty() {
            changes.push((after, changed));
        }
    }
    Ok(OthersSettings { changes })
}

impl Change for OthersSettings {
    type Output = ();

    fn writes(&self) -> bool {
        !self.changes.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        for (user, _) in &self.changes {
            store::users::save_own_settings(tx, user)?;
        }
        Ok(())
    }

    /// Each changed user gets the `user_settings` events of their own change (Zulip's
    /// `bulk_change_user_setting`), setting by setting.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = Vec::new();
        for (user, changed) in self.changes {
            state.put_user(user.clone());
            for (setting, value) in &changed {
                events.extend(setting_events(state, &user, setting, value));
            }
        }
        Applied::events(events)
    }
}
