//! One organization: its state, the operations that change it, and the actor that owns it.
//!
//! Every change to an organization has one shape: plan, write, apply.
//!
//! A feature's `ops` plans a change from `&RealmState`, the command and the time, with no
//! I/O, and returns it (or Zulip's error). [`Change::write`] writes it inside one
//! `BEGIN IMMEDIATE` transaction through the store's functions (all SQL lives in
//! `crate::store`), recording what the database assigns, such as ids. Once committed,
//! [`Change::apply`] applies it to the state and returns the reply and the events. The realm
//! actor runs the three steps in its mailbox order ([`actor::RealmActor::commit`]), or, for
//! the requests that wait for a group commit (sends, account creation), plans, writes and
//! applies each in turn inside one transaction ([`group_commit`]); the command-line tools
//! and tests run them through [`commit`].

pub mod actor;
pub mod admin;
pub mod alert_words;
pub mod attachments;
pub mod avatars;
pub mod bot_data;
pub mod bots;
pub mod catalog;
pub mod channels;
pub mod chat;
pub mod drafts;
pub mod events;
pub mod exports;
mod fan_out;
pub mod folders;
pub mod format;
pub mod group_commit;
pub mod group_setting;
pub mod groups;
pub mod invite_data;
pub mod invites;
pub mod linkifiers;
pub mod model;
pub mod muted_users;
pub mod navigation_views;
pub mod notices;
pub mod notifications;
pub mod onboarding;
pub mod organization;
pub mod password_reset;
pub mod permissions;
pub mod playgrounds;
pub mod presence;
pub mod profile_fields;
pub mod push;
pub mod realm_emoji;
pub mod realm_icon;
pub mod register;
pub mod retention;
pub mod saved_snippets;
pub mod scheduled;
pub mod scheduled_data;
pub mod settings;
pub mod state;
pub mod topics;
pub mod uploads_data;
pub mod user_data;
pub mod user_status;
pub mod users;

pub use actor::RealmActor;
pub use state::RealmState;

use rusqlite::Transaction;

use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::UserId;
use crate::store::Store;

/// A planned change to an organization.
pub trait Change {
    /// What the request that asked for the change gets back.
    type Output;

    /// Writes the change inside the transaction. It may read rows the state does not hold
    /// (messages) and refuse the change after all; any error rolls the transaction back.
    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()>;

    /// Applies the committed change to the state: the reply and the events.
    fn apply(self, state: &mut RealmState) -> Applied<Self::Output>;

    /// Whether the change stores anything. One that does not (a typing notification)
    /// opens no transaction: [`commit`] goes straight to [`Change::apply`].
    fn writes(&self) -> bool {
        true
    }
}

/// A change once applied.
#[derive(Debug)]
pub struct Applied<T> {
    pub output: T,
    pub events: Vec<Outgoing>,
    /// The change touches who may authenticate (accounts, keys, roles, emails, passwords,
    /// the organization's status): the authentication index is published again.
    pub auth: bool,
    /// Accounts the change deactivated: their event queues are closed.
    pub closed: Vec<UserId>,
}

impl<T> Applied<T> {
    /// A reply and its events.
    pub fn new(output: T, events: Vec<Outgoing>) -> Self {
        Applied { output, events, auth: false, closed: Vec::new() }
    }

    /// The same, marked as changing who may authenticate.
    pub fn with_auth(self) -> Self {
        Applied { auth: true, ..self }
    }

    /// The same, closing the event queues of accounts it deactivated.
    pub fn closing_queues_of(self, users: Vec<UserId>) -> Self {
        Applied { closed: users, ..self }
    }
}

impl Applied<()> {
    /// Only events.
    pub fn events(events: Vec<Outgoing>) -> Self {
        Applied::new((), events)
    }
}

/// Writes `change` in one transaction and applies it to `state` once committed. The realm
/// actor does this for every change (then publishes and fans out); the command-line tools
/// and tests call it directly.
pub fn commit<C: Change>(state: &mut RealmState, store: &Store, mut change: C) -> ApiResult<Applied<C::Output>> {
    if change.writes() {
        store.write::<_, ApiError>(|tx| change.write(tx))?;
    }
    Ok(change.apply(state))
}

#[cfg(test)]
pub(crate) mod fixture_tests;
#[cfg(test)]
mod group_commit_tests;
#[cfg(test)]
mod tests;
