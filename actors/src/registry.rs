//! [`RealmRegistry`]: the supervisor that knows every organization.
//!
//! It starts a realm actor on first use of its subdomain, loading the state from SQLite,
//! and starts a fresh one when the previous actor has died. HTTP workers read the shared
//! [`Directory`] directly and only message the registry on a miss, so a request costs no
//! registry round trip once its realm is running.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, PoisonError, RwLock};

use actix::prelude::*;
use arc_swap::ArcSwap;

use crate::auth::AuthSnapshot;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::Event;
use crate::ids::RealmId;
use crate::mailbox::RealmAddr;
use crate::presence::{FlushPresence, PresenceActor, PresenceState, Rebind};
use crate::queue::{QueueActor, QueueEntry, QueueIndex};
use crate::reader::{HistoryRead, Read, Reader, Readers};
use crate::realm::actor::MAILBOX_CAPACITY;
use crate::realm::actor::{SaveQueues, StopRealm};
use crate::realm::organization::{create_realm, CreatedRealm, NewRealm};
use crate::realm::{RealmActor, RealmState};
use crate::server_info;
use crate::store::{self, Store};

/// A running organization: its actor and the authentication index and state snapshot it
/// publishes.
#[derive(Clone)]
pub struct RealmHandle {
    pub id: RealmId,
    /// The actor's address (counting the requests in flight).
    pub addr: RealmAddr,
    auth: Arc<ArcSwap<AuthSnapshot>>,
    /// The state as of the realm actor's last commit.
    state: Arc<ArcSwap<RealmState>>,
    readers: Readers,
    /// The realm's live event queues (read by pollers without a hop through the actor).
    pub queues: Arc<QueueIndex>,
    /// The realm's presence actor (pings go straight to it, not through the realm actor).
    pub presence: Addr<PresenceActor>,
}

impl RealmHandle {
    /// The latest authentication index (lock-free).
    pub fn auth(&self) -> Arc<AuthSnapshot> {
        self.auth.load_full()
    }

    /// The state as of the realm actor's last commit (lock-free).
    pub fn state(&self) -> Arc<RealmState> {
        self.state.load_full()
    }

    /// Sends a history read to the reader threads with the latest state snapshot.
    pub fn read<Q: HistoryRead>(&self, query: Q) -> actix::dev::Request<Reader, Read<Q>> {
        self.readers.send(Read { state: Arc::clone(&self.state), query })
    }

    /// Whether the actor is still running.
    pub fn is_alive(&self) -> bool {
        self.addr.connected()
    }
}

/// Running realms by subdomain, and subdomains known to name no realm, shared between the
/// registry (the only writer) and the HTTP workers.
#[derive(Clone, Default)]
pub struct Directory {
    realms: Arc<RwLock<HashMap<String, RealmHandle>>>,
    /// Answered without asking the registry, so requests for random hosts cost no database
    /// query and no registry round trip. Every realm is created through the registry, which
    /// clears its subdomain here.
    missing: Arc<RwLock<HashSet<String>>>,
}

/// Unknown subdomains remembered at most; past it the set starts over.
const MAX_REMEMBERED_MISSING: usize = 10_000;

impl Directory {
    /// The running realm of a subdomain, if its actor is alive.
    pub fn get(&self, subdomain: &str) -> Option<RealmHandle> {
        let map = self.realms.read().unwrap_or_else(PoisonError::into_inner);
        map.get(subdomain).filter(|h| h.is_alive()).cloned()
    }

    /// Whether the subdomain is known to name no realm.
    pub fn is_missing(&self, subdomain: &str) -> bool {
        self.missing.read().unwrap_or_else(PoisonError::into_inner).contains(subdomain)
    }

    fn remember_missing(&self, subdomain: &str) {
        let mut set = self.missing.write().unwrap_or_else(PoisonError::into_inner);
        if set.len() >= MAX_REMEMBERED_MISSING {
            set.clear();
        }
        set.insert(subdomain.to_owned());
    }

    /// Forgets that a subdomain had no organization (one was created or imported since).
    pub fn forget_missing(&self, subdomain: &str) {
        self.missing.write().unwrap_or_else(PoisonError::into_inner).remove(subdomain);
    }

