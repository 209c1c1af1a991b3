//! Personal settings (`PATCH /settings`), the organization's defaults for new users
//! (`PATCH /realm/user_settings_defaults`) and the organization's settings
//! (`PATCH /realm`): the messages and the realm actor's handlers. The changes are planned in
//! `personal` and `organization`, the settings' order and value checks are in `values`,
//! the events of personal changes in `format`.
//!
//! The HTTP layer decodes each setting by its wire type (booleans and integers are JSON);
//! everything else — allowed values, permissions, what changed, events — is decided here,
//! in Zulip's order: the allowed-value checks of parameter parsing, then
//! `check_settings_values`, then the password, the email address, the name and the
//! preferences (`json_change_settings`).

pub mod format;
pub mod organization;
pub mod others;
pub mod personal;
pub mod values;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use others::{AccountFields, TargetUsers};
pub use personal::{OwnSettingsChange, PasswordChange};
pub use values::{check_values, default_settings, own_settings, SettingValue};

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::UserId;
use crate::presence::audience::presence_enabled;

/// `PATCH /settings`: `user_id` changes their own account and preferences.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOwnSettings {
    pub user_id: UserId,
    pub change: OwnSettingsChange,
}

/// `PATCH /settings` with `target_users` (FL 444): an administrator changes other users'
/// preferences.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOthersSettings {
    pub user_id: UserId,
    pub target: TargetUsers,
    pub fields: AccountFields,
    /// Settings, in the order of [`own_settings`].
    pub settings: Vec<SettingValue>,
}

impl Handler<UpdateOthersSettings> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOthersSettings, _: &mut Self::Context) -> Self::Result {
        let change = others::plan_others_settings(&self.state, msg.user_id, &msg.target, msg.fields, msg.settings)?;
        self.commit(change)
    }
}

/// `PATCH /realm/user_settings_defaults`: `user_id` changes the defaults for new users.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUserDefaults {
    pub user_id: UserId,
    /// Settings, in the order of [`default_settings`].
    pub settings: Vec<SettingValue>,
}

/// `PATCH /realm`: replies with the changed settings (strings as `"updated"`), as Zulip does.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct UpdateRealmSettings {
    pub user_id: UserId,
    /// Settings of [`organization::realm_settings`], decoded by [`organization::wire`].
    pub settings: Vec<SettingValue>,
    /// Group-valued settings of [`organization::realm_group_settings`], as their
    /// `{"new", "old"}` JSON.
    pub group_settings: Vec<SettingValue>,
}

impl Handler<UpdateOwnSettings> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOwnSettings, _: &mut Self::Context) -> Self::Result {
        let presence_before = self.state.user(msg.user_id).is_some_and(presence_enabled);
        let change = personal::plan_own_settings(&self.state, &self.config, msg.user_id, msg.change)?;
        self.commit(change)?;
        self.presence_setting_changed(msg.user_id, presence_before);
        Ok(())
    }
}

impl Handler<UpdateUserDefaults> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUserDefaults, _: &mut Self::Context) -> Self::Result {
        let change = organization::plan_user_defaults(&self.state, msg.user_id, msg.settings)?;
        self.commit(change)
    }
}

impl Handler<UpdateRealmSettings> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: UpdateRealmSettings, _: &mut Self::Context) -> Self::Result {
        let (settings, groups) = (msg.settings, msg.group_settings);
        let change = organization::plan_realm_settings(&self.state, msg.user_id, settings, groups, clock::now())?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
