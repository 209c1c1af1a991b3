//! Personal channel and topic settings (`/users/me/subscriptions/properties`, `/users/me/subscriptions/muted_topics`, `/user_topics`, `/users/me/{stream_id}/topics`).

use actix_web::Scope;

/// The topic endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
