//! Personal settings (`PATCH /settings`) and the organization's defaults for new users
//! (`PATCH /realm/user_settings_defaults`): operations, messages and handlers.
//!
//! The HTTP layer decodes each setting by its wire type (booleans and integers are JSON);
//! everything else — allowed values, permissions, what changed, events — is decided here,
//! in Zulip's order: the allowed-value checks of parameter parsing, then
//! `check_settings_values`, then the password, the email address, the name and the
//! preferences (`json_change_settings`).

pub mod organization;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::{json, Map, Value};

use super::actor::RealmActor;
use super::catalog::{self, Kind, Legacy, Setting};
use super::format::{avatar_url, avatar_url_medium, can_access_delivery_email};
use super::model::{EmailVisibility, User};
use super::state::RealmState;
use super::users;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::secrets::{hash_password, password_is_strong, verify_password, HashCost, HashError};
use crate::store::{self, Store};
use crate::validate;

/// A setting with the value a request gives it, already decoded by its wire type.
pub type SettingValue = (&'static Setting, Value);

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
    /// Preferences, in the order of [`own_settings`].
    pub settings: Vec<SettingValue>,
}

/// `PATCH /settings`: `user_id` changes their own account and preferences.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOwnSettings {
    pub user_id: UserId,
    pub change: OwnSettingsChange,
}

/// `PATCH /realm/user_settings_defaults`: `user_id` changes the defaults for new users.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUserDefaults {
    pub user_id: UserId,
    /// Settings, in the order of [`default_settings`].
    pub settings: Vec<SettingValue>,
}

impl Handler<UpdateOwnSettings> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOwnSettings, _: &mut Self::Context) -> Self::Result {
        let events = update_own_settings(&mut self.state, &self.store, &self.config, msg.user_id, msg.change)?;
        self.committed_auth(events);
        Ok(())
    }
}

impl Handler<UpdateUserDefaults> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUserDefaults, _: &mut Self::Context) -> Self::Result {
        let events = update_user_defaults(&mut self.state, &self.store, msg.user_id, msg.settings)?;
        self.committed(events);
        Ok(())
    }
}

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

/// The error of a value outside a setting's allowed list, as Zulip's parameter parsing
/// words it.
fn not_in_list(name: &str) -> ApiError {
    ApiError::bad_request(format!("Invalid {name}: Value error, Not in the list of possible values"))
}

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
                return Err(not_in_list(name))
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
    let name = users::ops::checked_full_name(state, user.id, requested)?;
    Ok(Some(name).filter(|n| *n != user.full_name))
}

/// The settings whose value differs from the current one (`current`).
fn changed(settings: Vec<SettingValue>, current: impl Fn(&Setting) -> Value) -> Vec<SettingValue> {
    settings.into_iter().filter(|(setting, value)| current(setting) != *value).collect()
}

// --- Personal settings. ---

