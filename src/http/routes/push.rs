//! Mobile push devices: Zulip 12's logged-in devices (`POST /register_client_device`, `POST
//! /remove_client_device`) and their end-to-end encrypted registration (`POST
//! /mobile_push/register`), the legacy token endpoints `POST`/`DELETE
//! /users/me/apns_device_token` and `/users/me/android_gcm_reg_id`, and test notifications
//! (`POST /mobile_push/test_notification`, `POST /mobile_push/e2ee/test_notification`).

use actix_web::http::Method;
use actix_web::Scope;
use agora_actors::realm::push::{
    AddPushToken, RegisterClientDevice, RegisterPushDevice, RemoveClientDevice, RemovePushToken, TestDevices,
    TestNotification, TokenKind,
};
use agora_actors::ApiError;
use serde_json::json;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::guard::{Guarded, Humans};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The push device endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/register_client_device").route(Method::POST, register_client_device).build())
        .service(Endpoint::new("/remove_client_device").route(Method::POST, remove_client_device).build())
        .service(Endpoint::new("/mobile_push/register").route(Method::POST, register_push_device).build())
        .service(Endpoint::new("/mobile_push/test_notification").route(Method::POST, test_notification).build())
        .service(
            Endpoint::new("/mobile_push/e2ee/test_notification").route(Method::POST, e2ee_test_notification).build(),
        )
        .service(
            Endpoint::new("/users/me/apns_device_token")
                .route(Method::POST, add_apns_token)
                .route(Method::DELETE, remove_apns_token)
                .build(),
        )
        .service(
            Endpoint::new("/users/me/android_gcm_reg_id")
                .route(Method::POST, add_fcm_token)
                .route(Method::DELETE, remove_fcm_token)
                .build(),
        )
}

/// `POST /register_client_device`: a device record for the user; its id.
async fn register_client_device(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let device_id = auth.realm.addr.send(RegisterClientDevice { user_id: auth.user.user_id }).await??;
    Ok(params.success(agora_actors::json_object(json!({ "device_id": device_id }))))
}

/// `POST /remove_client_device` (`device_id`).
async fn remove_client_device(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let device_id = params.int("device_id")?.ok_or_else(|| ApiError::missing_argument("device_id"))?;
    auth.realm.addr.send(RemoveClientDevice { user_id: auth.user.user_id, device_id }).await??;
    Ok(params.ok())
}

/// Zulip's `uint32_validator`.
fn uint32(params: &Params, name: &str) -> Result<Option<i64>, ApiError> {
    let value = params.int(name)?;
    if value.is_some_and(|v| !(0..=i64::from(u32::MAX)).contains(&v)) {
        return Err(ApiError::bad_request(format!("Invalid {name}: Value error, Not a valid unsigned 32-bit integer")));
    }
    Ok(value)
}

/// `POST /mobile_push/register` (Zulip 12): humans only, then the parameters in Zulip's
/// order; which of them are present, and their values, are checked by the realm actor.
async fn register_push_device(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let device_id = params.int("device_id")?.ok_or_else(|| ApiError::missing_argument("device_id"))?;
    let token_kind = params.str("token_kind").map(|k| TokenKind::parse(&k)).transpose()?;
    let push_key = params.str("push_key");
    let push_key_id = uint32(&params, "push_key_id")?;
    let msg = RegisterPushDevice {
        user_id: auth.user.user_id,
        device_id,
        push_key,
        push_key_id,
        token_kind,
        bouncer_public_key: params.str("bouncer_public_key"),
        encrypted_push_registration: params.str("encrypted_push_registration"),
        token_id: params.str("token_id"),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `POST /mobile_push/test_notification` (humans, before `token` is read): to the legacy
/// device with `token`, or to all of them.
async fn test_notification(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let devices = TestDevices::Legacy(params.str("token"));
    auth.realm.addr.send(TestNotification { user_id: auth.user.user_id, devices }).await??;
    Ok(params.ok())
}

/// `POST /mobile_push/e2ee/test_notification` (humans, before `device_id` is read): to the
/// encrypted device with `device_id` (Zulip 12, feature level 468, in place of
/// `push_account_id`), or to all of them.
async fn e2ee_test_notification(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let devices = TestDevices::Encrypted(params.int("device_id")?);
    auth.realm.addr.send(TestNotification { user_id: auth.user.user_id, devices }).await??;
    Ok(params.ok())
}

async fn add_token(auth: Authed, params: Params, kind: TokenKind) -> Result<Success, HttpError> {
    let token = params.required_str("token")?;
    let ios_app_id = match kind {
        TokenKind::Apns => Some(params.required_str("appid")?),
        TokenKind::Fcm => None,
    };
    auth.realm.addr.send(AddPushToken { user_id: auth.user.user_id, kind, token, ios_app_id }).await??;
    Ok(params.ok())
}

async fn remove_token(auth: Authed, params: Params, kind: TokenKind) -> Result<Success, HttpError> {
    let token = params.required_str("token")?;
    auth.realm.addr.send(RemovePushToken { user_id: auth.user.user_id, kind, token }).await??;
    Ok(params.ok())
}

/// `POST /users/me/apns_device_token` (`token`, `appid`).
async fn add_apns_token(auth: Authed, params: Params) -> Result<Success, HttpError> {
    add_token(auth, params, TokenKind::Apns).await
}

/// `DELETE /users/me/apns_device_token` (`token`).
async fn remove_apns_token(auth: Authed, params: Params) -> Result<Success, HttpError> {
    remove_token(auth, params, TokenKind::Apns).await
}

/// `POST /users/me/android_gcm_reg_id` (`token`).
async fn add_fcm_token(auth: Authed, params: Params) -> Result<Success, HttpError> {
    add_token(auth, params, TokenKind::Fcm).await
}

/// `DELETE /users/me/android_gcm_reg_id` (`token`).
async fn remove_fcm_token(auth: Authed, params: Params) -> Result<Success, HttpError> {
    remove_token(auth, params, TokenKind::Fcm).await
}
