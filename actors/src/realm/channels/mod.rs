//! Channels (Zulip's streams) and subscriptions: creation, metadata, membership, default
//! channels, their register data sets and events (spec 2.4-2.6, 4.1, 4.2).

pub mod access;
