//! The presence actor: batched writes on its timer (paused time), events through the realm
//! actor, and what a restart keeps.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::prelude::*;
use agora_actors::config::{PresenceConfig, ServerConfig};
use agora_actors::events::PushEvent;
use agora_actors::ids::{RealmId, UserId};
use agora_actors::presence::actor::{GetPresenceStats, PresenceStats};
use agora_actors::presence::{FlushPresence, PresenceActor, PresenceQuery, Status, UpdatePresence};
use agora_actors::realm::actor::{AddListener, StopRealm};
use agora_actors::realm::model::Role;
use agora_actors::realm::organization::NewRealm;
use agora_actors::realm::users::{CreateUser, NewUser};
use agora_actors::registry::{CreateRealm, Directory, RealmHandle, RealmRegistry, Resolve};
use agora_actors::store::presence::{load, StoredPresence};
use agora_actors::store::Store;
use arc_swap::ArcSwap;
use serde_json::{json, Value};

/// Records every event it is handed.
struct Recorder {
    seen: Arc<Mutex<Vec<PushEvent>>>,
}

impl Actor for Recorder {
    type Context = Context<Self>;
}

impl Handler<PushEvent> for Recorder {
    type Result = ();

    fn handle(&mut self, msg: PushEvent, _: &mut Self::Context) {
        self.seen.lock().unwrap().push(msg);
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    registry: Addr<RealmRegistry>,
    directory: Directory,
    realm_id: RealmId,
    users: Vec<UserId>,
}

/// An organization with its owner and two members, its actors on a thread of their own.
async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let directory = Directory::default();
    let registry = RealmRegistry::new(
        store.clone(),
        Arc::new(ServerConfig::default()),
        directory.clone(),
        vec![Arbiter::new().handle()],
        agora_actors::reader::start(store.clone(), 1),
    )
    .start();
    let owner = NewUser::human("boss@acme.test", "The Boss", Role::Owner, None);
    let new = NewRealm { subdomain: "acme".into(), name: "Acme".into(), owner };
    let created = registry.send(CreateRealm(new)).await.unwrap().unwrap();
    let realm = directory.get("acme").unwrap();
    let mut users = vec![created.owner.user_id];
    for name in ["hamlet", "othello"] {
        let new = NewUser::human(&format!("{name}@acme.test"), name, Role::Member, None);
        users.push(realm.addr.send(CreateUser(new)).await.unwrap().unwrap().user_id);
    }
    Setup { _dir: dir, store, registry, directory, realm_id: created.realm_id, users }
}

fn ping(user: UserId, status: Status, secs: i64) -> UpdatePresence {
    UpdatePresence { user_id: user, status, query: None, now: secs * 1_000_000 }
}

/// `secs` from a fixed start, in seconds.
const T: i64 = 1_800_000_000;

async fn stats(actor: &Addr<PresenceActor>) -> PresenceStats {
    actor.send(GetPresenceStats).await.unwrap()
}

fn stored(store: &Store, realm: RealmId) -> (Vec<StoredPresence>, i64) {
    let (mut rows, reserved) = load(&store.conn().unwrap(), realm).unwrap();
    rows.sort_by_key(|r| r.update_id);
    (rows, reserved)
}

/// A presence actor of the test's own (on this thread, so paused time drives its timer).
fn own_actor(s: &Setup, realm: &RealmHandle, write_interval: Duration) -> Addr<PresenceActor> {
    let config = PresenceConfig { write_interval, ..PresenceConfig::default() };
    let realm_state = Arc::new(ArcSwap::from(realm.state()));
    PresenceActor::load(s.realm_id, s.store.clone(), config, realm_state, None).unwrap().start()
}

