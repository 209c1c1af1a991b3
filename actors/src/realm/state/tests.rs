//! The state's derived lists and caches: they answer what a walk over the state would.

use serde_json::Value;

use crate::ids::{ChannelId, UserId};
use crate::realm::fixture_tests::{channel, human, organization};
use crate::realm::format::UserDictOptions;
use crate::realm::model::{Role, Subscription};
use crate::realm::state::RealmState;

fn subscribe(state: &mut RealmState, user: UserId, channel_id: ChannelId) {
    state.put_subscription(Subscription::new(user, channel_id, "#76ce90".into()));
}

/// Every user as the viewer sees them, written as `GET /users` did before the cache.
fn users_plainly(state: &RealmState, viewer: UserId, opts: UserDictOptions) -> String {
    let viewer = state.user(viewer).unwrap();
    let views: Vec<_> = state.users().map(|u| state.user_view(viewer, u, opts)).collect();
    serde_json::to_string(&views).unwrap()
}

fn users_cached(state: &RealmState, viewer: UserId, opts: UserDictOptions) -> String {
    let mut out = String::new();
    state.write_users_json(state.user(viewer).unwrap(), state.user_map().values(), opts, true, &mut out);
    out
}

#[test]
fn the_active_users_follow_creations_deactivations_and_reactivations() {
    let mut state = organization();
    let a = human(&mut state, UserId(3), "a@acme.test", "A", "a", Role::Member);
    let c = human(&mut state, UserId(5), "c@acme.test", "C", "c", Role::Member);
    let b = human(&mut state, UserId(4), "b@acme.test", "B", "b", Role::Member);
    assert_eq!(state.active_user_ids(), [a, b, c]);
    state.set_user_active(b, false);
    assert_eq!(state.active_user_ids(), [a, c]);
    assert!(!state.is_active_user(b));
    assert_eq!(state.active_user_ids(), [a, c]);
    assert!(!state.is_active_user(b) && state.is_active_user(c));
    let mut again = state.user(b).unwrap().clone();
    again.is_active = true;
    state.put_user(again);
    assert_eq!(state.active_user_ids(), [a, b, c]);
}

#[test]
fn active_subscribers_and_channel_objects_follow_their_sources() {
    let mut state = organization();
    let users: Vec<UserId> = (0..40)
        .map(|i| human(&mut state, UserId(10 + i), &format!("u{i}@acme.test"), "U", &format!("k{i}"), Role::Member))
        .collect();
    state.put_channel(channel(ChannelId(1), "big", false, true));
    state.put_channel(channel(ChannelId(2), "small", false, true));
    for user in &users {
        subscribe(&mut state, *user, ChannelId(1));
    }
    subscribe(&mut state, users[3], ChannelId(2));
    let count = |state: &RealmState, id| {
        let json = state.channel_json(id, 0, || state.active_subscribers(id).len().to_string());
        json.parse::<usize>().unwrap()
    };
    assert_eq!(state.active_subscribers(ChannelId(1)), users);
    assert_eq!((count(&state, ChannelId(1)), count(&state, ChannelId(2))), (40, 1));

    // A deactivation changes both channels' lists and objects, in a copy of the state
    // (the earlier copy keeps its own answers).
    let before = state.clone();
    state.set_user_active(users[3], false);
    assert_eq!(state.active_subscribers(ChannelId(1)).len(), 39);
    assert!(state.active_subscribers(ChannelId(2)).is_empty());
    assert_eq!((count(&state, ChannelId(1)), count(&state, ChannelId(2))), (39, 0));
    assert_eq!((count(&before, ChannelId(1)), count(&before, ChannelId(2))), (40, 1));

    // So do a new subscriber and a renamed channel.
    subscribe(&mut state, users[5], ChannelId(2));
    assert_eq!(count(&state, ChannelId(2)), 1);
    let name =
        |state: &RealmState| state.channel_json(ChannelId(2), 1, || state.channel(ChannelId(2)).unwrap().name.clone());
    assert_eq!(&*name(&state), "small");
    state.put_channel(channel(ChannelId(2), "tiny", false, true));
    assert_eq!(&*name(&state), "tiny");
}

#[test]
fn cached_user_objects_are_those_a_walk_writes_and_follow_changes() {
    let mut state = organization();
    let viewer = human(&mut state, UserId(3), "v@acme.test", "Viewer", "v", Role::Member);
    let other = human(&mut state, UserId(4), "o@acme.test", "Other", "o", Role::Member);
    let opts = UserDictOptions { client_gravatar: false, include_custom_profile_fields: true };
    assert_eq!(users_cached(&state, viewer, opts), users_plainly(&state, viewer, opts));
    let gravatar = UserDictOptions { client_gravatar: true, ..opts };
    assert_eq!(users_cached(&state, viewer, gravatar), users_plainly(&state, viewer, gravatar));

    // A change in place, and one that hides the address from members.
    state.user_mut(other).unwrap().full_name = "Renamed".into();
    assert_eq!(users_cached(&state, viewer, opts), users_plainly(&state, viewer, opts));
    state.user_mut(other).unwrap().email_address_visibility = crate::realm::model::EmailVisibility::Administrators;
    let text = users_cached(&state, viewer, opts);
    assert_eq!(text, users_plainly(&state, viewer, opts));
    let listed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(listed[1]["full_name"], "Renamed");
    assert_eq!(listed[1]["delivery_email"], Value::Null);
    // The user themselves still sees it.
    assert_eq!(users_cached(&state, other, opts), users_plainly(&state, other, opts));
}
