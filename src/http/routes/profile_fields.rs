//! Custom profile fields (`/realm/profile_fields...`, `/users/me/profile_data`).

use actix_web::Scope;

/// The custom profile field endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
