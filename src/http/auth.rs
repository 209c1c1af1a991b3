//! Finding the request's organization and authenticating its user.
//!
//! The organization comes from the `Host` header; the user from HTTP Basic credentials
//! checked against the realm's published authentication index, without a round trip
//! through any actor. Every failure is Zulip's error. Routes for users authenticate in
//! their gate ([`super::gate`]), before their body is read; handlers take the result with
//! the [`Authed`] extractor. Public routes find their organization with [`Site`].

use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use agora_actors::auth::{explain_foreign_key, AuthEntry, KeyRejection};
use agora_actors::ids::RealmId;
use agora_actors::registry::RealmHandle;
use agora_actors::ApiError;
use base64::Engine;
use futures_util::future::{ready, LocalBoxFuture, Ready};

use super::response::HttpError;
use super::state::AppState;

fn app_state(req: &HttpRequest) -> Result<web::Data<AppState>, HttpError> {
    req.app_data::<web::Data<AppState>>().cloned().ok_or_else(|| {
        tracing::error!("application state missing");
        HttpError(ApiError::internal())
    })
}

/// The host a request is addressed to: its `Host` header (or, over HTTP/2, the URI's
/// authority). Forwarding headers are not trusted, as Django does not by default.
pub(crate) fn request_host(req: &HttpRequest) -> &str {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("")
}

/// The organization a request is addressed to, if it exists. Endpoints that check their
/// parameters first (as Zulip's do) call [`Site::realm`] afterwards.
pub struct Site {
    pub subdomain: String,
    handle: Option<RealmHandle>,
}

impl Site {
    /// The organization, or 404 `NONEXISTENT_SUBDOMAIN`.
    pub fn realm(&self) -> Result<&RealmHandle, HttpError> {
        self.handle.as_ref().ok_or_else(|| HttpError(ApiError::invalid_subdomain()))
    }

    /// The organization; `None` only for the root domain without one of its own (any
    /// other unknown subdomain is 404 `NONEXISTENT_SUBDOMAIN`).
    pub fn realm_or_root(&self) -> Result<Option<&RealmHandle>, HttpError> {
        match &self.handle {
            None if !self.subdomain.is_empty() => Err(HttpError(ApiError::invalid_subdomain())),
            handle => Ok(handle.as_ref()),
        }
    }
}

impl FromRequest for Site {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state = app_state(&req)?;
            let subdomain = state.config.subdomain_for_host(request_host(&req));
            let handle = state.realm(&subdomain).await?;
            Ok(Site { subdomain, handle })
        })
    }
}

/// Marks a request as authenticated, so its successful reply is never cached.
#[derive(Debug, Clone, Copy)]
pub struct Authenticated;

/// An authenticated request: its organization and its user.
///
/// The route's gate ([`super::gate`]) authenticates the request before anything else runs,
/// its body included, and leaves this in the request for the handler to take.
#[derive(Clone)]
pub struct Authed {
    pub realm: RealmHandle,
    pub user: Arc<AuthEntry>,
}

impl FromRequest for Authed {
    type Error = HttpError;
    type Future = Ready<Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let authed = req.extensions_mut().remove::<Authed>();
        ready(authed.ok_or_else(|| {
            tracing::error!(path = req.path(), "a route without an authenticating gate asks for its user");
            HttpError(ApiError::internal())
        }))
    }
}

/// Why a request could not be authenticated.
pub enum Refusal {
    /// Told at once.
    Now(ApiError),
    /// A key the realm's index does not know: why is told by [`Refusal::explain`], which
    /// reads the database.
    UnknownKey { realm_id: RealmId, email: String, key: String },
}

impl Refusal {
    /// The error the client gets.
    pub async fn explain(self, state: &AppState) -> ApiError {
        match self {
            Refusal::Now(err) => err,
            Refusal::UnknownKey { realm_id, email, key } => {
                let store = state.store.clone();
                match web::block(move || explain_foreign_key(&store, realm_id, &email, &key)).await {
                    Ok(err) => err,
                    Err(e) => HttpError::from(e).0,
                }
            }
        }
    }
}

