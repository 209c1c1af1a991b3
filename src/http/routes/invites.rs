//! Invitations: `/invites`, `/invites/{id}`, `/invites/{id}/resend`, `/invites/multiuse`
//! and `/invites/multiuse/{id}` (guests are refused before any parameter is read, as by
//! Zulip's `require_member_or_admin`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::invites::{
    CreateInviteLink, InviteRequest, ListInvites, ResendInvite, RevokeInvite, RevokeInviteLink, SendInvites,
};
use agora_actors::realm::model::Role;
use agora_actors::ApiError;
use serde_json::{json, Value};

use super::{path_id, Endpoint};
use crate::http::decode;
use crate::http::guard::{Guarded, Members};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// Longest `welcome_message_custom_text` (`Realm.MAX_REALM_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH`).
const MAX_WELCOME_TEXT: usize = 8000;

/// The invitation endpoints (the literal `multiuse` paths before the numeric ones).
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/invites").route(Method::GET, list_invites).route(Method::POST, send_invites).build())
        .service(Endpoint::new("/invites/multiuse").route(Method::POST, create_invite_link).build())
        .service(Endpoint::new(r"/invites/multiuse/{invite_id:\d+}").route(Method::DELETE, revoke_invite_link).build())
        .service(Endpoint::new(r"/invites/{invite_id:\d+}").route(Method::DELETE, revoke_invite).build())
        .service(Endpoint::new(r"/invites/{invite_id:\d+}/resend").route(Method::POST, resend_invite).build())
}

/// The parameters both kinds of invitation take, in Zulip's (alphabetical) order of
/// validation; `invitee_emails` and `stream_ids` are required by `POST /invites` only.
fn invite_request(params: &Params, default_minutes: i64, by_email: bool) -> Result<InviteRequest, ApiError> {
    let group_ids = params.decode("group_ids", decode::integer_list)?;
    let include_realm_default_subscriptions = params.bool_or("include_realm_default_subscriptions", false)?;
    let invite_as = match params.int("invite_as")? {
        None => Role::Member,
        Some(v) => Role::from_i64(v).ok_or_else(|| ApiError::not_in_list("invite_as"))?,
    };
    let expires_in_minutes = match params.decode("invite_expires_in_minutes", decode::json)? {
        None => Some(default_minutes),
        Some(Value::Null) => None,
        Some(v) => Some(decode::as_integer("invite_expires_in_minutes", &v)?),
    };
    let emails_raw = if by_email { params.required_str("invitee_emails")? } else { String::new() };
    let notify_referrer_on_join = if by_email { params.bool_or("notify_referrer_on_join", true)? } else { true };
    let stream_ids = match params.decode("stream_ids", decode::integer_list)? {
        Some(ids) => ids,
        None if by_email => return Err(ApiError::missing_argument("stream_ids")),
        None => Vec::new(),
    };
    let welcome_message_custom_text = params.str("welcome_message_custom_text");
    if welcome_message_custom_text.as_ref().is_some_and(|t| t.chars().count() > MAX_WELCOME_TEXT) {
        return Err(ApiError::bad_request(format!(
            "welcome_message_custom_text is too long (limit: {MAX_WELCOME_TEXT} characters)"
        )));
    }
    Ok(InviteRequest {
        emails_raw,
        expires_in_minutes,
        invite_as,
        stream_ids,
        group_ids,
        include_realm_default_subscriptions,
        notify_referrer_on_join,
        welcome_message_custom_text,
    })
}

/// `POST /invites`.
async fn send_invites(req: Guarded<Members>, state: web::Data<AppState>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let request = invite_request(&params, state.config.invites.validity_minutes, true)?;
    auth.realm.addr.send(SendInvites { acting: auth.user.user_id, request }).await??;
    Ok(params.ok())
}

/// `GET /invites`.
async fn list_invites(req: Guarded<Members>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let invites = auth.realm.addr.send(ListInvites { acting: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "invites": invites }))))
}

/// `DELETE /invites/{invite_id}`.
async fn revoke_invite(req: Guarded<Members>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    auth.realm.addr.send(RevokeInvite { acting: auth.user.user_id, id: path_id(&path) }).await??;
    Ok(params.ok())
}

/// `POST /invites/{invite_id}/resend`.
async fn resend_invite(req: Guarded<Members>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    auth.realm.addr.send(ResendInvite { acting: auth.user.user_id, id: path_id(&path) }).await??;
    Ok(params.ok())
}

/// `POST /invites/multiuse`.
async fn create_invite_link(req: Guarded<Members>, state: web::Data<AppState>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let request = invite_request(&params, state.config.invites.validity_minutes, false)?;
    let link = auth.realm.addr.send(CreateInviteLink { acting: auth.user.user_id, request }).await??;
    Ok(params.success(json_object(json!({ "invite_link": link }))))
}

/// `DELETE /invites/multiuse/{invite_id}`.
async fn revoke_invite_link(req: Guarded<Members>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    auth.realm.addr.send(RevokeInviteLink { acting: auth.user.user_id, id: path_id(&path) }).await??;
    Ok(params.ok())
}
