//! One organization: its state, the operations that change it, and the actor that owns it.

pub mod actor;
pub mod catalog;
pub mod change;
pub mod channels;
pub mod chat;
pub mod folders;
pub mod format;
pub mod group_setting;
pub mod groups;
pub mod messages;
pub mod model;
pub mod ops;
pub mod permissions;
pub mod profile_fields;
pub mod register;
pub mod settings;
pub mod state;
pub mod topics;
pub mod users;

pub use actor::RealmActor;
pub use state::RealmState;

#[cfg(test)]
mod tests;
