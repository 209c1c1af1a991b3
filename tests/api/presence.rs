//! Presence over HTTP: `POST /users/me/presence` in both formats (the recorded calls
//! `zulip-golden/19`, `26`, `27` and `28`), `GET /realm/presence`,
//! `GET /users/{user_id_or_email}/presence`, events, register, and a restart.

use agora_actors::ids::UserId;
use agora_actors::realm::model::Role;
use agora_actors::realm::users::{CreateUser, NewUser};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    error, expect, json, missing, poll, post, queue_id, register, send, spawn_app, spawn_app_at, spawn_app_with, Creds,
    TestApp, Watch,
};

/// A reply's status, text, and the raw `server_timestamp` with its whole seconds.
struct Reply {
    status: u16,
    text: String,
    /// As written (so the expected body carries it unchanged).
    server_timestamp: String,
    /// Its whole seconds: the timestamp of a row made by this very request.
    now: i64,
}

async fn call(app: &TestApp, who: &Creds, method: Method, path: &str, form: &[(&str, &str)]) -> Reply {
    let response = send(app, who, method, path, form).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let server_timestamp = text
        .split_once(r#""server_timestamp":"#)
        .map(|(_, rest)| rest.split([',', '}']).next().unwrap().to_owned())
        .unwrap_or_default();
    let now = server_timestamp.split('.').next().unwrap().parse().unwrap_or(0);
    Reply { status, text, server_timestamp, now }
}

async fn ping(app: &TestApp, who: &Creds, form: &[(&str, &str)]) -> Reply {
    call(app, who, Method::POST, "/users/me/presence", form).await
}

impl Reply {
    /// Asserts the exact body: `expected` with its `server_timestamp` (any placeholder)
    /// being this reply's own.
    fn is(&self, status: u16, mut expected: Value) {
        if let Some(ts) = expected.get_mut("server_timestamp") {
            *ts = json!("<ts>");
        }
        let expected = expected.to_string().replace(r#""<ts>""#, &self.server_timestamp);
        assert_eq!((self.status, self.text.as_str()), (status, format!("{expected}\n").as_str()));
    }
}

/// A user's legacy entry: `aggregated` first, then the `website` client.
fn legacy(status: &str, timestamp: i64) -> Value {
    json!({
        "aggregated": {"client": "website", "status": status, "timestamp": timestamp},
        "website": {"client": "website", "status": status, "timestamp": timestamp, "pushable": false},
    })
}

fn modern(active: i64, idle: i64) -> Value {
    json!({"active_timestamp": active, "idle_timestamp": idle})
}

#[actix_web::test]
async fn an_update_returns_everyone_in_the_legacy_format_keyed_by_email() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let first = ping(&app, &o, &[("status", "active")]).await;
    first.is(
        200,
        json!({"result": "success", "msg": "", "presences": {o.email.clone(): legacy("active", first.now)},
            "server_timestamp": 0, "presence_last_update_id": 1}),
    );
    let second = ping(&app, &bob, &[("status", "active"), ("new_user_input", "true")]).await;
    second.is(
        200,
        json!({"result": "success", "msg": "", "presences": {
            o.email.clone(): legacy("active", first.now),
            "bob@agora.test": legacy("active", second.now),
        }, "server_timestamp": 0, "presence_last_update_id": 2}),
    );
    // The recorded call with unknown parameters: reported, sorted, last.
    let golden = ping(&app, &o, &[("status", "active"), ("bogus_param", "1"), ("another_unknown", "x")]).await;
    golden.is(
        200,
        json!({"result": "success", "msg": "", "presences": {
            o.email.clone(): legacy("active", first.now),
            "bob@agora.test": legacy("active", second.now),
        }, "server_timestamp": 0, "presence_last_update_id": 2,
        "ignored_parameters_unsupported": ["another_unknown", "bogus_param"]}),
    );
    app.stop().await;
}

#[actix_web::test]
async fn last_update_id_gives_the_modern_format_and_only_what_changed_since() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let (owner_id, bob_id) = (o.user_id.to_string(), bob.user_id.to_string());
    // As recorded: idle, last_update_id=-1, one day of history, new_user_input.
    let form = [("status", "idle"), ("last_update_id", "-1"), ("history_limit_days", "1"), ("new_user_input", "true")];
    let first = ping(&app, &o, &form).await;
    let owner_row = |reply: &Reply| -> Value {
        let body: Value = serde_json::from_str(&reply.text).unwrap();
        body["presences"][&owner_id].clone()
    };
    // Never active: `active_timestamp` is when the owner joined.
    let owner_active = owner_row(&first)["active_timestamp"].as_i64().unwrap();
    assert!(owner_active <= first.now);
    first.is(
        200,
        json!({"result": "success", "msg": "", "presences": {owner_id.clone(): modern(owner_active, first.now)},
            "server_timestamp": 0, "presence_last_update_id": 1}),
    );
    let second = ping(&app, &bob, &[("status", "active"), ("last_update_id", "1")]).await;
    second.is(
        200,
        json!({"result": "success", "msg": "", "presences": {bob_id.clone(): modern(second.now, second.now)},
            "server_timestamp": 0, "presence_last_update_id": 2}),
    );
    // An idle ping within the minute changes nothing: nothing new, the same id back.
    let third = ping(&app, &o, &[("status", "idle"), ("last_update_id", "2")]).await;
    third.is(
        200,
        json!({"result": "success", "msg": "", "presences": {}, "server_timestamp": 0, "presence_last_update_id": 2}),
    );
    // `slim_presence` alone asks for the modern format of everyone.
    let slim = ping(&app, &bob, &[("status", "active"), ("slim_presence", "true")]).await;
    slim.is(
        200,
        json!({"result": "success", "msg": "", "presences": {
            owner_id.clone(): modern(owner_active, first.now),
            bob_id.clone(): modern(second.now, second.now),
        }, "server_timestamp": 0, "presence_last_update_id": 2}),
    );
    // No history at all.
    let none = ping(&app, &bob, &[("status", "active"), ("last_update_id", "-1"), ("history_limit_days", "0")]).await;
    none.is(
        200,
        json!({"result": "success", "msg": "", "presences": {}, "server_timestamp": 0, "presence_last_update_id": -1}),
    );
    app.stop().await;
}

