//! Channel folders (`/channel_folders...`).

use actix_web::Scope;

/// The channel folder endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
}
