//! Custom profile fields over HTTP.
