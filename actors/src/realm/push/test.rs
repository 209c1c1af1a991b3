//! Test notifications: `POST /mobile_push/test_notification` (legacy devices, Zulip's
//! `send_test_push_notification_api`) and `POST /mobile_push/e2ee/test_notification`
//! (end-to-end encrypted ones, `send_e2ee_test_push_notification_api`).
//!
//! The devices are checked when the request is written (they live in SQLite only); the
//! notifications go out through the push outbox like any other, one job per legacy device
//! (the bouncer's `push/test_notification`) and one for the encrypted ones (`push/e2ee/notify`
//! with a `test` payload), when the server uses a push notification service. Zulip calls the
//! bouncer during the request and reports its failures; here the worker does, later.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::ops::humans_only;
use super::TestNotification;
use crate::config::PushConfig;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::push as db;

/// Which devices a test notification is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestDevices {
    /// Legacy devices: the one with this token, or every one.
    Legacy(Option<String>),
    /// End-to-end encrypted devices registered at the bouncer (with a token id): the one
    /// with this device id, or every one.
    Encrypted(Option<i64>),
}

/// A test notification, checked when written.
#[derive(Debug, Clone)]
pub struct TestChange {
    realm_id: RealmId,
    user_id: UserId,
    devices: TestDevices,
    /// Whether the server uses a push notification service (else nothing is sent).
    configured: bool,
    now: i64,
}

/// Plans a test notification: humans only (the devices are checked when it is written).
pub fn plan_test(state: &RealmState, push: &PushConfig, msg: TestNotification, now: i64) -> ApiResult<TestChange> {
    let realm_id = humans_only(state, msg.user_id)?;
    Ok(TestChange { realm_id, user_id: msg.user_id, devices: msg.devices, configured: push.configured(), now })
}

/// Zulip's `InvalidPushDeviceTokenError`.
fn device_not_recognized() -> ApiError {
    ApiError::new(ErrorCode::InvalidPushDeviceToken, 400, "Device not recognized")
}

/// Zulip's `NoActivePushDeviceError`.
fn no_active_device() -> ApiError {
    ApiError::new(ErrorCode::NoActivePushDevice, 400, "No active registered push device")
}

impl Change for TestChange {
    type Output = ();

    /// Finds the devices ("Device not recognized" for an unknown token; "No active
    /// registered push device" when no encrypted device has a token registered at the
    /// bouncer) and queues their jobs.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        let devices = db::devices_of(tx, self.user_id)?;
        let jobs: Vec<(&str, Value)> = match &self.devices {
            TestDevices::Legacy(token) => {
                let legacy = devices.iter().filter_map(|d| d.token.as_ref().map(|t| (d, t)));
                let chosen: Vec<_> = match token {
                    Some(wanted) => {
                        let found = legacy.filter(|(_, t)| *t == wanted).take(1).collect::<Vec<_>>();
                        if found.is_empty() {
                            return Err(device_not_recognized());
                        }
                        found
                    }
                    None => legacy.collect(),
                };
                let kind = |d: &db::Device| if d.token_kind == "apns" { 1 } else { 2 };
                chosen.into_iter().map(|(d, t)| ("test", json!({"token": t, "token_kind": kind(d)}))).collect()
            }
            TestDevices::Encrypted(device) => {
                let ids: Vec<i64> = crate::store::client_devices::of_user(tx, self.user_id)?
                    .iter()
                    .filter(|d| d.push_token_id.is_some())
                    .map(|d| d.id)
                    .filter(|id| device.is_none_or(|wanted| wanted == *id))
                    .collect();
                if ids.is_empty() {
                    return Err(no_active_device());
                }
                vec![("e2ee_test", json!({"device_ids": ids, "time": self.now}))]
            }
        };
        if self.configured {
            let now_ms = crate::clock::now_micros() / 1000;
            for (kind, data) in jobs {
                db::enqueue(tx, self.realm_id, self.user_id, kind, &data, now_ms, now_ms)?;
            }
        }
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}
