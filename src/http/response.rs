//! Zulip's response envelopes, rendered in one place.
//!
//! Success: `{"result":"success","msg":"",...data,["ignored_parameters_unsupported"]}`.
//! Error: `{"result":"error","msg",["code"],...data}` with Zulip's status and headers. Both
//! are compact JSON with a trailing newline, as Zulip's orjson responses.

use actix_web::body::{BoxBody, SizedStream};
use bytes::Bytes;
use std::time::SystemTime;

use actix_web::http::header::{self, HeaderValue, HttpDate};
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, Responder, ResponseError};
use agora_actors::{ApiError, ErrorCode};
use serde_json::{Map, Value};

use super::auth::Authenticated;
use super::compress;

/// A successful API reply. Built by [`super::params::Params::success`], which adds the
/// parameters the endpoint did not use.
#[derive(Debug)]
pub struct Success {
    pub(super) body: Body,
    /// Bodies at least this long are gzipped for clients that accept it.
    gzip_from: usize,
}

/// A success body: a JSON object, or one already written (the events of a poll, whose
/// parts are serialized once and shared between queues).
#[derive(Debug)]
pub(super) enum Body {
    Object(Map<String, Value>),
    Text(String),
    /// Written in pieces (shared with a cache), sent one after the other.
    Parts(Vec<Bytes>),
}

impl Success {
    /// The envelope around `data`.
    pub(super) fn new(data: Map<String, Value>, ignored: Vec<String>) -> Self {
        let mut body = Map::with_capacity(data.len() + 3);
        body.insert("result".into(), "success".into());
        body.insert("msg".into(), "".into());
        body.extend(data);
        if !ignored.is_empty() {
            body.insert("ignored_parameters_unsupported".into(), ignored.into());
        }
        Success { body: Body::Object(body), gzip_from: compress::MIN_BYTES }
    }

