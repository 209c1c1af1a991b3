//! The channel access predicates against Zulip's `user_has_content_access`,
//! `user_has_metadata_access` and `can_administer_accessible_channel`, for every role,
//! subscribed or not, with permissions granted through nested subgroups.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::ids::{ChannelId, GroupId, UserId};
use crate::realm::model::{Channel, Role, Subscription, UserGroup};
use crate::realm::state::RealmState;
use crate::realm::tests::{add, setup};

/// Who is who in the test organization.
struct People {
    owner: UserId,
    admin: UserId,
    moderator: UserId,
    member: UserId,
    guest: UserId,
    /// A member in `INNER`, which is a subgroup of `OUTER`.
    insider: UserId,
    /// A guest in `INNER`.
    guest_insider: UserId,
}

const INNER: GroupId = GroupId(9001);
const OUTER: GroupId = GroupId(9002);

fn group(id: GroupId, name: &str, members: &[UserId], subgroups: &[GroupId]) -> UserGroup {
    UserGroup {
        id,
        name: name.into(),
        description: String::new(),
        is_system_group: false,
        creator_id: None,
        date_created: None,
        deactivated: false,
        settings: Map::new(),
        members: members.iter().copied().collect(),
        subgroups: subgroups.iter().copied().collect(),
    }
}

/// An organization with one user per role and the nested groups `OUTER` ⊃ `INNER`.
fn organization() -> (tempfile::TempDir, RealmState, People) {
    let (dir, store, config, mut state) = setup();
    let owner = state.users().find(|u| u.role == Role::Owner).map(|u| u.id).unwrap();
    let mut user = |email: &str, role: Role| add(&mut state, &store, &config, email, role);
    let people = People {
        owner,
        admin: user("admin@acme.test", Role::Administrator),
        moderator: user("moderator@acme.test", Role::Moderator),
        member: user("member@acme.test", Role::Member),
        guest: user("guest@acme.test", Role::Guest),
        insider: user("insider@acme.test", Role::Member),
        guest_insider: user("guest.insider@acme.test", Role::Guest),
    };
    state.put_group(group(INNER, "inner", &[people.insider, people.guest_insider], &[]));
    state.put_group(group(OUTER, "outer", &[], &[INNER]));
    (dir, state, people)
}

/// A channel: `private` is `invite_only`; `settings` are its `can_*_group` values.
fn channel(state: &mut RealmState, id: i64, private: bool, web_public: bool, settings: Value) -> ChannelId {
    let Value::Object(settings) = settings else { panic!("settings must be an object") };
    state.put_channel(Channel {
        id: ChannelId(id),
        name: format!("channel {id}"),
        description: String::new(),
        rendered_description: String::new(),
        invite_only: private,
        is_web_public: web_public,
        history_public_to_subscribers: true,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: 0,
        is_archived: false,
        settings,
    });
    ChannelId(id)
}

fn subscribe(state: &mut RealmState, user: UserId, channel: ChannelId, active: bool) {
    state.put_subscription(Subscription { active, ..Subscription::new(user, channel, "#76ce90".into()) });
}

/// (content access, metadata access, may administer) of `user` in `channel`.
fn access(state: &RealmState, user: UserId, channel: ChannelId) -> (bool, bool, bool) {
    let (user, channel) = (state.user(user).unwrap(), state.channel(channel).unwrap());
    (
        state.has_content_access(user, channel),
        state.has_metadata_access(user, channel),
        state.can_administer_channel(user, channel),
    )
}

/// Asserts `access` for each listed user.
fn check(state: &RealmState, channel: ChannelId, expected: &[(UserId, (bool, bool, bool))]) {
    for (user, want) in expected {
        assert_eq!(access(state, *user, channel), *want, "user {user:?} in {channel:?}");
    }
}

const NONE: (bool, bool, bool) = (false, false, false);
/// Content and metadata access, no administration.
const READ: (bool, bool, bool) = (true, true, false);
/// Everything.
const ALL: (bool, bool, bool) = (true, true, true);
/// Metadata and administration without content (administrators of a private channel).
const ADMINISTER: (bool, bool, bool) = (false, true, true);

