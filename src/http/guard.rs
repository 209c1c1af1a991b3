//! Extractors that refuse a request by who sends it before its handler decodes any
//! parameter, as Zulip's view decorators (`require_realm_admin`, `human_users_only`) do.
//!
//! A [`Guarded`] request is the authenticated user and the request's parameters, taken in
//! that order (the body is read as for any handler), then checked by the route's [`Rule`]
//! against the user as the organization's last published snapshot has them. The realm
//! actor checks again against its state when it plans the change: the guard only refuses
//! early, before a parameter error could be told instead (and before a password is hashed
//! for nothing).

use std::marker::PhantomData;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use agora_actors::auth::AuthEntry;
use agora_actors::realm::permissions::{authorize_user_creation, require_admin, require_human};
use agora_actors::ApiError;
use futures_util::future::LocalBoxFuture;

use super::auth::Authed;
use super::params::Params;
use super::response::HttpError;

/// Who may call a guarded route.
pub trait Rule: 'static {
    /// Refuses `user`, with Zulip's error; `params` for rules that read some first.
    fn check(user: &AuthEntry, params: &Params) -> Result<(), ApiError>;
}

/// Owners and administrators (Zulip's `require_realm_admin`).
pub struct Admins;

impl Rule for Admins {
    fn check(user: &AuthEntry, _: &Params) -> Result<(), ApiError> {
        require_admin(user.role)
    }
}

/// Members and above: guests are refused (Zulip's `require_member_or_admin`).
pub struct Members;

impl Rule for Members {
    fn check(user: &AuthEntry, _: &Params) -> Result<(), ApiError> {
        if user.role == agora_actors::realm::model::Role::Guest {
            return Err(ApiError::bad_request("Not allowed for guest users"));
        }
        Ok(())
    }
}

/// Humans: bots are refused (Zulip's `human_users_only`).
pub struct Humans;

impl Rule for Humans {
    fn check(user: &AuthEntry, _: &Params) -> Result<(), ApiError> {
        require_human(user.is_bot)
    }
}

/// Bots: other users are refused (`/bot_storage` since Zulip 12, feature level 494).
pub struct Bots;

impl Rule for Bots {
    fn check(user: &AuthEntry, _: &Params) -> Result<(), ApiError> {
        if user.is_bot {
            Ok(())
        } else {
            Err(ApiError::bots_only())
        }
    }
}

/// Administrators holding `can_create_users` (`POST /users`), checked once the three
/// required parameters are known to be there, so that the password is hashed only for them.
pub struct UserCreators;

impl UserCreators {
    /// The parameters `POST /users` requires, in the order they are asked for.
    pub const REQUIRED: [&'static str; 3] = ["email", "password", "full_name"];
}

impl Rule for UserCreators {
    fn check(user: &AuthEntry, params: &Params) -> Result<(), ApiError> {
        for name in Self::REQUIRED {
            params.required_str(name)?;
        }
        authorize_user_creation(user.role, user.can_create_users)
    }
}

/// An authenticated request its rule `R` let through, with its parameters.
pub struct Guarded<R> {
    pub auth: Authed,
    pub params: Params,
    rule: PhantomData<R>,
}

impl<R: Rule> FromRequest for Guarded<R> {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let auth = Authed::from_request(req, payload);
        let params = Params::from_request(req, payload);
        Box::pin(async move {
            let auth = auth.await?;
            let params = params.await?;
            R::check(&auth.user, &params)?;
            Ok(Guarded { auth, params, rule: PhantomData })
        })
    }
}