/// Sets one personal setting on a user record (its own column or `settings`).
fn apply_setting(user: &mut User, setting: &Setting, value: &Value) {
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

/// `PATCH /settings`: validates everything first, writes the changed columns in one
/// transaction, then returns Zulip's events in its order.
pub fn update_own_settings(
    state: &mut RealmState,
    store: &Store,
    config: &ServerConfig,
    user_id: UserId,
    change: OwnSettingsChange,
) -> ApiResult<Vec<Outgoing>> {
    let before = state.user_or_err(user_id)?.clone();
    crate::realm::permissions::require_human(before.is_bot)?;
    check_values(&change.settings)?;
    let new_hash = change.password.as_ref().map(|p| check_password(&before, p)).transpose()?;
    let new_email = match &change.email {
        Some(email) => check_email_change(state, &before, email)?,
        None => None,
    };
    let new_name = match &change.full_name {
        Some(name) => check_name_change(state, &before, name)?,
        None => None,
    };
    let settings = changed(change.settings, |s| catalog::user_value(&before, s));

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
    }
    after.email = crate::realm::format::api_email(config, state.realm(), &after);
    if after == before {
        return Ok(Vec::new());
    }
    store.write(|tx| store::users::save_own_settings(tx, &after))?;
    state.put_user(after.clone());
    tracing::info!(realm.id = %state.realm().id, user.id = %user_id, "changed own settings");

    // The address changes first, under the old visibility (as if confirmed before the
    // visibility change below), so that no one is told the same thing twice.
    let mut before = before;
    let mut events = Vec::new();
    if let Some(email) = &new_email {
        before.delivery_email = email.clone();
        before.email = crate::realm::format::api_email(config, state.realm(), &before);
        events.extend(delivery_email_events(state, &before));
    }
    if let Some(name) = &new_name {
        let person = json!({"user_id": user_id, "full_name": name});
        events.push(state.to_everyone(super::events::realm_user_update(person)));
    }
    // `timezone` is changed after every other preference.
    let (timezone, others): (Vec<_>, Vec<_>) = settings.iter().partition(|(s, _)| s.name == "timezone");
    for (setting, value) in others.into_iter().chain(timezone) {
        events.extend(setting_events(state, &after, setting, value));
        if setting.name == "email_address_visibility" {
            events.extend(visibility_events(state, &before, &after));
        }
    }
    Ok(events)
}

/// The events of one changed personal setting: `user_settings` and the legacy event to the
/// user (the queue layer keeps each for the clients that want it), and for `timezone` the
/// `realm_user` update everyone sees.
fn setting_events(state: &RealmState, user: &User, setting: &Setting, value: &Value) -> Vec<Outgoing> {
    let language_name =
        (setting.name == "default_language").then(|| value.as_str().and_then(catalog::language_name)).flatten();
    let mut modern = json!({"op": "update", "property": setting.name, "value": value});
    let mut legacy = match setting.legacy {
        Legacy::Display => Some(Event::new(
            "update_display_settings",
            json!({"user": user.email, "setting_name": setting.name, "setting": value}),
        )),
        Legacy::Notification => Some(Event::new(
            "update_global_notifications",
            json!({"user": user.email, "notification_name": setting.name, "setting": value}),
        )),
        Legacy::None => None,
    };
    if let Some(name) = language_name {
        modern["language_name"] = Value::from(name);
        if let Some(event) = legacy.as_mut() {
            event.body_mut().insert("language_name".into(), Value::from(name));
        }
    }
    let mut events = vec![Outgoing::to(vec![user.id], Event::new("user_settings", modern))];
    events.extend(legacy.map(|event| Outgoing::to(vec![user.id], event)));
    if setting.name == "timezone" {
        let person = json!({"email": user.email, "user_id": user.id, "timezone": user.timezone});
        events.push(state.to_everyone(super::events::realm_user_update(person)));
    }
    events
}

/// Zulip's `notify_avatar_url_change`: the avatar fields, to everyone.
fn avatar_event(state: &RealmState, user: &User) -> Outgoing {
    let person = json!({
        "avatar_source": user.avatar_source,
        "avatar_url": avatar_url(user),
        "avatar_url_medium": avatar_url_medium(user),
        "avatar_version": user.avatar_version,
        "user_id": user.id,
    });
    state.to_everyone(super::events::realm_user_update(person))
}

/// Zulip's `send_user_email_update_event`: the new API email, to everyone.
fn api_email_event(state: &RealmState, user: &User) -> Outgoing {
    Outgoing::to(
        state.active_user_ids(),
        super::events::realm_user_update(json!({"user_id": user.id, "new_email": user.email})),
    )
}

/// The events of a new delivery email (Zulip's `do_change_user_delivery_email`): the address
/// to everyone allowed to see it, the new gravatar, and the new API email when it is the
/// real one.
pub(super) fn delivery_email_events(state: &RealmState, user: &User) -> Vec<Outgoing> {
    let viewers = state.users().filter(|v| v.is_active && can_access_delivery_email(v, user)).map(|v| v.id).collect();
    let person = json!({"user_id": user.id, "delivery_email": user.delivery_email});
    let mut events = vec![Outgoing::to(viewers, super::events::realm_user_update(person))];
    if user.avatar_source == "G" {
        events.push(avatar_event(state, user));
    }
    if user.email_address_visibility == EmailVisibility::Everyone {
        events.push(api_email_event(state, user));
    }
    events
}

