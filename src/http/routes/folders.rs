//! Channel folders (`/channel_folders...`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::folders::{CreateFolder, FolderChanges, ListFolders, NewFolder, ReorderFolders, UpdateFolder};
use agora_actors::ApiError;
use serde_json::json;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The channel folder endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/channel_folders")
                .route(Method::GET, list_folders)
                .route(Method::PATCH, reorder_folders)
                .build(),
        )
        .service(Endpoint::new("/channel_folders/create").route(Method::POST, create_folder).build())
        .service(Endpoint::new("/channel_folders/{channel_folder_id}").route(Method::PATCH, update_folder).build())
}

/// The `{channel_folder_id}` of a path: digits only (Zulip's URL pattern), else the JSON
/// 404; digits beyond any id name no folder.
fn folder_id(path: &str) -> Result<i64, ApiError> {
    if path.is_empty() || !path.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::not_found());
    }
    path.parse().map_err(|_| ApiError::bad_request("Invalid channel folder ID"))
}

/// The parameters of `POST /channel_folders/create`.
fn new_folder(params: &Params) -> Result<NewFolder, ApiError> {
    Ok(NewFolder { description: params.required_str("description")?, name: params.required_str("name")? })
}

/// The parameters of `PATCH /channel_folders/{channel_folder_id}`.
fn folder_changes(params: &Params) -> Result<FolderChanges, ApiError> {
    Ok(FolderChanges {
        description: params.str("description"),
        is_archived: params.bool("is_archived")?,
        name: params.str("name"),
    })
}

/// `GET /channel_folders`.
async fn list_folders(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let include_archived = params.bool_or("include_archived", false)?;
    let folders = auth.realm.addr.send(ListFolders { viewer: auth.user.user_id, include_archived }).await??;
    Ok(params.success(json_object(json!({ "channel_folders": folders }))))
}

/// `POST /channel_folders/create`.
async fn create_folder(auth: Authed, params: Params) -> Result<Success, HttpError> {
    // Zulip checks the role before it parses any parameter: the actor reports a parse
    // error after its role check.
    let folder = new_folder(&params);
    let id = auth.realm.addr.send(CreateFolder { acting: auth.user.user_id, folder }).await??;
    Ok(params.success(json_object(json!({ "channel_folder_id": id }))))
}

/// `PATCH /channel_folders/{channel_folder_id}`.
async fn update_folder(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    // Zulip checks the role before it parses any parameter: the actor reports a parse
    // error after its role check.
    let folder_id = folder_id(&path);
    let changes = folder_changes(&params);
    auth.realm.addr.send(UpdateFolder { acting: auth.user.user_id, folder_id, changes }).await??;
    Ok(params.ok())
}

/// `PATCH /channel_folders`: `order` lists every folder id.
async fn reorder_folders(auth: Authed, params: Params) -> Result<Success, HttpError> {
    // Zulip checks the role before it parses any parameter: the actor reports a parse
    // error after its role check.
    let order =
        params.decode("order", decode::integer_list).and_then(|o| o.ok_or_else(|| ApiError::missing_argument("order")));
    auth.realm.addr.send(ReorderFolders { acting: auth.user.user_id, order }).await??;
    Ok(params.ok())
}
