//! Sending: parsing `to`, the content and topic rules, and plans of messages checked
//! against a state without a database.

use super::*;
use crate::realm::catalog::MAX_MESSAGE_LENGTH;

#[test]
fn recipients_parse_as_zulip_does() {
    assert_eq!(SendTo::parse("stream", "general").unwrap(), SendTo::Channel(ChannelRef::Name("general".into())));
    assert_eq!(SendTo::parse("channel", "7").unwrap(), SendTo::Channel(ChannelRef::Id(7)));
    assert_eq!(SendTo::parse("channel", "[\"x\"]").unwrap(), SendTo::Channel(ChannelRef::Name("x".into())));
    assert_eq!(SendTo::parse("channel", "[]").unwrap_err().msg, "Expected exactly one channel");
    assert_eq!(
        SendTo::parse("private", "a@x.com, b@x.com").unwrap(),
        SendTo::Direct(DirectRef::Emails(vec!["a@x.com".into(), "b@x.com".into()]))
    );
    assert_eq!(SendTo::parse("direct", "[3, 4]").unwrap(), SendTo::Direct(DirectRef::Ids(vec![3, 4])));
    assert_eq!(
        SendTo::parse("direct", "[3, \"a@x.com\"]").unwrap_err().msg,
        "Recipient lists may contain emails or user IDs, but not both."
    );
}

#[test]
fn content_and_topics_are_normalized() {
    assert_eq!(normalize_content("\n\nhi  \n").unwrap(), "hi");
    assert_eq!(normalize_content("  \n").unwrap_err().msg, "Message must not be empty");
    assert_eq!(normalize_content("a\0b").unwrap_err().msg, "Message must not contain null bytes");
    let long = "x".repeat(MAX_MESSAGE_LENGTH + 5);
    let cut = normalize_content(&long).unwrap();
    assert_eq!(cut.chars().count(), MAX_MESSAGE_LENGTH);
    assert!(cut.ends_with("\n[message truncated]"));
    assert_eq!(normalize_topic("  (no topic) "), "");
    let topic = normalize_topic(&"t".repeat(70));
    assert_eq!(topic, format!("{}...", "t".repeat(57)));
}

// --- Plans against a state in memory, no database. ---

use std::collections::BTreeSet;

use serde_json::json;

use crate::error::ApiError;
use crate::ids::{ChannelId, GroupId, UserId};
use crate::realm::chat::fixture_tests::{bot, channel, edit_user, realm, set_realm, set_realm_group, user, T0};
use crate::realm::chat::flag;
use crate::realm::model::{Role, UserGroup};
use crate::realm::state::RealmState;

/// A message from `sender` to the channel `to` in topic `topic`, sent by the web app.
fn to_channel(sender: UserId, to: ChannelId, topic: Option<&str>, content: &str) -> SendMessage {
    SendMessage {
        sender,
        to: SendTo::Channel(ChannelRef::Id(to.0)),
        topic: topic.map(str::to_owned),
        content: content.to_owned(),
        client: "website".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: None,
    }
}

/// A direct message from `sender` to `to`, sent by an API client.
fn direct(sender: UserId, to: &[UserId], content: &str) -> SendMessage {
    SendMessage {
        sender,
        to: SendTo::Direct(DirectRef::Ids(to.iter().map(|u| u.0).collect())),
        topic: None,
        content: content.to_owned(),
        client: "python-zulip-api".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: None,
    }
}

fn plan(state: &RealmState, msg: SendMessage) -> Result<PlannedMessage, ApiError> {
    plan_send(state, msg, &BTreeSet::new(), T0)
}

fn refusal(state: &RealmState, msg: SendMessage) -> String {
    plan(state, msg).err().map(|e| e.msg).unwrap_or_default()
}

#[test]
fn a_channel_message_goes_to_active_subscribers_with_their_mention_flags() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let carol = user(&mut state, "carol", Role::Member);
    let gone = user(&mut state, "gone", Role::Member);
    let outsider = user(&mut state, "outsider", Role::Member);
    let c = channel(&mut state, "general", false, &[bob, carol, gone]);
    edit_user(&mut state, gone, |u| u.is_active = false);
    // The sender gets the message without being subscribed; deactivated subscribers do not.
    let planned = plan(&state, to_channel(alice, c, Some("lunch"), "hi @**bob**")).unwrap();
    assert_eq!(planned.recipients(), [alice, bob, carol]);
    assert_eq!(planned.topic(), "lunch");
    // The web app marks its own message read; Bob is mentioned by name.
    assert_eq!(planned.flags(), [(alice, flag::READ), (bob, flag::MENTIONED), (carol, 0)]);
    let planned = plan(&state, to_channel(alice, c, Some("lunch"), "@**all** @**topic**")).unwrap();
    // The topic wildcard reaches the topic's participants, known when written: the
    // sender for now.
    let wildcard = flag::STREAM_WILDCARD_MENTIONED;
    let expected =
        [(alice, flag::READ | wildcard | flag::TOPIC_WILDCARD_MENTIONED), (bob, wildcard), (carol, wildcard)];
    assert_eq!(planned.flags(), expected);
    assert_eq!(planned.needs_conversation(), None);
    assert!(!planned.recipients().contains(&outsider));
}

