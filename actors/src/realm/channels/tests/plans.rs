//! Channel plans and their application on organizations built in memory: no database.
//! A change is applied as its write would leave it (new channels get the ids given).

use serde_json::{json, Value};

use super::memory::{add_channel, add_user, organization, subscribe, OWNER, T0};
use crate::error::ErrorCode;
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::channels::ops::{self, ChannelOptions, NewChannel, Principals, SubscribeRequest};
use crate::realm::model::{Role, SystemGroup};
use crate::realm::state::RealmState;
use crate::realm::Change;

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

fn users(ids: &[i64]) -> Vec<UserId> {
    ids.iter().map(|id| UserId(*id)).collect()
}

/// `(type, op, users)` of each event.
fn shapes(events: &[Outgoing]) -> Vec<(String, String, Vec<UserId>)> {
    events
        .iter()
        .map(|o| {
            let op = o.event.get("op").and_then(Value::as_str).unwrap_or("").to_owned();
            (o.event.kind().to_owned(), op, o.users.clone())
        })
        .collect()
}

fn shape(kind: &str, op: &str, to: &[i64]) -> (String, String, Vec<UserId>) {
    (kind.to_owned(), op.to_owned(), users(to))
}

fn refusal(state: &RealmState, acting: UserId, req: SubscribeRequest) -> String {
    ops::plan_subscribe(state, acting, req, T0).unwrap_err().msg
}

#[test]
fn private_channel_creation_follows_the_organization_setting() {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    let admins = state.system_group_id(SystemGroup::ADMINISTRATORS).unwrap();
    let mut realm = state.realm().clone();
    realm.settings.insert("can_create_private_channel_group".into(), Value::from(admins.0));
    state.set_realm(realm);

    assert_eq!(refusal(&state, member, request("hidden", true)), "Insufficient permission");
    let change = ops::plan_subscribe(&state, member, request("open", false), T0).unwrap();
    let applied = change.once_written(&[ChannelId(10)]).apply(&mut state);

    assert_eq!(applied.output.subscribed.get(&member).unwrap(), &vec!["open".to_owned()]);
    assert_eq!(applied.output.channel_ids, vec![ChannelId(10)]);
    let channel = state.channel(ChannelId(10)).unwrap();
    assert_eq!((channel.name.as_str(), channel.creator_id), ("open", Some(member)));
    // The creator administers the channel through an anonymous group of their own.
    assert_eq!(
        channel.settings["can_administer_channel_group"],
        json!({"direct_members": [2], "direct_subgroups": []})
    );
    assert!(state.is_subscribed(member, ChannelId(10)));
    // Created for everyone who may see it, then the subscription, then the peers.
    assert_eq!(
        shapes(&applied.events),
        vec![
            shape("stream", "create", &[1, 2]),
            shape("subscription", "add", &[2]),
            shape("subscription", "peer_add", &[1])
        ]
    );
    assert_eq!(
        applied.events[2].event,
        Event::new("subscription", json!({"op": "peer_add", "stream_ids": [10], "user_ids": [2]}))
    );
}

#[test]
fn creation_rules_in_zulips_order() {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    let guest = add_user(&mut state, 3, Role::Guest);
    let admin = add_user(&mut state, 4, Role::Administrator);
    assert_eq!(refusal(&state, guest, request("x", false)), "Not allowed for guest users");
    assert_eq!(refusal(&state, member, request(" ", false)), "Channel name can't be empty.");
    let mut web_public = request("x", false);
    web_public.options.is_web_public = true;
    assert_eq!(refusal(&state, member, web_public), "Web-public channels are not enabled.");
    let mut default = request("x", false);
    default.options.is_default_stream = true;
    assert_eq!(refusal(&state, member, default.clone()), "Insufficient permission");
    default.options.invite_only = true;
    assert_eq!(refusal(&state, admin, default), "A default channel cannot be private.");
    let mut retention = request("x", false);
    retention.options.message_retention_days = Some(json!(30));
    assert_eq!(refusal(&state, admin, retention.clone()), "Must be an organization owner");
    retention.options.message_retention_days = Some(json!("realm_default"));
    assert!(ops::plan_subscribe(&state, admin, retention, T0).is_ok());
    let mut policy = request("x", false);
    policy.options.topics_policy = Some("sometimes".into());
    assert_eq!(refusal(&state, member, policy), "Invalid topics_policy");
    let mut folder = request("x", false);
    folder.options.folder_id = Some(3);
    assert_eq!(refusal(&state, member, folder), "Invalid channel folder ID");
    // Nothing was planned into the state.
    assert!(state.channel_by_name("x").is_none());
}

#[test]
fn a_default_channel_created_by_an_administrator_is_announced() {
    let mut state = organization();
    let admin = add_user(&mut state, 2, Role::Administrator);
    add_user(&mut state, 3, Role::Guest);
    let mut req = request("news", false);
    req.options.is_default_stream = true;
    let applied = ops::plan_subscribe(&state, admin, req, T0).unwrap().once_written(&[ChannelId(7)]).apply(&mut state);
    assert!(state.default_channels().contains(&ChannelId(7)));
    // Guests neither see a public channel they are not in nor are told the default channels.
    assert_eq!(
        shapes(&applied.events),
        vec![
            shape("stream", "create", &[1, 2]),
            shape("default_streams", "", &[1, 2]),
            shape("subscription", "add", &[2]),
            shape("subscription", "peer_add", &[1]),
        ]
    );
}

