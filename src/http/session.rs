//! The browser's way in: `/json/...` is every `/api/v1/...` route, authenticated by the
//! session cookie of a sign-in (`sessionid`) instead of an API key, and guarded against
//! cross-site requests by Zulip's (Django's) rule: every request but `GET`, `HEAD`,
//! `OPTIONS` and `TRACE` carries an `X-CSRFToken` header equal to the `csrftoken` cookie,
//! or is refused with 403 `CSRF_FAILED` before anything else is looked at.

use std::sync::Arc;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest};
use agora_actors::error::ErrorCode;
use agora_actors::sessions::{speaks_for, SESSION_SECS};
use agora_actors::ApiError;
use serde_json::Value;

use super::auth::{request_host, Authed};
use super::state::AppState;

/// The session cookie (Django's name).
pub const SESSION_COOKIE: &str = "sessionid";
/// The cookie the page's script reads and echoes in [`CSRF_HEADER`] (Django's names).
pub const CSRF_COOKIE: &str = "csrftoken";
pub const CSRF_HEADER: &str = "x-csrftoken";

/// Whether a request is addressed to the browser's API (`/json/...`).
pub fn is_json(req: &HttpRequest) -> bool {
    req.path().starts_with("/json/")
}

/// Zulip's CSRF refusal: 403 `CSRF_FAILED` with Django's reason.
fn csrf_failed(reason: &str) -> ApiError {
    let mut err = ApiError::new(ErrorCode::CsrfFailed, 403, format!("CSRF error: {reason}"));
    err.data.insert("reason".into(), Value::from(reason));
    err
}

/// Django's check of a request that may change something: the request's `Origin`, when
/// sent, is this server's; the cookie is set; the header is there and equal to it.
pub fn check_csrf(req: &HttpRequest) -> Result<(), ApiError> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE) {
        return Ok(());
    }
    if !check_csrf_origin(req) {
        let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).unwrap_or("");
        return Err(csrf_failed(&format!("Origin checking failed - {origin} does not match any trusted origins.")));
    }
    let cookie = req.cookie(CSRF_COOKIE).map(|c| c.value().to_owned()).filter(|v| !v.is_empty());
    let Some(cookie) = cookie else { return Err(csrf_failed("CSRF cookie not set.")) };
    let token = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty());
    match token {
        None => Err(csrf_failed("CSRF token missing.")),
        Some(token) if agora_actors::secrets::secrets_equal(token, &cookie) => Ok(()),
        Some(_) => Err(csrf_failed("CSRF token incorrect.")),
    }
}

/// Whether the request's `Origin`, when it sends one, is this server.
pub fn check_csrf_origin(req: &HttpRequest) -> bool {
    match req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        Some(origin) => {
            let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            origin_host.eq_ignore_ascii_case(request_host(req))
        }
        None => true,
    }
}

/// The session cookie's token, if the request carries one.
pub fn session_token(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned()).filter(|v| !v.is_empty())
}

/// The user a browser request speaks for: its CSRF token first (Django's middleware runs
/// before any view), then its session, checked against the organization's published
/// index (active account, same password, organization active). Any failure to find a
/// live session is Zulip's "Not logged in".
pub async fn authenticate(state: &AppState, req: &HttpRequest) -> Result<Authed, ApiError> {
    check_csrf(req)?;
    let subdomain = state.config.subdomain_for_host(request_host(req));
    let realm = state.realm(&subdomain).await.map_err(|e| e.0)?.ok_or_else(ApiError::invalid_subdomain)?;
    let token = session_token(req).ok_or_else(ApiError::not_logged_in)?;
    let row = match state.sessions.cached(&token) {
        Some(row) => Some(row),
        None => {
            let sessions = Arc::clone(&state.sessions);
            web::block(move || sessions.load(&token)).await.map_err(|_| ApiError::internal())??
        }
    };
    let row = row.filter(|row| row.realm_id == realm.id).ok_or_else(ApiError::not_logged_in)?;
    let auth = realm.auth();
    let now = agora_actors::clock::now();
    let user = auth.by_id(row.user_id).filter(|entry| speaks_for(&row, entry, auth.realm_deactivated, now));
    let user = Arc::clone(user.ok_or_else(ApiError::not_logged_in)?);
    Ok(Authed { realm, user })
}

/// The session cookie of a sign-in: `HttpOnly`, `SameSite=Lax`, `Secure` over HTTPS, for
/// the session's life.
pub fn session_cookie(token: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, token.to_owned())
        .path("/")
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::seconds(SESSION_SECS))
        .finish()
}

/// The cookie that tells a browser to forget its session.
pub fn ended_session_cookie(secure: bool) -> Cookie<'static> {
    let mut cookie = session_cookie("", secure);
    cookie.make_removal();
    cookie
}

/// The CSRF cookie: readable by the page's script (it echoes it in a header), `SameSite=Lax`.
pub fn csrf_cookie(token: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(CSRF_COOKIE, token.to_owned())
        .path("/")
        .http_only(false)
        .secure(secure)
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::days(365))
        .finish()
}
