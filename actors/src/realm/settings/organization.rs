//! The organization's settings: `PATCH /realm` for the settings that hold plain values
//! (`Realm.property_types` and `org_type`) and the group-valued ones (channel-valued settings
//! are changed elsewhere), and `PATCH /realm/user_settings_defaults`, the personal settings
//! new users start with.
//!
//! `PATCH /realm` checks in Zulip's order (`update_realm`): what parameter parsing refuses
//! (choices, lengths, the Jitsi URL), then the language, video chat provider and GIPHY
//! rating, the owner-only settings, and last the time limits.

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::values::{changed, check_values as check_setting_values, SettingValue};
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, RealmId, UserId};
use crate::realm::catalog::{self, Kind, Setting};
use crate::realm::group_setting::{GroupSettingChange, GroupSettingValue};
use crate::realm::model::{Realm, Role, SystemGroup};
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// How `PATCH /realm` decodes a setting's raw parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// A JSON boolean.
    Bool,
    /// A JSON integer.
    Int,
    /// A plain string.
    Str,
    /// Any JSON value (`Json[int | str]`, `Json[str]`), checked by the realm actor.
    Json,
}

/// Settings only owners may change (`OrganizationOwnerRequiredError`).
const OWNER_ONLY: &[&str] = &[
    "message_retention_days",
    "invite_required",
    "emails_restricted_to_domains",
    "disallow_disposable_email_addresses",
    "waiting_period_threshold",
];

/// Settings whose changes go out as `realm` `update_dict` (property `default`), as Zulip's
/// message-editing settings do for historical reasons.
const UPDATE_DICT_SETTINGS: &[&str] = &[
    "allow_message_editing",
    "message_content_edit_limit_seconds",
    "message_content_delete_limit_seconds",
    "move_messages_within_stream_limit_seconds",
    "move_messages_between_streams_limit_seconds",
];

/// Longest value of the length-limited text settings (`Realm.MAX_REALM_*_LENGTH`).
const MAX_LENGTHS: &[(&str, usize)] =
    &[("name", 40), ("description", 1000), ("welcome_message_custom_text", 8000), ("jitsi_server_url", 200)];

/// Server-maintained settings the API cannot change.
const NOT_SETTABLE: &[&str] = &["push_notifications_enabled"];

/// The settings `PATCH /realm` changes here, in catalog order.
pub fn realm_settings() -> impl Iterator<Item = &'static Setting> {
    catalog::REALM_SETTINGS.iter().filter(|s| !matches!(s.kind, Kind::Group(_)) && !NOT_SETTABLE.contains(&s.name))
}

/// The group-valued organization settings `PATCH /realm` takes (`{"new", "old"}` JSON).
pub fn realm_group_settings() -> impl Iterator<Item = &'static Setting> {
    catalog::REALM_SETTINGS.iter().filter(|s| matches!(s.kind, Kind::Group(_)))
}

/// How a setting's parameter is decoded.
pub fn wire(setting: &Setting) -> Wire {
    match setting.kind {
        Kind::Bool => Wire::Bool,
        _ if setting.name == "message_retention_days" => Wire::Json,
        Kind::OptionalInt | Kind::OptionalStr => Wire::Json,
        Kind::Int | Kind::IntRange(..) | Kind::IntChoice(_) | Kind::ChannelId => Wire::Int,
        Kind::Str | Kind::StrChoice(_) | Kind::Group(_) => Wire::Str,
    }
}

/// Zulip's `RequestVariableConversionError`.
fn bad_value(name: &str, value: &Value) -> ApiError {
    let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    ApiError::bad_request(format!("Bad value for '{name}': {shown}"))
        .with("var_name", name)
        .with("bad_value", value.clone())
}

