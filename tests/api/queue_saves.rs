//! Event queues across a graceful restart, as a busy organization has them: every queue's
//! unacknowledged events come back in order, each distinct event is saved and restored
//! once (one copy in memory, shared again by the queues), expired queues are not saved,
//! queues saved by an earlier version are read, and a server killed while it saves leaves
//! a database that opens, with nothing acknowledged lost.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use agora_actors::config::QueueConfig;
use agora_actors::events::Event;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{json, poll_now, post, queue_id, register, spawn_app, spawn_app_at, spawn_app_with, Creds, HOST};

/// Subscribes `members` (by email) to `channel`, creating it.
async fn subscribe(app: &crate::helpers::TestApp, who: &Creds, channel: &str, members: &[&Creds]) {
    let emails: Vec<&str> = members.iter().map(|c| c.email.as_str()).collect();
    let form = [("subscriptions", json!([{ "name": channel }]).to_string()), ("principals", json!(emails).to_string())];
    let (status, body) =
        json(app.as_user(who, Method::POST, "/users/me/subscriptions").form(&form).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
}

/// Sends a channel message; its id.
async fn send(app: &crate::helpers::TestApp, who: &Creds, channel: &str, topic: &str, content: &str) -> i64 {
    let form = [("type", "stream"), ("to", channel), ("topic", topic), ("content", content)];
    let (status, body) = json(post(app, who, "/messages", &form).await).await;
    assert_eq!(status, 200, "{body}");
    body["id"].as_i64().unwrap()
}

/// What a queue holds after `last`, without acknowledging more.
async fn peek(app: &crate::helpers::TestApp, who: &Creds, queue: &str, last: i64) -> Vec<Value> {
    let (status, body) = json(poll_now(app, who, queue, last).send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["events"].as_array().unwrap().clone()
}

/// A registered queue, its owner, the id its client acknowledged, and whether it takes
/// `restart` events (a queue of message events only does not).
struct Client {
    who: Creds,
    queue: String,
    acked: i64,
    takes_restart: bool,
}

#[actix_web::test]
async fn every_queue_gets_its_events_back_and_each_event_is_one_copy() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let bob = app.create_user("", "bob@agora.test", "Bob", 400).await;
    let carol = app.create_user("", "carol@agora.test", "Carol", 400).await;
    subscribe(&app, &o, "general", &[&o, &bob, &carol]).await;

    // Clients as apps register them: the same options many times (so their events are
    // shared), and options that reshape events (rendered content, no avatars, split
    // deletions) or filter them (types, a narrow).
    let forms: [&[(&str, &str)]; 6] = [
        &[],
        &[],
        &[("apply_markdown", "true"), ("client_gravatar", "true")],
        &[("apply_markdown", "true"), ("client_gravatar", "true")],
        &[("event_types", r#"["message","delete_message"]"#)],
        &[
            ("narrow", r#"[["channel","general"]]"#),
            ("client_capabilities", r#"{"notification_settings_null":true,"bulk_message_deletion":true}"#),
        ],
    ];
    let mut clients = Vec::new();
    for who in [&o, &bob, &carol] {
        for (i, form) in forms.iter().enumerate() {
            let queue = queue_id(&register(&app, who, form).await);
            clients.push(Client { who: who.clone(), queue, acked: -1, takes_restart: i != 4 });
        }
    }
    // Ordinary use: messages (some with the sender's local id), reactions, read flags
    // (collapsed per queue), an edit, a deletion, a new member.
    let mut ids = Vec::new();
    for i in 0..12 {
        let sender = [&o, &bob, &carol][i % 3];
        ids.push(send(&app, sender, "general", &format!("topic {}", i % 2), &format!("message **{i}**")).await);
    }
    let own = [("type", "stream"), ("to", "general"), ("topic", "mine"), ("content", "with a local id")];
    let queue_of_bob = clients[6].queue.clone();
    let form: Vec<(&str, &str)> =
        own.iter().copied().chain([("queue_id", queue_of_bob.as_str()), ("local_id", "7.01")]).collect();
    assert_eq!(json(post(&app, &bob, "/messages", &form).await).await.0, 200);
    for (who, id) in [(&bob, ids[0]), (&carol, ids[1]), (&o, ids[2])] {
        let response = post(&app, who, &format!("/messages/{id}/reactions"), &[("emoji_name", "octopus")]).await;
        assert_eq!(response.status(), 200);
    }
    for chunk in ids.chunks(4) {
        let form = [("messages", json!(chunk).to_string()), ("op", "add".into()), ("flag", "read".into())];
        assert_eq!(app.as_user(&bob, Method::POST, "/messages/flags").form(&form).send().await.unwrap().status(), 200);
    }
    let edit = app.as_user(&o, Method::PATCH, &format!("/messages/{}", ids[3])).form(&[("content", "edited")]);
    assert_eq!(edit.send().await.unwrap().status(), 200);
    let delete = app.as_user(&o, Method::DELETE, &format!("/messages/{}", ids[4]));
    assert_eq!(delete.send().await.unwrap().status(), 200);
    app.create_user("", "dave@agora.test", "Dave", 400).await;
    // Some clients acknowledged part of what they got.
    for client in clients.iter_mut().step_by(3) {
        client.acked = 4;
        peek(&app, &client.who, &client.queue, 4).await;
    }

    let mut before = Vec::new();
    for client in &clients {
        before.push(peek(&app, &client.who, &client.queue, client.acked).await);
    }
    let slots: usize = before.iter().map(Vec::len).sum();
    let distinct: HashSet<String> = before
        .iter()
        .flatten()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("id");
            e.to_string()
        })
        .collect();
    assert!(before.iter().all(|events| !events.is_empty()));

    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let db = rusqlite::Connection::open(data_dir.join("agora.sqlite3")).unwrap();
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize;
    assert_eq!(count("SELECT COUNT(*) FROM event_queues"), clients.len());
    let saved = count("SELECT COUNT(*) FROM event_queue_events");
    // Each distinct event once: no more rows than distinct contents, but for the few a queue
    // holds alone with the same content as another's (merged read flags of each of Bob's
    // queues), and far fewer than the queues hold together.
    assert!(
        saved >= distinct.len() && saved <= distinct.len() + clients.len(),
        "{saved} rows, {} distinct",
        distinct.len()
    );
    assert!(saved * 3 < slots, "{saved} rows for {slots} slots");
    drop(db);

    let app = spawn_app_at(&data_dir).await;
    for (client, events) in clients.iter().zip(&before) {
        let after = peek(&app, &client.who, &client.queue, client.acked).await;
        assert_eq!(&after[..events.len()], &events[..], "queue {} of {}", client.queue, client.who.email);
        if client.takes_restart {
            let restart = &after[events.len()];
            assert_eq!(restart["type"], json!("restart"));
            assert_eq!(restart["id"], json!(events.last().unwrap()["id"].as_i64().unwrap() + 1));
        }
        assert_eq!(after.len(), events.len() + usize::from(client.takes_restart));
    }
    // One copy of each event in memory: the restored queues hold the same allocations, as
    // many as there were rows, and one restart notice between them.
    let realm = app.realm("");
    let held: Vec<_> = clients.iter().flat_map(|c| realm.queues.get(&c.queue).unwrap().queue.events()).collect();
    assert_eq!(held.len(), slots + clients.iter().filter(|c| c.takes_restart).count());
    let pointers: HashSet<*const Event> = held.iter().map(|q| std::sync::Arc::as_ptr(&q.event)).collect();
    assert_eq!(pointers.len(), saved + 1);
    // Kept as the JSON they were saved as: delivering them never parsed one.
    let unparsed = held.iter().filter(|q| !q.event.has_body()).count();
    assert_eq!(unparsed, slots, "restored events stay JSON until something reads their fields");
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn expired_queues_are_not_saved_and_the_log_is_cut_back() {
    // Expiry is checked only every minute, so the expired queue is still there at the stop.
    let app = spawn_app_with(|s| {
        s.queues = QueueConfig { default_timeout: Duration::from_millis(500), ..QueueConfig::default() };
    })
    .await;
    let o = app.owner.clone();
    let expired = queue_id(&register(&app, &o, &[]).await);
    let kept = queue_id(&register(&app, &o, &[("queue_lifespan_secs", "3600")]).await);
    tokio::time::sleep(Duration::from_millis(700)).await;
    app.create_user("", "bob@agora.test", "Bob", 400).await;
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    let db = rusqlite::Connection::open(data_dir.join("agora.sqlite3")).unwrap();
    let saved: Vec<String> = db
        .prepare("SELECT queue_id FROM event_queues")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(saved, std::slice::from_ref(&kept));
    drop(db);
    // The save was checkpointed into the database and the log cut back to nothing.
    assert_eq!(std::fs::metadata(data_dir.join("agora.sqlite3-wal")).map_or(0, |m| m.len()), 0);

    let app = spawn_app_at(&data_dir).await;
    let (status, body) = json(poll_now(&app, &o, &expired, -1).send().await.unwrap()).await;
    assert_eq!((status, &body["code"]), (400, &json!("BAD_EVENT_QUEUE_ID")));
    let events = peek(&app, &o, &kept, -1).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[kinds.len() - 1], "restart");
    assert!(kinds.contains(&"realm_user"), "{kinds:?}");
    app.stop().await;
    drop(tmp);
}

#[actix_web::test]
async fn queues_saved_by_an_earlier_version_are_restored_sharing_their_events() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let data_dir = app.data_dir.clone();
    let tmp = app.stop().await;
    // Rows as the version before saved them: each queue's JSON with its events in full.
    let db = rusqlite::Connection::open(data_dir.join("agora.sqlite3")).unwrap();
    let event = |i: i64| json!([i, {"type": "realm_user", "op": "update", "person": {"user_id": o.user_id, "full_name": format!("Name {i}")}}]);
    for (queue, range) in [("old-1", 0..6), ("old-2", 3..6)] {
        let data = json!({
            "queue_id": queue, "user_id": o.user_id,
            "spec": {"event_types": null, "apply_markdown": false, "client_gravatar": false, "slim_presence": false,
                     "all_public_streams": false, "narrow": [], "capabilities": {}, "timeout_ms": 600000, "client_name": "old"},
            "next_event_id": range.end, "newest_pruned_id": range.start - 1,
            "events": range.map(event).collect::<Vec<_>>(), "idle_ms": 1000,
        });
        let now = chrono::Utc::now().timestamp();
        db.execute(
            "INSERT INTO event_queues (queue_id, realm_id, user_id, data, saved_at) VALUES (?1, 1, ?2, ?3, ?4)",
            rusqlite::params![queue, o.user_id, data.to_string(), now],
        )
        .unwrap();
    }
    drop(db);

    let app = spawn_app_at(&data_dir).await;
    let events = peek(&app, &o, "old-1", -1).await;
    let names: Vec<&Value> = events.iter().map(|e| &e["person"]["full_name"]).collect();
    assert_eq!(
        names[..6],
        [json!("Name 0"), json!("Name 1"), json!("Name 2"), json!("Name 3"), json!("Name 4"), json!("Name 5")]
            .iter()
            .collect::<Vec<_>>()[..]
    );
    assert_eq!((&events[6]["type"], &events[6]["id"]), (&json!("restart"), &json!(6)));
    let events = peek(&app, &o, "old-2", 2).await;
    assert_eq!(events.iter().map(|e| e["id"].as_i64().unwrap()).collect::<Vec<_>>(), [3, 4, 5, 6]);
    let realm = app.realm("");
    let (a, b) = (realm.queues.get("old-1").unwrap().queue.events(), realm.queues.get("old-2").unwrap().queue.events());
    assert!(std::sync::Arc::ptr_eq(&a[3].event, &b[0].event), "equal events are one copy");
    // Nothing of them is left behind: the next stop saves them in the new form.
    let tmp2 = app.stop().await;
    let db = rusqlite::Connection::open(data_dir.join("agora.sqlite3")).unwrap();
    let old: i64 = db.query_row("SELECT COUNT(*) FROM event_queues WHERE slots IS NULL", [], |r| r.get(0)).unwrap();
    assert_eq!(old, 0);
    drop((tmp, tmp2));
}

/// The operation an organization's move to another node rests on: one organization's
/// queues saved and its actor stopped, then taken back by the next actor to start it, while
/// the server and the other organizations go on.
#[actix_web::test]
async fn one_organizations_queues_are_saved_and_taken_back_alone() {
    let app = spawn_app().await;
    let o = app.owner.clone();
    let acme = app.create_realm("acme", "boss@acme.test").await;
    let ours = queue_id(&register(&app, &o, &[]).await);
    let theirs = queue_id(&register(&app, &acme, &[]).await);
    app.create_user("", "bob@agora.test", "Bob", 400).await;
    app.create_user("acme", "ann@acme.test", "Ann", 400).await;
    let before = peek(&app, &o, &ours, -1).await;

    let first = app.realm("");
    let saved = first.addr.send(agora_actors::realm::actor::SaveQueues).await.unwrap();
    assert_eq!(saved, 1);
    for _ in 0..400 {
        if !first.is_alive() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!first.is_alive(), "the actor stops once its queues are saved");
    // The other organization never noticed.
    assert!(app.realm("acme").is_alive());
    let kinds: Vec<Value> = peek(&app, &acme, &theirs, -1).await.iter().map(|e| e["type"].clone()).collect();
    assert!(!kinds.contains(&json!("restart")), "{kinds:?}");
    // The next request starts the organization again, with its queue as it was.
    let after = peek(&app, &o, &ours, -1).await;
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after[before.len()]["type"], json!("restart"));
    app.stop().await;
}

// --- A server process killed while it saves. ---

/// A server process of our own, its log lines arriving on a channel.
struct Server {
    child: Child,
    address: String,
    log: mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &std::path::Path) -> Server {
    let config = dir.join("agora.toml");
    std::fs::write(&config, "[password_hash]\nmemory_kib = 8\niterations = 1\nparallelism = 1\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agora"))
        .args(["--data-dir", dir.join("data").to_str().unwrap(), "--config", config.to_str().unwrap()])
        .args(["--bind", "127.0.0.1:0", "--external-host", HOST, "--log", "info"])
        .arg("serve")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, log) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let stdout = child.stdout.take().unwrap();
    let address = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("Agora is listening on ").map(str::to_owned))
        .unwrap();
    Server { child, address, log }
}

