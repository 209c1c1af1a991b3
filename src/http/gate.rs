//! Each route's gate: what must hold before its handler runs and its body is read.
//!
//! In order: a declared `Content-Length` within the route's limit (413 at once, nothing
//! read); for user routes, authentication; then Zulip's general rate limits, per user
//! (`api_by_user`) once authenticated, per client address (`api_by_ip`) for public routes
//! and for requests whose credentials fail. Rate-limited responses, successes and errors
//! alike, carry Zulip's `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
//! `X-RateLimit-Reset`; past the limit the answer is 429 `RATE_LIMIT_HIT`.
//!
//! Gates are declared with the routes ([`super::routes`]), so a handler's extractors, the
//! body reader among them, only ever run for a request its route may serve.

use std::net::{IpAddr, Ipv6Addr};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest};
use agora_actors::ids::{RealmId, UserId};
use agora_actors::ratelimit::Rule;
use agora_actors::ApiError;

use super::auth::{authenticate, Authed, Authenticated};
use super::body::{too_large, BodyRules, CloseConnection};
use super::ratelimit::{KeyedLimiter, Verdict};
use super::response::error_response;
use super::state::AppState;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone (`/server_settings`, `/fetch_api_key`); limited per client address.
    Anyone,
    /// Authenticated users; limited per user.
    User,
}

/// Which body limit a route has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySize {
    /// Parameters only (`[request_body]`).
    Params,
    /// A file (`POST /user_uploads`, emoji, avatars): `[uploads]`'s size limit (plus room
    /// for the multipart framing) and timeouts; the handler streams the payload to storage
    /// instead of taking `Params`.
    Upload,
}

/// What a route requires before its handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    pub access: Access,
    pub body: BodySize,
}

impl Gate {
    /// An authenticated route with parameters.
    pub const USER: Gate = Gate { access: Access::User, body: BodySize::Params };
    /// A public route with parameters.
    pub const ANYONE: Gate = Gate { access: Access::Anyone, body: BodySize::Params };
    /// An authenticated route that takes a file.
    pub const UPLOAD: Gate = Gate { access: Access::User, body: BodySize::Upload };
}

/// Zulip's general rate limits.
#[derive(Debug)]
pub struct ApiLimits {
    per_user: KeyedLimiter<(RealmId, UserId)>,
    per_ip: KeyedLimiter<IpAddr>,
}

impl ApiLimits {
    /// Limits of `per_user` requests per user and `per_ip` per client address.
    pub fn new(per_user: Rule, per_ip: Rule) -> Self {
        let now = Instant::now();
        ApiLimits { per_user: KeyedLimiter::new(per_user, now), per_ip: KeyedLimiter::new(per_ip, now) }
    }
}

/// The HTTP layer's limits, from the settings.
#[derive(Debug)]
pub struct Limits {
    /// Bodies of routes with parameters.
    pub params_body: BodyRules,
    /// Bodies of routes that take a file.
    pub upload_body: BodyRules,
    /// `None` when rate limiting is off.
    pub api: Option<ApiLimits>,
    /// Proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<IpAddr>,
}

impl Limits {
    fn body(&self, size: BodySize) -> BodyRules {
        match size {
            BodySize::Params => self.params_body,
            BodySize::Upload => self.upload_body,
        }
    }

    fn by_user(&self, authed: &Authed, now: Instant) -> Option<Verdict> {
        Some(self.api.as_ref()?.per_user.check((authed.realm.id, authed.user.user_id), now))
    }

    /// The per-address limit's verdict on one more request (`None` without rate limits).
    pub fn by_ip(&self, req: &HttpRequest, now: Instant) -> Option<Verdict> {
        let limits = self.api.as_ref()?;
        Some(limits.per_ip.check(address_key(client_ip(req, &self.trusted_proxies)?), now))
    }
}

/// The client's address: the peer, or for a trusted proxy the last address of its
/// `X-Forwarded-For` (the one that proxy added).
pub fn client_ip(req: &HttpRequest, trusted_proxies: &[IpAddr]) -> Option<IpAddr> {
    let peer = req.peer_addr()?.ip();
    if !trusted_proxies.contains(&peer) {
        return Some(peer);
    }
    let forwarded = req.headers().get_all(header::X_FORWARDED_FOR).filter_map(|v| v.to_str().ok()).last();
    Some(forwarded.and_then(|v| v.rsplit(',').next()).and_then(|v| v.trim().parse().ok()).unwrap_or(peer))
}