/// What parameter parsing refuses: values outside a choice list, over-long text, a bad
/// Jitsi URL, a negative waiting period.
pub(super) fn check_parsed(setting: &Setting, value: &Value) -> ApiResult<()> {
    let name = setting.name;
    if let Some((_, max)) = MAX_LENGTHS.iter().find(|(n, _)| *n == name) {
        if value.as_str().is_some_and(|s| s.chars().count() > *max) {
            return Err(ApiError::bad_request(format!("{name} is too long (limit: {max} characters)")));
        }
    }
    match (name, setting.kind) {
        ("jitsi_server_url", _) => match value.as_str() {
            Some("default") => Ok(()),
            Some(url) if is_http_url(url) => Ok(()),
            Some(_) => Err(ApiError::bad_request("jitsi_server_url is not an allowed_type")),
            None => Err(ApiError::bad_request("jitsi_server_url is not a string")),
        },
        // Checked after the parsing phase, with their own messages.
        ("default_language" | "video_chat_provider" | "gif_rating_policy" | "message_retention_days", _)
        | (_, Kind::OptionalInt) => Ok(()),
        _ if setting.accepts(value) => Ok(()),
        _ => Err(ApiError::bad_request(format!("Invalid {name}"))),
    }
}

/// Whether `url` is an absolute http(s) URL with a host.
fn is_http_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.chars().any(char::is_whitespace))
}

/// The checks of `update_realm` after parsing, in its order.
fn check_values(role: Role, settings: &[SettingValue]) -> ApiResult<()> {
    let value_of = |name: &str| settings.iter().find(|(s, _)| s.name == name).map(|(_, v)| v);
    if let Some(language) = value_of("default_language") {
        if language.as_str().and_then(catalog::language_name).is_none() {
            let shown = language.as_str().unwrap_or_default();
            return Err(ApiError::bad_request(format!("Invalid language '{shown}'")));
        }
    }
    for name in ["video_chat_provider", "gif_rating_policy"] {
        let setting = catalog::realm_setting(name);
        if let Some(value) = value_of(name).filter(|v| !setting.is_some_and(|s| s.accepts(v))) {
            return Err(ApiError::bad_request(format!("Invalid {name} {value}")));
        }
    }
    if settings.iter().any(|(s, _)| OWNER_ONLY.contains(&s.name)) && role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    Ok(())
}

/// The value to store: time limits and the retention period have special values
/// (`"unlimited"`), the Jitsi URL `"default"` (the server's).
pub(super) fn normalize(setting: &Setting, value: &Value) -> ApiResult<Value> {
    let name = setting.name;
    match (name, setting.kind) {
        ("message_retention_days", _) => match value {
            Value::String(s) if s == "unlimited" => Ok(Value::from(-1)),
            v if v.as_i64().is_some_and(|days| days >= 1) => Ok(v.clone()),
            v => Err(bad_value(name, v)),
        },
        (_, Kind::OptionalInt) => match value {
            Value::String(s) if s == "unlimited" => Ok(Value::Null),
            v if v.as_i64().is_some_and(|seconds| seconds > 0) => Ok(v.clone()),
            v => Err(bad_value(name, v)),
        },
        ("jitsi_server_url", _) if value.as_str() == Some("default") => Ok(Value::Null),
        _ => Ok(value.clone()),
    }
}

/// An announcement channel setting (`new_stream_announcements_stream_id`, ...): a channel
/// the administrator may see, or a negative id for none (stored as -1), as Zulip's
/// `update_realm` takes it (`access_stream_by_id` without content access).
fn announcement_channel(state: &RealmState, user_id: UserId, value: &Value) -> ApiResult<Value> {
    let id = value.as_i64().unwrap_or(-1);
    if id < 0 {
        return Ok(Value::from(-1));
    }
    let user = state.user_or_err(user_id)?;
    match state.channel(crate::ids::ChannelId(id)) {
        Some(c) if !c.is_archived && state.has_metadata_access(user, c) => Ok(Value::from(id)),
        _ => Err(ApiError::bad_request("Invalid channel ID")),
    }
}

/// The organization's current value of a setting.
fn current(state: &RealmState, setting: &Setting) -> Value {
    let realm = state.realm();
    match setting.name {
        "name" => Value::from(realm.name.as_str()),
        "description" => Value::from(realm.description.as_str()),
        _ => setting.value(&realm.settings, Some(state)),
    }
}