#[actix_web::test]
async fn ping_only_answers_without_data_but_records_the_ping() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    expect(
        post(&app, &o, "/users/me/presence", &[("status", "active"), ("ping_only", "true")]).await,
        200,
        json!({"result": "success", "msg": ""}),
    )
    .await;
    let realm = call(&app, &o, Method::GET, "/realm/presence", &[]).await;
    let body: Value = serde_json::from_str(&realm.text).unwrap();
    let timestamp = body["presences"][&o.email]["website"]["timestamp"].as_i64().unwrap();
    assert!(timestamp <= realm.now);
    // The whole-organization listing: legacy, without `presence_last_update_id`.
    realm.is(
        200,
        json!({"result": "success", "msg": "", "presences": {o.email.clone(): legacy("active", timestamp)},
            "server_timestamp": 0}),
    );
    app.stop().await;
}

#[actix_web::test]
async fn bad_updates_get_zulips_errors() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let update = |form: &'static [(&'static str, &'static str)]| post(&app, &o, "/users/me/presence", form);
    expect(update(&[("status", "away")]).await, 400, error("Invalid status: away")).await;
    expect(update(&[]).await, 400, missing("status")).await;
    expect(
        update(&[("status", "active"), ("last_update_id", "soon")]).await,
        400,
        error("last_update_id is not valid JSON"),
    )
    .await;
    let response = app.as_user(&o, Method::GET, "/users/me/presence").send().await.unwrap();
    let (status, body) = json(response).await;
    assert_eq!((status, &body["msg"]), (405, &json!("Method Not Allowed")));

    // Bots may read presence but never report any.
    let new = NewUser {
        bot_type: Some(1),
        bot_owner_id: Some(UserId(1)),
        ..NewUser::human("bot@agora.test", "Bot", Role::Member, None)
    };
    let created = app.realm("").addr.send(CreateUser(new)).await.unwrap().unwrap();
    let bot =
        Creds { email: "bot@agora.test".into(), api_key: created.api_key, user_id: created.user_id.0, ..o.clone() };
    let refused = post(&app, &bot, "/users/me/presence", &[("status", "active")]).await;
    expect(refused, 400, error("This endpoint does not accept bot requests.")).await;
    let listing = call(&app, &bot, Method::GET, "/realm/presence", &[]).await;
    listing.is(200, json!({"result": "success", "msg": "", "presences": {}, "server_timestamp": 0}));
    app.stop().await;
}