#[test]
fn a_direct_message_is_private_for_everyone_in_it() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let planned = plan(&state, direct(alice, &[bob, bob], "@**topic** hello")).unwrap();
    assert_eq!(planned.recipients(), [alice, bob]);
    assert_eq!(planned.topic(), "");
    // An integration's message stays unread for its sender; everyone in a conversation
    // takes part in its "topic".
    let bits = flag::IS_PRIVATE | flag::TOPIC_WILDCARD_MENTIONED;
    assert_eq!(planned.flags(), [(alice, bits), (bob, bits)]);
    let mut msg = direct(alice, &[bob], "x");
    msg.read_by_sender = Some(true);
    assert_eq!(plan(&state, msg).unwrap().flags(), [(alice, flag::IS_PRIVATE | flag::READ), (bob, flag::IS_PRIVATE)]);
}

#[test]
fn sending_is_refused_in_zulips_order() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let guest = user(&mut state, "guest", Role::Guest);
    let c = channel(&mut state, "general", false, &[alice]);
    // The topic before the content, the content before the channel.
    assert_eq!(refusal(&state, to_channel(alice, ChannelId(999), None, " ")), "Missing topic");
    assert_eq!(refusal(&state, to_channel(alice, ChannelId(999), Some("t"), " ")), "Message must not be empty");
    let missing = plan(&state, to_channel(alice, ChannelId(999), Some("t"), "x")).unwrap_err();
    assert_eq!(
        (missing.msg.as_str(), missing.data.get("stream_id")),
        ("Channel with ID '999' does not exist", Some(&json!(999)))
    );
    // Guests post only where they are subscribed (or to web-public channels).
    assert_eq!(refusal(&state, to_channel(guest, c, Some("t"), "x")), "Not authorized to send to channel 'general'");
    // Unknown and deactivated recipients, before the content.
    assert_eq!(refusal(&state, direct(alice, &[UserId(999)], "")), "Invalid user ID 999");
    let gone = user(&mut state, "gone", Role::Member);
    edit_user(&mut state, gone, |u| u.is_active = false);
    assert_eq!(refusal(&state, direct(alice, &[gone], "x")), "'gone@acme.test' is no longer using Zulip.");
}

#[test]
fn topics_follow_the_channel_and_organization_policies() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let c = channel(&mut state, "general", false, &[alice]);
    assert_eq!(plan(&state, to_channel(alice, c, Some("(no topic)"), "x")).unwrap().topic(), "");
    set_realm(&mut state, "topics_policy", json!("disable_empty_topic"));
    assert_eq!(refusal(&state, to_channel(alice, c, Some(" "), "x")), "Topics are required in this organization");
    let mut only_empty = state.channel(c).unwrap().clone();
    only_empty.topics_policy = "empty_topic_only".into();
    state.put_channel(only_empty);
    assert_eq!(
        refusal(&state, to_channel(alice, c, Some("t"), "x")),
        "Only the general chat topic is allowed in this channel."
    );
    assert!(plan(&state, to_channel(alice, c, Some(""), "x")).is_ok());
}

#[test]
fn direct_message_permissions_are_checked_from_the_state() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let boss = user(&mut state, "boss", Role::Administrator);
    let helper = bot(&mut state, "helper", alice);
    set_realm_group(&mut state, "direct_message_permission_group", "role:administrators");
    assert_eq!(
        refusal(&state, direct(alice, &[bob], "hi")),
        "This conversation does not include any users who can authorize it."
    );
    // Bots, and conversations with oneself, are exempt.
    assert!(plan(&state, direct(alice, &[alice], "note")).is_ok());
    assert!(plan(&state, direct(helper, &[bob], "beep")).is_ok());
    assert!(plan(&state, direct(alice, &[bob, boss], "hi")).is_ok());
    set_realm_group(&mut state, "direct_message_permission_group", "role:nobody");
    assert_eq!(refusal(&state, direct(boss, &[bob], "hi")), "Direct messages are disabled in this organization.");
}