    fn insert(&self, subdomain: &str, handle: RealmHandle) {
        let mut map = self.realms.write().unwrap_or_else(PoisonError::into_inner);
        map.insert(subdomain.to_owned(), handle);
    }

    /// Every running realm.
    pub fn running(&self) -> Vec<RealmHandle> {
        self.all()
    }

    fn all(&self) -> Vec<RealmHandle> {
        self.realms.read().unwrap_or_else(PoisonError::into_inner).values().cloned().collect()
    }

    fn drain(&self) -> Vec<RealmHandle> {
        let mut map = self.realms.write().unwrap_or_else(PoisonError::into_inner);
        map.drain().map(|(_, h)| h).collect()
    }
}

/// How everything outside the actors reaches an organization: the shared directory when
/// its actor is running (no round trip), the registry otherwise (which loads or restarts
/// it); and the database they share (for administrative reads and backups).
#[derive(Clone)]
pub struct Realms {
    pub registry: Addr<RealmRegistry>,
    pub directory: Directory,
    pub store: Store,
}

impl Realms {
    /// The running realm of a subdomain; `None` if there is no such realm.
    pub async fn find(&self, subdomain: &str) -> ApiResult<Option<RealmHandle>> {
        if let Some(handle) = self.directory.get(subdomain) {
            return Ok(Some(handle));
        }
        if self.directory.is_missing(subdomain) {
            return Ok(None);
        }
        self.registry.send(Resolve { subdomain: subdomain.to_owned() }).await.map_err(|e| {
            tracing::error!(error = %e, "realm registry unavailable");
            ApiError::internal()
        })?
    }

    /// The running realm of the organization `id`, as the workers' jobs name it; `None` if
    /// there is no such organization.
    pub async fn find_by_id(&self, id: RealmId) -> ApiResult<Option<RealmHandle>> {
        let realm = store::realms::by_id(&*self.store.conn()?, id)?;
        match realm {
            Some(realm) => self.find(&realm.subdomain).await,
            None => Ok(None),
        }
    }
}

impl Realms {
    /// Starts every organization with scheduled messages or reminders still to send, so
    /// that they go out (those that came due while the server was down at once) without
    /// waiting for a request.
    pub async fn start_scheduled(&self) -> ApiResult<usize> {
        let subdomains = store::scheduled::subdomains_with_pending(&*self.store.conn()?)?;
        for subdomain in &subdomains {
            self.find(subdomain).await?;
        }
        Ok(subdomains.len())
    }
}

/// The supervisor actor.
pub struct RealmRegistry {
    store: Store,
    config: Arc<ServerConfig>,
    directory: Directory,
    /// Threads realm actors run on, assigned round-robin; empty means the registry's own.
    arbiters: Vec<ArbiterHandle>,
    /// The history readers every realm sends its reads to.
    readers: Readers,
    next_arbiter: usize,
    /// Set once the server has begun to stop.
    stopping: bool,
    /// Each started realm's presence actor and its published state. A presence actor
    /// outlives a realm actor that dies: the fresh realm actor takes it over, with the
    /// presence not yet written.
    presence: HashMap<RealmId, (Addr<PresenceActor>, Arc<ArcSwap<PresenceState>>)>,
}

/// Messages a presence actor queues before senders have to wait.
const PRESENCE_MAILBOX_CAPACITY: usize = 1024;

impl RealmRegistry {
    /// A registry over `store`. Realm actors run on `arbiters` (round-robin), or on the
    /// registry's own thread when none are given.
    pub fn new(
        store: Store,
        config: Arc<ServerConfig>,
        directory: Directory,
        arbiters: Vec<ArbiterHandle>,
        readers: Readers,
    ) -> Self {
        RealmRegistry {
            store,
            config,
            directory,
            arbiters,
            readers,
            next_arbiter: 0,
            stopping: false,
            presence: HashMap::new(),
        }
    }

    /// Runs `f` on the next actor thread (round-robin), or on the registry's own.
    fn on_next_arbiter(&mut self, f: impl FnOnce() + Send + 'static) {
        if self.arbiters.is_empty() {
            f();
        } else {
            let arbiter = &self.arbiters[self.next_arbiter % self.arbiters.len()];
            self.next_arbiter = self.next_arbiter.wrapping_add(1);
            arbiter.spawn_fn(f);
        }
    }

