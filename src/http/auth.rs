//! Extractors that find the request's organization and authenticate its user.
//!
//! The organization comes from the `Host` header; the user from HTTP Basic credentials
//! checked against the realm's published authentication index, without a round trip
//! through any actor. Every failure is Zulip's error.

use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use agora_actors::realm::snapshot::{explain_foreign_key, AuthEntry, KeyRejection};
use agora_actors::registry::RealmHandle;
use agora_actors::ApiError;
use base64::Engine;
use futures_util::future::LocalBoxFuture;

use super::response::HttpError;
use super::state::AppState;

fn app_state(req: &HttpRequest) -> Result<web::Data<AppState>, HttpError> {
    req.app_data::<web::Data<AppState>>().cloned().ok_or_else(|| {
        tracing::error!("application state missing");
        HttpError(ApiError::internal())
    })
}

/// The subdomain the request's host names, its running realm if there is one, and the
/// application state.
async fn lookup(req: &HttpRequest) -> Result<(String, Option<RealmHandle>, web::Data<AppState>), HttpError> {
    let state = app_state(req)?;
    let sub = state.config.subdomain_for_host(req.connection_info().host());
    let realm = state.realm(&sub).await?;
    Ok((sub, realm, state))
}

/// The organization a request is addressed to; 404 `NONEXISTENT_SUBDOMAIN` if none.
pub struct Realm(pub RealmHandle);

impl FromRequest for Realm {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let (_, realm, _) = lookup(&req).await?;
            realm.map(Realm).ok_or_else(|| HttpError(ApiError::invalid_subdomain()))
        })
    }
}

/// Like [`Realm`], except that the root domain without an organization of its own is
/// `None` rather than an error (for `GET /server_settings`).
pub struct MaybeRealm(pub Option<RealmHandle>);

impl FromRequest for MaybeRealm {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match lookup(&req).await? {
                (_, Some(handle), _) => Ok(MaybeRealm(Some(handle))),
                (sub, None, _) if sub.is_empty() => Ok(MaybeRealm(None)),
                _ => Err(HttpError(ApiError::invalid_subdomain())),
            }
        })
    }
}

/// An authenticated request: its organization and its user.
pub struct Authed {
    pub realm: RealmHandle,
    pub user: Arc<AuthEntry>,
}

impl FromRequest for Authed {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let (_, realm, state) = lookup(&req).await?;
            let realm = realm.ok_or_else(|| HttpError(ApiError::invalid_subdomain()))?;
            let header = req.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes());
            let (email, key) = basic_credentials(header)?;
            match realm.auth().check_api_key(&email, &key) {
                Ok(user) => Ok(Authed { realm, user }),
                Err(KeyRejection::Refused(err)) => Err(err.into()),
                Err(KeyRejection::Unknown) => {
                    let (store, realm_id) = (state.store.clone(), realm.id);
                    let err = web::block(move || explain_foreign_key(&store, realm_id, &email, &key)).await?;
                    Err(err.into())
                }
            }
        })
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
