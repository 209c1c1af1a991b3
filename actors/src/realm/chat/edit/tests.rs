//! Edits: the rules that need no database (resolving, propagate modes) and the events of
//! an edit built from what it changed.

use super::checks::is_resolve_only;
use super::*;

#[test]
fn resolving_is_adding_or_removing_the_prefix() {
    assert!(is_resolve_only("lunch", "✔ lunch"));
    assert!(is_resolve_only("✔ lunch", "lunch"));
    assert!(!is_resolve_only("lunch", "✔ dinner"));
    assert!(!is_resolve_only("lunch", "dinner"));
}

#[test]
fn propagate_modes_parse() {
    assert_eq!(PropagateMode::parse("change_later").unwrap(), PropagateMode::ChangeLater);
    assert_eq!(PropagateMode::parse("x").unwrap_err().msg, "Invalid propagate_mode");
}

// --- Plans, checks and events against a state in memory, no database. ---

use serde_json::json;

use super::checks::{check_channel_move, check_content_edit, check_topic_edit};
use super::events::{edit_events, Changed, Edited, Validated};
use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::realm::chat::fixture_tests::{channel, realm, set_realm, set_realm_group, user, T0};
use crate::realm::chat::flag;
use crate::realm::chat::render::Rendered;
use crate::realm::model::Role;
use crate::store::reactions::MessageRow;

/// An event's whole body, `type` included.
fn body_of(out: &crate::events::Outgoing) -> serde_json::Value {
    serde_json::Value::Object(out.event.body().clone())
}

fn edit(user_id: UserId, content: Option<&str>) -> UpdateMessage {
    UpdateMessage {
        user_id,
        message_id: MessageId(5),
        content: content.map(str::to_owned),
        topic: None,
        stream_id: None,
        propagate_mode: PropagateMode::ChangeOne,
        send_notification_to_old_thread: false,
        send_notification_to_new_thread: true,
        prev_content_sha256: None,
    }
}

/// Message 5 of `sender` in `channel` (topic "lunch"), sent at `date_sent`.
fn message(sender: UserId, channel: Option<ChannelId>, date_sent: i64) -> MessageRow {
    MessageRow {
        id: MessageId(5),
        realm_id: RealmId(1),
        sender_id: sender,
        channel_id: channel,
        dm_key: None,
        topic: "lunch".into(),
        content: "old".into(),
        rendered_content: "<p>old</p>".into(),
        date_sent,
        edit_history: None,
    }
}

#[test]
fn the_new_content_is_rendered_when_planned_and_its_errors_wait() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    assert_eq!(plan_edit(&state, edit(UserId(999), None), T0).unwrap_err().msg, "No such user");
    // Planning needs no message: a message that does not exist is found out when written.
    assert!(plan_edit(&state, edit(alice, Some("a\0b")), T0).is_ok());
    assert!(plan_edit(&state, edit(alice, Some("  ")), T0).is_ok());
}

#[test]
fn content_edits_follow_the_organization_the_sender_and_the_time_limit() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Administrator);
    let c = channel(&mut state, "general", false, &[alice, bob]);
    let msg = message(alice, Some(c), T0);
    let user = |id: UserId| state.user(id).unwrap().clone();
    assert!(check_content_edit(&state, &user(alice), &msg, T0 + 620).is_ok());
    let late = check_content_edit(&state, &user(alice), &msg, T0 + 621).unwrap_err();
    assert_eq!(late.msg, "The time limit for editing this message has passed");
    // Not even administrators edit others' messages.
    let other = check_content_edit(&state, &user(bob), &msg, T0).unwrap_err();
    assert_eq!(other.msg, "You don't have permission to edit this message");
    let mut off = state.clone();
    set_realm(&mut off, "allow_message_editing", json!(false));
    let alice_user = user(alice);
    let refused = check_content_edit(&off, &alice_user, &msg, T0).unwrap_err();
    assert_eq!(refused.msg, "Your organization has turned off message editing");
}

