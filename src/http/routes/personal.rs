//! A user's personal data: their status (`/users/me/status`, `/users/{user_id}/status`, which
//! administrators may also set),
//! alert words (`/users/me/alert_words`) and muted users (`/users/me/muted_users/...`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::UserId;
use agora_actors::json_object;
use agora_actors::realm::alert_words::{AddAlertWords, ListAlertWords, RemoveAlertWords};
use agora_actors::realm::muted_users::{MuteUser, UnmuteUser};
use agora_actors::realm::user_status::{GetUserStatus, StatusRequest, UpdateOwnStatus, UpdateUserStatus};
use agora_actors::ApiError;
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The personal data endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/users/me/status").route(Method::POST, update_own_status).build())
        .service(
            Endpoint::new(r"/users/{user_id:\d+}/status")
                .route(Method::GET, get_user_status)
                .route(Method::POST, update_user_status)
                .build(),
        )
        .service(
            Endpoint::new("/users/me/alert_words")
                .route(Method::GET, list_alert_words)
                .route(Method::POST, add_alert_words)
                .route(Method::DELETE, remove_alert_words)
                .build(),
        )
        .service(
            Endpoint::new(r"/users/me/muted_users/{muted_user_id:\d+}")
                .route(Method::POST, mute_user)
                .route(Method::DELETE, unmute_user)
                .build(),
        )
}

/// The parameters of `POST /users/me/status` (only `away` is JSON).
fn status_request(params: &Params) -> Result<StatusRequest, ApiError> {
    Ok(StatusRequest {
        away: params.bool("away")?,
        emoji_code: params.str("emoji_code"),
        emoji_name: params.str("emoji_name"),
        reaction_type: params.str("reaction_type"),
        status_text: params.str("status_text"),
    })
}

/// `POST /users/me/status`.
async fn update_own_status(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let msg = UpdateOwnStatus { user_id: auth.user.user_id, request: status_request(&params) };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `POST /users/{user_id}/status`: an administrator sets another user's status; the same
/// parameters but `away`.
async fn update_user_status(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let request = StatusRequest {
        away: None,
        emoji_code: params.str("emoji_code"),
        emoji_name: params.str("emoji_name"),
        reaction_type: params.str("reaction_type"),
        status_text: params.str("status_text"),
    };
    let msg = UpdateUserStatus { acting: auth.user.user_id, user_id: UserId(path_id(&path)), request };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `GET /users/{user_id}/status`.
async fn get_user_status(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = GetUserStatus { viewer: auth.user.user_id, user_id: UserId(path_id(&path)) };
    let status = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "status": status }))))
}

/// The required `alert_words` list.
fn alert_words(params: &Params) -> Result<Vec<String>, ApiError> {
    params.decode("alert_words", decode::string_list)?.ok_or_else(|| ApiError::missing_argument("alert_words"))
}

/// The reply of the alert word endpoints: the user's words.
fn words_reply(params: &Params, words: Vec<String>) -> Success {
    params.success(json_object(json!({ "alert_words": words })))
}

/// `GET /users/me/alert_words`.
async fn list_alert_words(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let words = auth.realm.addr.send(ListAlertWords { user_id: auth.user.user_id }).await??;
    Ok(words_reply(&params, words))
}

/// `POST /users/me/alert_words`.
async fn add_alert_words(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let msg = AddAlertWords { user_id: auth.user.user_id, alert_words: alert_words(&params)? };
    let words = auth.realm.addr.send(msg).await??;
    Ok(words_reply(&params, words))
}

/// `DELETE /users/me/alert_words`.
async fn remove_alert_words(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let msg = RemoveAlertWords { user_id: auth.user.user_id, alert_words: alert_words(&params)? };
    let words = auth.realm.addr.send(msg).await??;
    Ok(words_reply(&params, words))
}

/// `POST /users/me/muted_users/{muted_user_id}`.
async fn mute_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(MuteUser { user_id: auth.user.user_id, muted_user_id: path_id(&path) }).await??;
    Ok(params.ok())
}

/// `DELETE /users/me/muted_users/{muted_user_id}`.
async fn unmute_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(UnmuteUser { user_id: auth.user.user_id, muted_user_id: path_id(&path) }).await??;
    Ok(params.ok())
}
