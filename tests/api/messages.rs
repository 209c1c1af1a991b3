//! Messages over HTTP.
