//! Serving uploaded files, outside `/api/v1` as Zulip serves them:
//!
//! - `/user_uploads/{realm_id}/{path}`: the file, to those who may read it
//!   ([`agora_actors::realm::attachments::FileAccess`]), authenticated with HTTP Basic (the
//!   mobile apps' way) or a browser's session; `/user_uploads/download/...` forces a download;
//! - `/user_uploads/temporary/{token}/{filename}`: the same without credentials, for 60 s;
//! - `/user_uploads/thumbnail/{realm_id}/{path}/{format}`: an image's thumbnail;
//! - `/user_avatars/{path}`: avatars and custom emoji, public as in Zulip; Jdenticon
//!   avatars are drawn on request.
//!
//! A file the requester may not read gets the same 404 as a file that does not exist. Files
//! are served with their type, `Content-Disposition` (inline only for the types Zulip deems
//! safe), `X-Content-Type-Options: nosniff`, a restrictive `Content-Security-Policy`,
//! range requests and validators (actix-files) and `Cache-Control: private, immutable`.
//! Only files the organization's state names are looked up, and the storage refuses any
//! path outside its directory.

use actix_files::NamedFile;
use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, ExtendedValue, HeaderValue,
};
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::ids::{RealmId, UserId};
use agora_actors::push::identity::realm_uuid;
use agora_actors::realm::attachments::{FileAccess, ServedFile};
use agora_actors::uploads::images::INLINE_MIME_TYPES;
use agora_actors::uploads::jdenticon;
use agora_actors::uploads::StoredFile;
use agora_actors::ApiError;

use super::auth::{authenticate, Site};
use super::response::{error_response, HttpError};
use super::state::AppState;

/// Zulip's policy for served uploads: nothing runs, media and embedded objects of the
/// same origin only.
const UPLOAD_CSP: &str =
    "default-src 'none'; img-src 'self'; media-src 'self'; object-src 'self'; style-src 'unsafe-inline'";

/// Registers the file routes, for GET and HEAD (literal prefixes before the `{realm_id}`
/// one).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        super::routes::listed(&["GET"], "/user_uploads/temporary/{token}/{filename}")
            .route(web::get().to(temporary))
            .route(web::head().to(temporary)),
    )
    .service(
        super::routes::listed(&["GET"], "/user_uploads/download/{realm_id:\\d+}/{path:.+}")
            .route(web::get().to(download))
            .route(web::head().to(download)),
    )
    .service(
        super::routes::listed(&["GET"], "/user_uploads/thumbnail/{realm_id:\\d+}/{path:.+}")
            .route(web::get().to(thumbnail))
            .route(web::head().to(thumbnail)),
    )
    .service(
        super::routes::listed(&["GET"], "/user_uploads/{realm_id:\\d+}/{path:.+}")
            .route(web::get().to(serve))
            .route(web::head().to(serve)),
    )
    .service(
        super::routes::listed(&["GET"], "/user_avatars/{path:.+}")
            .route(web::get().to(avatar))
            .route(web::head().to(avatar)),
    );
}

/// The refusal of a file that does not exist or may not be read (HTML, as Zulip's).
pub fn not_found_page(_req: &HttpRequest) -> HttpResponse {
    HttpResponse::NotFound()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::VARY, "Accept"))
        .body("<p>This file does not exist or has been deleted.</p>")
}

/// Removes a stored file (and its thumbnails) off the async threads; a failure is logged.
pub async fn remove_file(state: &AppState, path_id: String) {
    let storage = state.storage.clone();
    match web::block(move || storage.delete(&path_id)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "could not remove an uploaded file"),
        Err(e) => tracing::error!(error = %e, "could not remove an uploaded file"),
    }
}

/// Opens a stored file off the async threads.
async fn open(state: &AppState, path_id: String) -> Result<Option<StoredFile>, HttpError> {
    let storage = state.storage.clone();
    match web::block(move || storage.open(&path_id)).await? {
        Ok(stored) => Ok(stored),
        Err(e) => {
            tracing::error!(error = %e, "could not open an uploaded file");
            Err(HttpError(ApiError::internal()))
        }
    }
}

/// `Content-Disposition` with `name` (`filename*` for names that are not ASCII).
fn disposition(inline: bool, name: &str) -> ContentDisposition {
    let param = if name.is_ascii() && !name.chars().any(|c| c.is_ascii_control()) {
        DispositionParam::Filename(name.to_owned())
    } else {
        DispositionParam::FilenameExt(ExtendedValue {
            charset: Charset::Ext("UTF-8".to_owned()),
            language_tag: None,
            value: name.as_bytes().to_vec(),
        })
    };
    let disposition = if inline { DispositionType::Inline } else { DispositionType::Attachment };
    ContentDisposition { disposition, parameters: vec![param] }
}