/// Who may not start conversations may write to existing ones: that needs storage, so the
/// plan leaves it to the write, and a refusal Zulip checks later (mentions) waits for it.
#[test]
fn a_conversation_the_sender_may_not_start_is_checked_when_written() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    set_realm_group(&mut state, "direct_message_initiator_group", "role:administrators");
    let planned = plan(&state, direct(alice, &[bob], "hi")).unwrap();
    assert_eq!(planned.needs_conversation(), Some(format!("{alice},{bob}").as_str()));
    // A group nobody may mention: refused at once where nothing else waits...
    state.put_group(UserGroup {
        id: GroupId(50),
        name: "team".into(),
        description: String::new(),
        is_system_group: false,
        creator_id: None,
        date_created: Some(T0),
        deactivated: false,
        settings: Default::default(),
        members: BTreeSet::from([bob]),
        subgroups: BTreeSet::new(),
    });
    let c = channel(&mut state, "general", false, &[alice]);
    let refused = "You are not allowed to mention user group 'team'.";
    assert_eq!(refusal(&state, to_channel(alice, c, Some("t"), "@*team*")), refused);
    // ...and deferred behind the conversation check otherwise.
    assert!(plan(&state, direct(alice, &[bob], "@*team*")).is_ok());
}

#[test]
fn sending_may_follow_the_topic_for_humans_only() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let helper = bot(&mut state, "helper", alice);
    let c = channel(&mut state, "general", false, &[alice, helper]);
    // By default (3), the topic is followed when the message starts it.
    let follow = plan(&state, to_channel(alice, c, Some("Lunch"), "x")).unwrap().follow().cloned().unwrap();
    assert_eq!((follow.if_initiated, follow.otherwise), (Some(3), None));
    assert_eq!((follow.row.user_id, follow.row.channel_id, follow.row.topic.as_str()), (alice, c, "Lunch"));
    assert_eq!((follow.row.visibility_policy, follow.row.last_updated), (3, T0));
    assert!(plan(&state, to_channel(helper, c, Some("Lunch"), "x")).unwrap().follow().is_none());
    edit_user(&mut state, alice, |u| {
        u.settings.insert("automatically_follow_topics_policy".into(), json!(2));
    });
    let follow = plan(&state, to_channel(alice, c, Some("Lunch"), "x")).unwrap().follow().cloned().unwrap();
    assert_eq!((follow.if_initiated, follow.otherwise), (Some(3), Some(3)));
    edit_user(&mut state, alice, |u| {
        u.settings.insert("automatically_follow_topics_policy".into(), json!(4));
    });
    assert!(plan(&state, to_channel(alice, c, Some("Lunch"), "x")).unwrap().follow().is_none());
    // Direct messages have no topic to follow.
    assert!(plan(&state, direct(alice, &[alice], "x")).unwrap().follow().is_none());
}

#[test]
fn all_public_streams_queues_of_other_members_get_public_messages() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let watcher = user(&mut state, "watcher", Role::Member);
    let guest = user(&mut state, "guest", Role::Guest);
    let public = channel(&mut state, "general", false, &[alice, bob]);
    let private = channel(&mut state, "secret", true, &[alice]);
    let listeners = BTreeSet::from([bob, watcher, guest]);
    let planned = plan_send(&state, to_channel(alice, public, Some("t"), "x"), &listeners, T0).unwrap();
    assert_eq!(planned.public_audience(), [watcher]);
    let planned = plan_send(&state, to_channel(alice, private, Some("t"), "x"), &listeners, T0).unwrap();
    assert!(planned.public_audience().is_empty());
}

/// The same rules written: a conversation the sender may not start is refused before a
/// mention they may not make; once the conversation exists, the mention is refused.
#[test]
fn a_refused_conversation_start_comes_before_a_refused_mention() {
    use crate::realm::tests::{add, setup};
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    state.put_group(UserGroup {
        id: GroupId(1000),
        name: "team".into(),
        description: String::new(),
        is_system_group: false,
        creator_id: None,
        date_created: Some(T0),
        deactivated: false,
        settings: Default::default(),
        members: BTreeSet::from([bob]),
        subgroups: BTreeSet::new(),
    });
    let mut restricted = state.clone();
    set_realm_group(&mut restricted, "direct_message_initiator_group", "role:administrators");
    let none = BTreeSet::new();
    let err = send_message(&mut restricted, &store, &direct(alice, &[bob], "@*team*"), &none, T0).unwrap_err();
    assert_eq!(err.msg, "You do not have permission to initiate direct message conversations.");
    send_message(&mut state, &store, &direct(alice, &[bob], "hi"), &none, T0).unwrap();
    let err = send_message(&mut restricted, &store, &direct(alice, &[bob], "@*team*"), &none, T0).unwrap_err();
    assert_eq!(err.msg, "You are not allowed to mention user group 'team'.");
    let (sent, events) = send_message(&mut restricted, &store, &direct(alice, &[bob], "answer"), &none, T0).unwrap();
    // One event for both: the same flags, and no echo setting the sender's apart.
    assert_eq!(events.len(), 1, "{sent:?}");
    assert_eq!(events[0].users, [alice, bob]);
}
