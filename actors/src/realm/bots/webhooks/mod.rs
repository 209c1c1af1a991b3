//! Incoming and outgoing webhooks.
pub mod incoming;
