//! Messages (`/messages...`, `/mark_*_as_read`, `/typing`).

use actix_web::Scope;

/// The message endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
