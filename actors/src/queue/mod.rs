//! Client event queues (Zulip's `ClientDescriptor` + `EventQueue`): one [`QueueActor`] per
//! registered queue, owned by its realm, with its events in a [`SharedQueue`]. The realm
//! actor hands each committed event to the queues of the users allowed to see it (straight
//! into their shared state); a queue filters and reshapes it for its client, numbers it and
//! answers the client's long-poll, which the HTTP worker made on the shared state too.

pub mod actor;
pub mod buffer;
pub mod index;
pub mod persist;
pub mod saved;
pub mod shared;
pub mod spec;

pub use actor::{new_queue_id, GoneReason, Poll, PollOutcome, PollReply, QueueActor};
pub use buffer::{event_cost, EventBuffer, Queued};
pub use index::{QueueEntry, QueueIndex};
pub use saved::SavedQueue;
pub use shared::{SharedQueue, Waiting};
pub use spec::{ClientCapabilities, NarrowTerm, QueueSpec};