#[actix_web::test]
async fn one_users_presence_by_id_or_email() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let pinged = ping(&app, &bob, &[("status", "active")]).await;
    let t = pinged.now;
    // Both formats since feature level 497 (the modern fields first), with `server_timestamp`;
    // `slim_presence` changes nothing now.
    let single = json!({"result": "success", "msg": "", "server_timestamp": 0, "presence": {
        "active_timestamp": t, "idle_timestamp": t,
        "website": {"status": "active", "timestamp": t},
        "aggregated": {"status": "active", "timestamp": t},
    }});
    let by_id = format!("/users/{}/presence", bob.user_id);
    let slim = format!("{by_id}?slim_presence=true");
    for path in ["/users/bob@agora.test/presence", &by_id, &slim] {
        call(&app, &o, Method::GET, path, &[]).await.is(200, single.clone());
    }

    for (path, msg) in [
        ("/users/nobody@agora.test/presence".to_owned(), "No such user".to_owned()),
        ("/users/9999/presence".to_owned(), "No such user".to_owned()),
        (format!("/users/{}/presence", o.user_id), format!("No presence data for {}", o.user_id)),
    ] {
        expect(send(&app, &o, Method::GET, &path, &[]).await, 400, error(&msg)).await;
    }
    app.stop().await;
}

/// Events until one from `user_id`'s second appearance... simply: until `count` presence
/// events arrived (long-polling, so nothing is missed or waited for in vain).
async fn presence_events(app: &TestApp, who: &Creds, queue: &str, count: usize) -> Vec<Value> {
    let (mut seen, mut last) = (Vec::new(), -1);
    while seen.len() < count {
        let (status, body) = json(poll(app, who, queue, last).send().await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        for mut event in body["events"].as_array().unwrap().iter().cloned() {
            last = event["id"].as_i64().unwrap();
            event.as_object_mut().unwrap().remove("id");
            if event["type"] == "presence" {
                seen.push(event);
            }
        }
    }
    seen
}

#[actix_web::test]
async fn other_users_hear_of_a_user_coming_online_in_their_queues_form_but_not_of_pings() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    let types = r#"["presence"]"#;
    let legacy_q = queue_id(&register(&app, &o, &[("event_types", types)]).await);
    let slim_q = queue_id(&register(&app, &bob, &[("event_types", types), ("slim_presence", "true")]).await);
    let caps = r#"{"notification_settings_null": true, "simplified_presence_events": true}"#;
    let modern_q = queue_id(&register(&app, &carol, &[("event_types", types), ("client_capabilities", caps)]).await);

    let first = ping(&app, &bob, &[("status", "active")]).await;
    // A second ping within the minute is no news; carol's first one is.
    ping(&app, &bob, &[("status", "active"), ("ping_only", "true")]).await;
    let second = ping(&app, &carol, &[("status", "active"), ("ping_only", "true")]).await;
    assert_eq!(second.status, 200);
    let carol_now = {
        let r = call(&app, &o, Method::GET, "/users/carol@agora.test/presence", &[]).await;
        serde_json::from_str::<Value>(&r.text).unwrap()["presence"]["website"]["timestamp"].as_i64().unwrap()
    };

    let website =
        |t: i64| json!({"website": {"client": "website", "status": "active", "timestamp": t, "pushable": false}});
    let owner_events = presence_events(&app, &o, &legacy_q, 2).await;
    assert_eq!(owner_events.len(), 2);
    let stamps: Vec<Value> = owner_events.iter().map(|e| e["server_timestamp"].clone()).collect();
    assert_eq!(stamps[0].as_f64().unwrap().floor() as i64, first.now);
    assert_eq!(
        owner_events,
        [
            json!({"type": "presence", "email": "bob@agora.test", "user_id": bob.user_id,
                "server_timestamp": stamps[0], "presence": website(first.now)}),
            json!({"type": "presence", "email": "carol@agora.test", "user_id": carol.user_id,
                "server_timestamp": stamps[1], "presence": website(carol_now)}),
        ]
    );
    let bob_events = presence_events(&app, &bob, &slim_q, 2).await;
    assert_eq!(
        bob_events,
        [
            json!({"type": "presence", "user_id": bob.user_id, "server_timestamp": stamps[0], "presence": website(first.now)}),
            json!({"type": "presence", "user_id": carol.user_id, "server_timestamp": stamps[1], "presence": website(carol_now)}),
        ]
    );
    let carol_events = presence_events(&app, &carol, &modern_q, 2).await;
    assert_eq!(
        carol_events,
        [
            json!({"type": "presence", "presences": {bob.user_id.to_string(): modern(first.now, first.now)}}),
            json!({"type": "presence", "presences": {carol.user_id.to_string(): modern(carol_now, carol_now)}}),
        ]
    );
    app.stop().await;
}

