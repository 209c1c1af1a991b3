//! Personal settings (`/settings`) and the organization's defaults for them (`/realm/user_settings_defaults`);
//! the organization's settings (`/realm`) and a test of Welcome Bot's custom message.

use std::time::Instant;

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::realm::catalog::{Kind, Setting};
use agora_actors::realm::notices::welcome_test::TestWelcomeBotCustomMessage;
use agora_actors::realm::settings::organization::{realm_group_settings, realm_settings, wire, Wire};
use agora_actors::realm::settings::{
    default_settings, own_settings, AccountFields, OwnSettingsChange, PasswordChange, SettingValue, TargetUsers,
    UpdateOthersSettings, UpdateOwnSettings, UpdateRealmSettings, UpdateUserDefaults,
};
use agora_actors::ApiError;
use serde_json::Value;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Admins, Guarded, Humans};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// The settings endpoints. Zulip 10.2 still routes the legacy `/settings/display` and
/// `/settings/notifications` to the same view as `/settings`.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/settings").route(Method::PATCH, update_settings).build())
        .service(Endpoint::new("/settings/display").route(Method::PATCH, update_settings).build())
        .service(Endpoint::new("/settings/notifications").route(Method::PATCH, update_settings).build())
        .service(Endpoint::new("/realm/user_settings_defaults").route(Method::PATCH, update_user_defaults).build())
        .service(Endpoint::new("/realm").route(Method::PATCH, update_realm).build())
        .service(
            Endpoint::new("/realm/test_welcome_bot_custom_message")
                .route(Method::POST, test_welcome_bot_custom_message)
                .build(),
        )
}

/// `POST /realm/test_welcome_bot_custom_message` (administrators, before the parameter):
/// Welcome Bot sends the caller `welcome_message_custom_text` as a new member would get it;
/// replies with the message's id.
async fn test_welcome_bot_custom_message(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let text = params.required_str("welcome_message_custom_text")?;
    let id = auth.realm.addr.send(TestWelcomeBotCustomMessage { acting: auth.user.user_id, text }).await??;
    Ok(params.success(agora_actors::json_object(serde_json::json!({ "message_id": id }))))
}

/// The given settings among `settings`, each decoded by its wire type (booleans and
/// integers are JSON, strings raw), in the given order.
fn setting_values(params: &Params, settings: Vec<&'static Setting>) -> Result<Vec<SettingValue>, ApiError> {
    let mut values = Vec::new();
    for setting in settings {
        let name = setting.name;
        let value = match setting.kind {
            Kind::Bool => params.bool(name)?.map(Value::from),
            Kind::Int | Kind::IntRange(..) | Kind::IntChoice(_) | Kind::OptionalInt | Kind::ChannelId => {
                params.int(name)?.map(Value::from)
            }
            Kind::Str | Kind::OptionalStr | Kind::StrChoice(_) => params.str(name).map(Value::from),
            Kind::Group(_) => None,
        };
        if let Some(value) = value {
            values.push((setting, value));
        }
    }
    Ok(values)
}

/// `PATCH /settings`: the requester's name, email address, password and preferences
/// (humans only, refused before any parameter is read, as Zulip's `human_users_only`).
pub async fn update_settings(
    req: Guarded<Humans>,
    http: actix_web::HttpRequest,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let full_name = params.str("full_name");
    let email = params.str("email");
    let old_password = params.str("old_password");
    let new_password = params.str("new_password");
    let settings = setting_values(&params, own_settings())?;
    if let Some(target) = params.decode("target_users", target_users)? {
        // FL 444: an administrator changes other users' preferences; the name and the old
        // password are ignored, as in Zulip.
        let fields = AccountFields { email: email.is_some(), new_password: new_password.is_some() };
        let msg = UpdateOthersSettings { user_id: auth.user.user_id, target, fields, settings };
        auth.realm.addr.send(msg).await??;
        return Ok(params.ok());
    }
    let password = match new_password {
        None => None,
        Some(new) => Some(prepare_password_change(&auth, &state, old_password.unwrap_or_default(), new).await?),
    };
    let changes_password = password.is_some();
    let change = OwnSettingsChange { full_name, email, password, settings };
    auth.realm.addr.send(UpdateOwnSettings { user_id: auth.user.user_id, change }).await??;
    if changes_password {
        keep_session(&http, &state, &auth).await?;
    }
    Ok(params.ok())
}