/// The response serving `stored`, of `content_type`, as `name`.
fn respond(req: &HttpRequest, stored: StoredFile, content_type: &str, name: &str, download: bool) -> HttpResponse {
    let inline = !download && INLINE_MIME_TYPES.contains(&content_type);
    let mime: mime::Mime = content_type.parse().unwrap_or(mime::APPLICATION_OCTET_STREAM);
    let file = match NamedFile::from_file(stored.file, &stored.path) {
        Ok(file) => file,
        Err(e) => {
            tracing::error!(error = %e, "could not serve an uploaded file");
            return error_response(&ApiError::internal());
        }
    };
    let mut response =
        file.set_content_type(mime).set_content_disposition(disposition(inline, name)).into_response(req);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, immutable"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(UPLOAD_CSP));
    response
}

/// The content type a file is served with: its recorded one for attachments, else by name.
fn type_of(file: &ServedFile) -> String {
    file.content_type
        .clone()
        .or_else(|| mime_guess::from_path(&file.name).first_raw().map(str::to_owned))
        .unwrap_or_else(|| "application/octet-stream".to_owned())
}

/// The file `{realm_id}/{path}` names, if the authenticated requester may read it.
async fn authorized(
    req: &HttpRequest,
    state: &AppState,
    path: (String, String),
) -> Result<Option<ServedFile>, HttpResponse> {
    // A browser's image or link: its session (these are GET requests: no CSRF token).
    let by_session = req.headers().get(actix_web::http::header::AUTHORIZATION).is_none()
        && super::session::session_token(req).is_some();
    let authed = if by_session {
        super::session::authenticate(state, req).await.map_err(|e| error_response(&e))?
    } else {
        match authenticate(state, req).await {
            Ok(authed) => authed,
            Err(refusal) => return Err(error_response(&refusal.explain(state).await)),
        }
    };
    let path_id = format!("{}/{}", path.0, path.1);
    match authed.realm.read(FileAccess { user_id: authed.user.user_id, path_id }).await {
        Ok(Ok(served)) => Ok(served),
        Ok(Err(e)) => Err(error_response(&e)),
        Err(e) => Err(error_response(&HttpError::from(e).0)),
    }
}

async fn serve_path(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: (String, String),
    download: bool,
) -> HttpResponse {
    let file = match authorized(&req, &state, path).await {
        Ok(Some(file)) => file,
        Ok(None) => return not_found_page(&req),
        Err(response) => return response,
    };
    match open(&state, file.path_id.clone()).await {
        Ok(Some(stored)) => respond(&req, stored, &type_of(&file), &file.name, download),
        Ok(None) => not_found_page(&req),
        Err(e) => error_response(&e.0),
    }
}

/// `GET /user_uploads/{realm_id}/{path}`.
async fn serve(req: HttpRequest, state: web::Data<AppState>, path: web::Path<(String, String)>) -> HttpResponse {
    serve_path(req, state, path.into_inner(), false).await
}

/// `GET /user_uploads/download/{realm_id}/{path}`: always as an attachment.
async fn download(req: HttpRequest, state: web::Data<AppState>, path: web::Path<(String, String)>) -> HttpResponse {
    serve_path(req, state, path.into_inner(), true).await
}

/// `GET /user_uploads/thumbnail/{realm_id}/{path}/{format}`.
async fn thumbnail(req: HttpRequest, state: web::Data<AppState>, path: web::Path<(String, String)>) -> HttpResponse {
    let (realm_id, rest) = path.into_inner();
    let Some((path, format)) = rest.rsplit_once('/') else {
        return not_found_page(&req);
    };
    let file = match authorized(&req, &state, (realm_id, path.to_owned())).await {
        Ok(Some(file)) => file,
        Ok(None) => return not_found_page(&req),
        Err(response) => return response,
    };
    match open(&state, format!("thumbnail/{}/{format}", file.path_id)).await {
        Ok(Some(stored)) => respond(&req, stored, "image/webp", format, false),
        Ok(None) => not_found_page(&req),
        Err(e) => error_response(&e.0),
    }
}

