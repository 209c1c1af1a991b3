//! The server administrator's commands on one organization (`agora list-users`,
//! `change-role`, `deactivate-user`, `reset-api-key`, `set-realm-settings`, ...), as
//! Zulip's `manage.py` commands: outside the API's permissions, but through the same plans
//! and changes, so events go out and memory stays right.
//!
//! With a server running, the command reaches the organization's actor ([`Administer`]);
//! without one, the same code runs on a state loaded from the database ([`Offline`]).

pub mod ops;

use actix::prelude::*;
use serde_json::Value;

pub use ops::{execute, AdminOp};

use super::actor::RealmActor;
use super::state::RealmState;
use super::Change;
use crate::clock;
use crate::config::ServerConfig;
use crate::error::ApiResult;
use crate::store::Store;

/// Runs an administrator's command in the organization's actor; replies with the JSON
/// object the command prints.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Value>")]
pub struct Administer(pub AdminOp);

impl Handler<Administer> for RealmActor {
    type Result = ApiResult<Value>;

    fn handle(&mut self, msg: Administer, _: &mut Self::Context) -> Self::Result {
        execute(self, msg.0, clock::now())
    }
}

/// Where a command reads the organization and commits its changes.
pub trait Committer {
    /// The organization as of the last commit.
    fn state(&self) -> &RealmState;
    /// The deployment.
    fn config(&self) -> &ServerConfig;
    /// Writes, applies and (in an actor) publishes and fans out a change.
    fn commit<C: Change>(&mut self, change: C) -> ApiResult<C::Output>;
}

impl Committer for RealmActor {
    fn state(&self) -> &RealmState {
        &self.state
    }

    fn config(&self) -> &ServerConfig {
        &self.config
    }

    fn commit<C: Change>(&mut self, change: C) -> ApiResult<C::Output> {
        RealmActor::commit(self, change)
    }
}

/// An organization loaded from the database while no server runs: changes are written
/// and applied to this copy (their events have nobody to go to).
pub struct Offline<'a> {
    pub state: RealmState,
    pub store: &'a Store,
    pub config: &'a ServerConfig,
}

impl Committer for Offline<'_> {
    fn state(&self) -> &RealmState {
        &self.state
    }

    fn config(&self) -> &ServerConfig {
        self.config
    }

    fn commit<C: Change>(&mut self, change: C) -> ApiResult<C::Output> {
        Ok(super::commit(&mut self.state, self.store, change)?.output)
    }
}

#[cfg(test)]
mod tests;
