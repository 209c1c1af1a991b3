//! Topic policies and subscription properties, planned and applied on organizations built
//! in memory: no database.

use serde_json::json;

use super::policies::{plan_mute_topic, plan_policy, plan_set_user_topic, TopicChannel, FOLLOWED, MUTED};
use super::properties::{plan_property, PropertyChange};
use crate::events::Event;
use crate::ids::{ChannelId, UserId};
use crate::realm::channels::tests::memory::{add_channel, add_user, organization, subscribe, T0};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

/// An organization with a member (2) subscribed to the public `general` (10), and the
/// private `secret` (11) they are not in.
fn organization_with_channels() -> (RealmState, UserId) {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    let general = add_channel(&mut state, 10, "general", false);
    subscribe(&mut state, member, general);
    add_channel(&mut state, 11, "secret", true);
    (state, member)
}

#[test]
fn a_new_policy_sends_the_muted_list_then_the_policy_to_the_user_alone() {
    let (mut state, member) = organization_with_channels();
    let change = plan_set_user_topic(&state, member, 10, "Lunch", MUTED, T0).unwrap();
    let applied = change.apply(&mut state);
    assert_eq!(state.user_topic(member, ChannelId(10), "lunch").map(|t| t.visibility_policy), Some(MUTED));
    let events: Vec<(Vec<UserId>, Event)> = applied.events.into_iter().map(|o| (o.users, o.event)).collect();
    assert_eq!(
        events,
        vec![
            (vec![member], Event::new("muted_topics", json!({"muted_topics": [["general", "Lunch", T0]]}))),
            (
                vec![member],
                Event::new(
                    "user_topic",
                    json!({"stream_id": 10, "topic_name": "Lunch", "last_updated": T0, "visibility_policy": MUTED})
                )
            ),
        ]
    );
    // The same policy again, in another spelling: nothing changes, nothing is sent.
    let again = plan_set_user_topic(&state, member, 10, "LUNCH", MUTED, T0 + 5).unwrap();
    assert!(again.changes_nothing());
    assert!(again.apply(&mut state).events.is_empty());
    // A new policy keeps the row's first spelling; the event carries the request's.
    let follow = plan_policy(&state, member, ChannelId(10), "LUNCH", FOLLOWED, T0 + 9).apply(&mut state);
    assert_eq!(state.user_topic(member, ChannelId(10), "lunch").unwrap().topic, "Lunch");
    assert_eq!(follow.events[1].event.get("topic_name"), Some(&json!("LUNCH")));
}

#[test]
fn setting_needs_content_access_and_clearing_only_a_channel_the_user_may_know() {
    let (mut state, member) = organization_with_channels();
    let refused = plan_set_user_topic(&state, member, 11, "t", MUTED, T0).unwrap_err();
    assert_eq!(refused.msg, "Invalid channel ID");
    let by_name = TopicChannel::Name("secret".into());
    assert_eq!(
        plan_mute_topic(&state, member, &by_name, "t", true, T0).unwrap_err().msg,
        "Invalid channel name 'secret'"
    );
    assert_eq!(plan_mute_topic(&state, member, &by_name, "t", false, T0).unwrap_err().msg, "Topic is not muted");
    // Clearing what is not set is no error and changes nothing.
    let clear = plan_mute_topic(&state, member, &TopicChannel::Id(10), "t", false, T0).unwrap();
    assert!(clear.changes_nothing() && clear.apply(&mut state).events.is_empty());
}

#[test]
fn a_property_change_applies_to_the_subscription_and_tells_the_user() {
    let (mut state, member) = organization_with_channels();
    let hide = PropertyChange::new(10, "in_home_view".into(), &json!(false)).unwrap();
    let applied = plan_property(&state, member, &hide).unwrap().apply(&mut state);
    assert!(state.subscription(member, ChannelId(10)).unwrap().is_muted);
    let update = |property: &str, value| {
        Event::new("subscription", json!({"op": "update", "property": property, "value": value, "stream_id": 10}))
    };
    let events: Vec<Event> = applied.events.iter().map(|o| o.event.clone()).collect();
    assert_eq!(events, vec![update("in_home_view", json!(false)), update("is_muted", json!(true))]);
    assert_eq!(applied.events[0].users, vec![member]);
    let elsewhere = PropertyChange::new(11, "pin_to_top".into(), &json!(true)).unwrap();
    assert_eq!(plan_property(&state, member, &elsewhere).unwrap_err().msg, "Invalid channel ID");
    let owner_change = PropertyChange::new(10, "pin_to_top".into(), &json!(true)).unwrap();
    assert_eq!(plan_property(&state, UserId(1), &owner_change).unwrap_err().msg, "Not subscribed to channel ID 10");
}