/// `GET /user_uploads/temporary/{token}/{filename}`: no credentials; Zulip's "Invalid
/// token" and "Invalid filename".
async fn temporary(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    site: Site,
) -> HttpResponse {
    let (token, filename) = path.into_inner();
    let Some(path_id) = state.signer.check(&token, agora_actors::clock::now()) else {
        return error_response(&ApiError::bad_request("Invalid token"));
    };
    if path_id.rsplit('/').next() != Some(filename.as_str()) {
        return error_response(&ApiError::bad_request("Invalid filename"));
    }
    let snapshot = site.realm().ok().map(|r| r.state());
    let Some(a) = snapshot.as_ref().and_then(|s| s.uploads().by_path(&path_id)) else {
        return not_found_page(&req);
    };
    let file = ServedFile { path_id: a.path_id.clone(), name: a.name.clone(), content_type: a.content_type.clone() };
    match open(&state, path_id).await {
        Ok(Some(stored)) => respond(&req, stored, &type_of(&file), &file.name, false),
        Ok(None) => not_found_page(&req),
        Err(e) => error_response(&e.0),
    }
}

/// `GET /user_avatars/{path}`: avatars and custom emoji (PNG), and data exports, to anyone.
async fn avatar(req: HttpRequest, state: web::Data<AppState>, path: web::Path<String>) -> HttpResponse {
    let path = path.into_inner();
    let name = path.rsplit('/').next().unwrap_or_default().to_owned();
    // Data exports are served here too, as Zulip serves them: whoever has the link (an
    // unguessable one, given to the organization's administrators) may fetch it.
    let export = path.starts_with("exports/") && name.ends_with(".tar.gz");
    if !name.ends_with(".png") && !export {
        return not_found_page(&req);
    }
    let kind = if export { "application/gzip" } else { "image/png" };
    let path_id = format!("user_avatars/{path}");
    let mut stored = open(&state, path_id.clone()).await;
    // A Jdenticon is drawn on its first request, then kept like any avatar.
    if let (Ok(None), Some(jdenticon)) = (&stored, jdenticon_request(&path)) {
        if let Err(response) = draw_jdenticon(&req, &state, &path_id, jdenticon).await {
            return response;
        }
        stored = open(&state, path_id).await;
    }
    match stored {
        Ok(Some(stored)) => respond(&req, stored, kind, &name, export),
        Ok(None) => not_found_page(&req),
        Err(e) => error_response(&e.0),
    }
}

/// A Jdenticon's organization, user and size.
type Jdenticon = (RealmId, UserId, u32);

/// A Jdenticon avatar's path: `{realm_id}/jdenticon/{user_id}.png`, or `-medium.png`.
fn jdenticon_request(path: &str) -> Option<Jdenticon> {
    let mut parts = path.split('/');
    let (realm, kind, file) = (parts.next()?, parts.next()?, parts.next()?);
    if kind != "jdenticon" || parts.next().is_some() {
        return None;
    }
    let stem = file.strip_suffix(".png")?;
    let (user, size) = match stem.strip_suffix("-medium") {
        Some(user) => (user, jdenticon::SIZES[1]),
        None => (stem, jdenticon::SIZES[0]),
    };
    let number = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse::<i64>().ok()).flatten();
    Some((RealmId(number(realm)?), UserId(number(user)?), size))
}

/// Stores at `path_id` the Jdenticon of a user whose avatar is one (anyone may see it, as
/// any avatar), drawn from the organization's `realm_uuid` and the user's id as clients
/// that draw it themselves do; the page to answer when there is none to draw.
async fn draw_jdenticon(
    req: &HttpRequest,
    state: &AppState,
    path_id: &str,
    (realm, user, size): Jdenticon,
) -> Result<(), HttpResponse> {
    let Ok(Some(handle)) = state.realms.find_by_id(realm).await else { return Err(not_found_page(req)) };
    if handle.state().user(user).is_none_or(|u| u.avatar_source != "J") {
        return Err(not_found_page(req));
    }
    let uuid = realm_uuid(state.config.push.org_id.as_deref().unwrap_or(""), realm);
    let (storage, target) = (state.storage.clone(), path_id.to_owned());
    let drawn = web::block(move || storage.put(&target, &jdenticon::png(&jdenticon::seed(&uuid, user.0), size))).await;
    if !matches!(drawn, Ok(Ok(()))) {
        tracing::error!(realm.id = %realm, user.id = %user, "could not store a Jdenticon");
        return Err(error_response(&ApiError::internal()));
    }
    Ok(())
}