/// `target_users` of `PATCH /settings` (FL 444, Zulip's `TargetUsersData`): `user_ids` and
/// `group_ids` (lists of integers, empty when absent, not both empty) and the required
/// `skip_if_already_edited`.
fn target_users(name: &str, raw: &str) -> Result<TargetUsers, ApiError> {
    let object = decode::object(name, raw)?;
    let ids = |key: &str| -> Result<Vec<i64>, ApiError> {
        match object.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| decode::as_integer(&format!("{name}[\"{key}\"][{i}]"), v))
                .collect(),
            Some(_) => Err(ApiError::bad_request(format!("{name}[\"{key}\"] is not a list"))),
        }
    };
    let (user_ids, group_ids) = (ids("user_ids")?, ids("group_ids")?);
    let skip_if_already_edited = match object.get("skip_if_already_edited") {
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(ApiError::bad_request(format!("{name}[\"skip_if_already_edited\"] is not a boolean"))),
        None => return Err(ApiError::bad_request(format!("{name}[\"skip_if_already_edited\"] field is missing"))),
    };
    if user_ids.is_empty() && group_ids.is_empty() {
        return Err(ApiError::bad_request("Either user_ids or group_ids must be provided."));
    }
    Ok(TargetUsers { user_ids, group_ids, skip_if_already_edited })
}

/// A browser that changed its user's password stays signed in (as Django's
/// `update_session_auth_hash` keeps it); the user's other sessions end.
async fn keep_session(http: &actix_web::HttpRequest, state: &AppState, auth: &Authed) -> Result<(), HttpError> {
    let Some(token) = crate::http::session::is_json(http).then(|| crate::http::session::session_token(http)).flatten()
    else {
        return Ok(());
    };
    let hash = auth.realm.auth().by_id(auth.user.user_id).and_then(|e| e.password_hash.clone());
    let sessions = std::sync::Arc::clone(&state.sessions);
    web::block(move || sessions.adopt_password(&token, hash.as_deref())).await?.map_err(ApiError::from)?;
    Ok(())
}

/// Checks the old password (an attempt counted against the account as a login's is, as
/// Zulip's `authenticate` counts it) and hashes the new one, on the hashing pool. The realm
/// actor only compares hashes, and refuses in Zulip's order.
async fn prepare_password_change(
    auth: &Authed,
    state: &AppState,
    old: String,
    new: String,
) -> Result<PasswordChange, HttpError> {
    let (username, checked, cost) = (&auth.user.delivery_email, auth.user.password_hash.clone(), state.password_cost);
    if let Err(wait) = state.logins.attempt(username, Instant::now()) {
        return Ok(PasswordChange::too_many_attempts(checked, wait));
    }
    let prepared =
        state.hashing.run(move || PasswordChange::prepare(&old, &new, checked, cost)).await?.map_err(|e| {
            tracing::error!(error = %e, "password hashing failed");
            ApiError::internal()
        })?;
    if prepared.old_password_matches {
        state.logins.forget(username);
    }
    Ok(prepared)
}

/// `PATCH /realm/user_settings_defaults`: administrators set new users' preferences
/// (refused before any parameter is read, as Zulip's `require_realm_admin`).
pub async fn update_user_defaults(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let settings = setting_values(&params, default_settings())?;
    auth.realm.addr.send(UpdateUserDefaults { user_id: auth.user.user_id, settings }).await??;
    Ok(params.ok())
}

/// `PATCH /realm`: administrators change the organization's settings (refused before any
/// parameter is read, as Zulip's `require_realm_admin`); the reply lists what changed.
pub async fn update_realm(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let mut settings = Vec::new();
    for setting in realm_settings() {
        let name = setting.name;
        let value = match wire(setting) {
            Wire::Bool => params.bool(name)?.map(Value::from),
            Wire::Int => params.int(name)?.map(Value::from),
            Wire::Str => params.str(name).map(Value::from),
            Wire::Json => params.decode(name, decode::json)?,
        };
        if let Some(value) = value {
            settings.push((setting, value));
        }
    }
    let mut group_settings = Vec::new();
    for setting in realm_group_settings() {
        if let Some(value) = params.decode(setting.name, decode::json)? {
            group_settings.push((setting, value));
        }
    }
    let msg = UpdateRealmSettings { user_id: auth.user.user_id, settings, group_settings };
    let data = auth.realm.addr.send(msg).await??;
    Ok(params.success(data))
}
