//! Incoming and outgoing webhooks.
