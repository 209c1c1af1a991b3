//! Uploads under `/api/v1`: `POST /user_uploads` (one file, streamed to storage), the
//! temporary URL of a file (`GET /user_uploads/{realm_id}/{path}`), `GET` / `DELETE
//! /attachments`, avatars (`POST` / `DELETE /users/me/avatar`) and the organization's icon
//! (`POST` / `DELETE /realm/icon`). The files themselves
//! are served outside the API (`crate::http::files`).

use std::io::BufReader;

use actix_web::http::Method;
use actix_web::{web, Either, HttpMessage, HttpRequest, HttpResponse, Scope};
use agora_actors::json_object;
use agora_actors::realm::attachments::{
    CreateAttachment, DeleteAttachment, FileAccess, ListAttachments, NewUpload, ThumbnailStatus,
};
use agora_actors::realm::avatars::ops::{check_may_change, MAX_AVATAR_FILE_SIZE_MIB};
use agora_actors::realm::avatars::ChangeAvatar;
use agora_actors::realm::realm_icon::{ops as icon_ops, ChangeRealmIcon};
use agora_actors::thumbnailer::ThumbnailJob;
use agora_actors::uploads::images::{probe_reader, ImageInfo};
use agora_actors::uploads::images::{square_png, AVATAR_SIZE, MEDIUM_AVATAR_SIZE};
use agora_actors::uploads::names::avatar_path;
use agora_actors::uploads::names::{new_path_id, uploaded_name};
use agora_actors::ApiError;
use agora_actors::ErrorCode;
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::body::{BodyRules, CloseConnection};
use crate::http::files::{not_found_page, remove_file};
use crate::http::gate::Gate;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;
use crate::http::upload_body::{receive, too_large_file, ReceivedUpload, UploadRefusal};

/// The upload endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/user_uploads").route_with(Gate::UPLOAD, Method::POST, upload_file).build())
        .service(Endpoint::new(r"/user_uploads/{realm_id:\d+}/{filename:.+}").route(Method::GET, temporary_url).build())
        .service(
            Endpoint::new(r"/thumbnail/status/{realm_id:\d+}/{filename:.+}")
                .route(Method::GET, thumbnail_status)
                .build(),
        )
        .service(Endpoint::new("/attachments").route(Method::GET, list_attachments).build())
        .service(Endpoint::new(r"/attachments/{attachment_id:\d+}").route(Method::DELETE, delete_attachment).build())
        .service(
            Endpoint::new("/realm/icon")
                .route_with(Gate::UPLOAD, Method::POST, set_realm_icon)
                .route(Method::DELETE, delete_realm_icon)
                .build(),
        )
        .service(
            Endpoint::new("/users/me/avatar")
                .route_with(Gate::UPLOAD, Method::POST, set_avatar)
                .route(Method::DELETE, delete_avatar)
                .build(),
        )
}

/// The content type of an upload (Zulip's `get_file_info`): the client's, else the one its
/// name suggests, else `application/octet-stream`.
pub fn content_type_of(given: Option<String>, name: &str) -> Option<String> {
    given
        .filter(|t| !t.is_empty())
        .or_else(|| mime_guess::from_path(name).first_raw().map(str::to_owned))
        .or_else(|| Some("application/octet-stream".to_owned()))
}

/// Reads the body of an upload into a pending file of the storage (its first file),
/// refusing files over `max_mib` with `too_large` and, if given, a second file with
/// `several` (the connection is then closed: the rest of the body is not read).
pub async fn receive_upload(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    max_mib: u64,
    too_large: ApiError,
    several: Option<ApiError>,
) -> Result<ReceivedUpload, HttpError> {
    let rules = req.extensions().get::<BodyRules>().copied().unwrap_or(state.limits.upload_body);
    let max = max_mib.saturating_mul(1 << 20);
    match receive(req.headers(), payload.into_inner(), &rules, &state.storage, max, too_large, several).await {
        Ok(received) => Ok(received),
        Err(UploadRefusal::Error(e)) => {
            req.extensions_mut().insert(CloseConnection);
            Err(HttpError(e))
        }
    }
}

