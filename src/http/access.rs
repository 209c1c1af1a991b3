//! Around every request: the access log (`agora::access`, at `info`) and, when metrics are
//! on, the request's latency by method, route pattern (never the raw path, so ids do not
//! make new series) and status.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;

use super::state::AppState;
use crate::metrics::HTTP_REQUESTS;

/// The route label of requests no route matched.
const UNMATCHED: &str = "unmatched";

/// The middleware (`from_fn(access::log)`).
pub async fn log(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let measured = req.app_data::<web::Data<AppState>>().is_some_and(|s| s.metrics);
    let logged = tracing::enabled!(target: "agora::access", tracing::Level::INFO);
    // Only copy what is needed.
    let start = Instant::now();
    let method = (measured || logged).then(|| req.method().clone());
    let path = logged.then(|| req.path().to_owned());
    let response = next.call(req).await?;
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
            %method,
            %path,
            status,
            micros = elapsed.as_micros() as u64,
        );
    }
    Ok(response)
}
