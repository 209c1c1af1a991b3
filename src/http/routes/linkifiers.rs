//! Linkifiers (`/realm/linkifiers`, `/realm/filters`, `/realm/filters/{filter_id}`) and
//! the rendering preview (`/messages/render`). Zulip serves no `GET /realm/filters` any
//! more (it answers 405, as here).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::catalog::MAX_MESSAGE_LENGTH;
use agora_actors::realm::chat::preview::RenderPreview;
use agora_actors::realm::linkifiers::ops::Extras;
use agora_actors::realm::linkifiers::{
    AddLinkifier, ListLinkifiers, RemoveLinkifier, ReorderLinkifiers, UpdateLinkifier,
};
use agora_actors::ApiError;
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Admins, Guarded};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The linkifier and rendering preview endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/realm/linkifiers")
                .route(Method::GET, list_linkifiers)
                .route(Method::PATCH, reorder_linkifiers)
                .build(),
        )
        .service(Endpoint::new("/realm/filters").route(Method::POST, add_linkifier).build())
        .service(
            Endpoint::new(r"/realm/filters/{filter_id:\d+}")
                .route(Method::PATCH, update_linkifier)
                .route(Method::DELETE, remove_linkifier)
                .build(),
        )
        .service(Endpoint::new("/messages/render").route(Method::POST, render_message).build())
}

/// `GET /realm/linkifiers` (any user): `linkifiers`, in their order.
async fn list_linkifiers(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let linkifiers = auth.realm.addr.send(ListLinkifiers { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "linkifiers": linkifiers }))))
}

/// `POST /realm/filters` (administrators: Zulip checks the role before any parameter):
/// `pattern` and `url_template`; replies with the new linkifier's `id`.
async fn add_linkifier(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let pattern = params.required_str("pattern")?;
    let url_template = params.required_str("url_template")?;
    let extras = extras(&params)?;
    let id = auth.realm.addr.send(AddLinkifier { acting: auth.user.user_id, pattern, url_template, extras }).await??;
    Ok(params.success(json_object(json!({ "id": id }))))
}

/// `PATCH /realm/filters/{filter_id}` (administrators): `pattern` and `url_template`.
async fn update_linkifier(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let pattern = params.required_str("pattern")?;
    let url_template = params.required_str("url_template")?;
    let extras = extras(&params)?;
    let msg = UpdateLinkifier { acting: auth.user.user_id, id: path_id(&path), pattern, url_template, extras };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `example_input`, `reverse_template` (FL 471) and `alternative_url_templates` (FL 478, a
/// JSON list of strings).
fn extras(params: &Params) -> Result<Extras, HttpError> {
    Ok(Extras {
        example_input: params.str("example_input"),
        reverse_template: params.str("reverse_template"),
        alternative_url_templates: params.decode("alternative_url_templates", decode::string_list)?,
    })
}

/// `DELETE /realm/filters/{filter_id}` (administrators).
async fn remove_linkifier(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    auth.realm.addr.send(RemoveLinkifier { acting: auth.user.user_id, id: path_id(&path) }).await??;
    Ok(params.ok())
}

/// `PATCH /realm/linkifiers` (administrators): `ordered_linkifier_ids`, a JSON list.
async fn reorder_linkifiers(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let ids = params
        .decode("ordered_linkifier_ids", decode::integer_list)?
        .ok_or_else(|| ApiError::missing_argument("ordered_linkifier_ids"))?;
    auth.realm.addr.send(ReorderLinkifiers { acting: auth.user.user_id, ids }).await??;
    Ok(params.ok())
}

/// `POST /messages/render`: `content` (at most a message's length) as sending it would
/// render it; nothing is stored.
async fn render_message(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let content = params.required_str("content")?;
    if content.chars().count() > MAX_MESSAGE_LENGTH {
        let msg = format!("content is too long (limit: {MAX_MESSAGE_LENGTH} characters)");
        return Err(ApiError::bad_request(msg).into());
    }
    let rendered = auth.realm.read(RenderPreview { user_id: auth.user.user_id, content }).await??;
    Ok(params.success(json_object(json!({ "rendered": rendered }))))
}
