//! Plans and texts of scheduled messages and reminders, on a state built in memory.

use serde_json::json;

use super::delivery::{failure_notice_text, LATE_CUTOFF_SECS};
use super::ops::{plan_create, plan_edit, Kind, NewScheduled, ScheduledEdit, To};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::chat::fixture_tests::{channel, realm, user};
use crate::realm::model::Role;
use crate::realm::scheduled_data::{ReminderOf, ScheduledData, ScheduledItem, ScheduledTarget};
use crate::realm::Change;
use crate::store::reactions::MessageRow;

fn item(id: i64, at: i64, failed: bool, reminder: bool) -> ScheduledItem {
    ScheduledItem {
        id,
        sender: UserId(1),
        target: ScheduledTarget::Direct(vec![UserId(1)]),
        content: "x".into(),
        rendered_content: "<p>x</p>".into(),
        client: "test".into(),
        deliver_at: at,
        read_by_sender: false,
        failed,
        failure_message: None,
        reminder: reminder.then(|| ReminderOf { message_id: MessageId(9), note: String::new() }),
    }
}

#[test]
fn pending_items_are_due_in_time_order_and_failed_ones_wait() {
    let mut data = ScheduledData::default();
    data.put(item(3, 200, false, false));
    data.put(item(1, 300, false, true));
    data.put(item(2, 200, false, false));
    data.put(item(4, 50, true, false));
    assert_eq!(data.next_due(), Some(200));
    assert_eq!(data.due(199), Vec::<i64>::new());
    assert_eq!(data.due(300), vec![2, 3, 1]);
    let ids: Vec<i64> = data.of_user(UserId(1), false).iter().map(|i| i.id).collect();
    assert_eq!(ids, vec![4, 2, 3]);
    data.remove(2);
    data.remove(3);
    data.remove(1);
    assert_eq!(data.next_due(), None);
}

#[test]
fn the_failure_notice_is_zulips_text() {
    assert_eq!(
        failure_notice_text(1_700_000_000, "Message could not be sent at the scheduled time."),
        "The message you scheduled for <time:2023-11-14T22:13:20+00:00> was not sent because of the following error:\n\n> Message could not be sent at the scheduled time.\n\n[View scheduled messages](#scheduled)\n\n"
    );
    assert_eq!(LATE_CUTOFF_SECS, 600);
}

fn new(kind: Kind, to: To, topic: Option<&str>, at: i64) -> NewScheduled {
    NewScheduled {
        kind,
        to,
        topic: topic.map(str::to_owned),
        content: "hello".into(),
        deliver_at: at,
        read_by_sender: None,
        client: "website".into(),
    }
}

#[test]
fn a_message_is_checked_as_a_send_when_scheduled() {
    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Owner);
    let bob = user(&mut state, "bob", Role::Member);
    let general = channel(&mut state, "general", false, &[owner]);
    let planned = plan_create(&state, owner, new(Kind::Channel, To::One(general.0), Some(" (no topic) "), 100), 10);
    let created = planned.unwrap();
    assert_eq!(created.item.target, ScheduledTarget::Channel(general, String::new()));
    // A full client marks its own message read, unless it is to its sender alone.
    assert!(created.item.read_by_sender);
    let to_self = plan_create(&state, owner, new(Kind::Direct, To::Many(vec![owner.0, owner.0]), None, 100), 10);
    assert!(!to_self.unwrap().item.read_by_sender);
    let to_bob = plan_create(&state, owner, new(Kind::Direct, To::Many(vec![bob.0]), None, 100), 10).unwrap();
    assert_eq!(to_bob.item.target, ScheduledTarget::Direct(vec![owner, bob]));
    let errors = [
        (new(Kind::Channel, To::One(general.0), Some("t"), 10), "Scheduled delivery time must be in the future."),
        (new(Kind::Channel, To::Many(vec![1]), Some("t"), 100), "Invalid data type for channel ID"),
        (new(Kind::Direct, To::One(1), None, 100), "Invalid data type for recipients"),
        (new(Kind::Channel, To::One(general.0), None, 100), "Missing topic"),
    ];
    for (msg, expected) in errors {
        assert_eq!(plan_create(&state, owner, msg, 10).unwrap_err().msg, expected);
    }
}

