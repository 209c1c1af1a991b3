//! Around every request: its id, the access log (`agora::access`, at `info`) and, when
//! metrics are on, the request's latency by method, route pattern (never the raw path, so
//! ids do not make new series) and status.
//!
//! The request id is the `X-Request-Id` a proxy (or client) sent, if it is a short token,
//! or a fresh random one; it goes back in the response's `X-Request-Id`, is a field of the
//! access log line, and every line logged while the request is handled carries it (the
//! `request` span).

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web;
use tracing::Instrument;

use super::state::AppState;
use crate::metrics::HTTP_REQUESTS;

/// The route label of requests no route matched.
const UNMATCHED: &str = "unmatched";
/// The request id header, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// The longest request id taken from a request.
const MAX_REQUEST_ID: usize = 64;

/// The request's id: the one it brings when that is 1 to 64 letters, digits, `-`, `_`,
/// `.` or `:` (so that it can never forge a log line), else 16 random hex digits.
fn request_id(req: &ServiceRequest) -> String {
    let given = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok());
    match given {
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_REQUEST_ID
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)) =>
        {
            id.to_owned()
        }
        _ => format!("{:016x}", rand::random::<u64>()),
    }
}

/// The middleware (`from_fn(access::log)`).
pub async fn log(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = request_id(&req);
    let measured = req.app_data::<web::Data<AppState>>().is_some_and(|s| s.metrics);
    let logged = tracing::enabled!(target: "agora::access", tracing::Level::INFO);
    // Only copy what is needed.
    let start = Instant::now();
    let method = (measured || logged).then(|| req.method().clone());
    let path = logged.then(|| req.path().to_owned());
    let span = tracing::info_span!("request", request_id = %id);
    let mut response = next.call(req).instrument(span).await?;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let Some(method) = method else { return Ok(response) };
    let elapsed = start.elapsed();
    let status = response.status().as_u16();
    if measured {
        let route = response.request().match_pattern().unwrap_or_else(|| UNMATCHED.to_owned());
        metrics::histogram!(HTTP_REQUESTS, "method" => method.to_string(), "route" => route, "status" => status.to_string())
            .record(elapsed);
    }
    if let Some(path) = path {
        tracing::info!(
            target: "agora::access",
            request_id = %id,
            %method,
            %path,
            status,
            micros = elapsed.as_micros() as u64,
        );
    }
    Ok(response)
}
