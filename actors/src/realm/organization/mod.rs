//! The organization itself: its creation with its system groups and first owner, its
//! status (deactivated or not), and `GET /server_settings` at its host.

pub mod ops;

use actix::prelude::*;
use serde_json::{Map, Value};

pub use ops::{create_realm, CreatedRealm, NewRealm};

use super::actor::RealmActor;
use crate::error::ApiResult;

/// `GET /server_settings` at this organization's host.
#[derive(Message, Debug)]
#[rtype(result = "Map<String, Value>")]
pub struct GetServerSettings {
    pub is_incompatible: bool,
}

/// Deactivates (`true`) or reactivates the organization.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetRealmDeactivated(pub bool);

impl Handler<GetServerSettings> for RealmActor {
    type Result = MessageResult<GetServerSettings>;

    fn handle(&mut self, msg: GetServerSettings, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.state.server_settings(&self.config, msg.is_incompatible))
    }
}

impl Handler<SetRealmDeactivated> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetRealmDeactivated, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_status(&self.state, msg.0);
        self.commit(change)
    }
}
