//! Mobile push notifications through Zulip's push notification service (the "bouncer"):
//! the HTTP client of its API ([`bouncer`]), the identities this server gives it
//! ([`identity`]), sealed payloads for end-to-end encrypted devices ([`crypto`]), and the
//! worker that drains the outbox the realm actors fill ([`worker`]).
//!
//! The realm actors never talk to the bouncer: a change that needs it (a device
//! registration, a notification, a removal) writes a job into `push_outbox` in its own
//! transaction. The worker runs on a thread of its own, takes due jobs in order, sends them
//! and deletes them once the bouncer took them; a bouncer that cannot be reached delays the
//! job with exponential backoff (and the worker with it), a job that keeps failing is given
//! up after `max_attempts`, and a refusal is final. Jobs survive restarts.

pub mod bouncer;
pub mod crypto;
pub mod identity;
mod jobs;
mod test_jobs;
pub mod worker;

pub use worker::PushWorker;
