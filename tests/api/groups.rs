//! User groups over HTTP.
