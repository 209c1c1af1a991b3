//! `PATCH /settings`: a user's own name, email address, password and preferences, planned
//! from the state and applied with Zulip's events in its order.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::format::{delivery_email_events, setting_events, visibility_events};
use super::values::{changed, check_values, SettingValue};
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::catalog::{self, Setting};
use crate::realm::events::realm_user_update;
use crate::realm::format::api_email;
use crate::realm::model::{EmailVisibility, User};
use crate::realm::permissions::require_human;
use crate::realm::state::RealmState;
use crate::realm::users::ops::checked_full_name;
use crate::realm::{Applied, Change};
use crate::secrets::{hash_password, password_is_strong, verify_password, HashCost, HashError};
use crate::store;
use crate::validate;

/// A password change, prepared off the actor thread by [`PasswordChange::prepare`]: argon2
/// is too slow for the actor, so the old password is verified (and the new one hashed)
/// before the request reaches it. The actor then only compares the hash the old password
/// was checked against with the current one, so a concurrent change cannot be overwritten
/// with a stale proof.
#[derive(Debug, Clone)]
pub struct PasswordChange {
    /// The stored hash the old password was checked against.
    pub checked_hash: Option<Arc<str>>,
    pub old_password_matches: bool,
    pub new_password_strong: bool,
    /// The new password's hash; computed only when the change can succeed.
    pub new_hash: Option<String>,
    /// Seconds until the old password may be tried again, when the per-username limit on
    /// password attempts (the one logins count against) refused this one; nothing was
    /// checked then.
    pub retry_after_secs: Option<u64>,
}

impl PasswordChange {
    /// Checks `old` against `checked_hash` and the strength of `new`, and hashes `new` when
    /// both pass. Slow (argon2): call it on a hashing thread.
    pub fn prepare(old: &str, new: &str, checked_hash: Option<Arc<str>>, cost: HashCost) -> Result<Self, HashError> {
        let old_password_matches = checked_hash.as_deref().is_some_and(|hash| verify_password(old, hash));
        let new_password_strong = password_is_strong(new);
        let new_hash = if old_password_matches && new_password_strong { Some(hash_password(new, cost)?) } else { None };
        Ok(PasswordChange { checked_hash, old_password_matches, new_password_strong, new_hash, retry_after_secs: None })
    }

    /// A change refused before any check: too many password attempts for this account,
    /// the next allowed in `retry_after`.
    pub fn too_many_attempts(checked_hash: Option<Arc<str>>, retry_after: Duration) -> Self {
        PasswordChange {
            checked_hash,
            old_password_matches: false,
            new_password_strong: false,
            new_hash: None,
            retry_after_secs: Some(retry_after.as_secs()),
        }
    }
}

/// What a user asks to change about themselves.
#[derive(Debug, Clone, Default)]
pub struct OwnSettingsChange {
    pub full_name: Option<String>,
    /// A new email address. Zulip mails a confirmation link and changes the address once it
    /// is followed; Agora sends no mail, so a valid, unused address takes effect at once,
    /// with the `realm_user` events Zulip sends on confirmation. The request is already
    /// authenticated with the account's own key, and administrators who want no such changes
    /// set `email_changes_disabled`.
    pub email: Option<String>,
    pub password: Option<PasswordChange>,
    /// Preferences, in the order of [`own_settings`](super::own_settings).
    pub settings: Vec<SettingValue>,
}

/// Zulip's password checks: the attempt must be within the limit, the old password right
/// (and still current), then the new one strong enough.
fn check_password(user: &User, change: &PasswordChange) -> ApiResult<String> {
    if let Some(seconds) = change.retry_after_secs {
        return Err(ApiError::bad_request(format!("You're making too many attempts! Try again in {seconds} seconds.")));
    }
    let current = user.password_hash.as_deref();
    if !change.old_password_matches || change.checked_hash.as_deref() != current {
        return Err(ApiError::bad_request("Wrong password!"));
    }
    if !change.new_password_strong {
        return Err(ApiError::bad_request("New password is too weak!"));
    }
    change.new_hash.clone().ok_or_else(ApiError::internal)
}

/// An organization setting's value as a boolean (its default when unset).
fn realm_flag(state: &RealmState, name: &str) -> bool {
    catalog::realm_setting(name).and_then(|s| s.value(&state.realm().settings, Some(state)).as_bool()).unwrap_or(false)
}

/// The new delivery email, if `requested` differs from the current one and may be used
/// (Zulip's `validate_email_change_request`).
fn check_email_change(state: &RealmState, user: &User, requested: &str) -> ApiResult<Option<String>> {
    let email = requested.trim();
    if email == user.delivery_email {
        return Ok(None);
    }
    if realm_flag(state, "email_changes_disabled") && !user.role.is_admin() {
        return Err(ApiError::bad_request("Email address changes are disabled in this organization."));
    }
    if !validate::is_valid_email(email) {
        return Err(ApiError::bad_request("Invalid address."));
    }
    if state.email_taken(email, Some(user.id)) {
        return Err(ApiError::bad_request("Already has an account."));
    }
    Ok(Some(email.to_owned()))
}

