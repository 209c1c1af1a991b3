//! Channel folders over HTTP.
