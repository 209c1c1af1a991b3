//! `POST /users/me/status` and `POST /users/{user_id}/status`, planned from the state
//! (Zulip's `update_user_status_backend`, `update_user_status_admin` and
//! `check_update_user_status`), written, applied.
//!
//! Only what the request names changes. `away` sets `presence_enabled` to its inverse, as
//! Zulip's `do_change_user_setting` would (with its `user_settings` event, sent even when
//! the value does not change); the status row is created on first use.

use rusqlite::Transaction;
use serde_json::Value;

use super::format::{status_event, StatusUpdate};
use crate::error::{ApiError, ApiResult};
use crate::ids::{RealmId, UserId};
use crate::realm::chat::changes::emoji;
use crate::realm::model::User;
use crate::realm::permissions::require_human;
use crate::realm::settings::format::setting_events;
use crate::realm::state::RealmState;
use crate::realm::user_data::{UserStatus, UNICODE_EMOJI};
use crate::realm::users::ops::{access_user, Access, UserRef};
use crate::realm::{catalog, Applied, Change};
use crate::store;
use crate::validate::python_strip;

/// Zulip's limit on `status_text`, in characters (after stripping).
pub const MAX_STATUS_TEXT_LENGTH: usize = 60;

/// `POST /users/me/status` arguments as given; `None` leaves the value alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusRequest {
    pub away: Option<bool>,
    pub status_text: Option<String>,
    pub emoji_name: Option<String>,
    pub emoji_code: Option<String>,
    pub reaction_type: Option<String>,
}

/// A planned status change.
#[derive(Debug, Clone)]
pub struct StatusChange {
    realm_id: RealmId,
    user_id: UserId,
    /// The user with their new `presence_enabled`, when `away` is given.
    presence: Option<User>,
    /// The status row as it becomes.
    status: UserStatus,
    /// What the request set, for the event.
    update: StatusUpdate,
}

/// Plans `user_id`'s status change, with Zulip's checks in its order: humans only, the
/// parameters (`status_text` at most 60 characters once stripped), then
/// `check_update_user_status`.
pub fn plan_update_status(
    state: &RealmState,
    user_id: UserId,
    request: ApiResult<StatusRequest>,
    now: i64,
) -> ApiResult<StatusChange> {
    let user = state.user_or_err(user_id)?;
    require_human(user.is_bot)?;
    let request = stripped(request?)?;
    plan_for(state, user, request, now)
}

/// Plans `POST /users/{user_id}/status`: an administrator sets (parts of) another user's
/// status (Zulip's `update_user_status_admin`). The parameters are checked first, then the
/// target (Zulip's `access_user_by_id` for administration: no bots, no deactivated users,
/// "Insufficient permission" unless `acting` administers them), then
/// `check_update_user_status`. `away` is no parameter here: the route leaves it out.
pub fn plan_update_status_for(
    state: &RealmState,
    acting: UserId,
    target: UserId,
    request: StatusRequest,
    now: i64,
) -> ApiResult<StatusChange> {
    let acting = state.user_or_err(acting)?;
    let request = stripped(StatusRequest { away: None, ..request })?;
    let access = Access { allow_deactivated: false, allow_bots: false, for_admin: true };
    let user = access_user(state, acting, &UserRef::Id(target), access)?;
    plan_for(state, user, request, now)
}

/// `status_text` stripped, and at most 60 characters (Zulip's parameter check).
fn stripped(request: StatusRequest) -> ApiResult<StatusRequest> {
    let status_text = request.status_text.as_deref().map(|t| python_strip(t).to_owned());
    if let Some(text) = &status_text {
        ApiError::check_length("status_text", text, MAX_STATUS_TEXT_LENGTH)?;
    }
    Ok(StatusRequest { status_text, ..request })
}

/// `user`'s status as `request` (checked) changes it.
fn plan_for(state: &RealmState, user: &User, request: StatusRequest, now: i64) -> ApiResult<StatusChange> {
    let StatusRequest { away, status_text, emoji_name, emoji_code, reaction_type } = request;
    let update = check_update(state, away, status_text, emoji_name, emoji_code, reaction_type)?;
    let user_id = user.id;
    let mut status = state.user_data().status(user_id).cloned().unwrap_or_else(|| UserStatus::empty(now));
    status.timestamp = now;
    if let Some(text) = &update.status_text {
        status.status_text = text.clone();
    }
    if let Some((name, code, reaction_type)) = &update.emoji {
        status.emoji_name = name.clone();
        status.emoji_code = code.clone();
        status.reaction_type = reaction_type.clone();
    }
    let presence = update.away.map(|away| {
        let mut after = user.clone();
        after.settings.insert("presence_enabled".into(), Value::Bool(!away));
        after
    });
    Ok(StatusChange { realm_id: state.realm().id, user_id, presence, status, update })
}

/// Zulip's `check_update_user_status`: something must change; an empty `emoji_name`
/// clears the emoji; a name alone takes its code and type from the emoji table; a code or
/// type needs a name; the emoji must then be one reactions may use.
fn check_update(
    state: &RealmState,
    away: Option<bool>,
    status_text: Option<String>,
    emoji_name: Option<String>,
    emoji_code: Option<String>,
    reaction_type: Option<String>,
) -> ApiResult<StatusUpdate> {
    if away.is_none() && status_text.is_none() && emoji_name.is_none() {
        return Err(ApiError::bad_request("Client did not pass any new values."));
    }
    let emoji = match emoji_name {
        Some(name) if name.is_empty() => Some((name, String::new(), UNICODE_EMOJI.to_owned())),
        Some(name) => {
            let (code, reaction_type) = match (emoji_code, reaction_type) {
                (Some(code), Some(reaction_type)) => (code, reaction_type),
                (code, reaction_type) => {
                    let (found_code, found_type) = emoji::emoji_data(state.uploads(), &name)?;
                    (code.unwrap_or(found_code), reaction_type.unwrap_or_else(|| found_type.to_owned()))
                }
            };
            emoji::check_emoji(state.uploads(), &name, &code, &reaction_type)?;
            Some((name, code, reaction_type))
        }
        None if [&emoji_code, &reaction_type].iter().any(|v| v.as_deref().is_some_and(|v| !v.is_empty())) => {
            return Err(ApiError::bad_request(
                "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
            ))
        }
        None => None,
    };
    Ok(StatusUpdate { away, status_text, emoji })
}

impl Change for StatusChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(user) = &self.presence {
            store::users::save_own_settings(tx, user)?;
        }
        store::user_data::put_status(tx, self.realm_id, self.user_id, &self.status)?;
        Ok(())
    }

    /// The `presence_enabled` setting's events (to the user) first, then `user_status` to
    /// everyone who may see the user, as Zulip sends them.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let mut events = Vec::new();
        if let Some(user) = self.presence {
            if let Some(setting) = catalog::user_setting("presence_enabled") {
                events.extend(setting_events(state, &user, setting, &catalog::user_value(&user, setting)));
            }
            state.put_user(user);
        }
        state.user_data_mut().put_status(self.user_id, self.status);
        events.push(state.to_everyone(status_event(self.user_id, &self.update)));
        Applied::events(events)
    }
}
