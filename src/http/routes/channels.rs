//! Channels and subscriptions (`/users/me/subscriptions`, `/channels/create`, `/streams...`, `/get_stream_id`, `/default_streams`).

use actix_web::Scope;

/// The channel endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