    /// The envelope around `fields`: JSON object members (`"a":1,"b":[...]`) already
    /// written.
    pub(super) fn from_fields(fields: &str, ignored: Vec<String>) -> Self {
        let mut text = String::with_capacity(fields.len() + 40);
        text.push_str(r#"{"result":"success","msg":"""#);
        if !fields.is_empty() {
            text.push(',');
            text.push_str(fields);
        }
        if !ignored.is_empty() {
            text.push_str(r#","ignored_parameters_unsupported":"#);
            text.push_str(&Value::from(ignored).to_string());
        }
        text.push_str("}\n");
        Success { body: Body::Text(text), gzip_from: compress::MIN_BYTES }
    }

    /// Gzipped (for clients that accept it) only from `bytes` on.
    pub fn gzip_from(mut self, bytes: usize) -> Self {
        self.gzip_from = bytes;
        self
    }

    /// The body's length.
    fn len(&self) -> Option<usize> {
        match &self.body {
            Body::Object(_) => None,
            Body::Text(text) => Some(text.len()),
            Body::Parts(parts) => Some(parts.iter().map(Bytes::len).sum()),
        }
    }

    /// The body gzipped, if the client accepts it and it is long enough to be worth it.
    fn gzipped(self, req: &HttpRequest) -> Result<Vec<u8>, Success> {
        if self.len().is_some_and(|len| len < self.gzip_from) || !compress::accepts_gzip(req) {
            return Err(self);
        }
        let packed = match &self.body {
            Body::Object(map) => {
                let bytes = json_bytes(map);
                if bytes.len() < self.gzip_from {
                    // serde_json writes UTF-8: the conversion takes the bytes as they are.
                    let text = String::from_utf8(bytes).unwrap_or_default();
                    return Err(Success { body: Body::Text(text), ..self });
                }
                compress::gzip([&bytes[..]], bytes.len())
            }
            Body::Text(text) => compress::gzip([text.as_bytes()], text.len()),
            Body::Parts(parts) => compress::gzip(parts.iter().map(|p| &p[..]), parts.iter().map(Bytes::len).sum()),
        };
        packed.ok_or(self)
    }

    /// The envelope around `fields`, members already written in pieces that go out as they
    /// are (a presence reply's cached blocks), never copied into one string here.
    pub(super) fn from_parts(fields: Vec<Bytes>, ignored: Vec<String>) -> Self {
        let mut parts = Vec::with_capacity(fields.len() + 2);
        let some_fields = fields.iter().any(|part| !part.is_empty());
        parts.push(Bytes::from_static(if some_fields {
            br#"{"result":"success","msg":"","#
        } else {
            br#"{"result":"success","msg":"""#
        }));
        parts.extend(fields.into_iter().filter(|part| !part.is_empty()));
        let mut end = String::new();
        if !ignored.is_empty() {
            end.push_str(r#","ignored_parameters_unsupported":"#);
            end.push_str(&Value::from(ignored).to_string());
        }
        end.push_str("}\n");
        parts.push(Bytes::from(end));
        Success { body: Body::Parts(parts), gzip_from: compress::MIN_BYTES }
    }
}

impl Responder for Success {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let plain = match self.gzipped(req) {
            Ok(packed) => {
                let mut response = HttpResponse::Ok().content_type("application/json").body(packed);
                compress::mark_gzipped(response.headers_mut());
                return never_cache(req, response);
            }
            Err(plain) => plain,
        };
        let response = match plain.body {
            Body::Object(map) => json_response(StatusCode::OK, &Value::Object(map)),
            Body::Text(text) => HttpResponse::Ok().content_type("application/json").body(text),
            Body::Parts(parts) => {
                let length = parts.iter().map(|part| part.len() as u64).sum();
                let stream = futures_util::stream::iter(parts.into_iter().map(Ok::<_, std::convert::Infallible>));
                HttpResponse::Ok().content_type("application/json").body(SizedStream::new(length, stream))
            }
        };
        never_cache(req, response)
    }
}

/// Like Django's `add_never_cache_headers` on Zulip's authenticated replies.
fn never_cache(req: &HttpRequest, mut response: HttpResponse) -> HttpResponse {
    if req.extensions().contains::<Authenticated>() {
        let headers = response.headers_mut();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=0, no-cache, no-store, must-revalidate, private"),
        );
        if let Ok(now) = HeaderValue::from_str(&HttpDate::from(SystemTime::now()).to_string()) {
            headers.insert(header::EXPIRES, now);
        }
    }
    response
}

/// Compact JSON with Zulip's trailing newline.
fn json_bytes(body: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

/// A response of compact JSON with Zulip's trailing newline.
pub fn json_response(status: StatusCode, body: &Value) -> HttpResponse {
    HttpResponse::build(status).content_type("application/json").body(json_bytes(body))
}

/// An [`ApiError`] on its way to the client.
#[derive(Debug)]
pub struct HttpError(pub ApiError);

impl From<ApiError> for HttpError {
    fn from(e: ApiError) -> Self {
        HttpError(e)
    }
}

impl From<actix::MailboxError> for HttpError {
    fn from(e: actix::MailboxError) -> Self {
        match e {
            // The actor stopped: the server is stopping, or the actor died and the next
            // request starts a fresh one. Either way a retry is the right move.
            actix::MailboxError::Closed => {
                tracing::warn!("actor stopped while handling a request");
                HttpError(ApiError::unavailable())
            }
            actix::MailboxError::Timeout => {
                tracing::error!(error = %e, "actor unavailable");
                HttpError(ApiError::internal())
            }
        }
    }
}

impl From<actix_web::error::BlockingError> for HttpError {
    fn from(e: actix_web::error::BlockingError) -> Self {
        tracing::error!(error = %e, "blocking task failed");
        HttpError(ApiError::internal())
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        error_response(&self.0)
    }
}

/// The JSON body and headers of an error.
pub fn error_response(err: &ApiError) -> HttpResponse {
    let mut body = Map::with_capacity(err.data.len() + 3);
    body.insert("result".into(), "error".into());
    body.insert("msg".into(), err.msg.clone().into());
    // Zulip puts the error's own fields before `code`.
    body.extend(err.data.clone());
    if let Some(code) = err.code {
        body.insert("code".into(), code.as_str().into());
    }
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, &Value::Object(body));
    let headers = response.headers_mut();
    match err.code {
        Some(ErrorCode::Unauthorized) => {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"zulip\""));
        }
        Some(ErrorCode::RateLimitHit) => {
            let secs = err.data.get("retry-after").and_then(Value::as_f64).unwrap_or(1.0).ceil();
            if let Ok(v) = HeaderValue::from_str(&format!("{secs}")) {
                headers.insert(header::RETRY_AFTER, v);
            }
        }
        _ => {}
    }
    if let Some(Value::Array(methods)) = err.data.get("allowed_methods") {
        let allow: Vec<&str> = methods.iter().filter_map(Value::as_str).collect();
        if let Ok(v) = HeaderValue::from_str(&allow.join(", ")) {
            headers.insert(header::ALLOW, v);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(response: HttpResponse) -> String {
        let bytes = actix_web::body::to_bytes(response.into_body()).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[actix_web::test]
    async fn internal_errors_say_nothing_of_their_cause() {
        let response = HttpError::from(actix::MailboxError::Timeout).error_response();
        assert_eq!(response.status(), 500);
        assert_eq!(body(response).await, "{\"result\":\"error\",\"msg\":\"Internal server error\"}\n");
        let response = HttpError::from(actix::MailboxError::Closed).error_response();
        assert_eq!(response.status(), 503);
        assert_eq!(
            body(response).await,
            "{\"result\":\"error\",\"msg\":\"The server is restarting; please try again.\",\"code\":\"SERVER_NOT_READY\"}\n"
        );
    }

    #[actix_web::test]
    async fn rate_limits_carry_retry_after() {
        let response = error_response(&ApiError::rate_limited(12.5));
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "13");
        assert_eq!(
            body(response).await,
            "{\"result\":\"error\",\"msg\":\"API usage exceeded rate limit\",\"retry-after\":12.5,\"code\":\"RATE_LIMIT_HIT\"}\n"
        );
    }
}
