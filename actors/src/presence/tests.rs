//! Presence rules on states built in memory: Zulip's update rule, the `last_update_id`
//! protocol, the formats, and whose presence each viewer gets.

use std::sync::Arc;

use serde_json::{json, Value};

use super::audience::{reported_users, viewer_access, UserSet};
use super::reads::{register_data, select, update_reply, user_reply, Audience, PresenceQuery};
use super::state::{PresenceState, Status};
use super::{format, MICROS};
use crate::config::PresenceConfig;
use crate::ids::{ChannelId, UserId};
use crate::realm::fixture_tests::{channel, human, organization, T0};
use crate::realm::model::{Role, Subscription, SystemGroup};
use crate::realm::state::RealmState;

const HAMLET: UserId = UserId(10);
const OTHELLO: UserId = UserId(11);
const IAGO: UserId = UserId(12);
const GUEST: UserId = UserId(13);
const BOT: UserId = UserId(14);

/// `secs` seconds after the organization was created, in microseconds.
fn at(secs: i64) -> i64 {
    (T0 + secs) * MICROS
}

fn realm() -> RealmState {
    let mut state = organization();
    human(&mut state, HAMLET, "hamlet@acme.test", "Hamlet", "k1", Role::Member);
    human(&mut state, OTHELLO, "othello@acme.test", "Othello", "k2", Role::Member);
    human(&mut state, IAGO, "iago@acme.test", "Iago", "k3", Role::Administrator);
    human(&mut state, GUEST, "guest@acme.test", "Guest", "k4", Role::Guest);
    human(&mut state, BOT, "bot@acme.test", "Bot", "k5", Role::Member);
    let mut bot = state.user(BOT).unwrap().clone();
    (bot.is_bot, bot.bot_type) = (true, Some(1));
    state.put_user(bot);
    state
}

/// The reply's JSON as seen by `viewer` with the server's default limits.
fn fetch_text(presence: &PresenceState, realm: &RealmState, viewer: UserId, query: PresenceQuery, now: i64) -> String {
    let reported = reported_users(realm);
    let access = viewer_access(&PresenceConfig::default(), realm, viewer);
    let audience = Audience { realm, reported: &reported, access: access.as_ref() };
    format!("{{{}}}", update_reply(presence, &audience, Some(&query), now))
}

/// The same, parsed.
fn fetch(presence: &PresenceState, realm: &RealmState, viewer: UserId, query: PresenceQuery, now: i64) -> Value {
    serde_json::from_str(&fetch_text(presence, realm, viewer, query, now)).unwrap()
}

fn modern(last_update_id: i64) -> PresenceQuery {
    PresenceQuery::new(false, Some(last_update_id), None)
}

#[test]
fn a_first_ping_creates_the_row_and_later_ones_move_a_time_at_most_once_a_minute() {
    let mut presence = PresenceState::default();
    let first = presence.ping(HAMLET, Status::Idle, at(0), T0).unwrap();
    assert!(first.notify, "a first presence is news");
    assert_eq!((first.row.last_active, first.row.last_connected, first.row.update_id), (None, Some(at(0)), 1));

    // Within 55 s nothing moves: no change, nothing to write, no new update id.
    assert_eq!(presence.ping(HAMLET, Status::Idle, at(55), T0), None);
    assert_eq!(presence.ping(HAMLET, Status::Active, at(30), T0).map(|c| c.row.last_active), Some(Some(at(30))));
    assert_eq!(presence.last_update_id(), 2);
    assert_eq!(presence.ping(HAMLET, Status::Active, at(80), T0), None);

    // A minute later an idle ping moves only the connected time, and tells nobody.
    let idle = presence.ping(HAMLET, Status::Idle, at(90), T0).unwrap();
    assert!(!idle.notify);
    assert_eq!((idle.row.last_active, idle.row.last_connected, idle.row.update_id), (Some(at(30)), Some(at(90)), 3));

    // Active again after a minute: both times move, still no news (not away long enough).
    let active = presence.ping(HAMLET, Status::Active, at(150), T0).unwrap();
    assert!(!active.notify);
    assert_eq!((active.row.last_active, active.row.last_connected), (Some(at(150)), Some(at(150))));

    // Idle for over 130 s, then active: the user came back online, which is news.
    assert!(!presence.ping(HAMLET, Status::Idle, at(210), T0).unwrap().notify);
    let back = presence.ping(HAMLET, Status::Active, at(281), T0).unwrap();
    assert!(back.notify);
    assert_eq!(presence.rows().map(|r| r.update_id).collect::<Vec<_>>(), [6]);
}

