//! Mobile push devices (Zulip's `POST /mobile_push/register`, `POST`/`DELETE
//! /users/me/apns_device_token` and `/users/me/android_gcm_reg_id`, the `push_devices`
//! data set and the `push_device` event) and test notifications (`POST
//! /mobile_push/test_notification`, `POST /mobile_push/e2ee/test_notification`).
//!
//! Devices live in SQLite only; each change writes the device and, when the server uses a
//! push notification service, the job that forwards it to the bouncer, in one transaction
//! (the push worker in `crate::push` sends it). The worker reports end-to-end encrypted
//! registrations back here ([`PushDeviceOutcome`]), which updates the device and tells the
//! user's clients.
//!
//! - [`ops`]: the checks and changes.
//! - [`test`]: test notifications.

pub mod ops;
pub mod test;

use actix::prelude::*;

pub use ops::{TokenKind, MAX_TOKEN_LENGTH};
pub use test::TestDevices;

use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::UserId;

/// `POST /users/me/apns_device_token` (`kind` APNs, with `appid`) and `POST
/// /users/me/android_gcm_reg_id` (`kind` FCM).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct AddPushToken {
    pub user_id: UserId,
    pub kind: TokenKind,
    pub token: String,
    pub ios_app_id: Option<String>,
}

/// `DELETE /users/me/apns_device_token` and `DELETE /users/me/android_gcm_reg_id`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct RemovePushToken {
    pub user_id: UserId,
    pub kind: TokenKind,
    pub token: String,
}

/// `POST /mobile_push/register`: an end-to-end encrypted device (parameters checked).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct RegisterPushDevice {
    pub user_id: UserId,
    pub token_kind: TokenKind,
    pub push_account_id: i64,
    pub push_public_key: String,
    pub bouncer_public_key: String,
    pub encrypted_push_registration: String,
}

/// `POST /mobile_push/test_notification` (`token`) and `POST
/// /mobile_push/e2ee/test_notification` (`push_account_id`): a test notification to the
/// user's device, or to all of them.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct TestNotification {
    pub user_id: UserId,
    pub devices: TestDevices,
}

/// From the push worker: how the bouncer answered an end-to-end encrypted registration
/// (`active` with its device id, or `failed` with Zulip's error code), or that it dropped
/// devices (`removed`: legacy tokens and bouncer device ids).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub enum PushDeviceOutcome {
    Registered { user_id: UserId, push_account_id: i64, bouncer_device_id: i64 },
    Failed { user_id: UserId, push_account_id: i64, error_code: String },
    Removed { user_id: UserId, tokens: Vec<(TokenKind, String)>, bouncer_device_ids: Vec<i64> },
}

impl Handler<AddPushToken> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: AddPushToken, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_add_token(&self.state, &self.config.push, msg, crate::clock::now())?;
        self.commit(change)
    }
}

impl Handler<RemovePushToken> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemovePushToken, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_remove_token(&self.state, &self.config.push, msg)?;
        self.commit(change)
    }
}

impl Handler<RegisterPushDevice> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RegisterPushDevice, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_register_device(&self.state, &self.config.push, msg, crate::clock::now())?;
        self.commit(change)
    }
}

impl Handler<TestNotification> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: TestNotification, _: &mut Self::Context) -> Self::Result {
        let change = test::plan_test(&self.state, &self.config.push, msg, crate::clock::now())?;
        self.commit(change)
    }
}

impl Handler<PushDeviceOutcome> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: PushDeviceOutcome, _: &mut Self::Context) -> Self::Result {
        self.commit(ops::DeviceOutcome(msg))
    }
}
