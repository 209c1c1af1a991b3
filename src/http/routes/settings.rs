//! Personal settings (`/settings`) and the organization's defaults for them (`/realm/user_settings_defaults`).

use actix_web::Scope;

/// The settings endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
