//! Registering and removing push devices, planned from the state and written with the job
//! that tells the bouncer (Zulip's `add_push_device_token`, `remove_push_device_token`,
//! `register_push_device`, `validate_token`).

use base64::Engine;
use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::{AddPushToken, PushDeviceOutcome, RegisterPushDevice, RemovePushToken};
use crate::config::PushConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
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
    AddToken {
        kind: TokenKind,
        token: String,
        ios_app_id: Option<String>,
    },
    RemoveToken {
        kind: TokenKind,
        token: String,
    },
    /// An end-to-end encrypted device; `None` when it is registered already (nothing to do).
    Register(Option<(TokenKind, i64, String)>),
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

/// Whether `raw` is RFC 4648 standard base64 (with padding) of `len` bytes (any length
/// but zero when `None`).
fn is_base64(raw: &str, len: Option<usize>) -> bool {
    match base64::engine::general_purpose::STANDARD.decode(raw) {
        Ok(bytes) => len.map_or(!bytes.is_empty(), |n| bytes.len() == n),
        Err(_) => false,
    }
}

/// Plans `POST /mobile_push/register`: the service must be configured; the public key is
/// a NaCl public key (32 bytes) and the other two values base64; a registration already
/// made (and not failed) is success without anything new.
pub fn plan_register_device(
    state: &RealmState,
    push: &PushConfig,
    msg: RegisterPushDevice,
    now: i64,
) -> ApiResult<DeviceChange> {
    let realm_id = humans_only(state, msg.user_id)?;
    if !push.configured() {
        return Err(ApiError::new(
            ErrorCode::PushServiceNotConfigured,
            400,
            "Server is not configured to use push notification service.",
        ));
    }
    if !is_base64(&msg.push_public_key, Some(32)) {
        return Err(ApiError::bad_request("Invalid `push_public_key`"));
    }
    if !is_base64(&msg.bouncer_public_key, None) {
        return Err(ApiError::bad_request("Invalid `bouncer_public_key`"));
    }
    if !is_base64(&msg.encrypted_push_registration, None) {
        return Err(ApiError::bad_request("Invalid `encrypted_push_registration`"));
    }
    let data = json!({
        "push_account_id": msg.push_account_id,
        "bouncer_public_key": msg.bouncer_public_key,
        "encrypted_push_registration": msg.encrypted_push_registration,
    });
    let op = Op::Register(Some((msg.token_kind, msg.push_account_id, msg.push_public_key)));
    Ok(DeviceChange { realm_id, user_id: msg.user_id, op, job: Some(("e2ee_register", data)), now })
}

impl Change for DeviceChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let (realm, user) = (self.realm_id, self.user_id);
        match &mut self.op {
            Op::AddToken { kind, token, ios_app_id } => {
                db::add_token(tx, realm, user, kind.as_str(), token, ios_app_id.as_deref(), self.now)?;
            }
            Op::RemoveToken { kind, token } => {
                if !db::remove_token(tx, user, kind.as_str(), token)? {
                    return Err(ApiError::bad_request("Token does not exist"));
                }
            }
            Op::Register(device) => {
                let Some((kind, account, key)) = device.as_ref() else { return Ok(()) };
                if db::e2ee_device(tx, user, *account)?.is_some_and(|d| d.error_code.is_none()) {
                    // Idempotent, as Zulip: the registration is under way or done.
                    *device = None;
                    return Ok(());
                }
                db::put_e2ee_device(tx, realm, user, kind.as_str(), *account, key, self.now)?;
            }
        }
        if matches!(self.op, Op::Register(None)) {
            return Ok(());
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

/// The worker's report, written and told to the user's clients (`push_device`).
#[derive(Debug, Clone)]
pub struct DeviceOutcome(pub PushDeviceOutcome);

impl Change for DeviceOutcome {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match &self.0 {
            PushDeviceOutcome::Registered { user_id, push_account_id, bouncer_device_id } => {
                db::set_e2ee_status(tx, *user_id, *push_account_id, "active", None, Some(*bouncer_device_id))?;
            }
            PushDeviceOutcome::Failed { user_id, push_account_id, error_code } => {
                db::set_e2ee_status(tx, *user_id, *push_account_id, "failed", Some(error_code), None)?;
            }
            PushDeviceOutcome::Removed { user_id, tokens, bouncer_device_ids } => {
                for (kind, token) in tokens {
                    db::remove_token(tx, *user_id, kind.as_str(), token)?;
                }
                db::remove_bouncer_devices(tx, *user_id, bouncer_device_ids)?;
            }
        }
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        let (user, fields) = match self.0 {
            PushDeviceOutcome::Registered { user_id, push_account_id, .. } => (
                user_id,
                json!({"push_account_id": push_account_id.to_string(), "status": "active", "error_code": null}),
            ),
            PushDeviceOutcome::Failed { user_id, push_account_id, error_code } => (
                user_id,
                json!({"push_account_id": push_account_id.to_string(), "status": "failed", "error_code": error_code}),
            ),
            PushDeviceOutcome::Removed { .. } => return Applied::events(Vec::new()),
        };
        Applied::events(vec![Outgoing::to(vec![user], Event::new("push_device", fields))])
    }
}

/// The `push_devices` data set of `POST /register`: the user's end-to-end encrypted
/// devices by push account id, with their status and error code.
pub fn push_devices(conn: &rusqlite::Connection, user: UserId) -> ApiResult<Value> {
    let mut map = Map::new();
    for device in db::devices_of(conn, user)? {
        if let Some(account) = device.push_account_id {
            map.insert(account.to_string(), json!({"status": device.status, "error_code": device.error_code}));
        }
    }
    Ok(Value::Object(map))
}