#[test]
fn public_channels_are_open_to_every_non_guest() {
    let (_dir, mut state, p) = organization();
    let public = channel(&mut state, 1, false, false, json!({}));
    check(
        &state,
        public,
        &[
            (p.owner, ALL),
            (p.admin, ALL),
            (p.moderator, READ),
            (p.member, READ),
            (p.insider, READ),
            (p.guest, NONE),
            (p.guest_insider, NONE),
        ],
    );
    subscribe(&mut state, p.guest, public, true);
    check(&state, public, &[(p.guest, READ)]);
}

#[test]
fn web_public_channels_are_open_to_guests_too() {
    let (_dir, mut state, p) = organization();
    let web = channel(&mut state, 1, false, true, json!({}));
    check(&state, web, &[(p.owner, ALL), (p.admin, ALL), (p.moderator, READ), (p.member, READ), (p.guest, READ)]);
}

#[test]
fn private_channels_show_administrators_metadata_only() {
    let (_dir, mut state, p) = organization();
    let private = channel(&mut state, 1, true, false, json!({}));
    check(
        &state,
        private,
        &[
            (p.owner, ADMINISTER),
            (p.admin, ADMINISTER),
            (p.moderator, NONE),
            (p.member, NONE),
            (p.insider, NONE),
            (p.guest, NONE),
        ],
    );
    subscribe(&mut state, p.member, private, true);
    subscribe(&mut state, p.guest, private, true);
    subscribe(&mut state, p.admin, private, true);
    // A subscription that ended gives nothing.
    subscribe(&mut state, p.moderator, private, false);
    check(&state, private, &[(p.member, READ), (p.guest, READ), (p.admin, ALL), (p.moderator, NONE)]);
}

#[test]
fn nested_members_of_the_adding_and_subscribing_groups_get_content_access() {
    let (_dir, mut state, p) = organization();
    let adding = channel(&mut state, 1, true, false, json!({"can_add_subscribers_group": OUTER.0}));
    let anonymous = json!({"direct_members": [], "direct_subgroups": [OUTER.0]});
    let subscribing = channel(&mut state, 2, true, false, json!({"can_subscribe_group": anonymous}));
    for id in [adding, subscribing] {
        check(
            &state,
            id,
            &[
                (p.insider, READ),
                // Guests never hold these permissions, whatever group they are in.
                (p.guest_insider, NONE),
                (p.member, NONE),
                (p.admin, ADMINISTER),
            ],
        );
    }
}

#[test]
fn nested_members_of_the_administering_group_see_and_administer_without_content() {
    let (_dir, mut state, p) = organization();
    let administered = channel(&mut state, 1, true, false, json!({"can_administer_channel_group": OUTER.0}));
    check(
        &state,
        administered,
        &[(p.insider, ADMINISTER), (p.guest_insider, NONE), (p.member, NONE), (p.owner, ADMINISTER)],
    );
    // A subscribed guest in the group reads the channel but cannot administer it.
    subscribe(&mut state, p.guest_insider, administered, true);
    subscribe(&mut state, p.insider, administered, true);
    check(&state, administered, &[(p.guest_insider, READ), (p.insider, ALL)]);
    let public = channel(&mut state, 2, false, false, json!({"can_administer_channel_group": OUTER.0}));
    check(&state, public, &[(p.insider, ALL), (p.member, READ), (p.guest_insider, NONE)]);
}

#[test]
fn deactivated_users_lose_group_permissions_and_leave_the_audience() {
    let (_dir, mut state, p) = organization();
    let private = channel(&mut state, 1, true, false, json!({"can_administer_channel_group": OUTER.0}));
    let audience: BTreeSet<UserId> = state.channel_metadata_audience(private).into_iter().collect();
    assert_eq!(audience, BTreeSet::from([p.owner, p.admin, p.insider]));
    state.set_user_active(p.insider, false);
    check(&state, private, &[(p.insider, NONE)]);
    assert_eq!(state.channel_metadata_audience(private), vec![p.owner, p.admin]);
}

#[test]
fn visible_channels_are_those_with_metadata_access() {
    let (_dir, mut state, p) = organization();
    let public = channel(&mut state, 1, false, false, json!({}));
    let private = channel(&mut state, 2, true, false, json!({}));
    let web = channel(&mut state, 3, false, true, json!({}));
    let ids = |user: UserId| -> Vec<ChannelId> {
        let user = state.user(user).unwrap();
        state.visible_channels(user).map(|c| c.id).collect()
    };
    assert_eq!(ids(p.admin), vec![public, private, web]);
    assert_eq!(ids(p.member), vec![public, web]);
    assert_eq!(ids(p.guest), vec![web]);
}
