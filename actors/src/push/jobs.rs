//! One job of the outbox, sent to the bouncer: device registrations (`push/register`,
//! `push/unregister`, `push/unregister/all`, `push/e2ee/register`), notifications and
//! their removals (`push/notify` for legacy devices, `push/e2ee/notify` for end-to-end
//! encrypted ones), test notifications (`super::test_jobs`), and the organizations' data
//! the bouncer needs (`server/analytics`).

use reqwest::Method;
use serde_json::{json, Map, Value};

use super::bouncer::{Body, Bouncer, BouncerError};
use super::{crypto, identity};
use crate::config::ServerConfig;
use crate::ids::{RealmId, UserId};
use crate::realm::push::devices::{parse_token_id, token_id_base64};
use crate::realm::push::{PushDeviceOutcome, TokenKind};
use crate::server_info;
use crate::store::client_devices::{self, ClientDevice};
use crate::store::push::{self as db, Device, Job};
use crate::store::{self, Store};

/// Zulip's cap on message ids in one removal (APNs payloads are small).
const MAX_REMOVED_IDS: usize = 200;

/// What a job came to.
pub enum Outcome {
    /// Done (or nothing left to do).
    Done,
    /// Done, and the realm actor must hear of it.
    Report(PushDeviceOutcome),
    /// Not now: the job's data changed (progress) and it runs again.
    Progress(Value),
}

/// Where a job runs: the bouncer, the database, the configuration.
pub struct Ctx<'a> {
    pub bouncer: &'a Bouncer,
    pub store: &'a Store,
    pub config: &'a ServerConfig,
    pub org_id: &'a str,
    pub org_key: &'a str,
}

impl Ctx<'_> {
    pub(super) fn realm_uuid(&self, realm: RealmId) -> String {
        identity::realm_uuid(self.org_id, realm)
    }

    pub(super) fn user_uuid(&self, user: UserId) -> String {
        identity::user_uuid(self.org_id, user)
    }

    fn identity_params(&self, job: &Job) -> Vec<(&'static str, String)> {
        vec![
            ("user_uuid", self.user_uuid(job.user_id)),
            ("user_id", job.user_id.to_string()),
            ("realm_uuid", self.realm_uuid(job.realm_id)),
        ]
    }

    /// Fields every payload has (Zulip's `get_base_payload`).
    pub(super) fn base_payload(&self, job: &Job) -> Result<Map<String, Value>, BouncerError> {
        let realm = self.realm(job.realm_id)?;
        Ok(crate::json_object(json!({
            "server": self.config.external_host,
            "realm_id": realm.id,
            "realm_name": realm.name,
            "realm_uri": self.config.realm_url(&realm.subdomain),
            "realm_url": self.config.realm_url(&realm.subdomain),
            "user_id": job.user_id,
        })))
    }

    pub(super) fn realm(&self, id: RealmId) -> Result<crate::realm::model::Realm, BouncerError> {
        let conn = self.store.conn().map_err(local)?;
        store::realms::by_id(&conn, id).map_err(local)?.ok_or_else(|| refused(format!("no realm {id}")))
    }

    /// Tells the bouncer about every organization (Zulip's `send_server_data_to_push_bouncer`
    /// without usage statistics): end-to-end encrypted calls need the organization known.
    pub async fn upload_server_data(&self) -> Result<(), BouncerError> {
        let conn = self.store.conn().map_err(local)?;
        let mut realms = Vec::new();
        for id in db::realm_ids(&conn).map_err(local)? {
            let Some(realm) = store::realms::by_id(&conn, id).map_err(local)? else { continue };
            let url = self.config.realm_url(&realm.subdomain);
            realms.push(json!({
                "id": realm.id,
                "host": self.config.realm_host(&realm.subdomain),
                "url": url,
                "name": realm.name,
                "org_type": 0,
                "date_created": realm.date_created as f64,
                "deactivated": realm.deactivated,
                "is_system_bot_realm": false,
                "authentication_methods": {"Email": true},
                "uuid": self.realm_uuid(realm.id),
                "uuid_owner_secret": identity::realm_owner_secret(self.org_key, realm.id),
            }));
        }
        drop(conn);
        let params = [
            ("realm_counts", "[]".to_owned()),
            ("installation_counts", "[]".to_owned()),
            ("realmauditlog_rows", "[]".to_owned()),
            ("realms", Value::Array(realms).to_string()),
            ("version", json!(server_info::zulip_version()).to_string()),
            ("merge_base", json!(server_info::ZULIP_MERGE_BASE).to_string()),
            ("api_feature_level", server_info::FEATURE_LEVEL.to_string()),
        ];
        self.bouncer.call(Method::POST, "server/analytics", Body::Form(&params)).await.map(|_| ())
    }
}

