//! Mobile push devices: `POST /mobile_push/register` (end-to-end encrypted devices), the
//! legacy token endpoints `POST`/`DELETE /users/me/apns_device_token` and
//! `/users/me/android_gcm_reg_id`, and test notifications (`POST
//! /mobile_push/test_notification`, `POST /mobile_push/e2ee/test_notification`).

use actix_web::http::Method;
use actix_web::Scope;
use agora_actors::realm::push::{
    AddPushToken, RegisterPushDevice, RemovePushToken, TestDevices, TestNotification, TokenKind,
};

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::guard::{Guarded, Humans};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The push device endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
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

/// `POST /mobile_push/register`: every parameter required, in Zulip's order.
async fn register_push_device(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let token_kind = TokenKind::parse(&params.required_str("token_kind")?)?;
    let push_account_id = params.int("push_account_id")?;
    let push_account_id = push_account_id.ok_or_else(|| agora_actors::ApiError::missing_argument("push_account_id"))?;
    let msg = RegisterPushDevice {
        user_id: auth.user.user_id,
        token_kind,
        push_account_id,
        push_public_key: params.required_str("push_public_key")?,
        bouncer_public_key: params.required_str("bouncer_public_key")?,
        encrypted_push_registration: params.required_str("encrypted_push_registration")?,
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

/// `POST /mobile_push/e2ee/test_notification` (humans, before `push_account_id` is read):
/// to the encrypted device with `push_account_id`, or to all of them.
async fn e2ee_test_notification(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let devices = TestDevices::Encrypted(params.int("push_account_id")?);
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
