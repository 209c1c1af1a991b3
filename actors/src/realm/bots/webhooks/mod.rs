//! Incoming and outgoing webhooks.
pub mod incoming;
pub mod outgoing;