/// The events of a new `email_address_visibility` (Zulip's
/// `send_delivery_email_update_events` and what follows it): the real address to each user
/// who may now see it, `null` to those who no longer may, then, when the API email changed
/// (to or from "everyone"), the new API email and the avatar.
fn visibility_events(state: &RealmState, before: &User, after: &User) -> Vec<Outgoing> {
    let (mut gaining, mut losing) = (Vec::new(), Vec::new());
    for viewer in state.users().filter(|u| u.is_active) {
        match (can_access_delivery_email(viewer, before), can_access_delivery_email(viewer, after)) {
            (false, true) => gaining.push(viewer.id),
            (true, false) => losing.push(viewer.id),
            _ => {}
        }
    }
    let mut events = Vec::new();
    if !gaining.is_empty() {
        let person = json!({"user_id": after.id, "delivery_email": after.delivery_email});
        events.push(Outgoing::to(gaining, super::events::realm_user_update(person)));
    }
    if !losing.is_empty() {
        events.push(Outgoing::to(
            losing,
            super::events::realm_user_update(json!({"user_id": after.id, "delivery_email": null})),
        ));
    }
    if before.email != after.email {
        events.push(api_email_event(state, after));
        events.push(avatar_event(state, after));
    }
    events
}

// --- Organization defaults. ---

