//! Zulip 12's logged-in devices (feature levels 468 and 470): `POST /register_client_device`,
//! `POST /remove_client_device`, `POST /mobile_push/register` (a push key and an FCM/APNs
//! token id, each rotated on its own), the `devices` data set of `POST /register` and the
//! `device` events (Zulip's `zerver/views/devices.py`, `register_push_device` and
//! `zerver/actions/push_notifications.py`).
//!
//! Devices live in SQLite only: each change reads the device inside its transaction, writes
//! it with the bouncer job it needs, and keeps the event for `apply`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::ops::humans_only;
use super::{PushDeviceOutcome, RegisterPushDevice};
use crate::config::PushConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::client_devices::{self as db, ClientDevice};
use crate::store::push as outbox;

/// A token id as clients see it: its 8 bytes (big-endian, signed), standard base64.
pub fn token_id_base64(id: i64) -> String {
    STANDARD.encode(id.to_be_bytes())
}

/// Zulip's `b64decode_token_id_base64`: standard base64, read as a big-endian signed
/// integer. Zulip takes any length; more than 8 bytes does not fit its column, so it is
/// refused here with the same error.
pub fn parse_token_id(raw: &str) -> ApiResult<i64> {
    let invalid = || ApiError::bad_request("`token_id` is not Base64 encoded");
    let bytes = STANDARD.decode(raw).map_err(|_| invalid())?;
    if bytes.len() > 8 {
        return Err(invalid());
    }
    // Sign-extended from the first byte, as Python's `int.from_bytes(..., signed=True)`.
    let fill = if bytes.first().is_some_and(|b| b & 0x80 != 0) { 0xff } else { 0 };
    let mut full = [fill; 8];
    full[8 - bytes.len()..].copy_from_slice(&bytes);
    Ok(i64::from_be_bytes(full))
}

/// One device in the `devices` data set.
fn device_json(d: &ClientDevice) -> Value {
    json!({
        "push_key_id": d.push_key_id,
        "push_token_id": d.push_token_id.map(token_id_base64),
        "pending_push_token_id": d.pending_push_token_id.map(token_id_base64),
        "push_token_last_updated_timestamp": d.push_token_last_updated_timestamp,
        "push_registration_error_code": d.push_registration_error_code,
    })
}

/// The `devices` data set of `POST /register`: the user's devices by id (Zulip's
/// `get_devices`).
pub fn devices(conn: &rusqlite::Connection, user: UserId) -> ApiResult<Value> {
    let mut map = Map::new();
    for d in db::of_user(conn, user)? {
        map.insert(d.id.to_string(), device_json(&d));
    }
    Ok(Value::Object(map))
}

/// A `device` event for `user` (`op` and its fields, after `device_id`).
fn device_event(user: UserId, op: &str, device_id: i64, fields: Value) -> Outgoing {
    let mut body = crate::json_object(json!({"op": op, "device_id": device_id}));
    if let Value::Object(map) = fields {
        body.extend(map);
    }
    Outgoing::to(vec![user], Event::new("device", Value::Object(body)))
}

/// Removes every client device of `user` (their E2EE push registrations with them), as a new
/// API key does since feature level 492; the `device` remove events for them.
pub fn remove_all(tx: &Transaction<'_>, user: UserId) -> ApiResult<Vec<Outgoing>> {
    let ids: Vec<i64> = db::of_user(tx, user)?.into_iter().map(|d| d.id).collect();
    db::delete_all(tx, user)?;
    Ok(ids.into_iter().map(|id| device_event(user, "remove", id, json!({}))).collect())
}

/// Zulip's "Invalid `device_id`".
fn invalid_device() -> ApiError {
    ApiError::bad_request("Invalid `device_id`")
}

/// A change of one user's devices; what it told the user, kept for `apply`.
#[derive(Debug, Clone)]
pub struct DeviceChange {
    realm_id: RealmId,
    user_id: UserId,
    op: Op,
    now: i64,
    events: Vec<Outgoing>,
    /// The new device's id (`POST /register_client_device`).
    created: i64,
}

