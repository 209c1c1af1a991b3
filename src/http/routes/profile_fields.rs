//! Custom profile fields (`/realm/profile_fields...`, `/users/me/profile_data`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::profile_fields::{
    CreateProfileField, DeleteProfileField, FieldChanges, ListProfileFields, NewField, RemoveOwnProfileData,
    ReorderProfileFields, UpdateOwnProfileData, UpdateProfileField,
};
use agora_actors::ApiError;
use serde_json::json;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Admins, Guarded, Humans};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The custom profile field endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/realm/profile_fields")
                .route(Method::GET, list_fields)
                .route(Method::POST, create_field)
                .route(Method::PATCH, reorder_fields)
                .build(),
        )
        .service(
            Endpoint::new("/realm/profile_fields/{field_id}")
                .route(Method::PATCH, update_field)
                .route(Method::DELETE, delete_field)
                .build(),
        )
        .service(
            Endpoint::new("/users/me/profile_data")
                .route(Method::PATCH, update_own_data)
                .route(Method::DELETE, remove_own_data)
                .build(),
        )
}

/// The `{field_id}` of a path: digits only (Zulip's URL pattern), else the JSON 404.
fn field_id(path: &str) -> Result<i64, ApiError> {
    if path.is_empty() || !path.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::not_found());
    }
    path.parse().map_err(|_| ApiError::bad_request(format!("Field id {path} not found.")))
}

/// `GET /realm/profile_fields`.
pub async fn list_fields(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let fields = auth.realm.addr.send(ListProfileFields { viewer: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "custom_fields": fields }))))
}

/// `POST /realm/profile_fields` (administrators: Zulip checks the role before it parses any
/// parameter).
pub async fn create_field(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let field = NewField {
        name: params.str("name").unwrap_or_default(),
        hint: params.str("hint").unwrap_or_default(),
        field_type: params
            .decode("field_type", decode::integer)?
            .ok_or_else(|| ApiError::missing_argument("field_type"))?,
        field_data: params.decode("field_data", decode::object)?.unwrap_or_default(),
        display_in_profile_summary: params.bool_or("display_in_profile_summary", false)?,
        required: params.bool_or("required", false)?,
        editable_by_user: params.bool_or("editable_by_user", true)?,
        use_for_user_matching: params.bool_or("use_for_user_matching", false)?,
    };
    let id = auth.realm.addr.send(CreateProfileField { acting: auth.user.user_id, field }).await??;
    Ok(params.success(json_object(json!({ "id": id }))))
}

/// `PATCH /realm/profile_fields/{field_id}` (administrators).
pub async fn update_field(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let field_id = field_id(&path)?;
    let changes = FieldChanges {
        name: params.str("name"),
        hint: params.str("hint"),
        field_data: params.decode("field_data", decode::object)?,
        display_in_profile_summary: params.bool("display_in_profile_summary")?,
        required: params.bool("required")?,
        editable_by_user: params.bool("editable_by_user")?,
        use_for_user_matching: params.bool("use_for_user_matching")?,
    };
    auth.realm.addr.send(UpdateProfileField { acting: auth.user.user_id, field_id, changes }).await??;
    Ok(params.ok())
}

/// `DELETE /realm/profile_fields/{field_id}` (administrators).
pub async fn delete_field(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let field_id = field_id(&path)?;
    auth.realm.addr.send(DeleteProfileField { acting: auth.user.user_id, field_id }).await??;
    Ok(params.ok())
}

/// `PATCH /realm/profile_fields` (administrators): `order` lists every field id.
pub async fn reorder_fields(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let order = params.decode("order", decode::integer_list)?.ok_or_else(|| ApiError::missing_argument("order"))?;
    auth.realm.addr.send(ReorderProfileFields { acting: auth.user.user_id, order }).await??;
    Ok(params.ok())
}

/// `PATCH /users/me/profile_data` (humans): `data` = `[{"id": N, "value": ...}]`.
pub async fn update_own_data(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let data = params.decode("data", decode::list)?.ok_or_else(|| ApiError::missing_argument("data"))?;
    auth.realm.addr.send(UpdateOwnProfileData { user_id: auth.user.user_id, data }).await??;
    Ok(params.ok())
}

/// `DELETE /users/me/profile_data` (humans): `data` = field ids.
pub async fn remove_own_data(req: Guarded<Humans>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let field_ids = params.decode("data", decode::integer_list)?.ok_or_else(|| ApiError::missing_argument("data"))?;
    auth.realm.addr.send(RemoveOwnProfileData { user_id: auth.user.user_id, field_ids }).await??;
    Ok(params.ok())
}
