//! Emoji: `GET /realm/emoji` (the organization's custom emoji), and the emoji data file
//! that `server_emoji_data_url` names, a static file served without authentication.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse, Scope};
use agora_actors::emoji::{self, UNHASHED_DATA_PATH};
use serde_json::{Map, Value};

use super::Endpoint;
use crate::http::params::Params;
use crate::http::response::Success;

/// The custom emoji endpoint.
pub(super) fn routes(scope: Scope) -> Scope {
    scope.service(Endpoint::new("/realm/emoji").route(Method::GET, list_custom_emoji).build())
}

/// The emoji data file, at the hashed path `server_emoji_data_url` names and at its
/// unhashed name.
pub(super) fn static_files(cfg: &mut web::ServiceConfig) {
    for path in [emoji::data_file().path.as_str(), UNHASHED_DATA_PATH] {
        cfg.service(web::resource(path).route(web::get().to(data_file)).route(web::head().to(data_file)));
    }
}

/// `GET /realm/emoji`: the custom emoji by id. Custom emoji cannot be uploaded yet, so
/// there are none.
async fn list_custom_emoji(params: Params) -> Success {
    let mut data = Map::new();
    data.insert("emoji".into(), Value::Object(Map::new()));
    params.success(data)
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
