//! Tests of rendering, the message object helpers and sending, against a real (temporary)
//! database.

use serde_json::json;

use super::flag;
use super::format::{dm_key, flag_names, recipient_id};
use super::render::render;
use super::send::{send_message, DirectRef, SendMessage, SendTo};
use crate::ids::{MessageId, UserId};
use crate::realm::model::Role;
use crate::realm::tests::{add, setup};
use crate::store::messages::MessageRow;

fn dm(sender: UserId, to: Vec<i64>, content: &str) -> SendMessage {
    SendMessage {
        sender,
        to: SendTo::Direct(DirectRef::Ids(to)),
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
        id: MessageId(1),
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
    let (_dir, _store, _config, mut state) = setup();
    state.put_dm_group("3,5,9".into(), 4);
    // Both directions of a conversation are addressed to the other person: small ids, in
    // one space with channels (3 × id) and groups (3 × number + 2).
    assert_eq!(recipient_id(&state, &row(3, "3,9")), 28);
    assert_eq!(recipient_id(&state, &row(9, "3,9")), 10);
    assert_eq!(recipient_id(&state, &row(3, "3")), 10);
    assert_eq!(recipient_id(&state, &row(3, "3,5,9")), 14);
    assert_eq!(recipient_id(&state, &row(5, "3,5,9")), 14);
    let channel = MessageRow { channel_id: Some(crate::ids::ChannelId(7)), dm_key: None, ..row(3, "") };
    assert_eq!(recipient_id(&state, &channel), 21);
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
    // (Welcome Bot's greeting says hello too.)
    let indexed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'hello' AND rowid = ?1",
            [sent.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
    // Nothing is stored for a refused message.
    let err = send_message(&mut state, &store, &dm(boss, vec![999], "x"), &Default::default(), 0).unwrap_err();
    assert_eq!(err.msg, "Invalid user ID 999");
    let count: i64 = conn.query_row("SELECT COUNT(*) FROM messages WHERE id > ?1", [sent.id], |r| r.get(0)).unwrap();
    assert_eq!(count, 0);
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

/// A realm whose Markdown has something to resolve: a user `User ann`, a group `group`, a
/// public channel `general` and a user named with quotes and markup.
fn markdown_realm() -> (tempfile::TempDir, crate::store::Store, crate::realm::state::RealmState) {
    use crate::realm::channels::ops::{self, ChannelOptions, SubscribeRequest};
    use crate::realm::groups::ops::{create_group, NewGroup};
    let (dir, store, config, mut state) = setup();
    let boss = state.users().next().unwrap().id;
    let ann = add(&mut state, &store, &config, "ann@acme.test", Role::Member);
    let odd = add(&mut state, &store, &config, "odd@acme.test", Role::Member);
    state.user_mut(odd).unwrap().full_name = "O'Brien \"<b>&amp;\"".into();
    let new = NewGroup {
        name: "group".into(),
        description: String::new(),
        members: vec![ann.0],
        subgroups: None,
        settings: vec![],
    };
    create_group(&mut state, &store, boss, new, 1_795_238_460).unwrap();
    let req = SubscribeRequest {
        channels: vec![("general".to_owned(), None)],
        colors: Default::default(),
        principals: Some(ops::Principals::Ids(vec![boss.0])),
        authorization_errors_fatal: true,
        send_new_subscription_messages: false,
        announce: false,
        options: ChannelOptions::default(),
    };
    ops::subscribe(&mut state, &store, boss, req, 1_795_238_460).unwrap();
    (dir, store, state)
}

/// Hostile link and image URLs make no link in messages, in every disguise; the allowed
/// kinds of URL do, as Zulip's `sanitize_url` writes them.
#[test]
fn hostile_urls_make_no_link_in_messages() {
    let (_dir, _store, state) = markdown_realm();
    // Images are the exception: messages show only uploaded ones (FL 467).
    let images_aside = crate::markdown::tests::SAFE.iter().filter(|(_, html)| !html.contains("<img"));
    for (source, html) in crate::markdown::tests::HOSTILE.iter().chain(images_aside) {
        assert_eq!(render(&state, source).html, *html, "{source}");
    }
    let refused = render(&state, "[x](javascript:alert(1)) ![y](data:image/png;base64,AA)");
    assert!(!refused.has_link && !refused.has_image);
    let made = render(&state, "[x](https://a.b) ![y](/user_uploads/1/ab/y.png)");
    assert!(made.has_link && !made.has_image, "no such upload: no image");
    assert_eq!(render(&state, "![y](https://a.b/i.png)").html, "<p>![y](https://a.b/i.png)</p>");
    assert_eq!(render(&state, "[![i](/i.png)](https://a.b)").html, "<p><a href=\"https://a.b\">![i](/i.png)</a></p>");
}

/// Inside a link's text, bare URLs and channel links stay as written (no `<a>` in `<a>`);
/// mentions and emoji are rendered, there and in a refused link.
#[test]
fn link_text_makes_no_other_link() {
    let (_dir, _store, state) = markdown_realm();
    let general = state.channel_by_name("general").unwrap().id;
    let ann = state.users().find(|u| u.full_name == "User ann").unwrap().id;
    let cases = [
        ("[see https://a.b/c here](https://d.e)", "<p><a href=\"https://d.e\">see https://a.b/c here</a></p>".to_owned()),
        ("[#**general**](https://d.e)", "<p><a href=\"https://d.e\">#**general**</a></p>".to_owned()),
        (
            "[@**User ann** :smile:](https://d.e)",
            format!("<p><a href=\"https://d.e\"><span class=\"user-mention\" data-user-id=\"{ann}\">@User ann</span> <span aria-label=\"smile\" class=\"emoji emoji-1f604\" role=\"img\" title=\"smile\">:smile:</span></a></p>"),
        ),
        (
            "[#**general**](javascript:alert(1))",
            format!("<p>[<a class=\"stream\" data-stream-id=\"{general}\" href=\"/#narrow/channel/{general}-general\">#general</a>](javascript:alert(1))</p>"),
        ),
        // A bare URL is linked where Zulip's `sanitize_url` says, and only if followable.
        ("http://a.b/it's http:// x", "<p><a href=\"http://a.b/it's\">http://a.b/it's</a> http:// x</p>".to_owned()),
    ];
    for (source, html) in cases {
        assert_eq!(render(&state, source).html, html, "{source}");
    }
}

/// `:name:` renders every emoji of Zulip's table with Zulip's code: canonical names,
/// aliases, sequences of several code points, names with dashes or accents. Unknown names,
/// other cases and malformed syntax stay text.
#[test]
fn emoji_of_the_whole_table_render_with_zulips_codes() {
    let (_dir, _store, state) = markdown_realm();
    let cases = [
        (":avocado:", "<p><span aria-label=\"avocado\" class=\"emoji emoji-1f951\" role=\"img\" title=\"avocado\">:avocado:</span></p>"),
        (
            ":hammer_and_wrench: :nope:",
            "<p><span aria-label=\"hammer and wrench\" class=\"emoji emoji-1f6e0\" role=\"img\" title=\"hammer and wrench\">:hammer_and_wrench:</span> \
             <span aria-label=\"nope\" class=\"emoji emoji-1f645\" role=\"img\" title=\"nope\">:nope:</span></p>",
        ),
        (
            ":rainbow_flag:",
            "<p><span aria-label=\"rainbow flag\" class=\"emoji emoji-1f3f3-200d-1f308\" role=\"img\" title=\"rainbow flag\">:rainbow_flag:</span></p>",
        ),
        (
            "a:flag_united_states:b",
            "<p>a<span aria-label=\"flag united states\" class=\"emoji emoji-1f1fa-1f1f8\" role=\"img\" title=\"flag united states\">:flag_united_states:</span>b</p>",
        ),
        (
            ":jack-o-lantern: :piñata:",
            "<p><span aria-label=\"jack-o-lantern\" class=\"emoji emoji-1f383\" role=\"img\" title=\"jack-o-lantern\">:jack-o-lantern:</span> \
             <span aria-label=\"piñata\" class=\"emoji emoji-1fa85\" role=\"img\" title=\"piñata\">:piñata:</span></p>",
        ),
        (":Avocado: :avo cado: ::avocado :1f951:", "<p>:Avocado: :avo cado: ::avocado :1f951:</p>"),
    ];
    for (source, html) in cases {
        assert_eq!(render(&state, source).html, html, "{source}");
    }
}

/// What messages render is in the sanitizer's canonical form: quotes in text and code as
/// they are, `&nbsp;`, `<br>` and `<hr>` without a slash.
#[test]
fn message_html_is_in_the_sanitizers_canonical_form() {
    let (_dir, _store, state) = markdown_realm();
    let odd = state.users().find(|u| u.full_name.starts_with("O'Brien")).unwrap().id;
    let cases = [
        ("it's \"x\"\u{a0}", "<p>it's \"x\"&nbsp;</p>".to_owned()),
        ("```py'\nprint(\"it's\")\n```", "<div class=\"codehilite\" data-code-language=\"py'\"><pre><span></span><code>print(\"it's\")\n</code></pre></div>".to_owned()),
        ("a  \nb\r\nc\n\n***", "<p>a<br>\nb<br>\nc</p>\n<hr>".to_owned()),
        (
            "@**O'Brien \"<b>&amp;\"**",
            format!("<p><span class=\"user-mention\" data-user-id=\"{odd}\">@O'Brien \"&lt;b&gt;&amp;amp;\"</span></p>"),
        ),
    ];
    for (source, html) in cases {
        assert_eq!(render(&state, source).html, html, "{source:?}");
    }
}

/// Arbitrary messages (weighted towards hostile links) never panic, never link to a
/// refused scheme, and pass the sanitizer unchanged, with and without search highlighting.
#[test]
fn messages_keep_to_the_rendering_properties() {
    use crate::markdown::prop_tests::{check_html, run, WORDS};
    use crate::realm::chat::highlight::{highlight_html, highlight_text, match_content, match_subject};
    use proptest::prelude::*;
    let (_dir, _store, state) = markdown_realm();
    let words: Vec<String> = WORDS.iter().map(|w| (*w).to_owned()).collect();
    run(|source| {
        let html = super::render::render_unsanitized(&state, source).html;
        check_html(source, &html)?;
        prop_assert_eq!(&render(&state, source).html, &html);
        let highlighted = highlight_html(&html, &words);
        check_html(source, &highlighted)?;
        prop_assert_eq!(match_content(&html, &words), highlighted);
        let topic = source.trim_start_matches('\u{feff}');
        let topic = highlight_text(&crate::markdown::escape_text(topic), &words);
        check_html(source, &topic)?;
        prop_assert_eq!(match_subject(source, &words), topic);
        Ok(())
    });
}

/// The cost of rendering a typical message, with and without the sanitizer:
/// `cargo test --release -p agora-actors --lib render_benchmark -- --ignored --nocapture`.
#[test]
#[ignore = "a benchmark, run by hand"]
fn render_benchmark() {
    // The emoji table is parsed on first use, the data file built on its first request.
    let start = std::time::Instant::now();
    let _ = crate::emoji::code_of("octopus");
    let table = start.elapsed().as_secs_f64() * 1e6;
    let start = std::time::Instant::now();
    let size = crate::emoji::data_file().body.len();
    println!("emoji table: {table:.0} µs, data file ({size} bytes): {:.0} µs", start.elapsed().as_secs_f64() * 1e6);
    let (_dir, _store, state) = markdown_realm();
    let source =
        "Hi @**User ann**, the notes are at https://example.com/notes and [the guide](https://zulip.com/help).\n\
        Run `cargo test` first, it's **quick** :smile:\n\n> quoted \"line\"\n\n* one\n* two";
    let time = |f: &dyn Fn() -> String| {
        let start = std::time::Instant::now();
        let mut bytes = 0;
        for _ in 0..10_000 {
            bytes += f().len();
        }
        (start.elapsed().as_secs_f64() * 1e6 / 10_000.0, bytes)
    };
    let (unsanitized, _) = time(&|| super::render::render_unsanitized(&state, source).html);
    let (full, _) = time(&|| render(&state, source).html);
    let html = render(&state, source).html;
    let (sanitizer, _) = time(&|| crate::markdown::sanitize::clean(&html));
    println!("render without sanitizer: {unsanitized:.1} µs, with: {full:.1} µs, sanitizer alone: {sanitizer:.1} µs");
    let emoji = "Shipped :tada: :+1: thanks :octopus: and :heart: :smile: - no :not_an_emoji: here";
    let (with_emoji, _) = time(&|| render(&state, emoji).html);
    let (emoji_unsanitized, _) = time(&|| super::render::render_unsanitized(&state, emoji).html);
    println!("render of a message with five emoji: {with_emoji:.1} µs, without sanitizer: {emoji_unsanitized:.1} µs");
}

/// A history read decides access against the state snapshot it runs with: it shows no
/// message committed after that snapshot (whose channel's rules the snapshot may not know),
/// by narrow or by id.
#[test]
fn a_read_sees_no_message_newer_than_its_snapshot() {
    use crate::reader::HistoryRead;
    use crate::realm::chat::fetch::{Anchor, GetMessage, GetMessages, Rendering};

    let (_dir, store, config, mut state) = setup();
    let boss = state.users().next().unwrap().id;
    let bob = add(&mut state, &store, &config, "bob@acme.test", Role::Member);
    let (first, _) = send_message(&mut state, &store, &dm(boss, vec![bob.0], "one"), &Default::default(), 0).unwrap();
    let stale = state.clone();
    let (second, _) = send_message(&mut state, &store, &dm(boss, vec![bob.0], "two"), &Default::default(), 0).unwrap();
    let rendering = Rendering { apply_markdown: false, client_gravatar: false, allow_empty_topic_name: true };
    let fetch = GetMessages {
        user_id: bob,
        anchor: Anchor::Newest,
        num_before: 10,
        num_after: 0,
        include_anchor: true,
        narrow: Vec::new(),
        rendering,
        message_ids: None,
    };
    let conn = store.read_connection().unwrap();
    let ids = |out: serde_json::Map<String, serde_json::Value>| -> Vec<i64> {
        out["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect()
    };
    assert_eq!(ids(fetch.clone().run(&stale, &conn).unwrap()), vec![first.id.0]);
    assert_eq!(ids(fetch.run(&state, &conn).unwrap()), vec![first.id.0, second.id.0]);
    let by_id = GetMessage { user_id: bob, message_id: second.id, rendering };
    assert_eq!(by_id.clone().run(&stale, &conn).unwrap_err().msg, "Invalid message(s)");
    assert!(by_id.run(&state, &conn).is_ok());
}

/// Global times (`<time:...>`): a time becomes `<time datetime>` (in UTC, as Python's
/// `isoformat` writes it) with the text as written; anything else stays as written, plain
/// escaped text since FL 451 (Zulip's `timestamp-error` span before).
#[test]
fn global_times_render_and_invalid_ones_stay_as_text() {
    let (_dir, _store, state) = markdown_realm();
    let cases = [
        (
            "<time:2023-11-14T22:13:20+00:00>",
            "<p><time datetime=\"2023-11-14T22:13:20Z\">2023-11-14T22:13:20+00:00</time></p>",
        ),
        (
            "at <time:2023-11-14T23:13:20+01:00>!",
            "<p>at <time datetime=\"2023-11-14T22:13:20Z\">2023-11-14T23:13:20+01:00</time>!</p>",
        ),
        ("<time:1700000000>", "<p><time datetime=\"2023-11-14T22:13:20Z\">1700000000</time></p>"),
        ("<time:1700000000.5>", "<p><time datetime=\"2023-11-14T22:13:20.500000Z\">1700000000.5</time></p>"),
        ("<time:2023-11-14>", "<p><time datetime=\"2023-11-14T00:00:00Z\">2023-11-14</time></p>"),
        ("<time:soon>", "<p>&lt;time:soon&gt;</p>"),
        ("`<time:1700000000>`", "<p><code>&lt;time:1700000000&gt;</code></p>"),
    ];
    for (source, html) in cases {
        assert_eq!(render(&state, source).html, html, "{source}");
    }
}
