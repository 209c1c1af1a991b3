//! Organizations built in memory, for tests of plans and their application that need no
//! database: the system groups with their subgroup chain, users by role, channels and
//! subscriptions put straight into the state.

use crate::ids::{ChannelId, UserId};
use crate::realm::fixture_tests;
use crate::realm::model::{Role, Subscription};
use crate::realm::state::RealmState;

pub use crate::realm::fixture_tests::T0;

/// The owner every organization built here starts with.
pub const OWNER: UserId = UserId(1);

/// An organization with its system groups (ids 1 to 8, in Zulip's creation order) and its
/// owner, [`OWNER`].
pub fn organization() -> RealmState {
    let mut state = fixture_tests::organization();
    add_user(&mut state, OWNER.0, Role::Owner);
    state
}

/// Adds an active human user `id` of `role` (named `u<id>`), in its role's system groups.
pub fn add_user(state: &mut RealmState, id: i64, role: Role) -> UserId {
    let email = format!("u{id}@acme.test");
    fixture_tests::human(state, UserId(id), &email, &format!("User {id}"), &format!("key{id}"), role)
}

/// Adds a channel `id` named `name` (public unless `invite_only`), administered by the
/// organization's administrators only.
pub fn add_channel(state: &mut RealmState, id: i64, name: &str, invite_only: bool) -> ChannelId {
    state.put_channel(fixture_tests::channel(ChannelId(id), name, invite_only, !invite_only));
    ChannelId(id)
}

/// Subscribes `user` to `channel` (with a color of its own).
pub fn subscribe(state: &mut RealmState, user: UserId, channel: ChannelId) {
    state.put_subscription(Subscription::new(user, channel, "#c2c2c2".into()));
}
