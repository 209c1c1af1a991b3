//! An organization built in memory for the plan tests of this area: the system groups,
//! users, channels and subscriptions, with no database behind them.

use serde_json::Value;

use crate::ids::{ChannelId, UserId};
use crate::realm::fixture_tests;
use crate::realm::model::{Role, Subscription, User};
use crate::realm::state::RealmState;

pub use crate::realm::fixture_tests::T0;

/// An organization with its eight system groups (nested as Zulip nests them) and nobody.
pub fn realm() -> RealmState {
    fixture_tests::organization()
}

/// Adds an active user `name` (email `name@acme.test`, full name `name`) in the system
/// groups of `role`.
pub fn user(state: &mut RealmState, name: &str, role: Role) -> UserId {
    let id = UserId(100 + state.users().count() as i64);
    fixture_tests::human(state, id, &format!("{name}@acme.test"), name, &format!("key-{name}"), role)
}

/// Adds a (generic) bot owned by `owner`.
pub fn bot(state: &mut RealmState, name: &str, owner: UserId) -> UserId {
    let id = user(state, name, Role::Member);
    let bot = state.user_mut(id).map(|u| {
        u.is_bot = true;
        u.bot_type = Some(1);
        u.bot_owner_id = Some(owner);
    });
    assert!(bot.is_some());
    id
}

/// Changes a user.
pub fn edit_user(state: &mut RealmState, id: UserId, change: impl FnOnce(&mut User)) {
    let mut user = state.user(id).cloned().unwrap_or_else(|| panic!("no user {id}"));
    change(&mut user);
    state.put_user(user);
}

/// Adds a channel (public unless `invite_only`, history shared with subscribers, default
/// permissions) with `members` subscribed.
pub fn channel(state: &mut RealmState, name: &str, invite_only: bool, members: &[UserId]) -> ChannelId {
    let id = ChannelId(10 + state.channels().count() as i64);
    state.put_channel(fixture_tests::channel(id, name, invite_only, true));
    for member in members {
        state.put_subscription(Subscription::new(*member, id, "#c2c2c2".into()));
    }
    id
}

/// Sets an organization setting.
pub fn set_realm(state: &mut RealmState, name: &str, value: Value) {
    let mut realm = state.realm().clone();
    realm.settings.insert(name.to_owned(), value);
    state.set_realm(realm);
}

/// Sets an organization group setting to a system group.
pub fn set_realm_group(state: &mut RealmState, setting: &str, group: &str) {
    let id = state.system_group_id(group).unwrap_or_else(|| panic!("no group {group}"));
    set_realm(state, setting, Value::from(id));
}
