//! Channel operations against a real (temporary) database.

use serde_json::{json, Value};

use super::ops::{self, check_channel_name, parse_retention, ChannelOptions, Principals, SubscribeRequest};
use crate::realm::model::{Role, SystemGroup};
use crate::realm::tests::{add, setup};

pub(crate) mod memory;
mod plans;

const T0: i64 = 1_795_238_460;

fn request(name: &str, invite_only: bool) -> SubscribeRequest {
    SubscribeRequest {
        channels: vec![(name.to_owned(), None)],
        colors: Default::default(),
        principals: None,
        authorization_errors_fatal: true,
        send_new_subscription_messages: false,
        announce: false,
        options: ChannelOptions { invite_only, ..ChannelOptions::default() },
    }
}

#[test]
fn channel_names_are_checked_as_zulip_does() {
    assert_eq!(check_channel_name(" ").unwrap_err().msg, "Channel name can't be empty.");
    assert_eq!(check_channel_name(&"a".repeat(61)).unwrap_err().msg, "Channel name too long (limit: 60 characters).");
    assert!(check_channel_name(&"é".repeat(60)).is_ok());
    assert_eq!(check_channel_name("ab\u{7}").unwrap_err().msg, "Invalid character in channel name, at position 3.");
}

#[test]
fn retention_values() {
    assert_eq!(parse_retention(&json!("realm_default")).unwrap(), None);
    assert_eq!(parse_retention(&json!("unlimited")).unwrap(), Some(-1));
    assert_eq!(parse_retention(&json!(30)).unwrap(), Some(30));
    assert_eq!(parse_retention(&json!(-1)).unwrap_err().msg, "Bad value for 'message_retention_days': -1");
    assert_eq!(parse_retention(&json!("invalid")).unwrap_err().msg, "Bad value for 'message_retention_days': invalid");
}

#[test]
fn creation_follows_the_realm_channel_creation_settings() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let admins = state.system_group_id(SystemGroup::ADMINISTRATORS).unwrap();
    let mut realm = state.realm().clone();
    realm.settings.insert("can_create_private_channel_group".into(), Value::from(admins.0));
    state.set_realm(realm);
    let refused = ops::subscribe(&mut state, &store, alice, request("hidden", true), T0).unwrap_err();
    assert_eq!(refused.msg, "Insufficient permission");
    assert!(state.channel_by_name("hidden").is_none());
    let (result, _) = ops::subscribe(&mut state, &store, alice, request("open", false), T0).unwrap();
    assert_eq!(result.subscribed.get(&alice).unwrap(), &vec!["open".to_owned()]);
}

#[test]
fn colors_cycle_through_the_palette_and_state_matches_the_database() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let names: Vec<(String, Option<String>)> = (0..26).map(|i| (format!("c{i}"), None)).collect();
    let req = SubscribeRequest { channels: names, ..request("x", false) };
    ops::subscribe(&mut state, &store, alice, req, T0).unwrap();
    let colors: Vec<String> = state.subscriptions_of(alice).map(|s| s.color.clone()).collect();
    assert_eq!(colors[..24], ops::STREAM_ASSIGNMENT_COLORS.map(str::to_owned));
    // All 24 used: the palette again, by count.
    assert_eq!(colors[24], ops::STREAM_ASSIGNMENT_COLORS[0]);
    assert_eq!(colors[25], ops::STREAM_ASSIGNMENT_COLORS[1]);
    let loaded = crate::realm::state::RealmState::load(&store.conn().unwrap(), state.realm().id).unwrap().unwrap();
    let reloaded: Vec<String> = loaded.subscriptions_of(alice).map(|s| s.color.clone()).collect();
    assert_eq!(reloaded, colors);
}

#[test]
fn subscribing_many_users_at_once() {
    let (_dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let ids: Vec<i64> =
        (0..300).map(|i| add(&mut state, &store, &config, &format!("u{i}@acme.test"), Role::Member).0).collect();
    let req = SubscribeRequest { principals: Some(Principals::Ids(ids.clone())), ..request("big", false) };
    let (result, events) = ops::subscribe(&mut state, &store, owner, req, T0).unwrap();
    assert_eq!(result.subscribed.len(), 300);
    let channel = state.channel_by_name("big").unwrap().id;
    assert_eq!(state.subscriber_count(channel), 300);
    // One creation event, one add per subscriber, one peer_add for the owner.
    assert_eq!(events.len(), 302);
}

#[test]
fn stream_post_policy_follows_can_send_message_group() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let mods = state.system_group_id(SystemGroup::MODERATORS).unwrap();
    let mut req = request("news", false);
    req.options.settings = vec![("can_send_message_group".into(), Value::from(mods.0))];
    ops::subscribe(&mut state, &store, alice, req, T0).unwrap();
    let channel = state.channel_by_name("news").unwrap();
    assert_eq!(super::format::stream_post_policy(&state, channel), 4);
}

