//! Data exports (Zulip's `GET`/`POST /export/realm`, `DELETE /export/realm/{export_id}`,
//! `GET /export/realm/consents`, and the `realm_export` event to administrators). The
//! archive is written by the export worker (`transfer::export::worker`), never here; the
//! worker says when it is done ([`ExportsChanged`]).

use actix::prelude::*;
use serde_json::{json, Value};

use super::actor::RealmActor;
use super::permissions::require_admin;
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::UserId;
use crate::store::{self, exports::ExportRow, Store};

/// Zulip's `EXPORT_LIMIT`: five exports a week per organization.
const LIMIT: i64 = 5;
const LIMIT_WINDOW_SECS: f64 = 7.0 * 86_400.0;

/// `GET /export/realm`: every export of the organization.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListExports {
    pub user: UserId,
}

/// The kinds of export (Zulip's `RealmExport.EXPORT_*`), stored by number, named on the
/// wire since FL 449.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportType {
    /// Public data only.
    Public = 1,
    /// Public data, and the private data of the users who consented.
    FullWithConsent = 2,
    /// All private data (FL 449): only where the organization's owners have full content
    /// access (`owner_full_content_access`).
    FullWithoutConsent = 3,
}

impl ExportType {
    /// The stored number's kind (an unknown one reads as public).
    pub fn from_stored(n: i64) -> ExportType {
        match n {
            2 => ExportType::FullWithConsent,
            3 => ExportType::FullWithoutConsent,
            _ => ExportType::Public,
        }
    }

    /// The kind a wire name names.
    pub fn from_name(name: &str) -> Option<ExportType> {
        match name {
            "public" => Some(ExportType::Public),
            "full_with_consent" => Some(ExportType::FullWithConsent),
            "full_without_consent" => Some(ExportType::FullWithoutConsent),
            _ => None,
        }
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            ExportType::Public => "public",
            ExportType::FullWithConsent => "full_with_consent",
            ExportType::FullWithoutConsent => "full_without_consent",
        }
    }
}

/// `POST /export/realm`: asks the worker for an export; its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct StartExport {
    pub user: UserId,
    pub export_type: ExportType,
}

/// `DELETE /export/realm/{export_id}`: the archive's path id, for the caller to remove.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<String>")]
pub struct DeleteExport {
    pub user: UserId,
    pub id: i64,
}

/// `GET /export/realm/consents`: who lets administrators export their private data.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListExportConsents {
    pub user: UserId,
}

/// From the export worker: an export was written or failed.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ExportsChanged;

/// An export as the API shows it (Zulip's `RealmExport`).
fn export_dict(config: &ServerConfig, state: &RealmState, row: &ExportRow) -> Value {
    let url = match (&row.path_id, row.failed_at, row.deleted_at) {
        (Some(path), None, None) => Some(format!("{}/{path}", config.realm_url(&state.realm().subdomain))),
        _ => None,
    };
    json!({
        "id": row.id,
        "acting_user_id": row.acting_user_id.0,
        "export_time": row.requested_at,
        "deleted_timestamp": row.deleted_at,
        "failed_timestamp": row.failed_at,
        "export_url": url,
        "pending": row.path_id.is_none() && row.failed_at.is_none(),
        "export_type": ExportType::from_stored(row.export_type).name(),
    })
}

fn list(store: &Store, config: &ServerConfig, state: &RealmState) -> ApiResult<Vec<Value>> {
    let rows = store::exports::in_realm(&*store.conn()?, state.realm().id)?;
    Ok(rows.iter().map(|row| export_dict(config, state, row)).collect())
}

impl RealmActor {
    fn require_admin(&self, user: UserId) -> ApiResult<()> {
        require_admin(self.viewer(user)?.role)
    }

    /// The `realm_export` event, with every export, to the active administrators.
    fn send_exports(&mut self) {
        let exports = match list(&self.store, &self.config, &self.state) {
            Ok(exports) => exports,
            Err(e) => {
                tracing::error!(error = %e.msg, "cannot list the data exports");
                return;
            }
        };
        let admins: Vec<UserId> =
            self.state.users().filter(|u| u.is_active && u.role.is_admin()).map(|u| u.id).collect();
        let event = Event::new("realm_export", json!({"exports": exports}));
        self.fan_out(vec![Outgoing::to(admins, event)]);
    }
}

fn now() -> f64 {
    crate::clock::now_micros() as f64 / 1e6
}

impl Handler<ListExports> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListExports, _: &mut Self::Context) -> Self::Result {
        self.require_admin(msg.user)?;
        list(&self.store, &self.config, &self.state)
    }
}

impl Handler<StartExport> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: StartExport, _: &mut Self::Context) -> Self::Result {
        self.require_admin(msg.user)?;
        if msg.export_type == ExportType::FullWithoutConsent {
            if !self.state.realm().owner_full_content_access() {
                return Err(ApiError::bad_request(
                    "Full exports without consent are not enabled for this organization.",
                ));
            }
            if self.viewer(msg.user)?.role != crate::realm::model::Role::Owner {
                return Err(ApiError::must_be_owner());
            }
        }
        let (realm, at) = (self.state.realm().id, now());
        let id = self.store.write(|tx| -> ApiResult<i64> {
            if store::exports::requested_since(tx, realm, at - LIMIT_WINDOW_SECS)? >= LIMIT {
                return Err(ApiError::bad_request("Exceeded rate limit."));
            }
            Ok(store::exports::insert(tx, realm, msg.user, msg.export_type as i64, at)?)
        })?;
        tracing::info!(realm.id = %realm, export.id = id, "data export requested");
        crate::transfer::export::worker::wake();
        self.send_exports();
        Ok(id)
    }
}

impl Handler<DeleteExport> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: DeleteExport, _: &mut Self::Context) -> Self::Result {
        self.require_admin(msg.user)?;
        let realm = self.state.realm().id;
        let row = store::exports::get(&*self.store.conn()?, realm, msg.id)?
            .ok_or_else(|| ApiError::bad_request("Invalid data export ID"))?;
        if row.deleted_at.is_some() {
            return Err(ApiError::bad_request("Export already deleted"));
        }
        if row.failed_at.is_some() {
            return Err(ApiError::bad_request("Export failed, nothing to delete"));
        }
        let Some(path) = row.path_id else {
            return Err(ApiError::bad_request("Export still in progress"));
        };
        let at = now();
        self.store.write(|tx| store::exports::delete(tx, row.id, at))?;
        self.send_exports();
        Ok(path)
    }
}

impl Handler<ListExportConsents> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListExportConsents, _: &mut Self::Context) -> Self::Result {
        self.require_admin(msg.user)?;
        Ok(self
            .state
            .users()
            .filter(|u| u.is_active && !u.is_bot)
            .map(|u| {
                let consented = u.settings.get("allow_private_data_export").and_then(Value::as_bool).unwrap_or(false);
                // FL 430: with the user's `email_address_visibility`.
                let visibility = u.email_address_visibility as i64;
                json!({"user_id": u.id.0, "consented": consented, "email_address_visibility": visibility})
            })
            .collect())
    }
}

impl Handler<ExportsChanged> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: ExportsChanged, _: &mut Self::Context) {
        self.send_exports();
    }
}
