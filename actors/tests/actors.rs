//! Actor-level tests: a realm actor and the registry with mock mailboxes (a recording
//! `Recipient<PushEvent>`) instead of client queues.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::prelude::*;
use agora_actors::config::ServerConfig;
use agora_actors::events::PushEvent;
use agora_actors::ids::UserId;
use agora_actors::realm::actor::{AddListener, StopRealm};
use agora_actors::realm::model::Role;
use agora_actors::realm::organization::NewRealm;
use agora_actors::realm::users::GetOwnProfile;
use agora_actors::realm::users::NewUser;
use agora_actors::realm::users::{CreateUser, RegenerateApiKey};
use agora_actors::registry::{CreateRealm, Directory, RealmRegistry, Resolve};
use agora_actors::store::Store;
use serde_json::Value;

/// Records every event it is handed, in arrival order.
#[derive(Default)]
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
    registry: Addr<RealmRegistry>,
    directory: Directory,
    owner: UserId,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let directory = Directory::default();
    let registry = RealmRegistry::new(
        store.clone(),
        Arc::new(ServerConfig::default()),
        directory.clone(),
        vec![Arbiter::new().handle()],
        agora_actors::reader::start(store, 1),
    )
    .start();
    let created = registry
        .send(CreateRealm(NewRealm {
            subdomain: "acme".into(),
            name: "Acme".into(),
            owner: NewUser::human("boss@acme.test", "The Boss", Role::Owner, None),
        }))
        .await
        .unwrap()
        .unwrap();
    Setup { _dir: dir, registry, directory, owner: created.owner.user_id }
}

async fn wait_for(seen: &Arc<Mutex<Vec<PushEvent>>>, n: usize) {
    for _ in 0..400 {
        if seen.lock().unwrap().len() >= n {
            return;
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("only {} of {n} events arrived", seen.lock().unwrap().len());
}

#[actix::test]
async fn the_realm_actor_applies_mutations_in_arrival_order() {
    let s = setup().await;
    let realm = s.directory.get("acme").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder { seen: Arc::clone(&seen) }.start();
    realm.addr.send(AddListener { user_id: s.owner, recipient: recorder.recipient() }).await.unwrap();

    // Queue 30 creations without waiting for any reply: the mailbox alone orders them.
    // (Within the mailbox's capacity a message is queued when it is sent.)
    const { assert!(30 < agora_actors::realm::actor::MAILBOX_CAPACITY) };
    let pending: Vec<_> = (0..30)
        .map(|i| {
            let new = NewUser::human(&format!("u{i:02}@acme.test"), &format!("User {i:02}"), Role::Member, None);
            realm.addr.send(CreateUser(new))
        })
        .collect();
    let mut ids = Vec::new();
    for reply in pending {
        ids.push(reply.await.unwrap().unwrap().user_id);
    }
    // Ids were assigned in the order the messages were sent.
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    // The owner's listener saw one realm_user add per creation, in the same order, each
    // followed by its two system-group events.
    wait_for(&seen, 90).await;
    let seen = seen.lock().unwrap();
    let adds: Vec<(i64, String)> = seen
        .iter()
        .filter(|e| e.event.kind() == "realm_user")
        .map(|e| {
            let person = &e.event.body()["person"];
            (person["user_id"].as_i64().unwrap(), person["full_name"].as_str().unwrap().to_owned())
        })
        .collect();
    let expected: Vec<(i64, String)> = ids.iter().enumerate().map(|(i, id)| (id.0, format!("User {i:02}"))).collect();
    assert_eq!(adds, expected);
    assert!(seen.iter().all(|e| e.user_id == s.owner));
    let kinds: Vec<&str> = seen.iter().take(3).map(|e| e.event.kind()).collect();
    assert_eq!(kinds, ["realm_user", "user_group", "user_group"]);
}

#[actix::test]
async fn a_rejected_mutation_changes_nothing_and_sends_nothing() {
    let s = setup().await;
    let realm = s.directory.get("acme").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder { seen: Arc::clone(&seen) }.start();
    realm.addr.send(AddListener { user_id: s.owner, recipient: recorder.recipient() }).await.unwrap();
    let dup = NewUser::human("BOSS@acme.test", "Impostor", Role::Member, None);
    let err = realm.addr.send(CreateUser(dup)).await.unwrap().unwrap_err();
    assert_eq!(err.msg, "Email is already in use.");
    // A later successful mutation's events are the first the listener gets.
    let ok = NewUser::human("next@acme.test", "Next One", Role::Member, None);
    realm.addr.send(CreateUser(ok)).await.unwrap().unwrap();
    wait_for(&seen, 1).await;
    assert_eq!(seen.lock().unwrap()[0].event.body()["person"]["full_name"], Value::from("Next One"));
}

#[actix::test]
async fn the_registry_starts_a_fresh_realm_actor_after_one_died() {
    let s = setup().await;
    let first = s.directory.get("acme").unwrap();
    let created = first
        .addr
        .send(CreateUser(NewUser::human("kept@acme.test", "Kept User", Role::Member, None)))
        .await
        .unwrap()
        .unwrap();
    let new_key = first.addr.send(RegenerateApiKey { user_id: created.user_id }).await.unwrap().unwrap();

    first.addr.send(StopRealm).await.unwrap();
    for _ in 0..400 {
        if !first.is_alive() {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!first.is_alive());
    // A dead actor is not handed out...
    assert!(s.directory.get("acme").is_none());
    assert!(first.addr.send(GetOwnProfile { user_id: s.owner }).await.is_err());

    // ...and the registry starts a new one with the committed state.
    let second = s.registry.send(Resolve { subdomain: "acme".into() }).await.unwrap().unwrap().unwrap();
    assert!(second.is_alive());
    assert_eq!(second.id, first.id);
    let profile = second.addr.send(GetOwnProfile { user_id: created.user_id }).await.unwrap().unwrap();
    assert_eq!(profile["full_name"], Value::from("Kept User"));
    let auth = second.auth();
    assert_eq!(auth.check_api_key("kept@acme.test", &new_key).unwrap().user_id, created.user_id);
    assert!(s.directory.get("acme").is_some());
}

#[actix::test]
async fn unknown_subdomains_resolve_to_nothing() {
    let s = setup().await;
    assert!(s.registry.send(Resolve { subdomain: "nope".into() }).await.unwrap().unwrap().is_none());
}