#[actix_web::test]
async fn register_has_the_presence_data_set_in_the_format_asked_for() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let pinged = ping(&app, &o, &[("status", "active")]).await;
    let t = pinged.now;
    let keys = ["presences", "presence_last_update_id", "server_timestamp"];
    let full = register(&app, &o, &[]).await;
    for key in keys {
        assert!(full.get(key).is_some(), "a full register has {key}");
    }
    assert_eq!(full["presences"], json!({o.email.clone(): legacy("active", t)}));
    assert_eq!(full["presence_last_update_id"], json!(1));

    let only = ("fetch_event_types", r#"["presence"]"#);
    let slim = register(&app, &o, &[only, ("slim_presence", "true")]).await;
    assert_eq!(slim["presences"], json!({o.user_id.to_string(): modern(t, t)}));
    let caps = r#"{"notification_settings_null": true, "simplified_presence_events": true}"#;
    let simplified = register(&app, &o, &[only, ("client_capabilities", caps)]).await;
    assert_eq!(simplified["presences"], json!({o.user_id.to_string(): modern(t, t)}));
    let none = register(&app, &o, &[only, ("presence_history_limit_days", "0")]).await;
    assert_eq!((&none["presences"], &none["presence_last_update_id"]), (&json!({}), &json!(-1)));
    let body_keys: Vec<&str> = none.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(body_keys.windows(3).any(|w| w == keys), "{body_keys:?}");
    app.stop().await;
}

