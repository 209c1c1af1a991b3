//! Registering and removing legacy push devices (their FCM/APNs tokens), planned from the
//! state and written with the job that tells the bouncer (Zulip's `add_push_device_token`,
//! `remove_push_device_token`, `validate_token`).

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::{AddPushToken, RemovePushToken};
use crate::config::PushConfig;
use crate::error::{ApiError, ApiResult};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::push as db;

/// Zulip's longest device token.
pub const MAX_TOKEN_LENGTH: usize = 4096;

/// Which push service a device's token belongs to (Zulip's `PushDeviceToken.kind`: APNs 1,
/// FCM 2; `token_kind` `apns`/`fcm` for end-to-end encrypted devices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Apns,
    Fcm,
}

impl TokenKind {
    /// `apns` or `fcm`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Apns => "apns",
            TokenKind::Fcm => "fcm",
        }
    }

    /// Zulip's number of the kind, as the bouncer takes it.
    pub fn number(self) -> i64 {
        match self {
            TokenKind::Apns => 1,
            TokenKind::Fcm => 2,
        }
    }

    /// `apns` or `fcm`; anything else is Zulip's validation error of `token_kind`.
    pub fn parse(raw: &str) -> ApiResult<TokenKind> {
        match raw {
            "apns" => Ok(TokenKind::Apns),
            "fcm" => Ok(TokenKind::Fcm),
            _ => Err(ApiError::not_in_list("token_kind")),
        }
    }
}

/// Zulip's `validate_token`: not empty, at most 4096 characters, and hexadecimal for APNs.
pub fn validate_token(token: &str, kind: TokenKind) -> ApiResult<()> {
    if token.is_empty() || token.len() > MAX_TOKEN_LENGTH {
        return Err(ApiError::bad_request("Empty or invalid length token"));
    }
    if kind == TokenKind::Apns && (!token.len().is_multiple_of(2) || !token.bytes().all(|b| b.is_ascii_hexdigit())) {
        return Err(ApiError::bad_request("Invalid APNS token"));
    }
    Ok(())
}

/// Zulip's `ApnsAppId`: a bundle id (letters, digits, `.` and `-`).
fn validate_app_id(app_id: &str) -> ApiResult<()> {
    if app_id.is_empty() || !app_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-') {
        return Err(ApiError::bad_request("Invalid app ID"));
    }
    Ok(())
}

/// The realm of `user`, a human (Zulip's `human_users_only`).
pub(super) fn humans_only(state: &RealmState, user: UserId) -> ApiResult<RealmId> {
    let user = state.user_or_err(user)?;
    if user.is_bot {
        return Err(ApiError::humans_only());
    }
    Ok(user.realm_id)
}

/// A device change and the bouncer job it needs, if any.
#[derive(Debug, Clone)]
pub struct DeviceChange {
    realm_id: RealmId,
    user_id: UserId,
    op: Op,
    /// The job for the bouncer (when the server uses one): its kind and data.
    job: Option<(&'static str, Value)>,
    now: i64,
}

#[derive(Debug, Clone)]
enum Op {
    AddToken { kind: TokenKind, token: String, ios_app_id: Option<String> },
    RemoveToken { kind: TokenKind, token: String },
}

/// Plans `POST /users/me/apns_device_token` or `/users/me/android_gcm_reg_id`.
pub fn plan_add_token(state: &RealmState, push: &PushConfig, msg: AddPushToken, now: i64) -> ApiResult<DeviceChange> {
    let realm_id = humans_only(state, msg.user_id)?;
    validate_token(&msg.token, msg.kind)?;
    if let Some(app_id) = &msg.ios_app_id {
        validate_app_id(app_id)?;
    }
    let mut data = json!({"token": msg.token, "token_kind": msg.kind.number()});
    if msg.kind == TokenKind::Apns {
        data["ios_app_id"] = json!(msg.ios_app_id);
    }
    let job = push.configured().then_some(("register", data));
    let op = Op::AddToken { kind: msg.kind, token: msg.token, ios_app_id: msg.ios_app_id };
    Ok(DeviceChange { realm_id, user_id: msg.user_id, op, job, now })
}

/// Plans the `DELETE` of a token.
pub fn plan_remove_token(state: &RealmState, push: &PushConfig, msg: RemovePushToken) -> ApiResult<DeviceChange> {
    let realm_id = humans_only(state, msg.user_id)?;
    validate_token(&msg.token, msg.kind)?;
    let data = json!({"token": msg.token, "token_kind": msg.kind.number()});
    let job = push.configured().then_some(("unregister", data));
    let op = Op::RemoveToken { kind: msg.kind, token: msg.token };
    Ok(DeviceChange { realm_id, user_id: msg.user_id, op, job, now: 0 })
}

impl Change for DeviceChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let (realm, user) = (self.realm_id, self.user_id);
        match &self.op {
            Op::AddToken { kind, token, ios_app_id } => {
                db::add_token(tx, realm, user, kind.as_str(), token, ios_app_id.as_deref(), self.now)?;
            }
            Op::RemoveToken { kind, token } => {
                if !db::remove_token(tx, user, kind.as_str(), token)? {
                    return Err(ApiError::bad_request("Token does not exist"));
                }
            }
        }
        if let Some((kind, data)) = &self.job {
            let now_ms = crate::clock::now_micros() / 1000;
            db::enqueue(tx, realm, user, kind, data, now_ms, now_ms)?;
        }
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}
