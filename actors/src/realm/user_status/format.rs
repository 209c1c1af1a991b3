//! Statuses as the API shows them (Zulip's `format_user_status`), and the `user_status`
//! event.

use serde_json::{json, Map, Value};

use crate::error::ApiResult;
use crate::events::Event;
use crate::ids::UserId;
use crate::realm::catalog;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::user_data::UserStatus;
use crate::realm::users::ops::{access_user, Access, UserRef};

/// Whether `user` is away: the deprecated inverse of their `presence_enabled` setting.
pub fn is_away(user: &User) -> bool {
    let enabled = catalog::user_setting("presence_enabled").map(|s| catalog::user_value(user, s));
    enabled.and_then(|v| v.as_bool()) == Some(false)
}

/// A status as Zulip shows it: only what is set (`away` when away, the text when not
/// empty, the emoji's three fields when it has a name).
pub fn status_dict(user: &User, status: &UserStatus) -> Map<String, Value> {
    let mut out = Map::new();
    if is_away(user) {
        out.insert("away".into(), Value::Bool(true));
    }
    if !status.status_text.is_empty() {
        out.insert("status_text".into(), json!(status.status_text));
    }
    if !status.emoji_name.is_empty() {
        out.insert("emoji_name".into(), json!(status.emoji_name));
        out.insert("emoji_code".into(), json!(status.emoji_code));
        out.insert("reaction_type".into(), json!(status.reaction_type));
    }
    out
}

/// `GET /users/{user_id}/status`: the status of a user `viewer` may look up (Zulip's
/// `access_user_by_id` without bots or deactivated users), `{}` when they never set one.
pub fn status_of(state: &RealmState, viewer: &User, user_id: UserId) -> ApiResult<Value> {
    let access = Access { allow_deactivated: false, allow_bots: false, for_admin: false };
    let user = access_user(state, viewer, &UserRef::Id(user_id), access)?;
    let status = state.user_data().status(user.id).map(|s| status_dict(user, s)).unwrap_or_default();
    Ok(Value::Object(status))
}

/// The `user_status` data set: the status of every active user who set one that shows
/// anything (away, a text or an emoji), keyed by user id, ascending.
pub fn user_status_data(state: &RealmState) -> Value {
    let mut out = Map::new();
    for (id, status) in state.user_data().statuses() {
        let Some(user) = state.user(id).filter(|u| u.is_active) else { continue };
        if status.is_empty() && !is_away(user) {
            continue;
        }
        out.insert(id.to_string(), Value::Object(status_dict(user, status)));
    }
    Value::Object(out)
}

/// What a status change changed, as its `user_status` event tells it: the fields the
/// request set, as set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusUpdate {
    pub away: Option<bool>,
    pub status_text: Option<String>,
    /// Name, code and reaction type.
    pub emoji: Option<(String, String, String)>,
}

/// The `user_status` event of `user`'s change (Zulip's `do_update_user_status`).
pub fn status_event(user: UserId, update: &StatusUpdate) -> Event {
    let mut fields = Map::new();
    fields.insert("user_id".into(), json!(user));
    if let Some(away) = update.away {
        fields.insert("away".into(), Value::Bool(away));
    }
    if let Some(text) = &update.status_text {
        fields.insert("status_text".into(), json!(text));
    }
    if let Some((name, code, reaction_type)) = &update.emoji {
        fields.insert("emoji_name".into(), json!(name));
        fields.insert("emoji_code".into(), json!(code));
        fields.insert("reaction_type".into(), json!(reaction_type));
    }
    Event::new("user_status", Value::Object(fields))
}
