//! Channels and subscriptions over HTTP.
