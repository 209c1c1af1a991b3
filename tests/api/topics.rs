//! Personal channel and topic settings over HTTP.
