//! Building and running the server: data directory, database, actors, admin socket and
//! the HTTP server, from typed settings.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::prelude::*;
use actix_web::dev::{Server, ServerHandle};
use actix_web::http::header;
use actix_web::middleware::{from_fn, DefaultHeaders};
use actix_web::{web, App, HttpServer};
use agora_actors::login::Logins;
use agora_actors::reader;
use agora_actors::registry::{Directory, RealmRegistry, Realms, StopAll};
use agora_actors::server_info;
use agora_actors::sessions::Sessions;
use agora_actors::store::Store;
use agora_actors::thumbnailer::Thumbnailer;
use agora_actors::uploads::signing::Signer;
use agora_actors::uploads::Storage;

use crate::admin;
use crate::bootstrap::{self, Bootstrapped};
use crate::datadir;
use crate::http::access;
use crate::http::body::BodyRules;
use crate::http::gate::{ApiLimits, Limits};
use crate::http::hashing::HashPool;
use crate::http::routes;
use crate::http::state::AppState;
use crate::memory::{TrimRule, Trimmer};
use crate::settings::Settings;

/// Any startup failure, reported to the operator.
pub type StartupError = Box<dyn std::error::Error + Send + Sync>;

/// When freed memory goes back to the system. Measured with `examples/scale` (10,000
/// users): the first trim after registers and account creations took 3.7 ms, the next ones
/// 0.13-0.24 ms each, and the server stood at 117 MiB instead of 241 before its long-polls.
const MEMORY_TRIM: TrimRule = TrimRule { every: std::time::Duration::from_secs(10), threshold: 16 << 20 };

/// A built server, bound and ready to run.
pub struct Application {
    server: Server,
    port: u16,
    realms: Realms,
    arbiters: Vec<Arbiter>,
    bootstrapped: Option<Bootstrapped>,
    admin_socket: Option<PathBuf>,
    handle_signals: bool,
    hashing: HashPool,
    /// Sends the push outbox to the bouncer, on a thread of its own.
    push_worker: agora_actors::push::PushWorker,
    /// Posts to outgoing-webhook bots' services, on a thread of its own.
    webhook_worker: agora_actors::outgoing_webhooks::OutgoingWebhookWorker,
    export_worker: agora_actors::transfer::export::worker::ExportWorker,
    /// The metrics endpoint and its port, when `metrics_bind` is set.
    metrics: Option<(Server, u16)>,
    /// The thread of the mail worker.
    mail_arbiter: Arbiter,
    /// Gives freed memory back to the system (see `memory.rs`).
    _trimmer: Trimmer,
    /// Held for the process lifetime: one server per data directory.
    _lock: File,
}

/// Stops a running server.
#[derive(Clone)]
pub struct ShutdownHandle {
    realms: Realms,
    server: ServerHandle,
}

impl ShutdownHandle {
    /// Stops the server. Gracefully: the event queues are saved (their waiting polls are
    /// released) and the realm actors stopped, then in-flight requests are finished.
    /// Otherwise everything stops at once and the queues are lost.
    pub async fn stop(&self, graceful: bool) {
        if graceful {
            if let Err(e) = self.realms.registry.send(StopAll { save_queues: true }).await {
                tracing::error!(error = %e, "could not stop the organizations cleanly");
            }
        }
        self.server.stop(graceful).await;
    }
}

impl Application {
    /// Prepares everything and binds the listener; nothing is served until
    /// [`Application::run`]. Must be called inside an actix system.
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        settings.validate()?;
        datadir::ensure(&settings.data_dir)?;
        let lock = datadir::lock(&settings.data_dir)?.ok_or_else(|| {
            format!("another agora server is using the data directory {}", settings.data_dir.display())
        })?;
        // Bind before changing anything, so a taken port leaves nothing behind.
        let listener = TcpListener::bind(&settings.bind)?;
        let port = listener.local_addr()?.port();
        let metrics_listener = match &settings.metrics_bind {
            Some(bind) => {
                let listener = TcpListener::bind(bind).map_err(|e| format!("metrics_bind {bind}: {e}"))?;
                Some((listener, crate::metrics::recorder()?))
            }
            None => None,
        };
        let store = Store::open_for_server(&settings.data_dir, settings.synchronous)?;
        tracing::info!(synchronous = ?settings.synchronous, "database opened");
        let config = Arc::new(settings.server_config());