/// A planned `PATCH /realm`: the organization's new row, the settings that change (the
/// value to store; group-valued ones also the value to show), and who leaves and joins
/// `role:fullmembers` under a new waiting period.
#[derive(Debug, Clone)]
pub struct RealmSettings {
    acting: UserId,
    realm: Realm,
    changed: Vec<(&'static Setting, Value)>,
    groups_changed: Vec<(&'static Setting, Value, Value)>,
    full_members: Option<(GroupId, Vec<UserId>, Vec<UserId>)>,
}

/// Plans `PATCH /realm` by `user_id`: administrators only (some settings owners only).
pub fn plan_realm_settings(
    state: &RealmState,
    user_id: UserId,
    settings: Vec<SettingValue>,
    group_settings: Vec<SettingValue>,
    now: i64,
) -> ApiResult<RealmSettings> {
    let role = state.user_or_err(user_id)?.role;
    require_admin(role)?;
    for (setting, value) in &settings {
        check_parsed(setting, value)?;
    }
    check_values(role, &settings)?;
    let mut changed = Vec::new();
    for (setting, value) in &settings {
        let value = match setting.kind {
            Kind::ChannelId => announcement_channel(state, user_id, value)?,
            _ => normalize(setting, value)?,
        };
        if current(state, setting) != value {
            changed.push((*setting, value));
        }
    }
    let groups_changed = group_setting_changes(state, &group_settings)?;
    let mut realm = state.realm().clone();
    for (setting, stored, _) in &groups_changed {
        realm.settings.insert(setting.name.to_owned(), stored.clone());
    }
    for (setting, value) in &changed {
        match setting.name {
            "name" => realm.name = value.as_str().unwrap_or_default().to_owned(),
            "description" => realm.description = value.as_str().unwrap_or_default().to_owned(),
            name => {
                realm.settings.insert(name.to_owned(), value.clone());
            }
        }
    }
    let full_members =
        if changed.is_empty() && groups_changed.is_empty() { None } else { full_member_changes(state, &realm, now) };
    Ok(RealmSettings { acting: user_id, realm, changed, groups_changed, full_members })
}

impl RealmSettings {
    fn changes_nothing(&self) -> bool {
        self.changed.is_empty() && self.groups_changed.is_empty()
    }
}

impl Change for RealmSettings {
    /// The changed settings, strings as `"updated"` (Zulip's reply).
    type Output = Map<String, Value>;

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        !self.changes_nothing()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.changes_nothing() {
            return Ok(());
        }
        store::realms::save_settings(tx, &self.realm)?;
        if let Some((group, removed, added)) = &self.full_members {
            store::groups::remove_members(tx, *group, removed)?;
            store::groups::add_members(tx, *group, added)?;
        }
        Ok(())
    }

    /// One `realm` event per changed setting, to every active user, then the moves in and
    /// out of `role:fullmembers`.
    fn apply(self, state: &mut RealmState) -> Applied<Map<String, Value>> {
        if self.changes_nothing() {
            return Applied::new(Map::new(), Vec::new());
        }
        let RealmSettings { acting, realm, changed, groups_changed, full_members } = self;
        state.set_realm(realm);
        tracing::info!(realm.id = %state.realm().id, user.id = %acting, "changed organization settings");
        let users = state.active_user_ids();
        let mut data = Map::new();
        let mut events = Vec::new();
        for (setting, value) in changed {
            // Zulip leaves `jitsi_server_url` out of the reply (it may be null).
            if setting.name != "jitsi_server_url" {
                let shown = if value.is_string() { Value::from("updated") } else { value.clone() };
                data.insert(setting.name.to_owned(), shown);
            }
            let body = if setting.name == "description" {
                // Zulip 12 (feature level 464): `update_dict`, with the description rendered.
                let rendered = crate::markdown::render(value.as_str().unwrap_or_default());
                json!({"op": "update_dict", "property": "default",
                    "data": {"description": value, "rendered_description": rendered}})
            } else if UPDATE_DICT_SETTINGS.contains(&setting.name) {
                json!({"op": "update_dict", "property": "default", "data": {setting.name: value}})
            } else {
                json!({"op": "update", "property": setting.name, "value": value})
            };
            events.push(Outgoing::to(users.clone(), Event::new("realm", body)));
        }
        // Group-valued settings go out as `update_dict` of the `default` property, as Zulip.
        for (setting, _, shown) in groups_changed {
            let body = json!({"op": "update_dict", "property": "default", "data": {setting.name: shown}});
            events.push(Outgoing::to(users.clone(), Event::new("realm", body)));
        }
        if let Some((group, removed, added)) = full_members {
            state.remove_group_members(group, &removed);
            state.add_group_members(group, &added);
            for (op, ids) in [("remove_members", removed), ("add_members", added)] {
                if !ids.is_empty() {
                    let body = json!({"op": op, "group_id": group, "user_ids": ids});
                    events.push(Outgoing::to(users.clone(), Event::new("user_group", body)));
                }
            }
        }
        Applied::new(data, events)
    }
}

/// The group-valued settings (`{"new": .., "old": ..}` each) that change, checked against
/// their rules: the setting, the value to store and the value to show.
fn group_setting_changes(
    state: &RealmState,
    given: &[SettingValue],
) -> ApiResult<Vec<(&'static Setting, Value, Value)>> {
    let mut out = Vec::new();
    for (setting, raw) in given {
        let Kind::Group(rule) = setting.kind else { continue };
        let change = GroupSettingChange::from_api(setting.name, raw)?;
        let current = GroupSettingValue::from_json(&setting.value(&state.realm().settings, Some(state)))
            .unwrap_or(GroupSettingValue::Group(state.nobody_group_id()));
        if !change.is_change_from(&current, state.nobody_group_id())? {
            continue;
        }
        let value = state.check_group_setting(setting.name, &rule, change.new)?;
        out.push((*setting, value.to_json(), state.group_setting_api_value(&value).to_json()));
    }
    Ok(out)
}

/// Who leaves and who joins `role:fullmembers` under `realm`'s waiting period (members
/// only: higher roles are in it through its subgroups), or `None` when nobody moves.
fn full_member_changes(state: &RealmState, realm: &Realm, now: i64) -> Option<(GroupId, Vec<UserId>, Vec<UserId>)> {
    let group_id = state.system_group_id(SystemGroup::FULL_MEMBERS)?;
    let group = state.group(group_id)?;
    let threshold = realm.waiting_period_threshold();
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for user in state.users().filter(|u| u.role == Role::Member) {
        let waited = (now - user.date_joined).div_euclid(86_400) >= threshold;
        match (group.members.contains(&user.id), waited) {
            (true, false) => removed.push(user.id),
            (false, true) => added.push(user.id),
            _ => {}
        }
    }
    (!removed.is_empty() || !added.is_empty()).then_some((group_id, removed, added))
}

// --- Defaults of personal settings for new users. ---

/// A planned `PATCH /realm/user_settings_defaults`: the new defaults and the settings that
/// change.
#[derive(Debug, Clone)]
pub struct UserDefaults {
    acting: UserId,
    realm_id: RealmId,
    defaults: Map<String, Value>,
    changed: Vec<SettingValue>,
}

/// Plans `PATCH /realm/user_settings_defaults` by `user_id` (administrators only): the
/// personal settings new users start with; existing users keep theirs.
pub fn plan_user_defaults(state: &RealmState, user_id: UserId, settings: Vec<SettingValue>) -> ApiResult<UserDefaults> {
    require_admin(state.user_or_err(user_id)?.role)?;
    check_setting_values(&settings)?;
    let realm = state.realm();
    let changed = changed(settings, |s| s.value(&realm.user_defaults, None));
    let mut defaults: Map<String, Value> = realm.user_defaults.clone();
    for (setting, value) in &changed {
        defaults.insert(setting.name.to_owned(), value.clone());
    }
    Ok(UserDefaults { acting: user_id, realm_id: realm.id, defaults, changed })
}

impl Change for UserDefaults {
    type Output = ();

    /// Values equal to the current ones store nothing.
    fn writes(&self) -> bool {
        !self.changed.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if !self.changed.is_empty() {
            store::realms::set_user_defaults(tx, self.realm_id, &self.defaults)?;
        }
        Ok(())
    }

    /// One `realm_user_settings_defaults` event per changed setting, to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        if self.changed.is_empty() {
            return Applied::events(Vec::new());
        }
        state.set_user_defaults(self.defaults);
        tracing::info!(realm.id = %self.realm_id, user.id = %self.acting, "changed defaults for new users");
        let users = state.active_user_ids();
        let events = self
            .changed
            .into_iter()
            .map(|(setting, value)| {
                let body = json!({"op": "update", "property": setting.name, "value": value});
                Outgoing::to(users.clone(), Event::new("realm_user_settings_defaults", body))
            })
            .collect();
        Applied::events(events)
    }
}