/// `PATCH /realm/user_settings_defaults`: administrators change the personal settings new
/// users start with; existing users keep theirs. One event per changed setting, to every
/// active user.
pub fn update_user_defaults(
    state: &mut RealmState,
    store: &Store,
    user_id: UserId,
    settings: Vec<SettingValue>,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_admin(state.user_or_err(user_id)?.role)?;
    check_values(&settings)?;
    let realm = state.realm();
    let settings = changed(settings, |s| s.value(&realm.user_defaults, None));
    if settings.is_empty() {
        return Ok(Vec::new());
    }
    let mut defaults: Map<String, Value> = realm.user_defaults.clone();
    for (setting, value) in &settings {
        defaults.insert(setting.name.to_owned(), value.clone());
    }
    let realm_id = realm.id;
    store.write(|tx| store::realms::set_user_defaults(tx, realm_id, &defaults))?;
    state.set_user_defaults(defaults);
    tracing::info!(realm.id = %realm_id, user.id = %user_id, "changed defaults for new users");
    let users = state.active_user_ids();
    Ok(settings
        .into_iter()
        .map(|(setting, value)| {
            let body = json!({"op": "update", "property": setting.name, "value": value});
            Outgoing::to(users.clone(), Event::new("realm_user_settings_defaults", body))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str) -> &'static Setting {
        catalog::user_setting(name).unwrap()
    }

    fn error(settings: &[(&str, Value)]) -> String {
        let values: Vec<SettingValue> = settings.iter().map(|(n, v)| (setting(n), v.clone())).collect();
        check_values(&values).unwrap_err().msg
    }

    #[test]
    fn values_are_checked_with_zulips_messages() {
        assert_eq!(
            error(&[("emojiset", json!("apple"))]),
            "Invalid emojiset: Value error, Not in the list of possible values"
        );
        assert_eq!(
            error(&[("color_scheme", json!(7))]),
            "Invalid color_scheme: Value error, Not in the list of possible values"
        );
        assert_eq!(error(&[("default_language", json!("xx"))]), "Invalid default_language");
        assert_eq!(error(&[("notification_sound", json!("boing"))]), "Invalid notification sound 'boing'");
        assert_eq!(
            error(&[("email_notifications_batching_period_seconds", json!(604_810))]),
            "Invalid email batching period: 604810 seconds"
        );
        assert_eq!(
            error(&[("timezone", json!("Mars/Olympus"))]),
            "Invalid timezone: Value error, Not a recognized time zone"
        );
        assert_eq!(error(&[("timezone", json!(""))]), "Invalid timezone: Value error, Not a recognized time zone");
        let fine: Vec<SettingValue> = vec![
            (setting("timezone"), json!("Europe/Paris")),
            (setting("default_language"), json!("de")),
            (setting("notification_sound"), json!("none")),
            (setting("email_notifications_batching_period_seconds"), json!(1)),
        ];
        assert!(check_values(&fine).is_ok());
    }

    #[test]
    fn parse_time_checks_come_before_check_settings_values() {
        let msg = error(&[("default_language", json!("xx")), ("web_home_view", json!("nowhere"))]);
        assert_eq!(msg, "Invalid web_home_view: Value error, Not in the list of possible values");
    }

    /// Memory and database agree after every kind of change, and after a refused one.
    #[test]
    fn memory_and_database_agree() {
        use crate::realm::model::Role;
        use crate::realm::tests::{add, setup};

        let (_dir, store, config, mut state) = setup();
        let owner = state.users().next().unwrap().id;
        let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
        let change = OwnSettingsChange {
            full_name: Some("Robert".into()),
            email: Some("robert@acme.test".into()),
            password: None,
            settings: vec![
                (setting("email_address_visibility"), json!(4)),
                (setting("emojiset"), json!("text")),
                (setting("timezone"), json!("Europe/Berlin")),
            ],
        };
        let events = update_own_settings(&mut state, &store, &config, bob, change).unwrap();
        assert!(!events.is_empty());
        let refused = OwnSettingsChange { settings: vec![(setting("emojiset"), json!("apple"))], ..Default::default() };
        assert!(update_own_settings(&mut state, &store, &config, bob, refused).is_err());
        let defaults = vec![(setting("enter_sends"), json!(true))];
        update_user_defaults(&mut state, &store, owner, defaults).unwrap();
        let flag = catalog::realm_setting("name_changes_disabled").unwrap();
        organization::update_realm_settings(&mut state, &store, owner, vec![(flag, json!(true))], Vec::new(), 0)
            .unwrap();
        let carol = add(&mut state, &store, &config, "carol@acme.test", Role::Member);

        let conn = store.conn().unwrap();
        let loaded = RealmState::load(&conn, state.realm().id).unwrap().unwrap();
        assert_eq!(loaded.realm(), state.realm());
        for id in [owner, bob, carol] {
            assert_eq!(loaded.user(id), state.user(id));
        }
        let bob = loaded.user(bob).unwrap();
        assert_eq!((bob.email.as_str(), bob.delivery_email.as_str()), ("user2@acme.localhost", "robert@acme.test"));
        assert_eq!(loaded.user(carol).unwrap().settings.get("enter_sends"), Some(&json!(true)));
    }

    #[test]
    fn settings_follow_zulips_parameter_order() {
        let names: Vec<&str> = own_settings().iter().map(|s| s.name).collect();
        assert_eq!(names.len(), catalog::USER_SETTINGS.len());
        assert_eq!(
            &names[..3],
            ["twenty_four_hour_time", "web_mark_read_on_scroll_policy", "web_channel_default_view"]
        );
        // Settings newer than Zulip 10.2 come last.
        assert!(names.ends_with(&["web_left_sidebar_unreads_count_summary", "web_left_sidebar_show_channel_folders"]));
        let defaults: Vec<&str> = default_settings().iter().map(|s| s.name).collect();
        assert_eq!(defaults[0], "starred_message_counts");
        for absent in [
            "default_language",
            "enable_login_emails",
            "enable_marketing_emails",
            "allow_private_data_export",
            "timezone",
        ] {
            assert!(!defaults.contains(&absent), "{absent}");
        }
    }

    #[test]
    fn language_names() {
        assert_eq!(catalog::language_name("de"), Some("Deutsch"));
        assert_eq!(catalog::language_name("en"), Some("English"));
        assert_eq!(catalog::language_name("klingon"), None);
    }
}
