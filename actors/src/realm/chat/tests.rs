//! Tests of rendering, the message object helpers and sending, against a real (temporary)
//! database.

use serde_json::json;

use super::flag;
use super::format::{dm_key, flag_names, recipient_id, DM_RECIPIENT_BASE};
use super::render::render;
use super::send::{send_message, DirectRef, Recipient, SendMessage};
use crate::ids::UserId;
use crate::realm::model::Role;
use crate::realm::tests::{add, setup};
use crate::store::messages::MessageRow;

fn dm(sender: UserId, to: Vec<i64>, content: &str) -> SendMessage {
    SendMessage {
        sender,
        recipient: Recipient::Direct(DirectRef::Ids(to)),
        topic: None,
        content: content.into(),
        client: "website".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: None,
    }
}

#[test]
fn flags_are_named_in_zulips_order_without_internal_ones() {
    assert_eq!(flag_names(0), Vec::<&str>::new());
    assert_eq!(flag_names(flag::READ | flag::HISTORICAL | flag::IS_PRIVATE), ["read", "historical"]);
    assert_eq!(
        flag_names(flag::MENTIONED | flag::TOPIC_WILDCARD_MENTIONED),
        ["mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"]
    );
}

#[test]
fn direct_message_keys_and_recipient_ids_are_stable() {
    assert_eq!(dm_key(&[UserId(9), UserId(3), UserId(9)]), "3,9");
    let row = |sender: i64, key: &str| MessageRow {
        id: 1,
        sender_id: UserId(sender),
        channel_id: None,
        topic: String::new(),
        content: String::new(),
        rendered_content: String::new(),
        date_sent: 0,
        dm_key: Some(key.into()),
        sending_client: String::new(),
        last_edit_time: None,
        last_moved_time: None,
        edit_history: None,
    };
    // Both directions of a conversation are addressed to the other person.
    assert_eq!(recipient_id(&row(3, "3,9")), DM_RECIPIENT_BASE + 9);
    assert_eq!(recipient_id(&row(9, "3,9")), DM_RECIPIENT_BASE + 3);
    assert_eq!(recipient_id(&row(3, "3")), DM_RECIPIENT_BASE + 3);
    assert_eq!(recipient_id(&row(3, "3,5,9")), recipient_id(&row(5, "3,5,9")));
}

#[test]
fn rendering_finds_mentions_only_outside_code() {
    let (_dir, store, config, mut state) = setup();
    let ann = add(&mut state, &store, &config, "ann@acme.test", Role::Member);
    let out = render(&state, "hi @**User ann** and `@**User ann**`");
    assert_eq!(
        out.html,
        format!("<p>hi <span class=\"user-mention\" data-user-id=\"{ann}\">@User ann</span> and <code>@**User ann**</code></p>")
    );
    assert_eq!(out.mentioned_users.into_iter().collect::<Vec<_>>(), [ann]);
    // Unknown names stay as written; private-use characters cannot forge placeholders.
    let out = render(&state, "@**Nobody** \u{E000}0\u{E001}");
    assert_eq!(out.html, "<p>@<strong>Nobody</strong> \u{FFFD}0\u{FFFD}</p>");
    assert!(out.mentioned_users.is_empty());
    let out = render(&state, "@**everyone** see [x](/user_uploads/1/ab/file.pdf)");
    assert!(out.stream_wildcard && out.has_link && out.has_attachment);
}

#[test]
fn a_direct_message_is_stored_with_flags_for_each_participant() {
    let (_dir, store, config, mut state) = setup();
    let boss = state.users().next().unwrap().id;
    let ann = add(&mut state, &store, &config, "ann@acme.test", Role::Member);
    let msg = dm(boss, vec![ann.0], "hello @**User ann**");
    let (sent, events) = send_message(&mut state, &store, &msg, &Default::default(), 1_795_238_500).unwrap();
    assert_eq!(sent.automatic_new_visibility_policy, None);
    // The web client marks its own message read; Ann is mentioned.
    let flags: Vec<(Vec<UserId>, serde_json::Value)> =
        events.iter().map(|o| (o.users.clone(), o.event.get("flags").cloned().unwrap())).collect();
    assert_eq!(flags, [(vec![boss], json!(["read"])), (vec![ann], json!(["mentioned"]))]);
    let conn = store.conn().unwrap();
    let rows: Vec<(i64, i64)> = conn
        .prepare("SELECT user_id, flags FROM user_messages WHERE message_id = ?1 ORDER BY user_id")
        .unwrap()
        .query_map([sent.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, [(boss.0, flag::READ | flag::IS_PRIVATE), (ann.0, flag::MENTIONED | flag::IS_PRIVATE)]);
    let indexed: i64 =
        conn.query_row("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'hello'", [], |r| r.get(0)).unwrap();
    assert_eq!(indexed, 1);
    // Nothing is stored for a refused message.
    let err = send_message(&mut state, &store, &dm(boss, vec![999], "x"), &Default::default(), 0).unwrap_err();
    assert_eq!(err.msg, "Invalid user ID 999");
    let count: i64 = conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0)).unwrap();
    assert_eq!(count, 1);
}

/// Zulip syntax inside link and image attributes stays text: no HTML can break out of
/// an attribute.
#[test]
fn zulip_syntax_never_reaches_an_attribute() {
    let (_dir, store, config, mut state) = setup();
    add(&mut state, &store, &config, "ann@acme.test", Role::Member);
    for source in [
        "![ http://a/onerror=alert(1)//](x)",
        "[a](http://b \"@**User ann**\")",
        "[a](http://c/:smile:)",
        "![@**User ann** :smile:](http://d/ \"http://e/x\")",
    ] {
        let html = render(&state, source).html;
        for attribute in html.split('"').skip(1).step_by(2) {
            assert!(!attribute.contains('<') && !attribute.contains('>'), "{source} -> {html}");
        }
    }
}

/// Mentions inside code mention nobody.
#[test]
fn mentions_in_code_mention_nobody() {
    let (_dir, store, config, mut state) = setup();
    add(&mut state, &store, &config, "ann@acme.test", Role::Member);
    let out = render(&state, "`@**User ann**` and\n```\n@**all**\n```");
    assert!(out.mentioned_users.is_empty(), "{:?}", out.mentioned_users);
    assert!(!out.stream_wildcard);
}

/// Zulip's `access_stream_for_send_message`: even guests write to web-public channels
/// (which the API cannot create yet, hence a state-level test), never to public ones they
/// are not subscribed to.
#[test]
fn guests_write_to_web_public_channels_only_among_unsubscribed_ones() {
    use crate::ids::ChannelId;
    use crate::realm::chat::send::check_can_send_to_channel;
    use crate::realm::model::Channel;

    let (_dir, store, config, mut state) = setup();
    let guest = add(&mut state, &store, &config, "guest@acme.test", Role::Guest);
    let channel = |id: i64, web_public: bool| Channel {
        id: ChannelId(id),
        name: format!("channel {id}"),
        description: String::new(),
        rendered_description: String::new(),
        invite_only: false,
        is_web_public: web_public,
        history_public_to_subscribers: true,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: 0,
        is_archived: false,
        settings: serde_json::Map::new(),
    };
    state.put_channel(channel(1, true));
    state.put_channel(channel(2, false));
    let guest = state.user(guest).unwrap();
    assert!(check_can_send_to_channel(&state, guest, state.channel(ChannelId(1)).unwrap()).is_ok());
    let refused = check_can_send_to_channel(&state, guest, state.channel(ChannelId(2)).unwrap()).unwrap_err();
    assert_eq!(refused.msg, "Not authorized to send to channel 'channel 2'");
}