#[test]
fn an_idle_first_row_counts_as_active_since_joining() {
    let mut presence = PresenceState::default();
    presence.ping(HAMLET, Status::Idle, at(100), T0 - 10);
    let row = presence.row(HAMLET).unwrap();
    assert_eq!((row.active_timestamp(), row.idle_timestamp()), (T0 - 10, T0 + 100));
    assert_eq!(
        row.modern_member(),
        format!(r#""10":{{"active_timestamp":{},"idle_timestamp":{}}}"#, T0 - 10, T0 + 100)
    );
    // Last active 110 s before last connected: idle, as of the connection.
    assert_eq!(format::legacy_status(row), ("idle", T0 + 100));
}

#[test]
fn last_update_id_returns_only_what_changed_since() {
    let realm = realm();
    let mut presence = PresenceState::default();
    // No rows: -1 when the client gave none, else its own id back.
    assert_eq!(
        fetch_text(&presence, &realm, HAMLET, modern(-1), at(0)),
        json!({"presences": {}, "server_timestamp": (T0 as f64), "presence_last_update_id": -1}).to_string()
    );
    assert_eq!(fetch(&presence, &realm, HAMLET, modern(7), at(0))["presence_last_update_id"], json!(7));

    presence.ping(HAMLET, Status::Idle, at(0), T0);
    presence.ping(OTHELLO, Status::Active, at(1), T0);
    let all = fetch_text(&presence, &realm, HAMLET, modern(-1), at(2));
    assert_eq!(
        all,
        json!({
            "presences": {
                "10": {"active_timestamp": T0, "idle_timestamp": T0},
                "11": {"active_timestamp": T0 + 1, "idle_timestamp": T0 + 1},
            },
            "server_timestamp": ((T0 + 2) as f64),
            "presence_last_update_id": 2,
        })
        .to_string()
    );
    // Nothing new: empty, and the same id back.
    let none = fetch(&presence, &realm, HAMLET, modern(2), at(3));
    assert_eq!((&none["presences"], &none["presence_last_update_id"]), (&json!({}), &json!(2)));

    presence.ping(HAMLET, Status::Active, at(70), T0);
    let since = fetch(&presence, &realm, OTHELLO, modern(2), at(71));
    assert_eq!(since["presences"], json!({"10": {"active_timestamp": T0 + 70, "idle_timestamp": T0 + 70}}));
    assert_eq!(since["presence_last_update_id"], json!(3));
}

#[test]
fn the_history_window_limits_full_fetches_only() {
    let realm = realm();
    let mut presence = PresenceState::default();
    presence.ping(HAMLET, Status::Idle, at(0), T0);
    presence.ping(OTHELLO, Status::Idle, at(100 * 86_400), T0);
    let now = at(100 * 86_400 + 5);
    let keys = |v: Value| v["presences"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(fetch(&presence, &realm, IAGO, PresenceQuery::new(true, None, None), now)), ["11"]);
    assert_eq!(keys(fetch(&presence, &realm, IAGO, PresenceQuery::new(true, Some(-1), Some(101)), now)), ["10", "11"]);
    let nothing = fetch(&presence, &realm, IAGO, PresenceQuery::new(true, Some(-1), Some(0)), now);
    assert_eq!((keys(nothing.clone()), &nothing["presence_last_update_id"]), (vec![], &json!(-1)));
    // An incremental fetch returns a change however old its row's times.
    assert_eq!(keys(fetch(&presence, &realm, IAGO, modern(1), now)), ["11"]);
}

#[test]
fn the_legacy_format_is_keyed_by_email_with_the_website_client_and_aggregated() {
    let realm = realm();
    let mut presence = PresenceState::default();
    presence.ping(HAMLET, Status::Active, at(0), T0);
    presence.ping(OTHELLO, Status::Active, at(0), T0);
    presence.ping(OTHELLO, Status::Idle, at(100), T0);
    let reply = fetch_text(&presence, &realm, HAMLET, PresenceQuery::new(false, None, None), at(101));
    let entry = |status: &str, timestamp: i64| {
        json!({
            "aggregated": {"client": "website", "status": status, "timestamp": timestamp},
            "website": {"client": "website", "status": status, "timestamp": timestamp, "pushable": false},
        })
    };
    assert_eq!(
        reply,
        json!({
            "presences": {"hamlet@acme.test": entry("active", T0), "othello@acme.test": entry("idle", T0 + 100)},
            "server_timestamp": ((T0 + 101) as f64),
            "presence_last_update_id": 3,
        })
        .to_string()
    );
}

#[test]
fn bots_and_deactivated_users_are_not_reported_users_hiding_presence_are() {
    let mut realm = realm();
    let mut presence = PresenceState::default();
    for user in [HAMLET, OTHELLO, IAGO] {
        presence.ping(user, Status::Active, at(0), T0);
    }
    let mut othello = realm.user(OTHELLO).unwrap().clone();
    othello.settings.insert("presence_enabled".into(), json!(false));
    realm.put_user(othello);
    let mut iago = realm.user(IAGO).unwrap().clone();
    iago.is_active = false;
    realm.put_user(iago);
    // Othello keeps the row made when he hid it (here, his last ping).
    let reply = fetch(&presence, &realm, HAMLET, modern(-1), at(1));
    assert_eq!(reply["presences"].as_object().unwrap().keys().collect::<Vec<_>>(), ["10", "11"]);
    assert_eq!(reported_users(&realm), UserSet::of([HAMLET, OTHELLO, GUEST]));
}

#[test]
fn an_organization_hiding_presence_returns_nothing() {
    let mut realm = realm();
    let mut presence = PresenceState::default();
    presence.ping(HAMLET, Status::Active, at(0), T0);
    let mut row = realm.realm().clone();
    row.settings.insert("presence_disabled".into(), json!(true));
    realm.set_realm(row);
    let reply = fetch(&presence, &realm, HAMLET, modern(0), at(1));
    assert_eq!((&reply["presences"], &reply["presence_last_update_id"]), (&json!({}), &json!(-1)));
}

#[test]
fn with_the_server_limit_a_guest_sees_only_the_users_it_shares_a_channel_with() {
    let mut realm = realm();
    realm.put_channel(channel(ChannelId(1), "general", false, true));
    for user in [GUEST, OTHELLO] {
        realm.put_subscription(Subscription::new(user, ChannelId(1), "#c2c2c2".into()));
    }
    let members = realm.system_group_id(SystemGroup::MEMBERS).unwrap();
    let mut row = realm.realm().clone();
    row.settings.insert("can_access_all_users_group".into(), json!(members.0));
    realm.set_realm(row);
    let mut presence = PresenceState::default();
    for user in [HAMLET, OTHELLO, GUEST] {
        presence.ping(user, Status::Active, at(0), T0);
    }
    let limited = PresenceConfig { limit_to_accessible_users: true, ..PresenceConfig::default() };
    let ids = |viewer: UserId, config: &PresenceConfig| {
        let reported = reported_users(&realm);
        let access = viewer_access(config, &realm, viewer);
        let audience = Audience { realm: &realm, reported: &reported, access: access.as_ref() };
        let (rows, _) = select(&presence, &audience, &modern(-1), at(1));
        rows.iter().map(|r| r.user_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(GUEST, &limited), [OTHELLO, GUEST]);
    assert_eq!(ids(HAMLET, &limited), [HAMLET, OTHELLO, GUEST], "members may access everyone");
    assert_eq!(ids(GUEST, &PresenceConfig::default()), [HAMLET, OTHELLO, GUEST], "no limit by default");

    let single = |target: &str| user_reply(&presence, &realm, &limited, GUEST, target, at(1));
    assert_eq!(single("10").unwrap_err().msg, "Insufficient permission");
    assert_eq!(
        Value::Object(single("othello@acme.test").unwrap()),
        json!({"server_timestamp": ((T0 + 1) as f64), "presence": {
            "active_timestamp": T0, "idle_timestamp": T0,
            "website": {"status": "active", "timestamp": T0},
            "aggregated": {"status": "active", "timestamp": T0},
        }})
    );
}

#[test]
fn one_users_presence_with_zulips_errors_and_the_offline_rule() {
    let realm = realm();
    let config = PresenceConfig::default();
    let mut presence = PresenceState::default();
    presence.ping(OTHELLO, Status::Active, at(0), T0);
    presence.ping(OTHELLO, Status::Idle, at(60), T0);
    let get = |target: &str, now: i64| user_reply(&presence, &realm, &config, HAMLET, target, now);
    // Both formats since feature level 497: the modern fields, then the legacy ones.
    let both = |now: i64, aggregated: &str| {
        json!({"server_timestamp": ((T0 + now) as f64), "presence": {
            "active_timestamp": T0, "idle_timestamp": T0 + 60,
            "website": {"status": "active", "timestamp": T0},
            "aggregated": {"status": aggregated, "timestamp": T0},
        }})
    };
    assert_eq!(Value::Object(get("othello@acme.test", at(200)).unwrap()).to_string(), both(200, "active").to_string());
    assert_eq!(Value::Object(get("11", at(201)).unwrap()).to_string(), both(201, "offline").to_string());
    let err = |target: &str| get(target, at(1)).unwrap_err().msg;
    assert_eq!(err("nobody@acme.test"), "No such user");
    assert_eq!(err("99"), "No such user");
    assert_eq!(err("14"), "Presence is not supported for bot users.");
    assert_eq!(err("hamlet@acme.test"), "No presence data for hamlet@acme.test");
    assert_eq!(err("10"), "No presence data for 10");
}

#[test]
fn register_follows_the_fetch_rules() {
    let realm = realm();
    let mut presence = PresenceState::default();
    presence.ping(HAMLET, Status::Active, at(0), T0);
    let reported = Arc::new(reported_users(&realm));
    let audience = Audience { realm: &realm, reported: &reported, access: None };
    let mut out = serde_json::Map::new();
    register_data(&presence, &audience, &PresenceQuery::new(true, None, None), at(5), &mut out);
    assert_eq!(
        Value::Object(out).to_string(),
        json!({
            "presences": {"10": {"active_timestamp": T0, "idle_timestamp": T0}},
            "presence_last_update_id": 1,
            "server_timestamp": ((T0 + 5) as f64),
        })
        .to_string()
    );
}

#[test]
fn the_event_carries_both_forms() {
    let realm = realm();
    let mut presence = PresenceState::default();
    let changed = presence.ping(HAMLET, Status::Active, at(0), T0).unwrap();
    let event = format::event(realm.user(HAMLET).unwrap(), &changed.row, at(0) + 250_000);
    assert_eq!(
        event.json(),
        json!({
            "type": "presence",
            "email": "hamlet@acme.test",
            "user_id": 10,
            "server_timestamp": (T0 as f64 + 0.25),
            "presence": {"website": {"client": "website", "status": "active", "timestamp": T0, "pushable": false}},
            "presences": {"10": {"active_timestamp": T0, "idle_timestamp": T0}},
        })
        .to_string()
    );
}

/// The rows after `after` that `reported` holds, row by row: what the blocks must give.
fn members_row_by_row(presence: &PresenceState, reported: &UserSet, after: i64) -> (String, Option<i64>) {
    let rows: Vec<_> = presence.rows_after(after).filter(|row| reported.contains(row.user_id)).collect();
    let text = rows.iter().map(|row| row.modern_member()).collect::<Vec<_>>().join(",");
    (text, rows.last().map(|row| row.update_id))
}

#[test]
fn incremental_replies_from_blocks_are_the_rows_changed_since() {
    use super::blocks::ModernBlocks;
    // 700 users pinging in a pseudo-random order for simulated minutes; the blocks are told
    // of each change, as the actor does, and asked from many places in between.
    let mut presence = PresenceState::default();
    let mut blocks = ModernBlocks::default();
    let everyone = UserSet::of((1..=700).map(UserId));
    let some = UserSet::of((1..=700).filter(|id| id % 7 != 0).map(UserId));
    let mut reported = &everyone;
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random = |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    for step in 0..6_000i64 {
        let user = UserId(1 + random(700) as i64);
        let status = if random(10) == 0 { Status::Active } else { Status::Idle };
        let before = presence.row(user).map(|row| row.update_id);
        if let Some(changed) = presence.ping(user, status, at(step / 10), T0) {
            if let Some(update_id) = before {
                blocks.changed(update_id);
            }
            blocks.changed(changed.row.update_id);
        }
        if step == 3_000 {
            reported = &some;
            blocks.clear();
        }
        if step % 37 == 0 {
            let last = presence.last_update_id();
            for after in [1, last / 3, last.saturating_sub(300), last.saturating_sub(256), last - 1, last, last + 5] {
                let after = after.max(1);
                let mut parts = Vec::new();
                let last = blocks.presences_after(&presence, reported, after, &mut parts);
                let got = (super::reads::Fields(parts).text(), last);
                assert_eq!(got, members_row_by_row(&presence, reported, after), "step {step}, after {after}");
            }
        }
    }
    assert!(presence.last_update_id() > 1_000, "the pings moved rows: {}", presence.last_update_id());
}