#[test]
fn a_channel_created_without_subscribers() {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    add_channel(&mut state, 5, "Taken", false);
    let new = |name: &str| NewChannel { name: name.into(), ..NewChannel::default() };
    let taken = ops::plan_create_channel(&state, member, new(" taken "), T0).unwrap_err();
    assert_eq!(
        (taken.status, taken.code, taken.msg.as_str()),
        (409, Some(ErrorCode::ChannelAlreadyExists), "Channel 'Taken' already exists")
    );
    let change = ops::plan_create_channel(&state, member, new("empty"), T0).unwrap();
    let applied = change.once_written(ChannelId(6)).apply(&mut state);
    assert_eq!(applied.output, ChannelId(6));
    assert_eq!(state.subscriber_count(ChannelId(6)), 0);
    assert_eq!(shapes(&applied.events), vec![shape("stream", "create", &[1, 2])]);
}

#[test]
fn subscribing_to_an_existing_channel_tells_the_user_and_the_peers() {
    let mut state = organization();
    let (alice, bob) = (add_user(&mut state, 2, Role::Member), add_user(&mut state, 3, Role::Member));
    let general = add_channel(&mut state, 10, "general", false);
    subscribe(&mut state, bob, general);

    let applied = ops::plan_subscribe(&state, alice, request("General", false), T0).unwrap().apply(&mut state);
    assert_eq!(applied.output.subscribed.get(&alice).unwrap(), &vec!["general".to_owned()]);
    assert_eq!(
        shapes(&applied.events),
        vec![shape("subscription", "add", &[2]), shape("subscription", "peer_add", &[1, 3])]
    );
    let added = applied.events[0].event.get("subscriptions").unwrap();
    assert_eq!((added[0]["stream_id"].clone(), added[0]["subscribers"].clone()), (json!(10), json!([2, 3])));

    // Again: already subscribed, nothing to write, nothing sent.
    let again = ops::plan_subscribe(&state, alice, request("general", false), T0).unwrap().apply(&mut state);
    assert_eq!(again.output.already_subscribed.get(&alice).unwrap(), &vec!["general".to_owned()]);
    assert!(again.events.is_empty());
}

#[test]
fn private_channels_need_access_unless_authorization_errors_are_not_fatal() {
    let mut state = organization();
    let (alice, bob) = (add_user(&mut state, 2, Role::Member), add_user(&mut state, 3, Role::Member));
    let secret = add_channel(&mut state, 11, "secret", true);
    subscribe(&mut state, bob, secret);
    assert_eq!(refusal(&state, alice, request("secret", true)), "Unable to access channel (secret).");
    let lenient = SubscribeRequest { authorization_errors_fatal: false, ..request("secret", true) };
    let applied = ops::plan_subscribe(&state, alice, lenient, T0).unwrap().apply(&mut state);
    assert_eq!(applied.output.unauthorized, Some(vec!["secret".to_owned()]));
    assert!(applied.events.is_empty() && !state.is_subscribed(alice, secret));
    // Bob, a subscriber, may not add others to it when only administrators may add
    // subscribers and the channel grants him nothing more.
    let admins = state.system_group_id(SystemGroup::ADMINISTRATORS).unwrap();
    let mut realm = state.realm().clone();
    realm.settings.insert("can_add_subscribers_group".into(), Value::from(admins.0));
    state.set_realm(realm);
    let others = SubscribeRequest { principals: Some(Principals::Ids(vec![alice.0])), ..request("secret", true) };
    assert_eq!(refusal(&state, bob, others.clone()), "Insufficient permission");
    let applied = ops::plan_subscribe(&state, OWNER, others, T0).unwrap().apply(&mut state);
    // Alice now sees the channel: created for her before her subscription.
    assert_eq!(
        shapes(&applied.events),
        vec![
            shape("stream", "create", &[2]),
            shape("subscription", "add", &[2]),
            shape("subscription", "peer_add", &[1, 3])
        ]
    );
}

