//! The group commit, on a realm actor running on the test's own thread: whatever the test
//! queues before it awaits is in the mailbox when the actor next runs, so it is one group.

use std::sync::{Arc, Mutex};

use actix::prelude::*;
use rusqlite::Transaction;

use super::actor::{GroupStats, RealmActor};
use super::group_commit::{Deferred, MAX_GROUP};
use super::state::RealmState;
use super::{Applied, Change};
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::PushEvent;
use crate::ids::UserId;
use crate::realm::actor::AddListener;
use crate::realm::channels::{ChannelOptions, CreateChannel};
use crate::realm::chat::send::{ChannelRef, SendMessage, SendTo};
use crate::realm::model::Role;
use crate::realm::organization::NewRealm;
use crate::realm::users::{CreateUser, NewUser};
use crate::registry::{CreateRealm, Directory, RealmHandle, RealmRegistry};
use crate::store::{self, Store};

/// The actor's group commit counters.
#[derive(Message)]
#[rtype(result = "GroupStats")]
struct Stats;

impl Handler<Stats> for RealmActor {
    type Result = MessageResult<Stats>;

    fn handle(&mut self, _: Stats, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.groups)
    }
}

/// A change that writes (a new API key for `user`), then refuses.
#[derive(Message, Clone)]
#[rtype(result = "ApiResult<()>")]
struct WriteThenRefuse {
    user: UserId,
}

impl Change for WriteThenRefuse {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::users::set_api_key(tx, self.user, "written-by-a-refused-change")?;
        Err(ApiError::bad_request("refused after writing"))
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}

impl Handler<WriteThenRefuse> for RealmActor {
    type Result = Deferred<ApiResult<()>>;

    fn handle(&mut self, msg: WriteThenRefuse, ctx: &mut Self::Context) -> Self::Result {
        self.defer(ctx, msg, |_, msg| Ok(msg))
    }
}

/// Records every event it is handed, in arrival order.
struct Recorder(Arc<Mutex<Vec<PushEvent>>>);

impl Actor for Recorder {
    type Context = Context<Self>;
}

impl Handler<PushEvent> for Recorder {
    type Result = ();

    fn handle(&mut self, msg: PushEvent, _: &mut Self::Context) {
        self.0.lock().unwrap().push(msg);
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    realm: RealmHandle,
    owner: UserId,
    member: UserId,
    /// The member's events.
    seen: Arc<Mutex<Vec<PushEvent>>>,
}

/// An organization whose actor runs on this thread, with a member and a channel both are
/// subscribed to, and a recorder of the member's events.
async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let directory = Directory::default();
    let readers = crate::reader::start(store.clone(), 1);
    // No arbiters: the realm actor runs on the registry's thread, this test's.
    let registry =
        RealmRegistry::new(store.clone(), Arc::new(ServerConfig::default()), directory.clone(), Vec::new(), readers)
            .start();
    let owner = NewUser::human("boss@acme.test", "The Boss", Role::Owner, None);
    let new = NewRealm { subdomain: "acme".into(), name: "Acme".into(), owner };
    let owner = registry.send(CreateRealm(new)).await.unwrap().unwrap().owner.user_id;
    let realm = directory.get("acme").unwrap();
    let new = NewUser::human("member@acme.test", "Member", Role::Member, None);
    let member = realm.addr.send(CreateUser(new)).await.unwrap().unwrap().user_id;
    let channel = CreateChannel {
        acting: owner,
        name: "general".into(),
        description: None,
        subscribers: vec![owner.0, member.0],
        send_new_subscription_messages: false,
        announce: false,
        options: ChannelOptions::default(),
    };
    realm.addr.send(channel).await.unwrap().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder(Arc::clone(&seen)).start();
    realm.addr.send(AddListener { user_id: member, recipient: recorder.recipient() }).await.unwrap();
    Setup { _dir: dir, store, realm, owner, member, seen }
}

fn to_channel(sender: UserId, channel: &str, content: &str) -> SendMessage {
    SendMessage {
        sender,
        to: SendTo::Channel(ChannelRef::Name(channel.into())),
        topic: Some("lunch".into()),
        content: content.into(),
        client: "test".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: None,
    }
}

/// Lets the recorder (on this thread too) take the events handed to it.
async fn settle() {
    for _ in 0..10 {
        actix_rt::task::yield_now().await;
    }
}