/// `POST /user_uploads`.
async fn upload_file(
    auth: Authed,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let max_mib = state.config.uploads.max_file_upload_size_mib;
    let several = ApiError::bad_request("You may only upload one file at a time");
    let received = receive_upload(&req, payload, &state, max_mib, too_large_file(max_mib), Some(several)).await?;
    let Some(file) = received.file else {
        return Err(HttpError(ApiError::bad_request("You must specify a file to upload")));
    };
    let params = Params::from_parts(req.query_string(), received.fields);
    let name = uploaded_name(&file.filename);
    let content_type = content_type_of(file.content_type, &name);
    let path_id = new_path_id(auth.realm.id, &name);
    let (mut pending, id, ct) = (file.pending, path_id.clone(), content_type.clone());
    // The header is read before the commit, from the local copy (with an object store, no
    // second transfer); a file whose header cannot be read is a plain file, not an error.
    let stored = web::block(move || -> std::io::Result<Option<ImageInfo>> {
        let image = pending.reader().ok().and_then(|f| probe_reader(BufReader::new(f), ct.as_deref()));
        pending.commit(&id)?;
        Ok(image)
    })
    .await;
    let image = match stored {
        Ok(Ok(image)) => image,
        Ok(Err(e)) => {
            tracing::error!(error = %e, "could not store an upload");
            return Err(HttpError(ApiError::internal()));
        }
        Err(e) => return Err(e.into()),
    };
    let upload =
        NewUpload { path_id: path_id.clone(), name: name.clone(), size: file.size as i64, content_type, image };
    let created = auth.realm.addr.send(CreateAttachment { user_id: auth.user.user_id, upload }).await;
    let attachment_id = match created {
        Ok(Ok(id)) => id,
        failed => {
            remove_file(&state, path_id).await;
            return Err(match failed {
                Ok(Err(e)) => HttpError(e),
                Err(e) => e.into(),
                Ok(Ok(_)) => HttpError(ApiError::internal()),
            });
        }
    };
    if image.is_some() {
        state.thumbnailer.enqueue(ThumbnailJob { realm_id: auth.realm.id, attachment_id, path_id: path_id.clone() });
    }
    metrics::counter!("agora_uploads_total").increment(1);
    metrics::counter!("agora_upload_bytes_total").increment(file.size);
    let url = format!("/user_uploads/{path_id}");
    Ok(params.success(json_object(json!({"uri": url, "url": url, "filename": name}))))
}

/// `GET /api/v1/user_uploads/{realm_id}/{filename}`: a URL serving the file for 60 s
/// without credentials, to those who may read it (the same refusal as a download
/// otherwise).
async fn temporary_url(
    auth: Authed,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> Result<Either<Success, HttpResponse>, HttpError> {
    let (realm_id, filename) = path.into_inner();
    let path_id = format!("{realm_id}/{filename}");
    let served = auth.realm.read(FileAccess { user_id: auth.user.user_id, path_id }).await??;
    let Some(file) = served else {
        return Ok(Either::Right(not_found_page(&req)));
    };
    let params = Params::from_parts(req.query_string(), Vec::new());
    let url = state.signer.url(&file.path_id, agora_actors::clock::now());
    Ok(Either::Left(params.success(json_object(json!({"url": url})))))
}

/// `GET /api/v1/thumbnail/status/{realm_id}/{filename}` (FL 479), polled by clients until an
/// uploaded image's thumbnail is made: `has_thumbnail`. A file the user may not read answers
/// as one that does not exist, with the refusal of `DELETE /attachments/{id}` (Zulip's page
/// does not say which error it gives).
async fn thumbnail_status(
    auth: Authed,
    path: web::Path<(String, String)>,
    params: Params,
) -> Result<Success, HttpError> {
    let (realm_id, filename) = path.into_inner();
    let path_id = format!("{realm_id}/{filename}");
    let status = auth.realm.read(ThumbnailStatus { user_id: auth.user.user_id, path_id }).await??;
    let has_thumbnail = status.ok_or_else(|| ApiError::bad_request("Invalid attachment"))?;
    Ok(params.success(json_object(json!({"has_thumbnail": has_thumbnail}))))
}

/// `GET /attachments`.
async fn list_attachments(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let data = auth.realm.read(ListAttachments { user_id: auth.user.user_id }).await??;
    Ok(params.success(data))
}

/// `DELETE /attachments/{attachment_id}`: the row, then the file.
async fn delete_attachment(
    auth: Authed,
    path: web::Path<String>,
    params: Params,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let msg = DeleteAttachment { user_id: auth.user.user_id, attachment_id: path_id(&path) };
    let path_id = auth.realm.addr.send(msg).await??;
    remove_file(&state, path_id).await;
    Ok(params.ok())
}

/// Makes `file` square PNGs of `sizes` and stores each under its path, off the async
/// threads; Zulip's `BAD_IMAGE` for a file that is no image.
async fn store_squares(
    state: &AppState,
    file: crate::http::upload_body::ReceivedFile,
    targets: Vec<(u32, String)>,
) -> Result<(), HttpError> {
    let storage = state.storage.clone();
    let made = web::block(move || -> std::io::Result<Result<(), &'static str>> {
        let bytes = file.pending.into_bytes()?;
        let mut images = Vec::with_capacity(targets.len());
        for (size, path) in targets {
            match square_png(&bytes, size) {
                Ok(png) => images.push((path, png)),
                Err(bad) => return Ok(Err(bad.0)),
            }
        }
        for (path, png) in images {
            storage.put(&path, &png)?;
        }
        Ok(Ok(()))
    })
    .await?;
    match made {
        Ok(Ok(())) => Ok(()),
        Ok(Err(bad)) => Err(HttpError(ApiError::new(ErrorCode::BadImage, 400, bad))),
        Err(e) => {
            tracing::error!(error = %e, "could not store an image");
            Err(HttpError(ApiError::internal()))
        }
    }
}

