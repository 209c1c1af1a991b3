//! Property tests of the narrow parser and the search query builder: whatever a client
//! sends as `narrow`, parsing never panics, a narrow is either answered or refused with
//! one of Zulip's 400s (never a storage error, never a panic), and every full-text query
//! built from a search operand is one SQLite's FTS5 accepts. Case counts are bounded so
//! that the whole file runs in about a second.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rusqlite::Connection;
use serde_json::{json, Value};

use super::fetch::{fetch_window, Anchor, Range};
use super::narrow::{build, parse_narrow, search_words};
use super::send::{send_message, DirectRef, SendMessage, SendTo};
use crate::ids::{ChannelId, MessageId};
use crate::realm::model::{Channel, Role};
use crate::realm::tests::{add, setup};
use crate::store::narrow::fts_query;

/// Strings rich in what breaks parsers: NUL and other controls, quotes, FTS5 syntax,
/// separators, non-characters, astral characters, plus any character at all.
fn nasty_string() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('\0'),
        Just('"'),
        Just('\''),
        Just(' '),
        Just('\n'),
        Just('\u{1b}'),
        Just('\u{7f}'),
        Just('\u{1f}'),
        Just('*'),
        Just('^'),
        Just(':'),
        Just('('),
        Just(')'),
        Just('-'),
        Just('+'),
        Just('\u{fffe}'),
        Just('\u{10ffff}'),
        Just('\u{85}'),
        Just('\u{2028}'),
        Just('a'),
        Just('7'),
    ];
    let word = prop_oneof![Just("AND"), Just("OR"), Just("NOT"), Just("NEAR"), Just("content"), Just("topic")];
    let piece = prop_oneof![
        4 => special.prop_map(String::from),
        2 => any::<char>().prop_map(String::from),
        1 => word.prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// Operand values of every JSON type, numbers at their limits included.
fn operand() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => nasty_string().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_filter("JSON numbers are finite", |f| f.is_finite()).prop_map(Value::from),
        1 => prop::collection::vec(any::<i64>(), 0..4).prop_map(Value::from),
        1 => prop::collection::vec(nasty_string(), 0..3).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(json!({"x": 1})),
    ]
}

/// Every operator Zulip knows (some aliases included) and arbitrary ones.
fn operator() -> impl Strategy<Value = String> {
    let known = prop::sample::select(vec![
        "channel",
        "stream",
        "channels",
        "streams",
        "topic",
        "sender",
        "dm",
        "pm-with",
        "dm-including",
        "group-pm-with",
        "id",
        "near",
        "with",
        "is",
        "has",
        "search",
    ]);
    // `search` reaches SQLite's parsers: weighted up.
    prop_oneof![2 => Just("search".to_owned()), 4 => known.prop_map(str::to_owned), 1 => nasty_string()]
}

/// A narrow term in the object form, the legacy pair form, or malformed.
fn term() -> impl Strategy<Value = Value> {
    (operator(), operand(), prop::option::of(any::<bool>()), 0..4u8).prop_map(|(operator, operand, negated, form)| {
        match form {
            0 => json!([operator, operand]),
            1 => json!({"operator": operator, "operand": operand}),
            2 => json!({"operator": operator, "operand": operand, "negated": negated}),
            _ => json!({"operand": operand, "negated": negated}),
        }
    })
}

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

proptest! {
    #![proptest_config(config(256))]

    /// Any JSON at all: parsed or refused, never a panic.
    #[test]
    fn parsing_any_narrow_never_panics(narrow in prop::collection::vec(term(), 0..5), scalar in operand()) {
        let _ = parse_narrow(&Value::Array(narrow));
        let _ = parse_narrow(&scalar);
    }

    /// What a user types always becomes an FTS5 query that SQLite parses, made of words
    /// free of control characters.
    #[test]
    fn every_search_query_is_accepted_by_fts5(operand in nasty_string()) {
        let words = search_words(&operand);
        prop_assert!(words.iter().all(|w| !w.is_empty() && !w.chars().any(|c| c.is_control() || c.is_whitespace())));
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(content, topic); INSERT INTO t VALUES ('the ghost walks', 'castle');",
        )
        .unwrap();
        match fts_query(&words) {
            Some(query) => {
                let found = conn
                    .prepare("SELECT rowid FROM t WHERE t MATCH ?1")
                    .and_then(|mut s| s.query_map([&query], |r| r.get::<_, i64>(0))?.collect::<Result<Vec<_>, _>>());
                prop_assert!(found.is_ok(), "{query:?}: {found:?}");
            }
            None => prop_assert!(words.is_empty()),
        }
    }
}

/// Any narrow a client sends to `GET /messages` (parsed, built and run against a real
/// database with messages and a full-text index): answered, or refused with a 400.
#[test]
fn every_narrow_is_answered_or_refused_with_a_400() {
    let (_dir, store, config_, mut state) = setup();
    let boss = state.users().next().map(|u| u.id).unwrap();
    let ann = add(&mut state, &store, &config_, "ann@acme.test", Role::Member);
    let guest = add(&mut state, &store, &config_, "guest@acme.test", Role::Guest);
    state.put_channel(Channel {
        id: ChannelId(1),
        name: "denmark".into(),
        description: String::new(),
        rendered_description: String::new(),
        invite_only: false,
        is_web_public: false,
        history_public_to_subscribers: true,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: None,
        creator_id: None,
        date_created: 0,
        is_archived: false,
        settings: serde_json::Map::new(),
    });
    for content in ["the ghost walks", "say \"ghost\" OR NEAR(x)"] {
        let msg = SendMessage {
            sender: boss,
            to: SendTo::Direct(DirectRef::Ids(vec![ann.0])),
            topic: None,
            content: content.into(),
            client: "website".into(),
            queue_id: None,
            local_id: None,
            read_by_sender: None,
        };
        send_message(&mut state, &store, &msg, &Default::default(), 1_795_238_500).unwrap();
    }
    let viewers = [boss, ann, guest];
    let strategy = (prop::collection::vec(term(), 0..4), 0..viewers.len(), any::<i64>());
    let mut runner = TestRunner::new(config(300));
    runner
        .run(&strategy, |(narrow, viewer, anchor)| {
            let user = state.user(viewers[viewer]).unwrap();
            let range = Range {
                anchor: Anchor::Id(MessageId(anchor.max(0))),
                num_before: 3,
                num_after: 3,
                include_anchor: true,
            };
            let outcome = parse_narrow(&Value::Array(narrow.clone()))
                .and_then(|terms| build(&state, user, &terms))
                .and_then(|narrow| fetch_window(&store.conn().unwrap(), &narrow.filter, range).map(|_| ()));
            if let Err(e) = outcome {
                prop_assert_eq!(e.status, 400, "{}: {}", Value::Array(narrow), e.msg);
            }
            Ok(())
        })
        .unwrap();
}