pub(super) fn local(e: impl std::fmt::Display) -> BouncerError {
    BouncerError::RetryLater(format!("local storage: {e}"))
}

fn refused(msg: String) -> BouncerError {
    BouncerError::Refused { code: None, msg }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Runs one job.
pub async fn run(ctx: &Ctx<'_>, job: &Job) -> Result<Outcome, BouncerError> {
    let p = &job.payload;
    match job.kind.as_str() {
        "register" => {
            let mut params = ctx.identity_params(job);
            params.push(("token", str_of(p, "token")));
            params.push(("token_kind", p.get("token_kind").and_then(Value::as_i64).unwrap_or(0).to_string()));
            if let Some(app_id) = p.get("ios_app_id").and_then(Value::as_str) {
                params.push(("ios_app_id", app_id.to_owned()));
            }
            ctx.bouncer.call(Method::POST, "push/register", Body::Form(&params)).await?;
            Ok(Outcome::Done)
        }
        "unregister" => {
            let mut params = ctx.identity_params(job);
            params.push(("token", str_of(p, "token")));
            params.push(("token_kind", p.get("token_kind").and_then(Value::as_i64).unwrap_or(0).to_string()));
            ctx.bouncer.call(Method::POST, "push/unregister", Body::Form(&params)).await?;
            Ok(Outcome::Done)
        }
        "unregister_all" => {
            let params = ctx.identity_params(job);
            ctx.bouncer.call(Method::POST, "push/unregister/all", Body::Form(&params)).await?;
            Ok(Outcome::Done)
        }
        "e2ee_register" => e2ee_register(ctx, job).await,
        "message" | "remove" => notify(ctx, job).await,
        "test" => super::test_jobs::legacy(ctx, job).await,
        "e2ee_test" => super::test_jobs::encrypted(ctx, job).await,
        other => Err(refused(format!("unknown push job {other:?}"))),
    }
}

/// A device's token to the bouncer (Zulip 12's `push/e2ee/register`, by the token's id);
/// the realm actor hears whether it took it.
async fn e2ee_register(ctx: &Ctx<'_>, job: &Job) -> Result<Outcome, BouncerError> {
    let p = &job.payload;
    let device_id = p.get("device_id").and_then(Value::as_i64).unwrap_or(0);
    let token_id = p.get("token_id").and_then(Value::as_i64).unwrap_or(0);
    let params = [
        ("realm_uuid", ctx.realm_uuid(job.realm_id)),
        ("token_id", token_id_base64(token_id)),
        ("encrypted_push_registration", str_of(p, "encrypted_push_registration")),
        ("bouncer_public_key", str_of(p, "bouncer_public_key")),
    ];
    let mut answer = ctx.bouncer.call(Method::POST, "push/e2ee/register", Body::Form(&params)).await;
    if matches!(&answer, Err(BouncerError::Refused { code: Some(c), .. }) if c == "MISSING_REMOTE_REALM") {
        // The bouncer does not know the organization yet: tell it, and try once more.
        ctx.upload_server_data().await?;
        answer = ctx.bouncer.call(Method::POST, "push/e2ee/register", Body::Form(&params)).await;
    }
    let user_id = job.user_id;
    match answer {
        Ok(_) => Ok(Outcome::Report(PushDeviceOutcome::Registered { user_id, device_id, token_id })),
        Err(BouncerError::Refused { code, .. }) => {
            let error_code = match code.as_deref() {
                Some(
                    c @ ("INVALID_BOUNCER_PUBLIC_KEY" | "REQUEST_EXPIRED" | "INVALID_ENCRYPTED_PUSH_REGISTRATION"),
                ) => c.to_owned(),
                _ => "BAD_REQUEST".to_owned(),
            };
            Ok(Outcome::Report(PushDeviceOutcome::Failed { user_id, device_id, token_id, error_code }))
        }
        Err(e) => Err(e),
    }
}

/// The message ids of a removal job: the newest 200, ascending.
fn removed_ids(p: &Value) -> Vec<i64> {
    let mut ids: Vec<i64> =
        p.get("message_ids").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_i64).collect();
    ids.sort_unstable();
    let skip = ids.len().saturating_sub(MAX_REMOVED_IDS);
    ids.split_off(skip)
}

