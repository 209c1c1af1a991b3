//! Presence (`/users/me/presence`, `/realm/presence`, `/users/{user_id_or_email}/presence`).
//! Each request is one message to the organization's presence actor, found through the
//! realm's handle: no hop through the realm actor.

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::clock::now_micros;
use agora_actors::presence::{GetRealmPresence, GetUserPresence, PresenceQuery, Status, UpdatePresence};
use agora_actors::realm::permissions::require_human;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The presence endpoints. `/users/me/presence` comes before the `{user}` pattern, so that
/// other methods on it get its own 405, as in Zulip.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/users/me/presence").route(Method::POST, update_presence).build())
        .service(Endpoint::new("/realm/presence").route(Method::GET, realm_presence).build())
        .service(Endpoint::new("/users/{user}/presence").route(Method::GET, user_presence).build())
}

/// `POST /users/me/presence`: bots are refused first (Zulip's `human_users_only`), then the
/// parameters are read in Zulip's order.
pub async fn update_presence(auth: Authed, params: Params) -> Result<Success, HttpError> {
    require_human(auth.user.is_bot)?;
    let history_limit_days = params.int("history_limit_days")?;
    let last_update_id = params.int("last_update_id")?;
    // Zulip records activity intervals with it, which no API returns: checked, not kept.
    params.bool_or("new_user_input", false)?;
    let ping_only = params.bool_or("ping_only", false)?;
    let slim_presence = params.bool_or("slim_presence", false)?;
    let status = Status::parse(&params.required_str("status")?)?;
    let query = (!ping_only).then(|| PresenceQuery::new(slim_presence, last_update_id, history_limit_days));
    let update = UpdatePresence { user_id: auth.user.user_id, status, query, now: now_micros() };
    let fields = auth.realm.presence.send(update).await??;
    // Sent as it is even to clients that accept gzip: every member pings once a minute,
    // and in a 10,000-user organization each reply is about 670 KB of everyone who pinged
    // since; gzipping them would cost about 1.2 ms each, some 19% of a core at 167 pings a
    // second (against the 10% the whole of presence may take). Its blocks are cached; a
    // gzipped form of them would have to be cached too.
    Ok(params.success_parts(fields.0).gzip_from(usize::MAX))
}

/// `GET /realm/presence` (bots may call it).
pub async fn realm_presence(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let fields = auth.realm.presence.send(GetRealmPresence { viewer: auth.user.user_id, now: now_micros() }).await??;
    Ok(params.success_fields(&fields))
}

/// `GET /users/{user_id_or_email}/presence`.
pub async fn user_presence(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    // Accepted as before; since feature level 497 the reply has both formats whatever it says.
    params.bool_or("slim_presence", false)?;
    let query = GetUserPresence { viewer: auth.user.user_id, target: path.into_inner(), now: now_micros() };
    let data = auth.realm.presence.send(query).await??;
    Ok(params.success(data))
}