#[derive(Debug, Clone)]
enum Op {
    Create,
    Remove(i64),
    Register(Box<RegisterPushDevice>),
    Outcome(PushDeviceOutcome),
}

impl DeviceChange {
    fn new(realm_id: RealmId, user_id: UserId, op: Op, now: i64) -> Self {
        DeviceChange { realm_id, user_id, op, now, events: Vec::new(), created: 0 }
    }
}

/// Plans `POST /register_client_device`.
pub fn plan_create(state: &RealmState, user: UserId, now: i64) -> ApiResult<DeviceChange> {
    let realm = state.user_or_err(user)?.realm_id;
    Ok(DeviceChange::new(realm, user, Op::Create, now))
}

/// Plans `POST /remove_client_device` (the device is checked when written).
pub fn plan_remove(state: &RealmState, user: UserId, device_id: i64) -> ApiResult<DeviceChange> {
    let realm = state.user_or_err(user)?.realm_id;
    Ok(DeviceChange::new(realm, user, Op::Remove(device_id), 0))
}

/// Plans `POST /mobile_push/register`: humans only, the push notification service
/// configured, then the push key's form (the device and the rest are checked when written,
/// in Zulip's order).
pub fn plan_register(
    state: &RealmState,
    push: &PushConfig,
    msg: RegisterPushDevice,
    now: i64,
) -> ApiResult<DeviceChange> {
    let realm = humans_only(state, msg.user_id)?;
    if !push.configured() {
        return Err(ApiError::new(
            ErrorCode::PushServiceNotConfigured,
            400,
            "Server is not configured to use push notification service.",
        ));
    }
    let user = msg.user_id;
    Ok(DeviceChange::new(realm, user, Op::Register(Box::new(msg)), now))
}

/// The push worker's report, written and told to the user's clients.
pub fn plan_outcome(state: &RealmState, outcome: PushDeviceOutcome) -> ApiResult<DeviceChange> {
    let user = match &outcome {
        PushDeviceOutcome::Registered { user_id, .. }
        | PushDeviceOutcome::Failed { user_id, .. }
        | PushDeviceOutcome::Removed { user_id, .. } => *user_id,
    };
    let realm = state.user_or_err(user)?.realm_id;
    Ok(DeviceChange::new(realm, user, Op::Outcome(outcome), 0))
}