/// A notification or a removal, to the user's legacy devices first, then to their end-to-end
/// encrypted ones; each part recorded in the job once done, so a retry sends neither twice.
async fn notify(ctx: &Ctx<'_>, job: &Job) -> Result<Outcome, BouncerError> {
    let mut p = job.payload.clone();
    let is_message = job.kind == "message";
    if is_message && p.get("claimed").is_none() {
        // Read meanwhile, or notified already: nothing to send (Zulip's check at send time).
        let message = crate::ids::MessageId(p.get("message_id").and_then(Value::as_i64).unwrap_or(0));
        let claimed = ctx.store.write(|tx| db::claim_notification(tx, job.user_id, message)).map_err(local)?;
        if !claimed {
            return Ok(Outcome::Done);
        }
        p["claimed"] = json!(true);
        return Ok(Outcome::Progress(p));
    }
    let (devices, encrypted): (Vec<Device>, Vec<ClientDevice>) = {
        let conn = ctx.store.conn().map_err(local)?;
        (
            db::devices_of(&conn, job.user_id).map_err(local)?,
            client_devices::of_user(&conn, job.user_id).map_err(local)?,
        )
    };
    let mut removed = PushDeviceOutcome::Removed { user_id: job.user_id, tokens: Vec::new(), token_ids: Vec::new() };
    if p.get("legacy_done").is_none() {
        let tokens = |kind: &str| -> Vec<String> {
            devices.iter().filter(|d| d.token_kind == kind).filter_map(|d| d.token.clone()).collect()
        };
        let (android, apple) = (tokens("fcm"), tokens("apns"));
        if !android.is_empty() || !apple.is_empty() {
            let (gcm, gcm_options, apns) = if is_message {
                (p["gcm"].clone(), p["gcm_options"].clone(), p["apns"].clone())
            } else {
                removal_payloads(ctx, job, &removed_ids(&p))?
            };
            let body = json!({
                "user_uuid": ctx.user_uuid(job.user_id),
                "user_id": job.user_id,
                "realm_uuid": ctx.realm_uuid(job.realm_id),
                "apns_payload": apns,
                "gcm_payload": gcm,
                "gcm_options": gcm_options,
                "android_devices": android,
                "apple_devices": apple,
            });
            let answer = ctx.bouncer.call(Method::POST, "push/notify", Body::Json(&body)).await?;
            if let PushDeviceOutcome::Removed { tokens, .. } = &mut removed {
                for (key, kind) in [("android_devices", TokenKind::Fcm), ("apple_devices", TokenKind::Apns)] {
                    let gone = answer.pointer(&format!("/deleted_devices/{key}")).and_then(Value::as_array);
                    tokens.extend(gone.into_iter().flatten().filter_map(Value::as_str).map(|t| (kind, t.to_owned())));
                }
            }
        }
        let e2ee_waiting = encrypted.iter().any(registered);
        if e2ee_waiting {
            p["legacy_done"] = json!(true);
            // Record the progress first; the removed tokens are reported with the rest.
            if let PushDeviceOutcome::Removed { tokens, .. } = &removed {
                if !tokens.is_empty() {
                    p["removed_tokens"] = json!(tokens.iter().map(|(k, t)| json!([k.as_str(), t])).collect::<Vec<_>>());
                }
            }
            return Ok(Outcome::Progress(p));
        }
    }
    if let (Some(list), PushDeviceOutcome::Removed { tokens, .. }) =
        (p.get("removed_tokens").and_then(Value::as_array), &mut removed)
    {
        for pair in list {
            let kind = if pair[0] == "apns" { TokenKind::Apns } else { TokenKind::Fcm };
            tokens.push((kind, pair[1].as_str().unwrap_or_default().to_owned()));
        }
    }
    let e2ee: Vec<&ClientDevice> = encrypted.iter().filter(|d| registered(d)).collect();
    if !e2ee.is_empty() {
        let data = if is_message {
            p["e2ee"].clone()
        } else {
            let realm = ctx.realm(job.realm_id)?;
            json!({
                "message_ids": removed_ids(&p),
                "realm_name": realm.name,
                "realm_url": ctx.config.realm_url(&realm.subdomain),
                "type": "remove",
                "user_id": job.user_id,
            })
        };
        let requests = e2ee_requests(&e2ee, &data, is_message)?;
        let gone = send_e2ee(ctx, job, requests).await?;
        if let PushDeviceOutcome::Removed { token_ids, .. } = &mut removed {
            token_ids.extend(gone);
        }
    }
    match &removed {
        PushDeviceOutcome::Removed { tokens, token_ids, .. } if tokens.is_empty() && token_ids.is_empty() => {
            Ok(Outcome::Done)
        }
        _ => Ok(Outcome::Report(removed)),
    }
}

