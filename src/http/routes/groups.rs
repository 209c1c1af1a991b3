//! User groups (`/user_groups...`).

use actix_web::Scope;

/// The user group endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