    /// The realm's presence actor: the running one (handed to the new realm actor), or one
    /// loaded from the database and started.
    fn presence_for(
        &mut self,
        id: RealmId,
        published: &Arc<ArcSwap<RealmState>>,
        realm: &Addr<RealmActor>,
    ) -> ApiResult<(Addr<PresenceActor>, Arc<ArcSwap<PresenceState>>)> {
        if let Some((addr, state)) = self.presence.get(&id).filter(|(addr, _)| addr.connected()) {
            addr.do_send(Rebind { realm_state: Arc::clone(published), realm: realm.clone().recipient() });
            return Ok((addr.clone(), Arc::clone(state)));
        }
        let config = self.config.presence;
        let actor = PresenceActor::load(
            id,
            self.store.clone(),
            config,
            Arc::clone(published),
            Some(realm.clone().recipient()),
        )?;
        let state = actor.published();
        let (tx, rx) = actix::dev::channel::channel(PRESENCE_MAILBOX_CAPACITY);
        let addr = Addr::new(tx);
        self.on_next_arbiter(move || {
            actix::spawn(Context::with_receiver(rx).into_future(actor));
        });
        self.presence.insert(id, (addr.clone(), Arc::clone(&state)));
        Ok((addr, state))
    }

    /// Starts an actor for a loaded state, with the event queues saved at the last
    /// shutdown and its presence actor, and records it.
    fn spawn(&mut self, state: RealmState) -> ApiResult<RealmHandle> {
        let id = state.realm().id;
        let subdomain = state.realm().subdomain.clone();
        let auth = Arc::new(ArcSwap::from_pointee(AuthSnapshot::of(&state)));
        let published = Arc::new(ArcSwap::from_pointee(state.clone()));
        let queues = Arc::new(QueueIndex::default());
        // The mailboxes are made here, with their final capacity, so that no message sent
        // before the actors run sees a smaller bound, and restored queues are in the index
        // before anyone can look for them.
        let (tx, rx) = actix::dev::channel::channel(MAILBOX_CAPACITY);
        let addr = Addr::new(tx);
        let (presence, presence_state) = self.presence_for(id, &published, &addr)?;
        let mut actor = RealmActor::new(
            state,
            self.store.clone(),
            Arc::clone(&self.config),
            Arc::clone(&auth),
            Arc::clone(&published),
            Arc::clone(&queues),
            self.readers.clone(),
            presence_state,
            Some(presence.clone().recipient()),
        );
        let restored = self.restore_queues(id, &mut actor, &addr);
        let run = move || {
            actix::spawn(Context::with_receiver(rx).into_future(actor));
            for (queue, rx) in restored {
                actix::spawn(Context::with_receiver(rx).into_future(queue));
            }
        };
        self.on_next_arbiter(run);
        // Its timer for the scheduled messages and reminders already pending (queued: the
        // actor handles it first, before any request).
        addr.do_send(crate::realm::scheduled::ArmScheduler);
        // And for the retention policy.
        addr.do_send(crate::realm::retention::StartRetention);
        let handle = RealmHandle {
            id,
            addr: RealmAddr::new(addr),
            auth,
            state: published,
            readers: self.readers.clone(),
            queues,
            presence,
        };
        self.directory.insert(&subdomain, handle.clone());
        tracing::info!(realm.id = %id, "started realm actor");
        Ok(handle)
    }

