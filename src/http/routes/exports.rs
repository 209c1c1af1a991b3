//! Data exports (`/export/realm`, `/export/realm/{export_id}`, `/export/realm/consents`),
//! administrators only, as Zulip checks them before any parameter. The archive is written by
//! the export worker and served at its `export_url` (`/user_avatars/exports/...`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::realm::exports::{DeleteExport, ExportType, ListExportConsents, ListExports, StartExport};
use agora_actors::{json_object, ApiError};
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::guard::{Admins, Guarded};
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// The export endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/export/realm").route(Method::GET, list_exports).route(Method::POST, start_export).build(),
        )
        .service(Endpoint::new("/export/realm/consents").route(Method::GET, consents).build())
        .service(Endpoint::new(r"/export/realm/{export_id:\d+}").route(Method::DELETE, delete_export).build())
}

/// `GET /export/realm`: `exports`, oldest first.
async fn list_exports(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let exports = auth.realm.addr.send(ListExports { user: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "exports": exports }))))
}

/// `POST /export/realm`: `export_type` by its name since FL 449 (`public`, the default,
/// `full_with_consent` or `full_without_consent`); the new export's `id`. The worker writes
/// it; a `realm_export` event says when.
async fn start_export(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let export_type = match params.str("export_type") {
        None => ExportType::Public,
        Some(name) => ExportType::from_name(&name).ok_or_else(|| ApiError::not_in_list("export_type"))?,
    };
    let id = auth.realm.addr.send(StartExport { user: auth.user.user_id, export_type }).await??;
    Ok(params.success(json_object(json!({ "id": id }))))
}

/// `DELETE /export/realm/{export_id}`: the archive is removed at once.
async fn delete_export(
    req: Guarded<Admins>,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let archive = auth.realm.addr.send(DeleteExport { user: auth.user.user_id, id: path_id(&path) }).await??;
    let storage = state.storage.clone();
    let removed = web::block(move || storage.delete(&archive)).await;
    if !matches!(removed, Ok(Ok(()))) {
        tracing::warn!("a deleted export's archive could not be removed");
    }
    Ok(params.ok())
}

/// `GET /export/realm/consents`: `export_consents`, one per active person.
async fn consents(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let consents = auth.realm.addr.send(ListExportConsents { user: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "export_consents": consents }))))
}