#[test]
fn empty_topic_only_needs_every_message_in_the_empty_topic() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    ops::subscribe(&mut state, &store, alice, request("chat", false), T0).unwrap();
    let channel = state.channel_by_name("chat").unwrap().id;
    let realm = state.realm().id;
    store.write(|tx| crate::store::channels::insert_message(tx, realm, alice, channel, "", "hi", T0)).unwrap();
    let update = ops::ChannelUpdate { topics_policy: Some("empty_topic_only".into()), ..Default::default() };
    let events = ops::update_channel(&mut state, &store, alice, channel, update.clone()).unwrap();
    assert_eq!(events[0].event.get("property"), Some(&json!("topics_policy")));
    assert_eq!(state.channel(channel).unwrap().topics_policy, "empty_topic_only");
    // Back, then a named topic appears: refused, and nothing changes.
    let inherit = ops::ChannelUpdate { topics_policy: Some("inherit".into()), ..Default::default() };
    ops::update_channel(&mut state, &store, alice, channel, inherit).unwrap();
    store.write(|tx| crate::store::channels::insert_message(tx, realm, alice, channel, "lunch", "hi", T0)).unwrap();
    let refused = ops::update_channel(&mut state, &store, alice, channel, update).unwrap_err();
    assert!(refused.msg.starts_with("To enable this configuration"), "{}", refused.msg);
    assert_eq!(state.channel(channel).unwrap().topics_policy, "inherit");
}

#[test]
fn folders_must_exist_and_be_active() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    // Folders only in memory: the archived one is refused before anything is written.
    let folder = |id: i64, is_archived: bool| crate::realm::model::ChannelFolder {
        id: crate::ids::FolderId(id),
        name: format!("f{id}"),
        description: String::new(),
        rendered_description: String::new(),
        order: id,
        is_archived,
        creator_id: None,
        date_created: T0,
    };
    state.put_folder(folder(2, true));
    let mut req = request("foldered", false);
    req.options.folder_id = Some(2);
    let refused = ops::subscribe(&mut state, &store, alice, req.clone(), T0).unwrap_err();
    assert_eq!(refused.msg, "Invalid channel folder ID");
    req.options.folder_id = None;
    ops::subscribe(&mut state, &store, alice, req, T0).unwrap();
    let id = state.channel_by_name("foldered").unwrap().id;
    let update = ops::ChannelUpdate { folder_id: Some(Some(7)), ..Default::default() };
    let refused = ops::update_channel(&mut state, &store, alice, id, update).unwrap_err();
    assert_eq!(refused.msg, "Invalid channel folder ID");
    assert_eq!(state.channel(id).unwrap().folder_id, None);
}

#[test]
fn the_messages_check_of_empty_topic_only_keeps_its_place_in_zulips_order() {
    let (_dir, store, config, mut state) = setup();
    let alice = add(&mut state, &store, &config, "alice@acme.test", Role::Member);
    let realm = state.realm().id;
    let names: Vec<(String, Option<String>)> = vec![("chat".into(), None), ("quiet".into(), None)];
    ops::subscribe(&mut state, &store, alice, SubscribeRequest { channels: names, ..request("x", false) }, T0).unwrap();
    let (chat, quiet) = (state.channel_by_name("chat").unwrap().id, state.channel_by_name("quiet").unwrap().id);
    store.write(|tx| crate::store::channels::insert_message(tx, realm, alice, chat, "lunch", "hi", T0)).unwrap();
    store.write(|tx| crate::store::channels::insert_message(tx, realm, alice, quiet, "", "hi", T0)).unwrap();
    // The policy comes before the folder: with a named topic, its refusal is the one reported.
    let update = ops::ChannelUpdate {
        topics_policy: Some("empty_topic_only".into()),
        folder_id: Some(Some(7)),
        ..Default::default()
    };
    let refused = ops::update_channel(&mut state, &store, alice, chat, update.clone()).unwrap_err();
    assert!(refused.msg.starts_with("To enable this configuration"), "{}", refused.msg);
    // Only the empty topic: the folder's refusal, and nothing changes.
    let refused = ops::update_channel(&mut state, &store, alice, quiet, update).unwrap_err();
    assert_eq!(refused.msg, "Invalid channel folder ID");
    let loaded = crate::realm::state::RealmState::load(&store.conn().unwrap(), realm).unwrap().unwrap();
    assert_eq!(loaded.channel(quiet).unwrap().topics_policy, "inherit");
    assert_eq!(state.channel(quiet).unwrap().topics_policy, "inherit");
}
