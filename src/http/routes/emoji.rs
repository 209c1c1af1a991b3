//! Emoji: the organization's custom emoji (`GET /realm/emoji`, `POST` and `DELETE
//! /realm/emoji/{emoji_name}`), and the emoji data file that `server_emoji_data_url` names,
//! a static file served without authentication.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse, Scope};
use agora_actors::emoji::{self, UNHASHED_DATA_PATH};
use agora_actors::realm::realm_emoji::ops::MAX_EMOJI_FILE_SIZE_MIB;
use agora_actors::realm::realm_emoji::{AddRealmEmoji, EmojiUpload, ListRealmEmoji, RemoveRealmEmoji};
use agora_actors::uploads::images::{square_png, EMOJI_SIZE};
use agora_actors::ApiError;
use rand::Rng;
use serde_json::{Map, Value};

use super::uploads::receive_upload;
use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::files::remove_file;
use crate::http::gate::Gate;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// The custom emoji endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope.service(Endpoint::new("/realm/emoji").route(Method::GET, list_custom_emoji).build()).service(
        Endpoint::new("/realm/emoji/{emoji_name}")
            .route_with(Gate::UPLOAD, Method::POST, add_custom_emoji)
            .route(Method::DELETE, remove_custom_emoji)
            .build(),
    )
}

/// `POST /realm/emoji/{emoji_name}`: the image is made a 64-pixel square PNG and stored
/// (off the async threads), then the emoji is added; a refused emoji's file is removed.
async fn add_custom_emoji(
    auth: Authed,
    req: HttpRequest,
    payload: web::Payload,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let max = MAX_EMOJI_FILE_SIZE_MIB;
    let too_large = ApiError::bad_request(format!("Uploaded file is larger than the allowed limit of {max} MiB"));
    let received = receive_upload(&req, payload, &state, max, too_large, None).await?;
    let params = Params::from_parts(req.query_string(), received.fields);
    let mut upload = EmojiUpload { name: path.into_inner(), files: received.files, file_name: None, bad_image: None };
    let mut stored = None;
    if let (Some(file), 1) = (received.file, received.files) {
        let storage = state.storage.clone();
        let file_name = format!("{:016x}.png", rand::thread_rng().gen::<u64>());
        let path_id = format!("user_avatars/{}/emoji/images/{file_name}", auth.realm.id.0);
        let target = path_id.clone();
        let made = web::block(move || -> std::io::Result<Result<(), &'static str>> {
            let bytes = file.pending.into_bytes()?;
            match square_png(&bytes, EMOJI_SIZE) {
                Ok(png) => storage.put(&target, &png).map(Ok),
                Err(bad) => Ok(Err(bad.0)),
            }
        })
        .await?
        .map_err(|e| {
            tracing::error!(error = %e, "could not store a custom emoji");
            HttpError(ApiError::internal())
        })?;
        match made {
            Ok(()) => {
                upload.file_name = Some(file_name);
                stored = Some(path_id);
            }
            Err(bad) => upload.bad_image = Some(bad.to_owned()),
        }
    }
    let added = auth.realm.addr.send(AddRealmEmoji { user_id: auth.user.user_id, upload }).await;
    if !matches!(added, Ok(Ok(()))) {
        if let Some(path_id) = stored {
            remove_file(&state, path_id).await;
        }
    }
    added??;
    Ok(params.ok())
}

/// `DELETE /realm/emoji/{emoji_name}`: deactivates it (its image stays, as in Zulip:
/// messages that used it still show it).
async fn remove_custom_emoji(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = RemoveRealmEmoji { user_id: auth.user.user_id, name: path.into_inner() };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// The emoji data file, at the hashed path `server_emoji_data_url` names and at its
/// unhashed name.
pub(super) fn static_files(cfg: &mut web::ServiceConfig) {
    for path in [emoji::data_file().path.as_str(), UNHASHED_DATA_PATH] {
        cfg.service(super::listed(&["GET"], path).route(web::get().to(data_file)).route(web::head().to(data_file)));
    }
}

/// `GET /realm/emoji`: the custom emoji by id.
async fn list_custom_emoji(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let emoji = auth.realm.addr.send(ListRealmEmoji { user_id: auth.user.user_id }).await??;
    let mut data = Map::new();
    data.insert("emoji".into(), Value::Object(emoji));
    Ok(params.success(data))
}

/// The emoji data file (`{"code_to_names": ...}`). Its hashed name changes with its
/// content, so that one may be cached forever; the unhashed one is revalidated (its ETag is
/// the same content hash).
async fn data_file(req: HttpRequest) -> HttpResponse {
    let file = emoji::data_file();
    let immutable = req.path() == file.path;
    let etag = format!("\"{}\"", file.hash);
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    let mut response = if fresh { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    response
        .insert_header((
            header::CACHE_CONTROL,
            if immutable { "public, max-age=31536000, immutable" } else { "public, no-cache" },
        ))
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*")))
        .insert_header((header::ETAG, etag));
    if fresh {
        return response.finish();
    }
    response.content_type("application/json").body(file.body.as_slice())
}