        let [http_workers, actor_threads, reader_threads] = settings.thread_counts();
        let arbiters: Vec<Arbiter> = (0..actor_threads).map(|_| Arbiter::new()).collect();
        let directory = Directory::default();
        let readers = reader::start(store.clone(), reader_threads);
        let registry = RealmRegistry::new(
            store.clone(),
            Arc::clone(&config),
            directory.clone(),
            arbiters.iter().map(Arbiter::handle).collect(),
            readers,
        )
        .start();

        let mail_arbiter = start_mail_worker(&settings, &store, &config)?;
        let hashing = HashPool::start(settings.hash_pool)?;
        let bootstrapped = bootstrap::if_empty(&store, &registry, &settings, &hashing).await?;
        let realms = Realms { registry, directory, store: store.clone() };
        let push_worker = agora_actors::push::PushWorker::start(store.clone(), realms.clone(), Arc::clone(&config))?;
        let started = realms.start_scheduled().await?;
        if started > 0 {
            tracing::info!(realms = started, "started organizations with scheduled messages");
        }
        let webhook_worker = agora_actors::outgoing_webhooks::OutgoingWebhookWorker::start(
            store.clone(),
            realms.clone(),
            Arc::clone(&config),
        )?;
        let admin_socket = admin::serve(&settings.data_dir, realms.clone());
        let (rule, cost) = (settings.login_rate_limit, settings.password_hash);
        let logins = hashing.run(move || Logins::new(rule, cost)).await?;
        let api = &settings.api_rate_limit;
        let uploads = settings.uploads;
        let limits = Limits {
            params_body: settings.request_body,
            upload_body: BodyRules {
                max_bytes: (uploads.max_file_upload_size_mib as usize).saturating_mul(1 << 20).saturating_add(1 << 20),
                timeout: uploads.timeout,
                idle_timeout: uploads.idle_timeout,
            },
            api: api.enabled.then(|| ApiLimits::new(api.per_user, api.per_ip)),
            trusted_proxies: settings.trusted_proxies.clone(),
        };

