//! Whose presence is reported, and to whom.
//!
//! Reported at all: active humans, in an organization that shows presence
//! (`presence_disabled` off), as Zulip's realm-wide query filters them. Users who turned
//! `presence_enabled` off keep the row made when they did, which shows them offline; their
//! pings are not recorded.
//!
//! To whom: everyone, unless the server limits presence to accessible users (Zulip's
//! `CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE`) and the viewer is outside the
//! organization's `can_access_all_users_group`: then the viewer sees themselves and the
//! users they share a channel with.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::config::PresenceConfig;
use crate::ids::UserId;
use crate::realm::model::User;
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;

/// A set of user ids: a bitmap over their range (one probe per row of a reply), or a
/// sorted list when the ids are too far apart for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserSet {
    Dense { base: i64, bits: Vec<u64> },
    Sparse(Vec<i64>),
}

impl Default for UserSet {
    fn default() -> Self {
        UserSet::Sparse(Vec::new())
    }
}

/// The widest id range a bitmap covers (8 MiB of bits).
const MAX_DENSE_SPAN: i64 = 1 << 26;

impl UserSet {
    /// The set of `ids`.
    pub fn of(ids: impl IntoIterator<Item = UserId>) -> UserSet {
        let mut ids: Vec<i64> = ids.into_iter().map(|u| u.0).collect();
        ids.sort_unstable();
        ids.dedup();
        let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else { return UserSet::default() };
        let span = max.checked_sub(min).filter(|span| *span < MAX_DENSE_SPAN);
        let Some(span) = span else { return UserSet::Sparse(ids) };
        let mut bits = vec![0u64; (span as usize >> 6) + 1];
        for id in ids {
            let at = (id - min) as usize;
            bits[at >> 6] |= 1 << (at & 63);
        }
        UserSet::Dense { base: min, bits }
    }

    /// Whether `user` is in the set.
    pub fn contains(&self, user: UserId) -> bool {
        match self {
            UserSet::Dense { base, bits } => {
                let Some(at) = user.0.checked_sub(*base).filter(|at| *at >= 0) else { return false };
                let at = at as usize;
                bits.get(at >> 6).is_some_and(|word| word & (1 << (at & 63)) != 0)
            }
            UserSet::Sparse(ids) => ids.binary_search(&user.0).is_ok(),
        }
    }
}

/// Whether a user shares their presence (the personal setting `presence_enabled`, on by
/// default).
pub fn presence_enabled(user: &User) -> bool {
    user.settings.get("presence_enabled").and_then(Value::as_bool).unwrap_or(true)
}

/// Whether a user's presence is reported at all. Users who turned `presence_enabled` off
/// are reported too, with the row that shows them offline (their pings are not recorded).
pub fn is_reported(user: &User) -> bool {
    user.is_active && !user.is_bot
}

/// The users whose presence is reported (independent of the viewer; the presence actor
/// keeps it until the users change).
pub fn reported_users(realm: &RealmState) -> UserSet {
    UserSet::of(realm.users().filter(|u| is_reported(u)).map(|u| u.id))
}

/// Whether the server's limit applies to `viewer`: it is on and the viewer is outside the
/// organization's `can_access_all_users_group`.
pub fn is_limited(config: &PresenceConfig, realm: &RealmState, viewer: UserId) -> bool {
    config.limit_to_accessible_users && !has_realm_permission(realm, "can_access_all_users_group", viewer)
}

/// The users a limited viewer can access: themselves and the users subscribed to a channel
/// they are subscribed to. (Zulip also counts users they exchanged direct messages with,
/// which the organization's state does not hold.)
pub fn accessible_users(realm: &RealmState, viewer: UserId) -> UserSet {
    let mut ids = BTreeSet::from([viewer]);
    for channel in realm.subscribed_channels(viewer) {
        ids.extend(realm.subscribers(channel));
    }
    UserSet::of(ids)
}

/// Who a viewer may see: everyone, or (when limited) the users they can access.
pub fn viewer_access(config: &PresenceConfig, realm: &RealmState, viewer: UserId) -> Option<UserSet> {
    is_limited(config, realm, viewer).then(|| accessible_users(realm, viewer))
}

/// Whether `viewer` can access `target` (for the single-user endpoint).
pub fn can_access(config: &PresenceConfig, realm: &RealmState, viewer: UserId, target: UserId) -> bool {
    !is_limited(config, realm, viewer)
        || viewer == target
        || realm.subscribed_channels(viewer).any(|channel| realm.is_subscribed(target, channel))
}

/// Who hears at once that `user` came online: every active user (bots included, as in
/// Zulip), or those who can access the user when the server limits presence; nobody past
/// `event_user_limit` active users (unless `forced`, as for a change of the user's
/// `presence_enabled`), or when the organization hides presence.
pub fn event_recipients(config: &PresenceConfig, realm: &RealmState, user: UserId, forced: bool) -> Vec<UserId> {
    if realm.realm().presence_disabled() {
        return Vec::new();
    }
    let mut recipients = realm.active_user_ids();
    if config.limit_to_accessible_users {
        recipients.retain(|viewer| can_access(config, realm, *viewer, user));
    }
    if recipients.len() > config.event_user_limit && !forced {
        return Vec::new();
    }
    recipients
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_set_holds_exactly_its_ids() {
        let set = UserSet::of([UserId(70), UserId(5), UserId(133), UserId(6)]);
        let members: Vec<i64> = (-2..300).filter(|i| set.contains(UserId(*i))).collect();
        assert_eq!(members, [5, 6, 70, 133]);
        assert!(!UserSet::default().contains(UserId(0)));
        assert!(!UserSet::of([UserId(i64::MAX)]).contains(UserId(i64::MIN)));
        let far = UserSet::of([UserId(i64::MAX), UserId(3), UserId(-4)]);
        assert!(matches!(far, UserSet::Sparse(_)));
        assert!(far.contains(UserId(i64::MAX)) && far.contains(UserId(-4)) && !far.contains(UserId(4)));
    }
}