#[test]
fn topic_edits_and_moves_follow_their_permissions() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let moderator = user(&mut state, "moderator", Role::Moderator);
    let c = channel(&mut state, "general", false, &[alice, moderator]);
    let d = channel(&mut state, "random", false, &[alice, moderator]);
    set_realm_group(&mut state, "can_move_messages_between_topics_group", "role:moderators");
    set_realm_group(&mut state, "can_resolve_topics_group", "role:moderators");
    set_realm_group(&mut state, "can_move_messages_between_channels_group", "role:moderators");
    let (channel, target) = (state.channel(c).unwrap().clone(), state.channel(d).unwrap().clone());
    let (alice, moderator) = (state.user(alice).unwrap().clone(), state.user(moderator).unwrap().clone());
    let msg = message(alice.id, Some(c), T0);
    let topic =
        |user, new: &str, now| check_topic_edit(&state, user, &channel, None, &msg, new, now).map_err(|e| e.msg);
    assert_eq!(
        topic(&alice, "✔ lunch", T0).unwrap_err(),
        "You don't have permission to resolve topics in this channel."
    );
    assert_eq!(topic(&alice, "dinner", T0).unwrap_err(), "You don't have permission to edit this message");
    assert_eq!(topic(&moderator, "✔ lunch", T0), Ok(()));
    // Moderators are exempt from the time limits.
    assert_eq!(topic(&moderator, "dinner", T0 + 10 * 86_400), Ok(()));
    let moved = check_channel_move(&state, &alice, &channel, &target, &msg, T0).unwrap_err();
    assert_eq!(moved.msg, "You don't have permission to move this message");
    assert!(check_channel_move(&state, &moderator, &channel, &target, &msg, T0 + 10 * 86_400).is_ok());
}

#[test]
fn an_edit_tells_everyone_who_had_or_has_the_message_with_their_flags() {
    let mut state = realm();
    let alice = user(&mut state, "alice", Role::Member);
    let bob = user(&mut state, "bob", Role::Member);
    let carol = user(&mut state, "carol", Role::Member);
    let c = channel(&mut state, "general", false, &[alice, bob, carol]);
    let d = channel(&mut state, "random", false, &[alice]);
    let rendered = Rendered { html: "<p>new</p>".into(), ..Rendered::default() };
    let done = Edited {
        edit: Validated {
            message: message(alice, Some(c), T0),
            content: Some(("new".into(), rendered)),
            topic: None,
            target: None,
            ids: vec![MessageId(5)],
        },
        changed: vec![Changed {
            before: message(alice, Some(c), T0),
            flags: vec![(alice, flag::READ), (bob, flag::MENTIONED), (carol, 0)],
            lost: Vec::new(),
        }],
        old_audience: vec![alice, bob],
        new_audience: vec![alice, bob, carol],
    };
    let events = edit_events(&state, alice, &done, PropagateMode::ChangeOne, T0 + 5);
    let users: Vec<Vec<UserId>> = events.iter().map(|o| o.users.clone()).collect();
    assert_eq!(users, [vec![carol], vec![bob], vec![alice]]);
    let body = |flags: serde_json::Value| {
        json!({"type": "update_message", "user_id": alice, "edit_timestamp": T0 + 5, "message_id": 5, "rendering_only": false,
               "stream_name": "general", "stream_id": c, "orig_content": "old",
               "orig_rendered_content": "<p>old</p>", "content": "new", "rendered_content": "<p>new</p>",
               "is_me_message": false, "message_ids": [5], "flags": flags})
    };
    assert_eq!(events[0].event.get("flags"), Some(&json!([])));
    assert_eq!(body_of(&events[1]), body(json!(["mentioned"])));
    assert_eq!(body_of(&events[2]), body(json!(["read"])));
    // A move: Carol lost the message and is told it is gone instead.
    let moved = Edited {
        edit: Validated { content: None, target: Some(d), ..done.edit.clone() },
        changed: vec![Changed { lost: vec![carol], ..done.changed[0].clone() }],
        ..done
    };
    let events = edit_events(&state, alice, &moved, PropagateMode::ChangeAll, T0 + 5);
    assert_eq!(events.last().map(|o| o.users.clone()), Some(vec![carol]));
    let gone = json!({"type": "delete_message", "message_ids": [5], "message_type": "stream", "stream_id": c,
                      "topic": "lunch"});
    assert_eq!(events.last().map(body_of), Some(gone));
    let update = body_of(&events[0]);
    assert_eq!((update["propagate_mode"].clone(), update["new_stream_id"].clone()), (json!("change_all"), json!(d)));
}