impl DeviceChange {
    /// `POST /mobile_push/register`, Zulip's `register_push_device` after its first checks.
    fn write_register(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let Op::Register(msg) = &self.op else { return Ok(()) };
        let mut device = db::get(tx, self.user_id, msg.device_id)?.ok_or_else(invalid_device)?;
        let key = msg.push_key.as_ref().zip(msg.push_key_id);
        let token = match (&msg.token_kind, &msg.token_id, &msg.bouncer_public_key, &msg.encrypted_push_registration) {
            (Some(kind), Some(id), Some(bouncer_key), Some(registration)) => {
                Some((*kind, id, bouncer_key, registration))
            }
            _ => None,
        };
        let Some(token) = token else {
            let Some((raw_key, key_id)) = key else {
                return Err(ApiError::bad_request(
                    "Missing parameters: must provide either all push key fields, all token fields, or both.",
                ));
            };
            // Rotating the push key.
            if device.push_key_id.is_none() {
                return Err(ApiError::bad_request("No push registration exists to rotate key for."));
            }
            let bytes = parse_key(raw_key)?;
            if device.push_key_id == Some(key_id) && device.push_key.as_deref() == Some(bytes.as_slice()) {
                return Ok(());
            }
            device.push_key = Some(bytes);
            device.push_key_id = Some(key_id);
            db::save(tx, &device)?;
            self.events.push(device_event(self.user_id, "update", device.id, json!({"push_key_id": key_id})));
            return Ok(());
        };
        // A registration under way at the bouncer: one at a time.
        if device.push_registration_error_code.is_none() && device.pending_push_token_id.is_some() {
            return Err(ApiError::bad_request("A registration for the device already in progress."));
        }
        let (kind, raw_token_id, bouncer_key, registration) = token;
        let token_id = parse_token_id(raw_token_id)?;
        match key {
            None => {
                // Rotating the token.
                if device.push_key_id.is_none() {
                    return Err(ApiError::bad_request("No push registration exists to rotate token for."));
                }
                if device.push_registration_error_code.is_none() && device.push_token_id == Some(token_id) {
                    return Ok(());
                }
                self.events.push(await_token(tx, self.user_id, self.now, &mut device, token_id, json!({}))?);
            }
            Some((raw_key, key_id)) => {
                let bytes = parse_key(raw_key)?;
                let same = device.push_registration_error_code.is_none()
                    && device.push_key_id == Some(key_id)
                    && device.push_key.as_deref() == Some(bytes.as_slice())
                    && device.push_token_id == Some(token_id)
                    && device.push_token_kind.as_deref() == Some(kind.as_str());
                if same {
                    return Ok(());
                }
                device.push_key = Some(bytes);
                device.push_key_id = Some(key_id);
                device.push_token_kind = Some(kind.as_str().to_owned());
                let first = json!({"push_key_id": key_id});
                self.events.push(await_token(tx, self.user_id, self.now, &mut device, token_id, first)?);
            }
        }
        // The bouncer learns the token from the worker, so that its failures are retried
        // between the two servers rather than by the phone.
        let data = json!({
            "device_id": device.id,
            "token_id": token_id,
            "bouncer_public_key": bouncer_key,
            "encrypted_push_registration": registration,
        });
        let now_ms = crate::clock::now_micros() / 1000;
        outbox::enqueue(tx, self.realm_id, self.user_id, "e2ee_register", &data, now_ms, now_ms)?;
        Ok(())
    }

    /// The worker's report: the token registered (if it is still the one pending), refused,
    /// or forgotten by the bouncer.
    fn write_outcome(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let Op::Outcome(outcome) = &self.op else { return Ok(()) };
        let user = self.user_id;
        match outcome {
            PushDeviceOutcome::Registered { device_id, token_id, .. } => {
                let Some(mut d) = db::get(tx, user, *device_id)? else { return Ok(()) };
                if d.pending_push_token_id != Some(*token_id) {
                    return Ok(());
                }
                d.push_token_id = Some(*token_id);
                d.pending_push_token_id = None;
                db::save(tx, &d)?;
                let fields = json!({"push_token_id": token_id_base64(*token_id), "pending_push_token_id": null});
                self.events.push(device_event(user, "update", d.id, fields));
                self.remove_legacy_twin(tx, *token_id)?;
            }
            PushDeviceOutcome::Failed { device_id, token_id, error_code, .. } => {
                let Some(mut d) = db::get(tx, user, *device_id)? else { return Ok(()) };
                if d.pending_push_token_id != Some(*token_id) {
                    return Ok(());
                }
                d.push_registration_error_code = Some(error_code.clone());
                db::save(tx, &d)?;
                let fields = json!({"push_registration_error_code": error_code});
                self.events.push(device_event(user, "update", d.id, fields));
            }
            PushDeviceOutcome::Removed { tokens, token_ids, .. } => {
                for (kind, token) in tokens {
                    outbox::remove_token(tx, user, kind.as_str(), token)?;
                }
                for mut d in db::of_user(tx, user)? {
                    if d.push_token_id.is_some_and(|id| token_ids.contains(&id)) {
                        d.push_token_id = None;
                        db::save(tx, &d)?;
                        self.events.push(device_event(user, "update", d.id, json!({"push_token_id": null})));
                    }
                }
            }
        }
        Ok(())
    }
}