/// The new full name, if it differs and the user may change it. Non-administrators'
/// changes are silently ignored while `name_changes_disabled` is on, as in Zulip.
fn check_name_change(state: &RealmState, user: &User, requested: &str) -> ApiResult<Option<String>> {
    if requested == user.full_name || (realm_flag(state, "name_changes_disabled") && !user.role.is_admin()) {
        return Ok(None);
    }
    let name = checked_full_name(state, user.id, requested)?;
    Ok(Some(name).filter(|n| *n != user.full_name))
}

/// Sets one personal setting on a user record (its own column or `settings`).
pub(super) fn apply_setting(user: &mut User, setting: &Setting, value: &Value) {
    match setting.name {
        "email_address_visibility" => {
            if let Some(v) = value.as_i64().and_then(EmailVisibility::from_i64) {
                user.email_address_visibility = v;
            }
        }
        "timezone" => user.timezone = value.as_str().unwrap_or_default().to_owned(),
        name => {
            user.settings.insert(name.to_owned(), value.clone());
        }
    }
}

/// A planned `PATCH /settings`: the user before and after, and what changed, for the
/// events.
#[derive(Debug, Clone)]
pub struct OwnSettings {
    before: User,
    after: User,
    /// `before` with its new address (under its old visibility), when the address changes.
    readdressed: Option<User>,
    new_name: Option<String>,
    /// The preferences that change, in Zulip's order.
    settings: Vec<SettingValue>,
}

/// Plans `PATCH /settings` for `user_id` (humans only), checking everything first in
/// Zulip's order: the values, the password, the email address, the name; then the
/// preferences that actually change.
pub fn plan_own_settings(
    state: &RealmState,
    config: &ServerConfig,
    user_id: UserId,
    change: OwnSettingsChange,
) -> ApiResult<OwnSettings> {
    let before = state.user_or_err(user_id)?;
    require_human(before.is_bot)?;
    check_values(&change.settings)?;
    let new_hash = change.password.as_ref().map(|p| check_password(before, p)).transpose()?;
    let new_email = match &change.email {
        Some(email) => check_email_change(state, before, email)?,
        None => None,
    };
    let new_name = match &change.full_name {
        Some(name) => check_name_change(state, before, name)?,
        None => None,
    };
    let settings = changed(change.settings, |s| catalog::user_value(before, s));

    let mut after = before.clone();
    if new_hash.is_some() {
        after.password_hash = new_hash;
    }
    if let Some(email) = &new_email {
        after.delivery_email = email.clone();
    }
    if let Some(name) = &new_name {
        after.full_name = name.clone();
    }
    for (setting, value) in &settings {
        apply_setting(&mut after, setting, value);
        // Remembered for administrators' `skip_if_already_edited` (FL 444).
        after.self_edited_settings.insert(setting.name.to_owned());
    }
    after.email = api_email(config, state.realm(), &after);
    // The address changes first, under the old visibility (as if confirmed before the
    // visibility change), so that no one is told the same thing twice.
    let readdressed = new_email.map(|email| {
        let mut user = User { delivery_email: email, ..before.clone() };
        user.email = api_email(config, state.realm(), &user);
        user
    });
    Ok(OwnSettings { before: before.clone(), after, readdressed, new_name, settings })
}

impl Change for OwnSettings {
    type Output = ();

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        self.after != self.before
    }

    /// Turning `enable_drafts_synchronization` off also deletes the user's stored drafts
    /// (without `drafts` events: the clients keep theirs, as in Zulip).
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.after != self.before {
            store::users::save_own_settings(tx, &self.after)?;
        }
        let stops_drafts =
            |(s, v): &SettingValue| s.name == "enable_drafts_synchronization" && *v == Value::Bool(false);
        if self.settings.iter().any(stops_drafts) {
            store::drafts::delete_all_of(tx, self.after.id)?;
        }
        Ok(())
    }

    /// The events in Zulip's order: the address, the name, then each preference
    /// (`timezone` last), a new `email_address_visibility` followed by what it shows and
    /// hides.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let OwnSettings { before, after, readdressed, new_name, settings } = self;
        if after == before {
            return Applied::events(Vec::new()).with_auth();
        }
        state.put_user(after.clone());
        tracing::info!(realm.id = %state.realm().id, user.id = %after.id, "changed own settings");
        let mut events = Vec::new();
        if let Some(user) = &readdressed {
            events.extend(delivery_email_events(state, user));
        }
        if let Some(name) = &new_name {
            events.push(state.to_everyone(realm_user_update(json!({"user_id": after.id, "full_name": name}))));
        }
        let before = readdressed.unwrap_or(before);
        let (timezone, others): (Vec<_>, Vec<_>) = settings.iter().partition(|(s, _)| s.name == "timezone");
        for (setting, value) in others.into_iter().chain(timezone) {
            events.extend(setting_events(state, &after, setting, value));
            if setting.name == "email_address_visibility" {
                events.extend(visibility_events(state, &before, &after));
            }
        }
        Applied::events(events).with_auth()
    }
}