impl Server {
    /// Waits for a log line containing `text`.
    fn wait_for(&self, text: &str) {
        loop {
            let line = self.log.recv_timeout(Duration::from_secs(30)).unwrap();
            if line.contains(text) {
                return;
            }
        }
    }

    /// SIGTERM, then SIGKILL `delay` after the server says it is saving its queues (or,
    /// without a delay, waits for it to exit); whether the save had been committed, as far
    /// as its log told before the end.
    fn stop(mut self, kill_after: Option<Duration>) -> bool {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        self.wait_for("saving event queues");
        match kill_after {
            Some(delay) => {
                std::thread::sleep(delay);
                self.child.kill().unwrap();
            }
            None => assert!(self.child.wait().unwrap().success()),
        }
        self.child.wait().unwrap();
        self.log.try_iter().any(|line| line.contains("saved event queues"))
    }
}

/// A client of a real server process.
fn owner_of(dir: &std::path::Path) -> Creds {
    let rc = std::fs::read_to_string(dir.join("data/zuliprc")).unwrap();
    let field = |name: &str| rc.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap().to_owned();
    Creds { email: field("email"), password: String::new(), api_key: field("key"), user_id: 1, host: HOST.into() }
}

#[actix_web::test]
async fn a_server_killed_while_saving_its_queues_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let call = |server: &Server, who: &Creds, method: Method, path: &str| {
        client
            .request(method, format!("{}/api/v1{path}", server.address))
            .header("Host", HOST)
            .basic_auth(&who.email, Some(&who.api_key))
    };
    let mut acknowledged: Vec<i64> = Vec::new();
    let mut queues: Vec<(String, i64)> = Vec::new();
    // The first kill comes while the save waits for the database, which this test holds;
    // the others at once and a few milliseconds into a save of about a megabyte; the last
    // stop is graceful. Each start checks what the stop before it left.
    let ms = Duration::from_millis;
    let stops = [Some(ms(300)), Some(ms(0)), Some(ms(3)), Some(ms(15)), None];
    let mut committed = false;
    for round in 0..=stops.len() {
        let server = tokio::task::spawn_blocking({
            let dir = tmp.path().to_owned();
            move || start_server(&dir)
        })
        .await
        .unwrap();
        let o = owner_of(tmp.path());
        // What was acknowledged before is all there.
        if round > 0 {
            let path = "/messages?anchor=oldest&num_before=0&num_after=5000&apply_markdown=false\
                        &narrow=[{\"operator\":\"channel\",\"operand\":\"saved\"},{\"operator\":\"topic\",\"operand\":\"t\"}]";
            let (status, body) = json(call(&server, &o, Method::GET, path).send().await.unwrap()).await;
            assert_eq!(status, 200, "{body}");
            let found: Vec<i64> =
                body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect();
            assert_eq!(found, acknowledged, "round {round}");
        }
        // Every queue saved before comes back whole, or (the save was cut off) none does.
        let mut restored = 0;
        for (queue, acked) in &queues {
            let path = format!("/events?queue_id={queue}&last_event_id={acked}&dont_block=true");
            let (status, body) = json(call(&server, &o, Method::GET, &path).send().await.unwrap()).await;
            if status == 200 {
                restored += 1;
                let events = body["events"].as_array().unwrap();
                let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
                assert_eq!(ids, (acked + 1..acked + 1 + ids.len() as i64).collect::<Vec<_>>());
                assert_eq!(ids.len(), 61, "sixty messages and the restart notice");
                assert_eq!(events.last().unwrap()["type"], json!("restart"));
            } else {
                assert_eq!((status, &body["code"]), (400, &json!("BAD_EVENT_QUEUE_ID")));
            }
        }
        assert!(restored == 0 || restored == queues.len(), "round {round}: {restored} of {} queues", queues.len());
        if round == 1 {
            assert_eq!(restored, 0, "the save the test held up never committed");
        }
        if committed || round == stops.len() {
            assert_eq!(restored, queues.len(), "round {round}: a committed save restores every queue");
        }
        let Some(&stop) = stops.get(round) else { break };

        // Queues, then messages they hold.
        if round == 0 {
            let form = [("subscriptions", json!([{ "name": "saved" }]).to_string())];
            let response = call(&server, &o, Method::POST, "/users/me/subscriptions").form(&form).send().await.unwrap();
            assert_eq!(response.status(), 200);
        }
        queues.clear();
        for i in 0..40 {
            let form: &[(&str, &str)] = if i % 2 == 0 { &[] } else { &[("apply_markdown", "true")] };
            let response = call(&server, &o, Method::POST, "/register").form(form).send().await.unwrap();
            let (status, body) = json(response).await;
            assert_eq!(status, 200);
            queues.push((queue_id(&body), body["last_event_id"].as_i64().unwrap()));
        }
        for i in 0..60 {
            let content = format!("message {round}/{i} {}", "lorem ipsum ".repeat(700));
            let form = [("type", "stream"), ("to", "saved"), ("topic", "t"), ("content", content.as_str())];
            let response = call(&server, &o, Method::POST, "/messages").form(&form).send().await.unwrap();
            let (status, body) = json(response).await;
            assert_eq!(status, 200, "{body}");
            acknowledged.push(body["id"].as_i64().unwrap());
        }

        let db = tmp.path().join("data/agora.sqlite3");
        committed = tokio::task::spawn_blocking(move || {
            // Round 0: the test holds the write lock, so the save is under way when killed.
            let holder = (round == 0).then(|| {
                let conn = rusqlite::Connection::open(&db).unwrap();
                conn.execute_batch("BEGIN IMMEDIATE").unwrap();
                conn
            });
            let committed = server.stop(stop);
            drop(holder);
            // The database opens and is whole.
            let conn = rusqlite::Connection::open(&db).unwrap();
            let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok");
            committed
        })
        .await
        .unwrap();
    }
}