impl DeviceChange {
    /// Feature level 483: once a device's token is registered for encrypted notifications,
    /// the user's legacy registration of the same token (whose token id it is) goes, here
    /// and at the bouncer, so that the phone is not notified twice.
    fn remove_legacy_twin(&mut self, tx: &Transaction<'_>, token_id: i64) -> ApiResult<()> {
        for legacy in outbox::devices_of(tx, self.user_id)? {
            let Some(token) = legacy.token.as_deref() else { continue };
            if legacy_token_id(token) != token_id {
                continue;
            }
            let kind = super::TokenKind::parse(&legacy.token_kind)?;
            outbox::remove_token(tx, self.user_id, kind.as_str(), token)?;
            let data = json!({"token": token, "token_kind": kind.number()});
            let now_ms = crate::clock::now_micros() / 1000;
            outbox::enqueue(tx, self.realm_id, self.user_id, "unregister", &data, now_ms, now_ms)?;
        }
        Ok(())
    }
}

/// Marks `device`'s token `token_id` as waiting for the bouncer (at `now`) and saves it; the
/// `update` event telling its user: the `first` fields (the new key id, if any), then the
/// pending token and its time.
fn await_token(
    tx: &Transaction<'_>,
    user: UserId,
    now: i64,
    device: &mut ClientDevice,
    token_id: i64,
    first: Value,
) -> ApiResult<Outgoing> {
    device.pending_push_token_id = Some(token_id);
    device.push_token_last_updated_timestamp = Some(now);
    device.push_registration_error_code = None;
    db::save(tx, device)?;
    let mut fields = crate::json_object(first);
    fields.insert("pending_push_token_id".into(), json!(token_id_base64(token_id)));
    fields.insert("push_token_last_updated_timestamp".into(), json!(now));
    fields.insert("push_registration_error_code".into(), Value::Null);
    Ok(device_event(user, "update", device.id, Value::Object(fields)))
}

/// The token id of a token, as the app makes it: the first 8 bytes of its SHA-256, read as
/// a signed big-endian integer (as [`parse_token_id`] reads the Base64 form).
fn legacy_token_id(token: &str) -> i64 {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(token.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    i64::from_be_bytes(first)
}

/// Zulip's `check_push_key`.
fn parse_key(raw: &str) -> ApiResult<Vec<u8>> {
    crate::push::crypto::parse_push_key(raw).ok_or_else(|| ApiError::bad_request("Invalid `push_key`"))
}

impl Change for DeviceChange {
    /// The new device's id for `POST /register_client_device`; 0 otherwise.
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match &self.op {
            Op::Create => {
                self.created = db::insert(tx, self.realm_id, self.user_id, self.now)?;
                self.events.push(device_event(self.user_id, "add", self.created, json!({})));
                Ok(())
            }
            Op::Remove(id) => {
                if !db::delete(tx, self.user_id, *id)? {
                    return Err(invalid_device());
                }
                self.events.push(device_event(self.user_id, "remove", *id, json!({})));
                Ok(())
            }
            Op::Register(_) => self.write_register(tx),
            Op::Outcome(_) => self.write_outcome(tx),
        }
    }

    fn apply(self, _: &mut RealmState) -> Applied<i64> {
        Applied::new(self.created, self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_read_as_zulip_reads_them() {
        assert_eq!(token_id_base64(1), "AAAAAAAAAAE=");
        assert_eq!(parse_token_id("AAAAAAAAAAE=").unwrap(), 1);
        let id = parse_token_id("hGsEWGmyyfI=").unwrap();
        assert!(id < 0);
        assert_eq!(token_id_base64(id), "hGsEWGmyyfI=");
        // A token's own id: the first 8 bytes of its SHA-256.
        use sha2::Digest;
        let digest = sha2::Sha256::digest(b"fcm-token");
        assert_eq!(token_id_base64(legacy_token_id("fcm-token")), STANDARD.encode(&digest[..8]));
        // Shorter values are sign-extended, as Python's int.from_bytes(signed=True).
        assert_eq!(parse_token_id("/w==").unwrap(), -1);
        assert_eq!(parse_token_id("AQ==").unwrap(), 1);
        for bad in ["@abcdefg", "AAAAAAAAAAAA", "!"] {
            assert_eq!(parse_token_id(bad).unwrap_err().msg, "`token_id` is not Base64 encoded");
        }
    }
}
