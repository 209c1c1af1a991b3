//! Client event queues (Zulip's `ClientDescriptor` + `EventQueue`): one [`QueueActor`] per
//! registered queue, owned by its realm. The realm actor hands each committed event to
//! the queues of the users allowed to see it; a queue filters and reshapes it for its
//! client, numbers it and answers the client's long-poll.

pub mod actor;
pub mod buffer;
pub mod index;
pub mod spec;

pub use actor::{new_queue_id, GoneReason, Poll, PollOutcome, PollReply, QueueActor, SavedQueue};
pub use buffer::{event_cost, EventBuffer, Queued};
pub use index::{QueueEntry, QueueIndex};
pub use spec::{ClientCapabilities, NarrowTerm, QueueSpec};