/// `POST /realm/icon`: administrators; exactly one image, made a 100-pixel square PNG.
async fn set_realm_icon(
    auth: Authed,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    icon_ops::check_may_change(&auth.realm.state(), auth.user.user_id)?;
    let max = icon_ops::MAX_ICON_FILE_SIZE_MIB as u64;
    let too_large = ApiError::bad_request(format!("Uploaded file is larger than the allowed limit of {max} MiB"));
    let received = receive_upload(&req, payload, &state, max, too_large, None).await?;
    let params = Params::from_parts(req.query_string(), received.fields);
    let (Some(file), 1) = (received.file, received.files) else {
        return Err(HttpError(ApiError::bad_request("You must upload exactly one icon.")));
    };
    let path = format!("user_avatars/{}/realm/icon.png", auth.realm.id.0);
    store_squares(&state, file, vec![(AVATAR_SIZE, path)]).await?;
    let url = auth.realm.addr.send(ChangeRealmIcon { user_id: auth.user.user_id, uploaded: true }).await??;
    Ok(params.success(json_object(json!({"icon_url": url}))))
}

/// `DELETE /realm/icon`: back to the default icon.
async fn delete_realm_icon(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let url = auth.realm.addr.send(ChangeRealmIcon { user_id: auth.user.user_id, uploaded: false }).await??;
    Ok(params.success(json_object(json!({"icon_url": url}))))
}

/// `POST /users/me/avatar`: exactly one image, made 100- and 500-pixel square PNGs and
/// stored (off the async threads) once the change is known to be allowed.
async fn set_avatar(
    auth: Authed,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let max = MAX_AVATAR_FILE_SIZE_MIB;
    let too_large = ApiError::bad_request(format!("Uploaded file is larger than the allowed limit of {max} MiB"));
    let received = receive_upload(&req, payload, &state, max, too_large, None).await?;
    let params = Params::from_parts(req.query_string(), received.fields);
    let (Some(file), 1) = (received.file, received.files) else {
        return Err(HttpError(ApiError::bad_request("You must upload exactly one avatar.")));
    };
    check_may_change(&auth.realm.state(), auth.user.user_id)?;
    let path = avatar_path(auth.realm.id, auth.user.user_id);
    let targets = vec![
        (MEDIUM_AVATAR_SIZE, format!("user_avatars/{path}-medium.png")),
        (AVATAR_SIZE, format!("user_avatars/{path}.png")),
    ];
    store_squares(&state, file, targets).await?;
    let url = auth.realm.addr.send(ChangeAvatar { user_id: auth.user.user_id, uploaded: true }).await??;
    Ok(params.success(json_object(json!({"avatar_url": url}))))
}

/// `DELETE /users/me/avatar`: back to the gravatar.
async fn delete_avatar(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let url = auth.realm.addr.send(ChangeAvatar { user_id: auth.user.user_id, uploaded: false }).await??;
    Ok(params.success(json_object(json!({"avatar_url": url}))))
}