    /// The realm's saved queues, taken out of the database, as actors still to be started
    /// (already adopted by the realm actor). Queues that expired meanwhile are dropped, and
    /// each restored queue gets a `restart` event, as Zulip's do. The same for a restart and
    /// for an organization handed over by another node (`queue::persist`).
    fn restore_queues(
        &self,
        realm_id: RealmId,
        actor: &mut RealmActor,
        realm: &Addr<RealmActor>,
    ) -> Vec<(QueueActor, actix::dev::channel::AddressReceiver<QueueActor>)> {
        let saved = crate::queue::persist::take(&self.store, realm_id);
        let config = self.config.queues;
        // One notice, shared by every restored queue.
        let restart = Arc::new(Event::new(
            "restart",
            serde_json::json!({
                "zulip_version": server_info::zulip_version(),
                "zulip_merge_base": server_info::ZULIP_MERGE_BASE,
                "zulip_feature_level": server_info::FEATURE_LEVEL,
                "server_generation": self.config.server_generation,
            }),
        ));
        let mut restored = Vec::with_capacity(saved.len());
        for queue in saved {
            let (user_id, all_public_streams) = (queue.user_id, queue.spec.all_public_streams);
            let mut queue =
                QueueActor::restore(queue, config, Arc::clone(actor.queue_index()), Some(realm.clone().recipient()));
            queue.push_local(Arc::clone(&restart));
            let (tx, rx) = actix::dev::channel::channel(16);
            let entry = QueueEntry { user_id, addr: Addr::new(tx), queue: Arc::clone(queue.shared()) };
            actor.adopt_queue(entry, all_public_streams);
            restored.push((queue, rx));
        }
        restored
    }
}

impl Actor for RealmRegistry {
    type Context = Context<Self>;
}

/// Finds (starting if needed) the realm of a subdomain; `None` if there is no such realm.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Option<RealmHandle>>")]
pub struct Resolve {
    pub subdomain: String,
}

impl Handler<Resolve> for RealmRegistry {
    type Result = ApiResult<Option<RealmHandle>>;

    fn handle(&mut self, msg: Resolve, _: &mut Self::Context) -> Self::Result {
        if let Some(handle) = self.directory.get(&msg.subdomain) {
            return Ok(Some(handle));
        }
        if self.stopping {
            return Err(ApiError::unavailable());
        }
        let conn = self.store.conn()?;
        match RealmState::load_by_subdomain(&conn, &msg.subdomain)? {
            Some(state) => Ok(Some(self.spawn(state)?)),
            None => {
                self.directory.remember_missing(&msg.subdomain);
                Ok(None)
            }
        }
    }
}

/// Creates an organization and its first owner, and starts its actor.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<CreatedRealm>")]
pub struct CreateRealm(pub NewRealm);

impl Handler<CreateRealm> for RealmRegistry {
    type Result = ApiResult<CreatedRealm>;

    fn handle(&mut self, msg: CreateRealm, _: &mut Self::Context) -> Self::Result {
        let (created, state) = create_realm(&self.store, &self.config, msg.0, crate::clock::now())?;
        self.directory.forget_missing(&state.realm().subdomain);
        self.spawn(state)?;
        Ok(created)
    }
}

/// Stops every realm actor (at shutdown), after every presence actor has written its
/// changes and stopped; with `save_queues`, each realm actor first saves its event queues
/// (and stops itself once they are saved).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopAll {
    pub save_queues: bool,
}

impl Handler<StopAll> for RealmRegistry {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, msg: StopAll, _: &mut Self::Context) -> Self::Result {
        // From now on no realm starts, so none can take saved queues out again.
        self.stopping = true;
        let (directory, store) = (self.directory.clone(), self.store.clone());
        let presence: Vec<Addr<PresenceActor>> = self.presence.drain().map(|(_, (addr, _))| addr).collect();
        Box::pin(async move {
            // Presence not yet written is written now; the presence actors then stop.
            for addr in presence {
                let _ = addr.send(FlushPresence { stop: true }).await;
            }
            let mut saved = 0;
            if msg.save_queues {
                let started = std::time::Instant::now();
                for handle in directory.all() {
                    saved += handle.addr.send(SaveQueues).await.unwrap_or(0);
                }
                // What the saves wrote goes into the database file now, and the log is cut
                // back to nothing, so that neither the next start nor the disk carries it.
                let truncated = tokio::task::spawn_blocking(move || store.checkpoint_truncate()).await;
                if let Ok(Err(e)) = truncated {
                    tracing::warn!(error = %e, "could not checkpoint the database after saving the queues");
                }
                if saved > 0 {
                    let ms = started.elapsed().as_millis() as u64;
                    tracing::info!(queues = saved, ms, "saved the event queues of every organization");
                }
            }
            for handle in directory.drain() {
                handle.addr.do_send(StopRealm);
            }
        })
    }
}