#[test]
fn unsubscribing_tells_the_user_and_the_peers_and_hides_private_channels() {
    let mut state = organization();
    let (alice, bob) = (add_user(&mut state, 2, Role::Member), add_user(&mut state, 3, Role::Member));
    let general = add_channel(&mut state, 10, "general", false);
    let secret = add_channel(&mut state, 11, "secret", true);
    for channel in [general, secret] {
        subscribe(&mut state, alice, channel);
        subscribe(&mut state, bob, channel);
    }
    let names = ["general".to_owned(), "secret".to_owned(), "general".to_owned()];
    let to_bob = Principals::Ids(vec![bob.0]);
    let refused = ops::plan_unsubscribe(&state, alice, &names, Some(&to_bob)).unwrap_err();
    assert_eq!(refused.msg, "Insufficient permission");
    let unknown = ops::plan_unsubscribe(&state, alice, &["nope".to_owned()], None).unwrap_err();
    assert_eq!(unknown.msg, "Channel(s) (nope) do not exist");

    let applied = ops::plan_unsubscribe(&state, alice, &names, None).unwrap().apply(&mut state);
    assert_eq!(applied.output["removed"], json!(["general", "secret"]));
    assert_eq!(applied.output["not_removed"], json!([]));
    assert!(!state.is_subscribed(alice, general) && state.subscription(alice, general).is_some());
    assert_eq!(
        shapes(&applied.events),
        vec![
            shape("subscription", "remove", &[2]),
            shape("stream", "delete", &[2]),
            shape("subscription", "peer_remove", &[1, 3])
        ]
    );
    assert_eq!(
        applied.events[0].event,
        Event::new(
            "subscription",
            json!({"op": "remove", "subscriptions": [{"name": "general", "stream_id": 10}, {"name": "secret", "stream_id": 11}]})
        )
    );
    assert_eq!(applied.events[1].event.get("stream_ids"), Some(&json!([11])));
    assert_eq!(applied.events[2].event.get("stream_ids"), Some(&json!([10, 11])));
    // Gone already: not removed, nothing sent.
    let again = ops::plan_unsubscribe(&state, alice, &["general".to_owned()], None).unwrap().apply(&mut state);
    assert_eq!(again.output["not_removed"], json!(["general"]));
    assert!(again.events.is_empty());
}

#[test]
fn channel_administration_is_checked_before_anything_changes() {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    let general = add_channel(&mut state, 10, "general", false);
    add_channel(&mut state, 11, "random", false);
    let rename = |name: &str| ops::ChannelUpdate { new_name: Some(name.into()), ..Default::default() };
    let refused = ops::plan_update(&state, member, general, rename("lobby")).unwrap_err();
    assert_eq!(refused.msg, "You do not have permission to administer this channel.");
    let taken = ops::plan_update(&state, OWNER, general, rename("Random")).unwrap_err();
    assert_eq!(taken.msg, "Channel name is already in use.");
    let applied = ops::plan_update(&state, OWNER, general, rename("lobby")).unwrap().apply(&mut state);
    assert_eq!(state.channel(general).unwrap().name, "lobby");
    // Named by its name before the rename.
    assert_eq!(
        applied.events[0].event,
        Event::new(
            "stream",
            json!({"op": "update", "property": "name", "value": "lobby", "stream_id": 10, "name": "general"})
        )
    );
    assert_eq!(applied.events[0].users, users(&[1, 2]));
    // The same name again is refused, as in Zulip.
    let same = ops::plan_update(&state, OWNER, general, rename("lobby")).unwrap_err();
    assert_eq!(same.msg, "Channel already has that name.");
    let retention = ops::ChannelUpdate { message_retention_days: Some(json!(7)), ..Default::default() };
    let admin = add_user(&mut state, 3, Role::Administrator);
    assert_eq!(ops::plan_update(&state, admin, general, retention).unwrap_err().msg, "Must be an organization owner");
}

#[test]
fn archiving_a_default_channel_and_the_default_channels() {
    let mut state = organization();
    let member = add_user(&mut state, 2, Role::Member);
    let general = add_channel(&mut state, 10, "general", false);
    let secret = add_channel(&mut state, 11, "secret", true);
    let refused = ops::plan_default_channel(&state, member, general, true).unwrap_err();
    assert_eq!(refused.msg, "Must be an organization administrator");
    let private = ops::plan_default_channel(&state, OWNER, secret, true).unwrap_err();
    assert_eq!(private.msg, "Private channels cannot be made default.");
    let added = ops::plan_default_channel(&state, OWNER, general, true).unwrap().apply(&mut state);
    assert_eq!(added.events[0].event, Event::new("default_streams", json!({"default_streams": [10]})));
    assert!(ops::plan_default_channel(&state, OWNER, general, true).unwrap().apply(&mut state).events.is_empty());

    assert_eq!(
        ops::plan_archive(&state, member, general).unwrap_err().msg,
        "You do not have permission to administer this channel."
    );
    let archived = ops::plan_archive(&state, OWNER, general).unwrap().apply(&mut state);
    assert!(state.channel(general).unwrap().is_archived && state.default_channels().is_empty());
    assert_eq!(
        shapes(&archived.events),
        vec![
            shape("stream", "update", &[1, 2]),
            shape("stream", "delete", &[1, 2]),
            shape("default_streams", "", &[1, 2])
        ]
    );
    assert_eq!(archived.events[1].event.get("for_archive"), Some(&json!(true)));
    assert_eq!(ops::plan_archive(&state, OWNER, general).unwrap_err().msg, "Channel is already deactivated");
    let archived_default = ops::plan_default_channel(&state, OWNER, general, true).unwrap_err();
    assert_eq!(archived_default.msg, "Invalid channel ID");
}
