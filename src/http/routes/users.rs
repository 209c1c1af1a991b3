//! The requester's own account and single-user lookups.

use actix_web::web;
use agora_actors::ids::UserId;
use agora_actors::realm::format::UserDictOptions;
use agora_actors::realm::model::Role;
use agora_actors::realm::users::{
    CreateUserAs, DeactivateOwnUser, DeactivateUser, DeactivationActions, GetOwnProfile, GetUser, ListUsers, NewUser,
    ReactivateUser, RegenerateOwnApiKey, UpdateUser, UserRef, UserUpdate,
};
use agora_actors::secrets::{hash_password, password_is_strong};
use agora_actors::ApiError;
use serde_json::json;

use actix_web::http::Method;
use actix_web::Scope;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Guarded, UserCreators};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;
use agora_actors::json_object;

/// The user endpoints (`/users...`).
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/users").route(Method::GET, list_users).route(Method::POST, create_user).build())
        .service(
            Endpoint::new("/users/me")
                .route(Method::GET, get_own_profile)
                .route(Method::DELETE, deactivate_own_user)
                .build(),
        )
        .service(Endpoint::new("/users/me/api_key/regenerate").route(Method::POST, regenerate_api_key).build())
        .service(
            Endpoint::new("/users/{user}")
                .route(Method::GET, get_user)
                .route(Method::PATCH, update_user)
                .route(Method::DELETE, deactivate_user)
                .build(),
        )
        .service(Endpoint::new("/users/{user}/reactivate").route(Method::POST, reactivate_user).build())
}

/// `GET /users/me`.
pub async fn get_own_profile(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let profile = auth.realm.addr.send(GetOwnProfile { user_id: auth.user.user_id }).await??;
    Ok(params.success(profile))
}

/// The options of a user listing (`GET /users`, `GET /users/{user_id}`).
fn dict_options(params: &Params) -> Result<UserDictOptions, ApiError> {
    Ok(UserDictOptions {
        client_gravatar: params.bool_aliased("client_external_avatar", "client_gravatar", true)?,
        include_custom_profile_fields: params.bool_or("include_custom_profile_fields", false)?,
    })
}

/// The user a path segment names: an id, or an email address.
fn user_ref(key: String) -> UserRef {
    if !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) {
        // An id too large for any user still names no user.
        UserRef::Id(UserId(key.parse().unwrap_or(-1)))
    } else {
        UserRef::Email(key)
    }
}

/// `GET /users`.
pub async fn list_users(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let options = dict_options(&params)?;
    let user_ids = params.decode("user_ids", decode::integer_list)?;
    let members = auth.realm.addr.send(ListUsers { viewer: auth.user.user_id, options, user_ids }).await??;
    Ok(params.success_fields(&format!("\"members\":{members}")))
}

/// `GET /users/{user_id}` and `GET /users/{email}`.
pub async fn get_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let options = dict_options(&params)?;
    let target = user_ref(path.into_inner());
    let user = auth.realm.addr.send(GetUser { viewer: auth.user.user_id, target, options }).await??;
    Ok(params.success(json_object(json!({ "user": user }))))
}

/// `POST /users/me/api_key/regenerate`.
pub async fn regenerate_api_key(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let api_key = auth.realm.addr.send(RegenerateOwnApiKey { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "api_key": api_key }))))
}

/// `POST /users`: an administrator with `can_create_users` creates a member account (the
/// guard refuses others before a password hash is spent on them).
pub async fn create_user(req: Guarded<UserCreators>, state: web::Data<AppState>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let email = params.required_str("email")?;
    let password = params.required_str("password")?;
    let full_name = params.required_str("full_name")?;
    // A weak password is not worth hashing; the realm actor refuses it in Zulip's order.
    let password_too_weak = !password_is_strong(&password);
    let hash = if password_too_weak {
        None
    } else {
        let cost = state.password_cost;
        let hash = state.hashing.run(move || hash_password(&password, cost)).await?.map_err(|e| {
            tracing::error!(error = %e, "password hashing failed");
            ApiError::internal()
        })?;
        Some(hash)
    };
    let new = NewUser::human(&email, &full_name, Role::Member, hash);
    let created = auth.realm.addr.send(CreateUserAs { acting: auth.user.user_id, new, password_too_weak }).await??;
    Ok(params.success(json_object(json!({ "user_id": created.user_id }))))
}

/// `PATCH /users/{user_id}` and `PATCH /users/{email}`.
pub async fn update_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let update = UserUpdate {
        full_name: params.str("full_name"),
        role: params.int("role")?,
        profile_data: params.decode("profile_data", decode::list)?,
        new_email: params.str("new_email"),
    };
    let msg = UpdateUser { acting: auth.user.user_id, target: user_ref(path.into_inner()), update };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /users/me`.
pub async fn deactivate_own_user(auth: Authed, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(DeactivateOwnUser { user_id: auth.user.user_id }).await??;
    Ok(params.ok())
}

/// `DELETE /users/{user_id}`.
pub async fn deactivate_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let comment = params.str("deactivation_notification_comment");
    let actions = deactivation_actions(&params)?;
    let msg = DeactivateUser { acting: auth.user.user_id, target: user_ref(path.into_inner()), comment, actions };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `actions` of `DELETE /users/{user_id}` (level 459): a JSON object of booleans, each
/// `false` when absent; other keys are ignored, as Zulip's model ignores them.
fn deactivation_actions(params: &Params) -> Result<DeactivationActions, ApiError> {
    let Some(object) = params.decode("actions", decode::object)? else { return Ok(DeactivationActions::default()) };
    let flag = |key: &str| match object.get(key) {
        None => Ok(false),
        Some(value) => {
            value.as_bool().ok_or_else(|| ApiError::bad_request(format!("actions[\"{key}\"] is not a boolean")))
        }
    };
    Ok(DeactivationActions {
        delete_profile: flag("delete_profile")?,
        delete_public_channel_messages: flag("delete_public_channel_messages")?,
        delete_private_channel_messages: flag("delete_private_channel_messages")?,
        delete_direct_messages: flag("delete_direct_messages")?,
    })
}

/// `POST /users/{user_id}/reactivate`.
pub async fn reactivate_user(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = ReactivateUser { acting: auth.user.user_id, target: user_ref(path.into_inner()) };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}