/// The next events of `watch`, waiting for at least one (the presence actor tells the
/// realm actor, which fans out).
async fn next_events(app: &TestApp, watch: &mut Watch) -> Vec<Value> {
    for _ in 0..100 {
        let events = watch.events(app).await;
        if !events.is_empty() {
            return events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("no event came");
}

/// Bob's presence as the owner's slim ping reports it.
async fn bobs_row(app: &TestApp, o: &Creds, bob: &Creds) -> Value {
    let reply = ping(app, o, &[("status", "active"), ("slim_presence", "true")]).await;
    let body: Value = serde_json::from_str(&reply.text).unwrap();
    body["presences"][bob.user_id.to_string()].clone()
}

#[actix_web::test]
async fn users_who_hide_their_presence_show_offline_until_they_share_it_again() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    ping(&app, &bob, &[("status", "active")]).await;
    let caps = r#"{"notification_settings_null": true, "simplified_presence_events": true}"#;
    let mut watch =
        Watch::with_form(&app, &o, &[("event_types", r#"["presence"]"#), ("client_capabilities", caps)]).await;
    let joined = bobs_row(&app, &o, &bob).await["active_timestamp"].as_i64().unwrap();
    // The events of coming online (told asynchronously) are not what this is about.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    watch.events(&app).await;
    let bob_id = bob.user_id.to_string();

    // Turned off (Zulip's invisible mode): everyone is told at once, and Bob shows as last
    // connected a little over the offline threshold (200 s) ago, never active since (his
    // `active_timestamp` falls back to when he joined).
    let before = now_secs();
    expect(
        send(&app, &bob, Method::PATCH, "/settings", &[("presence_enabled", "false")]).await,
        200,
        json!({"result": "success", "msg": ""}),
    )
    .await;
    let after = now_secs();
    let events = next_events(&app, &mut watch).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let row = &events[0]["presences"][&bob_id];
    let seen = row["idle_timestamp"].as_i64().unwrap();
    assert!((before - 321..=after - 320).contains(&seen), "{seen} for {before}..{after}");
    assert!(row["active_timestamp"].as_i64().unwrap() <= joined, "{row}");
    assert_eq!(bobs_row(&app, &o, &bob).await, *row);
    // Listed everywhere (not missing, not refused).
    let (status, body) = json(send(&app, &o, Method::GET, "/users/bob@agora.test/presence", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = json(send(&app, &o, Method::GET, "/realm/presence", &[]).await).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["presences"].get("bob@agora.test").is_some(), "{body}");
    // Bob's own pings are not recorded meanwhile.
    ping(&app, &bob, &[("status", "active")]).await;
    assert_eq!(bobs_row(&app, &o, &bob).await["idle_timestamp"], json!(seen));

    // Turned on again: active now, and everyone is told.
    let before = now_secs();
    expect(
        send(&app, &bob, Method::PATCH, "/settings", &[("presence_enabled", "true")]).await,
        200,
        json!({"result": "success", "msg": ""}),
    )
    .await;
    let after = now_secs();
    let events = next_events(&app, &mut watch).await;
    let row = &events[0]["presences"][&bob_id];
    assert!((before..=after).contains(&row["active_timestamp"].as_i64().unwrap()), "{events:?}");
    assert_eq!(row["active_timestamp"], row["idle_timestamp"], "{events:?}");
    let (status, body) =
        json(send(&app, &o, Method::GET, &format!("/users/{}/presence", bob.user_id), &[]).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["presence"]["aggregated"]["status"], json!("active"), "{body}");
    // Setting it to what it already is tells nobody anything.
    send(&app, &bob, Method::PATCH, "/settings", &[("presence_enabled", "true")]).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(watch.events(&app).await, Vec::<Value>::new());
    app.stop().await;
}

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[actix_web::test]
async fn with_the_server_limit_guests_see_only_users_they_share_a_channel_with() {
    let app = spawn_app_with(|s| s.presence.limit_to_accessible_users = true).await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let guest = app.create_user("", "guest@agora.test", "Guest", 600).await;
    let state = register(&app, &o, &[("fetch_event_types", r#"["realm_user_groups"]"#)]).await;
    let groups = state["realm_user_groups"].as_array().unwrap();
    let members = groups.iter().find(|g| g["name"] == "role:members").unwrap()["id"].as_i64().unwrap();
    let setting = json!({"new": members}).to_string();
    let (status, body) =
        json(send(&app, &o, Method::PATCH, "/realm", &[("can_access_all_users_group", &setting)]).await).await;
    assert_eq!(status, 200, "{body}");
    let subscribers = json!([bob.user_id, guest.user_id]).to_string();
    let form = [("name", "lobby"), ("subscribers", subscribers.as_str())];
    assert_eq!(send(&app, &o, Method::POST, "/channels/create", &form).await.status(), 200);
    ping(&app, &o, &[("status", "active")]).await;
    let bob_ping = ping(&app, &bob, &[("status", "active")]).await;

    let seen = ping(&app, &guest, &[("status", "active"), ("slim_presence", "true")]).await;
    seen.is(
        200,
        json!({"result": "success", "msg": "", "presences": {
            bob.user_id.to_string(): modern(bob_ping.now, bob_ping.now),
            guest.user_id.to_string(): modern(seen.now, seen.now),
        }, "server_timestamp": 0, "presence_last_update_id": 3}),
    );
    let owner_path = format!("/users/{}/presence", o.user_id);
    expect(send(&app, &guest, Method::GET, &owner_path, &[]).await, 400, error("Insufficient permission")).await;
    app.stop().await;
}

#[actix_web::test]
async fn presence_survives_a_restart_and_its_ids_keep_growing() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let pinged = ping(&app, &bob, &[("status", "active"), ("last_update_id", "-1")]).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;

    let app = spawn_app_at(&data_dir).await;
    let reply = ping(&app, &o, &[("status", "idle"), ("last_update_id", "0"), ("slim_presence", "true")]).await;
    let body: Value = serde_json::from_str(&reply.text).unwrap();
    assert_eq!(body["presences"][bob.user_id.to_string()], modern(pinged.now, pinged.now));
    assert_eq!(body["presence_last_update_id"], json!(2));
    app.stop().await;
    drop(tmp);
}