#[actix::test]
async fn changed_rows_are_written_together_once_per_interval_off_the_pings() {
    let s = setup().await;
    let realm = s.directory.get("acme").unwrap();
    tokio::time::pause();
    // Update ids continue from the sequence reserved so far (by the registry's own actor).
    let (_, reserved) = stored(&s.store, s.realm_id);
    let actor = own_actor(&s, &realm, Duration::from_secs(5));
    let (hamlet, othello) = (s.users[1], s.users[2]);

    actor.send(ping(hamlet, Status::Active, T)).await.unwrap().unwrap();
    actor.send(ping(othello, Status::Idle, T + 1)).await.unwrap().unwrap();
    // Within a minute a ping changes nothing: no second row write for hamlet.
    actor.send(ping(hamlet, Status::Active, T + 2)).await.unwrap().unwrap();
    assert_eq!(stats(&actor).await, PresenceStats { rows: 2, dirty: 2, writes: 0, rows_written: 0 });

    // Nothing reaches the database before the interval is over.
    tokio::time::advance(Duration::from_millis(4900)).await;
    assert_eq!(stats(&actor).await.writes, 0);
    assert!(stored(&s.store, s.realm_id).0.is_empty());

    // Then both rows go in one transaction, taken by the timer...
    tokio::time::advance(Duration::from_millis(200)).await;
    for _ in 0..50 {
        if stats(&actor).await.dirty == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    // ...which a flush waits for (it finds nothing left to write).
    assert_eq!(actor.send(FlushPresence { stop: false }).await.unwrap(), 0);
    assert_eq!(stats(&actor).await, PresenceStats { rows: 2, dirty: 0, writes: 1, rows_written: 2 });
    let first = reserved + 1;
    assert_eq!(
        stored(&s.store, s.realm_id).0,
        [
            StoredPresence {
                user_id: hamlet,
                last_active: Some(T * 1_000_000),
                last_connected: Some(T * 1_000_000),
                update_id: first
            },
            StoredPresence {
                user_id: othello,
                last_active: None,
                last_connected: Some((T + 1) * 1_000_000),
                update_id: first + 1
            },
        ]
    );

    // A minute later hamlet's row changes again: one more row, one more transaction.
    actor.send(ping(hamlet, Status::Idle, T + 60)).await.unwrap().unwrap();
    tokio::time::advance(Duration::from_secs(5)).await;
    for _ in 0..50 {
        if stats(&actor).await.dirty == 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(actor.send(FlushPresence { stop: false }).await.unwrap(), 0);
    assert_eq!(stats(&actor).await, PresenceStats { rows: 2, dirty: 0, writes: 2, rows_written: 3 });
    assert_eq!(stored(&s.store, s.realm_id).0[1].last_connected, Some((T + 60) * 1_000_000));
}

#[actix::test]
async fn a_user_coming_online_is_told_to_the_others_but_a_ping_is_not() {
    let s = setup().await;
    let realm = s.directory.get("acme").unwrap();
    let (hamlet, othello) = (s.users[1], s.users[2]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder { seen: Arc::clone(&seen) }.start();
    realm.addr.send(AddListener { user_id: othello, recipient: recorder.recipient() }).await.unwrap();

    let query = Some(PresenceQuery::new(false, Some(-1), None));
    let first = UpdatePresence { query, ..ping(hamlet, Status::Active, T) };
    let reply = realm.presence.send(first).await.unwrap().unwrap().text();
    assert!(
        reply.starts_with(&format!(r#""presences":{{"{hamlet}":{{"active_timestamp":{T},"idle_timestamp":{T}}}}}"#))
    );
    // Pings that change nothing, or only move a time, tell nobody.
    realm.presence.send(ping(hamlet, Status::Active, T + 30)).await.unwrap().unwrap();
    realm.presence.send(ping(hamlet, Status::Idle, T + 90)).await.unwrap().unwrap();
    // Back after 140 s without activity: news again.
    realm.presence.send(ping(hamlet, Status::Active, T + 140)).await.unwrap().unwrap();

    for _ in 0..400 {
        if seen.lock().unwrap().len() >= 2 {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    let seen: Vec<Value> = seen.lock().unwrap().iter().map(|e| Value::Object(e.event.body().clone())).collect();
    let legacy = |timestamp: i64| json!({"website": {"client": "website", "status": "active", "timestamp": timestamp, "pushable": false}});
    let modern = |timestamp: i64, idle: i64| json!({hamlet.to_string(): {"active_timestamp": timestamp, "idle_timestamp": idle}});
    assert_eq!(
        seen,
        [
            json!({"type": "presence", "email": "hamlet@acme.test", "user_id": hamlet, "server_timestamp": T as f64,
                "presence": legacy(T), "presences": modern(T, T)}),
            json!({"type": "presence", "email": "hamlet@acme.test", "user_id": hamlet,
                "server_timestamp": (T + 140) as f64, "presence": legacy(T + 140), "presences": modern(T + 140, T + 140)}),
        ]
    );
}

#[actix::test]
async fn presence_outlives_its_realm_actor_and_a_restart_continues_its_ids() {
    let s = setup().await;
    let first = s.directory.get("acme").unwrap();
    let hamlet = s.users[1];
    first.presence.send(ping(hamlet, Status::Active, T)).await.unwrap().unwrap();

    // The realm actor dies: the next one takes over the same presence actor, unwritten
    // rows and all.
    first.addr.send(StopRealm).await.unwrap();
    for _ in 0..400 {
        if !first.is_alive() {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    let second = s.registry.send(Resolve { subdomain: "acme".into() }).await.unwrap().unwrap().unwrap();
    assert!(second.presence == first.presence);
    let query = Some(PresenceQuery::new(true, None, None));
    let reply = second.presence.send(UpdatePresence { query, ..ping(s.users[2], Status::Idle, T + 1) }).await;
    assert!(reply.unwrap().unwrap().text().contains(&format!(r#""{hamlet}":{{"active_timestamp":{T}"#)));

    // A final flush writes everything and leaves the sequence where it stands...
    assert_eq!(second.presence.send(FlushPresence { stop: true }).await.unwrap(), 2);
    let (rows, reserved) = stored(&s.store, s.realm_id);
    assert_eq!(rows.len(), 2);
    assert_eq!(reserved, rows[1].update_id);
    // ...so the next start continues right after it.
    let realm_state = Arc::new(ArcSwap::from(second.state()));
    let again = PresenceActor::load(s.realm_id, s.store.clone(), PresenceConfig::default(), realm_state, None);
    let again = again.unwrap().start();
    let query = Some(PresenceQuery::new(true, Some(reserved), None));
    let reply =
        again.send(UpdatePresence { query, ..ping(hamlet, Status::Idle, T + 100) }).await.unwrap().unwrap().text();
    assert!(reply.ends_with(&format!(r#""presence_last_update_id":{}"#, reserved + 1)), "{reply}");

    // A start after a crash (no final flush) resumes past every id it may have handed out.
    drop(again);
    let (rows, reserved_ahead) = stored(&s.store, s.realm_id);
    assert!(reserved_ahead > reserved + 1 && rows.len() == 2);
    let realm_state = Arc::new(ArcSwap::from(second.state()));
    let after_crash = PresenceActor::load(s.realm_id, s.store.clone(), PresenceConfig::default(), realm_state, None);
    let after_crash = after_crash.unwrap().start();
    let query = Some(PresenceQuery::new(true, Some(reserved + 1), None));
    let reply = after_crash
        .send(UpdatePresence { query, ..ping(hamlet, Status::Idle, T + 200) })
        .await
        .unwrap()
        .unwrap()
        .text();
    assert!(reply.ends_with(&format!(r#""presence_last_update_id":{}"#, reserved_ahead + 1)), "{reply}");
}
