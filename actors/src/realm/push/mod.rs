//! Mobile push devices: legacy tokens (`POST`/`DELETE /users/me/apns_device_token` and
//! `/users/me/android_gcm_reg_id`), Zulip 12's logged-in devices (`POST
//! /register_client_device`, `POST /remove_client_device`, `POST /mobile_push/register`, the
//! `devices` data set and the `device` events) and test notifications (`POST
//! /mobile_push/test_notification`, `POST /mobile_push/e2ee/test_notification`).
//!
//! Devices live in SQLite only; each change writes the device and, when the server uses a
//! push notification service, the job that forwards it to the bouncer, in one transaction
//! (the push worker in `crate::push` sends it). The worker reports end-to-end encrypted
//! registrations back here ([`PushDeviceOutcome`]), which updates the device and tells the
//! user's clients.
//!
//! - [`ops`]: legacy tokens.
//! - [`devices`]: logged-in devices and their end-to-end encrypted registrations.
//! - [`test`]: test notifications.

pub mod devices;
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

/// `POST /register_client_device`: a new device record; its id.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<i64>")]
pub struct RegisterClientDevice {
    pub user_id: UserId,
}

/// `POST /remove_client_device`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveClientDevice {
    pub user_id: UserId,
    pub device_id: i64,
}

/// `POST /mobile_push/register` (Zulip 12): a device's push key (`push_key` with
/// `push_key_id`), its FCM/APNs token (the other four), or both; the parameters' types
/// checked, their values when written.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct RegisterPushDevice {
    pub user_id: UserId,
    pub device_id: i64,
    pub push_key: Option<String>,
    pub push_key_id: Option<i64>,
    pub token_kind: Option<TokenKind>,
    pub token_id: Option<String>,
    pub bouncer_public_key: Option<String>,
    pub encrypted_push_registration: Option<String>,
}

/// `POST /mobile_push/test_notification` (`token`) and `POST
/// /mobile_push/e2ee/test_notification` (`device_id`): a test notification to the user's
/// device, or to all of them.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct TestNotification {
    pub user_id: UserId,
    pub devices: TestDevices,
}

/// From the push worker: how the bouncer answered the registration of a device's token
/// (registered, or refused with Zulip's error code), or that it dropped devices (`removed`:
/// legacy tokens, and the token ids of end-to-end encrypted devices).
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub enum PushDeviceOutcome {
    Registered { user_id: UserId, device_id: i64, token_id: i64 },
    Failed { user_id: UserId, device_id: i64, token_id: i64, error_code: String },
    Removed { user_id: UserId, tokens: Vec<(TokenKind, String)>, token_ids: Vec<i64> },
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

impl Handler<RegisterClientDevice> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: RegisterClientDevice, _: &mut Self::Context) -> Self::Result {
        let change = devices::plan_create(&self.state, msg.user_id, crate::clock::now())?;
        self.commit(change)
    }
}

impl Handler<RemoveClientDevice> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveClientDevice, _: &mut Self::Context) -> Self::Result {
        let change = devices::plan_remove(&self.state, msg.user_id, msg.device_id)?;
        self.commit(change).map(|_| ())
    }
}

impl Handler<RegisterPushDevice> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RegisterPushDevice, _: &mut Self::Context) -> Self::Result {
        let change = devices::plan_register(&self.state, &self.config.push, msg, crate::clock::now())?;
        self.commit(change).map(|_| ())
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
        let change = devices::plan_outcome(&self.state, msg)?;
        self.commit(change).map(|_| ())
    }
}