#[test]
fn an_edit_checks_its_parameters_first_and_a_failed_message_needs_a_new_time() {
    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Owner);
    let general = channel(&mut state, "general", false, &[owner]);
    let mut failed = item(7, 100, true, false);
    failed.sender = owner;
    failed.target = ScheduledTarget::Channel(general, "t".into());
    state.scheduled_mut().put(failed);
    let edit = |content: Option<&str>, at: Option<i64>| ScheduledEdit {
        kind: None,
        to: None,
        topic: None,
        content: content.map(str::to_owned),
        deliver_at: at,
        client: "website".into(),
    };
    let err = |e: ScheduledEdit| plan_edit(&state, owner, 7, e, 10).unwrap_err().msg;
    assert_eq!(err(edit(None, None)), "Nothing to change");
    assert_eq!(err(edit(Some("new"), None)), "Scheduled delivery time must be in the future.");
    assert_eq!(
        err(ScheduledEdit { kind: Some(Kind::Direct), ..edit(None, Some(50)) }),
        "Recipient required when updating type of scheduled message."
    );
    assert_eq!(
        err(ScheduledEdit { kind: Some(Kind::Channel), to: Some(To::One(general.0)), ..edit(None, Some(50)) }),
        "Topic required when updating scheduled message type to channel."
    );
    let planned = plan_edit(&state, owner, 7, edit(Some("new"), Some(50)), 10).unwrap();
    let applied = planned.apply(&mut state);
    let event = &applied.events[0].event;
    assert_eq!(
        event.body()["scheduled_message"],
        json!({"scheduled_message_id": 7, "to": general.0, "type": "stream", "content": "new",
               "rendered_content": "<p>new</p>", "topic": "t", "scheduled_delivery_timestamp": 50, "failed": false})
    );
}

#[test]
fn reminder_texts_follow_zulips_for_each_kind_of_message() {
    use super::reminders::reminder_content;
    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Owner);
    let (a, b) = (user(&mut state, "a", Role::Member), user(&mut state, "b", Role::Member));
    let general = channel(&mut state, "general", false, &[owner]);
    let row = |channel: Option<ChannelId>, dm: Option<String>, content: &str| MessageRow {
        id: MessageId(42),
        realm_id: state.realm().id,
        sender_id: owner,
        channel_id: channel,
        dm_key: dm,
        topic: if channel.is_some() { "{789}".into() } else { String::new() },
        content: content.into(),
        rendered_content: String::new(),
        date_sent: 0,
        edit_history: None,
    };
    let url = "https://x.test";
    let group = Some(format!("{},{},{}", owner.0, a.0, b.0));
    let o = owner.0;
    assert_eq!(
        reminder_content(&state, url, &row(Some(general), None, "{456}"), "{123}").unwrap(),
        format!("You requested a reminder for the following message. Note:\n > {{123}}\n\n@_**owner|{o}** [said](https://x.test/#narrow/channel/{g}-general/topic/.7B789.7D/near/42) in [#general > {{789}}](#narrow/channel/{g}-general/topic/.7B789.7D/with/42):\n```quote\n{{456}}\n```", g = general.0)
    );
    assert_eq!(
        reminder_content(&state, url, &row(None, group.clone(), "/poll Lunch?"), "").unwrap(),
        format!("You requested a reminder for the following direct message.\n\n@_**owner|{o}** [sent](https://x.test/#narrow/dm/{o},{},{}/near/42) a poll to @_**a|{}** and @_**b|{}**.", a.0, b.0, a.0, b.0)
    );
    assert_eq!(
        reminder_content(&state, url, &row(None, Some(o.to_string()), "/todo Chores"), "").unwrap(),
        format!("You requested a reminder for the following direct message.\n\nYou [sent](https://x.test/#narrow/dm/{o}/near/42) yourself a todo list.")
    );
    // Truncated to fit the message length limit.
    let long = reminder_content(&state, url, &row(None, group, &"x".repeat(10_000)), "").unwrap();
    assert_eq!(long.chars().count(), 10_000);
    assert!(long.ends_with("x\n[message truncated]\n```"));
    assert_eq!(
        reminder_content(&state, url, &row(None, None, "y"), &"n".repeat(1001)).unwrap_err().msg,
        "Maximum reminder note length: 1000 characters"
    );
}