        let storage: Arc<dyn Storage> = settings.upload_store.open(&settings.data_dir, false)?;
        let thumbnailer = Thumbnailer::start(Arc::clone(&storage), store.clone(), realms.clone());
        let export_worker = agora_actors::transfer::export::worker::ExportWorker::start(
            store.clone(),
            Arc::clone(&storage),
            realms.clone(),
            settings.data_dir.clone(),
        )?;
        let store_for_sessions = store.clone();
        let state = web::Data::new(AppState {
            realms: realms.clone(),
            store,
            config,
            logins,
            password_cost: cost,
            hashing: hashing.clone(),
            limits,
            metrics: metrics_listener.is_some(),
            storage,
            signer: Signer::random(),
            thumbnailer,
            sessions: Arc::new(Sessions::new(store_for_sessions)),
            reset_mails: crate::http::pages::reset::reset_mail_limiter(),
        });
        let mut server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .wrap(from_fn(access::log))
                .wrap(DefaultHeaders::new().add((header::SERVER, server_info::SERVER_HEADER)))
                .configure(routes::configure)
                .default_service(web::to(routes::not_found))
        })
        // Responses written in two parts (a file's headers, then its body) would otherwise
        // wait for the client's delayed ACK (40 ms) under Nagle's algorithm.
        .tcp_nodelay(true)
        .listen(listener)?
        .shutdown_timeout(settings.shutdown_timeout.as_secs());
        server = server.workers(http_workers);
        // Signals are ours: event queues must be saved before the HTTP server waits for the
        // requests in flight, long-polls included.
        server = server.disable_signals();
        let metrics = match metrics_listener {
            Some((listener, handle)) => {
                let metrics_port = listener.local_addr()?.port();
                Some((crate::metrics::serve(listener, handle, realms.clone())?, metrics_port))
            }
            None => None,
        };
        let handle_signals = settings.handle_signals;
        let trimmer = Trimmer::start(MEMORY_TRIM)?;
        Ok(Application {
            server: server.run(),
            port,
            realms,
            arbiters,
            bootstrapped,
            admin_socket,
            handle_signals,
            hashing,
            push_worker,
            webhook_worker,
            export_worker,
            metrics,
            mail_arbiter,
            _trimmer: trimmer,
            _lock: lock,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle that stops the server (gracefully or not).
    pub fn handle(&self) -> ShutdownHandle {
        ShutdownHandle { realms: self.realms.clone(), server: self.server.handle() }
    }

    /// The metrics endpoint's port, when it is on.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|(_, port)| *port)
    }

    /// What was created on an empty data directory, if anything.
    pub fn bootstrapped(&self) -> Option<&Bootstrapped> {
        self.bootstrapped.as_ref()
    }

    /// The organizations of this server (for administrative commands, as its socket runs them).
    pub fn realms(&self) -> Realms {
        self.realms.clone()
    }

    /// The pool every password hash of this server runs on.
    pub fn hash_pool(&self) -> HashPool {
        self.hashing.clone()
    }

    /// The admin socket's path, if it could be bound.
    pub fn admin_socket(&self) -> Option<&Path> {
        self.admin_socket.as_deref()
    }

    /// Serves until the server is stopped (by a signal or a handle), then stops the actors.
    pub async fn run(self) -> std::io::Result<()> {
        if self.handle_signals {
            let handle = self.handle();
            actix_web::rt::spawn(async move {
                wait_for_signal().await;
                tracing::info!("stopping: saving event queues, then finishing requests");
                handle.stop(true).await;
            });
        }
        let metrics = self.metrics.map(|(server, _)| {
            let handle = server.handle();
            actix_web::rt::spawn(server);
            handle
        });
        let result = self.server.await;
        if let Some(metrics) = metrics {
            metrics.stop(false).await;
        }
        // After a graceful stop the realms are already stopped; otherwise queues are lost.
        let _ = self.realms.registry.send(StopAll { save_queues: false }).await;
        // Its jobs stay in the outbox for the next start.
        let mut worker = self.push_worker;
        actix_web::rt::task::spawn_blocking(move || worker.stop()).await.ok();
        let mut worker = self.webhook_worker;
        actix_web::rt::task::spawn_blocking(move || worker.stop()).await.ok();
        // An export under way is finished first; one not begun waits for the next start.
        let mut worker = self.export_worker;
        actix_web::rt::task::spawn_blocking(move || worker.stop()).await.ok();
        for arbiter in &self.arbiters {
            arbiter.stop();
        }
        self.mail_arbiter.stop();
        if let Some(path) = &self.admin_socket {
            let _ = std::fs::remove_file(path);
        }
        tracing::info!("server stopped");
        result
    }
}

/// Starts the mail worker on a thread of its own: it drains the outbox (mail left from a
/// previous run first) whenever a realm actor wakes it or a retry falls due.
fn start_mail_worker(
    settings: &Settings,
    store: &Store,
    config: &agora_actors::config::ServerConfig,
) -> Result<Arbiter, StartupError> {
    let worker = settings.mail.worker_settings(&settings.data_dir, &settings.external_host);
    let arbiter = Arbiter::new();
    let (store, waker) = (store.clone(), config.mail.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    arbiter.spawn_fn(move || {
        let _ = tx.send(agora_actors::mail::spawn_worker(store, worker, waker));
    });
    rx.recv().map_err(|e| e.to_string())??;
    Ok(arbiter)
}

/// Resolves on SIGINT or SIGTERM.
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