/// Whether an end-to-end encrypted device can be sent to: its token is registered at the
/// bouncer and it has a push key.
pub(super) fn registered(d: &ClientDevice) -> bool {
    d.push_token_id.is_some() && d.push_key.is_some()
}

/// The `push/e2ee/notify` requests of `data` encrypted for each device (Zulip 12: by token
/// id, with the push key's id): an alert (a message, a test) or a silent background one (a
/// removal).
pub(super) fn e2ee_requests(devices: &[&ClientDevice], data: &Value, alert: bool) -> Result<Vec<Value>, BouncerError> {
    let plaintext = data.to_string();
    let mut requests = Vec::with_capacity(devices.len());
    for device in devices {
        let key = device.push_key.as_deref().unwrap_or_default();
        let encrypted = crypto::encrypt(key, plaintext.as_bytes()).map_err(refused)?;
        let key_id = device.push_key_id.unwrap_or_default();
        let token_id = token_id_base64(device.push_token_id.unwrap_or_default());
        requests.push(if device.push_token_kind.as_deref() == Some("apns") {
            let aps = if alert {
                json!({"mutable-content": 1, "alert": {"title": "New notification"}})
            } else {
                json!({"content-available": 1})
            };
            json!({
                "token_id": token_id,
                "http_headers": {
                    "apns_priority": if alert { 10 } else { 5 },
                    "apns_push_type": if alert { "alert" } else { "background" },
                },
                "payload": {"push_key_id": key_id, "encrypted_data": encrypted, "aps": aps},
            })
        } else {
            json!({
                "token_id": token_id,
                "fcm_priority": if alert { "high" } else { "normal" },
                "payload": {"push_key_id": key_id, "encrypted_data": encrypted},
            })
        });
    }
    Ok(requests)
}

/// Sends `requests` to `push/e2ee/notify` (telling the bouncer about the organizations
/// first if it does not know this one); the token ids it no longer knows
/// (`delete_token_ids`).
pub(super) async fn send_e2ee(ctx: &Ctx<'_>, job: &Job, requests: Vec<Value>) -> Result<Vec<i64>, BouncerError> {
    let body = json!({"realm_uuid": ctx.realm_uuid(job.realm_id), "push_requests": requests});
    let mut answer = ctx.bouncer.call(Method::POST, "push/e2ee/notify", Body::Json(&body)).await;
    if matches!(&answer, Err(BouncerError::Refused { code: Some(c), .. }) if c == "MISSING_REMOTE_REALM") {
        ctx.upload_server_data().await?;
        answer = ctx.bouncer.call(Method::POST, "push/e2ee/notify", Body::Json(&body)).await;
    }
    let gone = answer?.get("delete_token_ids").and_then(Value::as_array).cloned().unwrap_or_default();
    Ok(gone.iter().filter_map(Value::as_str).filter_map(|t| parse_token_id(t).ok()).collect())
}

/// Zulip's `get_remove_payload_gcm` and `get_remove_payload_apns`.
fn removal_payloads(ctx: &Ctx<'_>, job: &Job, ids: &[i64]) -> Result<(Value, Value, Value), BouncerError> {
    let base = ctx.base_payload(job)?;
    let joined = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut gcm = base.clone();
    gcm.insert("event".into(), json!("remove"));
    gcm.insert("zulip_message_ids".into(), json!(joined));
    gcm.insert("zulip_message_id".into(), json!(ids.first()));
    let mut zulip = base;
    zulip.insert("event".into(), json!("remove"));
    zulip.insert("zulip_message_ids".into(), json!(joined));
    Ok((Value::Object(gcm), json!({"priority": "normal"}), json!({"badge": 0, "custom": {"zulip": zulip}})))
}