/// The rate-limit key of an address: IPv4 addresses as they are, IPv6 ones by their /64
/// network (one subscriber's usual share, which would otherwise give one client 2^64 keys).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// The gate of a route: see the module's documentation.
pub async fn guard(
    gate: Gate,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        tracing::error!("application state missing");
        return Ok(req.into_response(error_response(&ApiError::internal())));
    };
    let rules = state.limits.body(gate.body);
    if declared_length(req.headers()).is_some_and(|len| len > rules.max_bytes as u64) {
        return Ok(closing(req.into_response(error_response(&too_large()))));
    }
    req.extensions_mut().insert(rules);
    let now = Instant::now();
    let verdict = match gate.access {
        Access::Anyone => state.limits.by_ip(req.request(), now),
        Access::User => match authenticate(&state, req.request()).await {
            Ok(authed) => {
                let verdict = state.limits.by_user(&authed, now);
                let mut extensions = req.extensions_mut();
                extensions.insert(Authenticated);
                extensions.insert(authed);
                verdict
            }
            Err(refusal) => {
                // Failed credentials count against the client's address, before the
                // database is asked why.
                let verdict = state.limits.by_ip(req.request(), now);
                let err = match verdict {
                    Some(v) if !v.allowed => refused(&v),
                    _ => refusal.explain(&state).await,
                };
                let mut response = error_response(&err);
                if super::session::is_json(req.request()) && response.headers().contains_key(header::WWW_AUTHENTICATE) {
                    // Zulip's challenge for the browser's routes.
                    let session = header::HeaderValue::from_static("Session realm=\"zulip\"");
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, session);
                }
                return Ok(with_rate_headers(req.into_response(response), verdict.as_ref()));
            }
        },
    };
    if let Some(v) = verdict.filter(|v| !v.allowed) {
        return Ok(with_rate_headers(req.into_response(error_response(&refused(&v))), Some(&v)));
    }
    let response = next.call(req).await?;
    let response =
        if response.request().extensions().contains::<CloseConnection>() { closing(response) } else { response };
    Ok(with_rate_headers(response, verdict.as_ref()))
}

fn refused(verdict: &Verdict) -> ApiError {
    ApiError::rate_limited(verdict.reset_after.as_secs_f64())
}

/// Closes the connection after this response: the request's body was not (all) read.
fn closing(mut response: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    response.response_mut().head_mut().set_connection_type(ConnectionType::Close);
    response
}

/// Zulip's `X-RateLimit-*` headers: the limit, what is left and when (Unix time, whole
/// seconds) the budget is whole again or, once refused, the next request is allowed.
fn with_rate_headers(mut response: ServiceResponse<BoxBody>, verdict: Option<&Verdict>) -> ServiceResponse<BoxBody> {
    let Some(v) = verdict else {
        return response;
    };
    let reset = (SystemTime::now() + v.reset_after).duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-ratelimit-limit", v.limit as u64),
        ("x-ratelimit-remaining", v.remaining as u64),
        ("x-ratelimit-reset", reset),
    ] {
        headers.insert(HeaderName::from_static(name), HeaderValue::from(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;
    use std::net::SocketAddr;

    #[test]
    fn ipv6_clients_are_keyed_by_their_network() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(other));
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(address_key(v4), v4);
        assert_eq!(address_key("::ffff:192.0.2.7".parse().unwrap()), v4);
    }

    #[test]
    fn only_trusted_proxies_name_the_client() {
        let proxy: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        let req = |peer: SocketAddr| {
            TestRequest::default()
                .peer_addr(peer)
                .insert_header((header::X_FORWARDED_FOR, "198.51.100.1, 203.0.113.9"))
                .to_http_request()
        };
        let trusted = ["10.0.0.1".parse().unwrap()];
        assert_eq!(client_ip(&req(proxy), &trusted), Some("203.0.113.9".parse().unwrap()));
        assert_eq!(client_ip(&req(proxy), &[]), Some("10.0.0.1".parse().unwrap()));
        let stranger: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert_eq!(client_ip(&req(stranger), &trusted), Some("192.0.2.1".parse().unwrap()));
        let unparsable = TestRequest::default()
            .peer_addr(proxy)
            .insert_header((header::X_FORWARDED_FOR, "garbage"))
            .to_http_request();
        assert_eq!(client_ip(&unparsable, &trusted), Some("10.0.0.1".parse().unwrap()));
    }
}