#[actix::test]
async fn waiting_changes_share_one_commit_and_keep_their_own_outcomes() {
    let s = setup().await;
    let before = s.realm.addr.send(Stats).await.unwrap();
    let key_before: String = s
        .store
        .conn()
        .unwrap()
        .query_row("SELECT api_key FROM users WHERE id = ?1", [s.member.0], |r| r.get(0))
        .unwrap();

    // Queued without waiting for any reply: all five wait in the mailbox together.
    let a = s.realm.addr.send(to_channel(s.owner, "general", "first"));
    let refused = s.realm.addr.send(WriteThenRefuse { user: s.member });
    let nowhere = s.realm.addr.send(to_channel(s.owner, "nowhere", "lost"));
    let c = s.realm.addr.send(to_channel(s.member, "general", "second"));
    let dave = s.realm.addr.send(CreateUser(NewUser::human("dave@acme.test", "Dave", Role::Member, None)));

    let a = a.await.unwrap().unwrap();
    assert_eq!(refused.await.unwrap().unwrap_err().msg, "refused after writing");
    assert_eq!(nowhere.await.unwrap().unwrap_err().msg, "Channel 'nowhere' does not exist");
    let c = c.await.unwrap().unwrap();
    let dave = dave.await.unwrap().unwrap();

    // One transaction carried the five, ids in arrival order.
    let after = s.realm.addr.send(Stats).await.unwrap();
    assert_eq!((after.commits - before.commits, after.changes - before.changes), (1, 5));
    assert!(a.id < c.id, "{a:?} {c:?}");
    // The refused change's write was rolled back, and only it (the messages of the system
    // bots welcoming the new members aside).
    let conn = s.store.conn().unwrap();
    let key: String = conn.query_row("SELECT api_key FROM users WHERE id = ?1", [s.member.0], |r| r.get(0)).unwrap();
    assert_eq!(key, key_before);
    let stored: Vec<i64> = conn
        .prepare("SELECT id FROM messages WHERE sender_id IN (?1, ?2) ORDER BY id")
        .unwrap()
        .query_map([s.owner.0, s.member.0], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored, [a.id.0, c.id.0]);
    let dave_row: i64 =
        conn.query_row("SELECT count(*) FROM users WHERE id = ?1", [dave.user_id.0], |r| r.get(0)).unwrap();
    assert_eq!(dave_row, 1);

    // The events went out after the commit, in arrival order.
    settle().await;
    let seen = s.seen.lock().unwrap();
    let got: Vec<String> = seen
        .iter()
        .map(|e| match e.event.kind() {
            "message" => format!("message {}", e.event.body()["message"]["content"].as_str().unwrap()),
            kind => format!("{kind} {}", e.event.op().unwrap_or("")),
        })
        .collect();
    let expected =
        ["message first", "message second", "realm_user add", "user_group add_members", "user_group add_members"];
    assert_eq!(got, expected);
}

#[actix::test]
async fn a_full_group_is_committed_at_once_and_the_rest_follows() {
    let s = setup().await;
    let before = s.realm.addr.send(Stats).await.unwrap();
    let sends: Vec<_> = (0..MAX_GROUP + 2)
        .map(|i| s.realm.addr.send(to_channel(s.owner, "general", &format!("message {i}"))))
        .collect();
    let mut ids = Vec::new();
    for send in sends {
        ids.push(send.await.unwrap().unwrap().id);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let after = s.realm.addr.send(Stats).await.unwrap();
    assert_eq!((after.commits - before.commits, after.changes - before.changes), (2, MAX_GROUP as u64 + 2));
    settle().await;
    let contents: Vec<String> = s
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.event.kind() == "message")
        .map(|e| e.event.body()["message"]["content"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (0..MAX_GROUP + 2).map(|i| format!("message {i}")).collect();
    assert_eq!(contents, expected);
}

#[actix::test]
async fn a_change_alone_is_committed_on_its_own() {
    let s = setup().await;
    let before = s.realm.addr.send(Stats).await.unwrap();
    s.realm.addr.send(to_channel(s.owner, "general", "alone")).await.unwrap().unwrap();
    s.realm.addr.send(to_channel(s.owner, "general", "alone again")).await.unwrap().unwrap();
    let after = s.realm.addr.send(Stats).await.unwrap();
    assert_eq!((after.commits - before.commits, after.changes - before.changes), (2, 2));
}

/// A change whose write goes through but whose transaction cannot commit: a row breaking a
/// foreign key, checked at the commit.
#[derive(Message, Clone)]
#[rtype(result = "ApiResult<()>")]
struct BreakTheCommit;

impl Change for BreakTheCommit {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        tx.execute_batch(
            "PRAGMA defer_foreign_keys = ON; INSERT INTO user_group_members (group_id, user_id) VALUES (1, 999999);",
        )
        .map_err(|e| ApiError::from(store::StoreError::from(e)))
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(Vec::new())
    }
}

impl Handler<BreakTheCommit> for RealmActor {
    type Result = Deferred<ApiResult<()>>;

    fn handle(&mut self, msg: BreakTheCommit, ctx: &mut Self::Context) -> Self::Result {
        self.defer(ctx, msg, |_, msg| Ok(msg))
    }
}

#[actix::test]
async fn when_the_group_cannot_commit_each_change_is_committed_alone() {
    let s = setup().await;
    let before = s.realm.addr.send(Stats).await.unwrap();
    let a = s.realm.addr.send(to_channel(s.owner, "general", "first"));
    let broken = s.realm.addr.send(BreakTheCommit);
    let c = s.realm.addr.send(to_channel(s.owner, "general", "second"));
    let a = a.await.unwrap().unwrap();
    assert_eq!(broken.await.unwrap().unwrap_err().status, 500);
    let c = c.await.unwrap().unwrap();
    assert!(a.id < c.id);
    // The group's commit failed; then the two sends went through on their own, the broken
    // change alone failed.
    let after = s.realm.addr.send(Stats).await.unwrap();
    assert_eq!((after.commits - before.commits, after.changes - before.changes), (2, 2));
    let conn = s.store.conn().unwrap();
    let stored: Vec<i64> = conn
        .prepare("SELECT id FROM messages WHERE sender_id IN (?1, ?2) ORDER BY id")
        .unwrap()
        .query_map([s.owner.0, s.member.0], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored, [a.id.0, c.id.0]);
    // Each message's event went out once, after its own commit.
    settle().await;
    let contents: Vec<String> = s
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|e| e.event.body()["message"]["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(contents, ["first", "second"]);
}