impl From<ApiError> for Refusal {
    fn from(err: ApiError) -> Self {
        Refusal::Now(err)
    }
}

impl From<HttpError> for Refusal {
    fn from(err: HttpError) -> Self {
        Refusal::Now(err.0)
    }
}

/// Authenticates a request: its organization from the `Host` header, then its user from
/// HTTP Basic credentials checked against the organization's published index, without a
/// round trip through any actor; a browser's request (`/json/...`) by its session instead.
pub async fn authenticate(state: &AppState, req: &HttpRequest) -> Result<Authed, Refusal> {
    if super::session::is_json(req) {
        return Ok(super::session::authenticate(state, req).await?);
    }
    let subdomain = state.config.subdomain_for_host(request_host(req));
    let realm = state.realm(&subdomain).await?.ok_or_else(ApiError::invalid_subdomain)?;
    let header = req.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes());
    let (email, key) = basic_credentials(header)?;
    match realm.auth().check_api_key(&email, &key) {
        Ok(user) => Ok(Authed { realm, user }),
        Err(KeyRejection::Refused(err)) => Err(Refusal::Now(err)),
        Err(KeyRejection::Unknown) => Err(Refusal::UnknownKey { realm_id: realm.id, email, key }),
    }
}

/// Splits an `Authorization: Basic` header into trimmed (email, API key), with Zulip's
/// errors: no header is "Not logged in", a header of another scheme is a 400, anything
/// unparseable is "Invalid authorization header for basic auth".
pub fn basic_credentials(header: Option<&[u8]>) -> Result<(String, String), ApiError> {
    let invalid = || ApiError::unauthorized("Invalid authorization header for basic auth");
    let header = match header {
        None | Some(b"") => return Err(ApiError::not_logged_in()),
        Some(h) => std::str::from_utf8(h).map_err(|_| invalid())?,
    };
    let parts: Vec<&str> = header.split_whitespace().collect();
    let [scheme, encoded] = parts[..] else {
        return Err(invalid());
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(ApiError::bad_request("This endpoint requires HTTP basic authentication."));
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| invalid())?;
    let decoded = String::from_utf8(decoded).map_err(|_| invalid())?;
    let fields: Vec<&str> = decoded.split(':').collect();
    let [email, key] = fields[..] else {
        return Err(invalid());
    };
    Ok((email.trim().to_owned(), key.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(s: &str) -> Vec<u8> {
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(s)).into_bytes()
    }

    #[test]
    fn parses_basic_credentials() {
        let (email, key) = basic_credentials(Some(&basic(" a@b.c : KEY "))).unwrap();
        assert_eq!((email.as_str(), key.as_str()), ("a@b.c", "KEY"));
        let lower = format!("basic {}", base64::engine::general_purpose::STANDARD.encode("a@b.c:k"));
        assert!(basic_credentials(Some(lower.as_bytes())).is_ok());
    }

    #[test]
    fn refuses_bad_headers_with_zulip_messages() {
        let msg = |h: Option<&[u8]>| {
            let e = basic_credentials(h).unwrap_err();
            (e.status, e.msg)
        };
        let not_logged_in = (401, "Not logged in: API authentication or user session required".to_owned());
        let invalid = (401, "Invalid authorization header for basic auth".to_owned());
        assert_eq!(msg(None), not_logged_in);
        assert_eq!(msg(Some(b"")), not_logged_in);
        assert_eq!(msg(Some(b"Basic")), invalid);
        assert_eq!(msg(Some(b"Basic !!!")), invalid);
        assert_eq!(msg(Some(&basic("no-colon"))), invalid);
        assert_eq!(msg(Some(&basic("a:b:c"))), invalid);
        assert_eq!(msg(Some(b"Bearer abc")), (400, "This endpoint requires HTTP basic authentication.".to_owned()));
    }
}
