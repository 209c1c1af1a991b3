//! Administrative commands (`agora create-realm`, `agora create-user`, `agora backup`, ...).
//!
//! When a server is running on the data directory (it holds the directory's lock), the
//! command goes through the server's Unix socket in the data directory, so the realm actor
//! stays the only writer of its realm and its memory never goes stale. Otherwise the
//! command opens the database itself and runs the same operations. The socket is private
//! to the server's user (mode 0600 in a 0700 directory).
//!
//! Protocol: one JSON request line, one JSON reply line.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use agora_actors::clock;
use agora_actors::config::ServerConfig;
use agora_actors::ids::RealmId;
use agora_actors::realm::admin::{self, AdminOp, Administer, Offline};
use agora_actors::realm::model::Role;
use agora_actors::realm::onboarding::create_member;
use agora_actors::realm::organization::{create_realm, NewRealm};
use agora_actors::realm::users::{CreateUser, CreatedUser, NewUser};
use agora_actors::realm::RealmState;
use agora_actors::registry::{CreateRealm, Realms};
use agora_actors::store::{Store, Synchronous};
use agora_actors::ApiError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::datadir;

mod report;

/// The socket's file name in the data directory.
pub const SOCKET_FILE: &str = "agora.sock";

/// A command, with any password already hashed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AdminRequest {
    CreateRealm {
        subdomain: String,
        name: String,
        owner_email: String,
        owner_name: String,
        owner_password_hash: Option<String>,
    },
    CreateUser {
        subdomain: String,
        email: String,
        full_name: String,
        role: i64,
        password_hash: Option<String>,
        can_create_users: bool,
    },
    /// `agora backup`: the archive is written by the process holding the data directory.
    Backup {
        /// Absolute path of the archive to write.
        to: PathBuf,
    },
    /// `agora list-realms`.
    ListRealms,
    /// `agora stats`: queues, mailboxes, presence, database and uploads.
    Stats,
    /// A command on one organization, run by its actor when a server runs.
    Realm { subdomain: String, command: AdminOp },
    /// `agora import` wrote an organization into the database of a running server: the
    /// server stops remembering its subdomain as one without an organization.
    RealmImported { subdomain: String },
}

/// A command's outcome: the JSON object to print, or the error.
pub type AdminResult = Result<Value, ApiError>;

#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    Ok(Value),
    Err { msg: String, status: u16 },
}

fn mailbox(e: actix::MailboxError) -> ApiError {
    tracing::error!(error = %e, "admin command: actor unavailable");
    ApiError::internal()
}

fn unknown_realm(subdomain: &str) -> ApiError {
    ApiError::bad_request(format!("No organization with subdomain {subdomain:?}"))
}

/// A request decoded into the domain's terms.
enum Command {
    CreateRealm(NewRealm),
    CreateUser { subdomain: String, new: NewUser },
    Backup { to: PathBuf },
    ListRealms,
    Stats,
    Realm { subdomain: String, command: AdminOp },
    RealmImported { subdomain: String },
}

/// What a command prints: the organization, the account and its API key.
fn printed(realm_id: RealmId, user: &CreatedUser) -> Value {
    json!({"realm_id": realm_id, "user_id": user.user_id, "api_key": user.api_key})
}

impl AdminRequest {
    fn command(self) -> Result<Command, ApiError> {
        Ok(match self {
            AdminRequest::CreateRealm { subdomain, name, owner_email, owner_name, owner_password_hash } => {
                let owner = NewUser::human(&owner_email, &owner_name, Role::Owner, owner_password_hash);
                Command::CreateRealm(NewRealm { subdomain, name, owner })
            }
            AdminRequest::CreateUser { subdomain, email, full_name, role, password_hash, can_create_users } => {
                let role = Role::from_i64(role).ok_or_else(|| ApiError::bad_request(format!("Invalid role {role}")))?;
                let new = NewUser { can_create_users, ..NewUser::human(&email, &full_name, role, password_hash) };
                Command::CreateUser { subdomain, new }
            }
            AdminRequest::Backup { to } => Command::Backup { to },
            AdminRequest::ListRealms => Command::ListRealms,
            AdminRequest::Stats => Command::Stats,
            AdminRequest::Realm { subdomain, command } => Command::Realm { subdomain, command },
            AdminRequest::RealmImported { subdomain } => Command::RealmImported { subdomain },
        })
    }

    /// Runs the command through the running server's actors.
    pub async fn run_in_server(self, realms: &Realms) -> AdminResult {
        match self.command()? {
            Command::CreateRealm(new) => {
                let created = realms.registry.send(CreateRealm(new)).await.map_err(mailbox)??;
                Ok(printed(created.realm_id, &created.owner))
            }
            Command::CreateUser { subdomain, new } => {
                let realm = realms.find(&subdomain).await?.ok_or_else(|| unknown_realm(&subdomain))?;
                let created = realm.addr.send(CreateUser(new)).await.map_err(mailbox)??;
                Ok(printed(realm.id, &created))
            }
            Command::Backup { to } => {
                let store = realms.store.clone();
                blocking(move || backup(&store, &to)).await
            }
            Command::ListRealms => {
                let store = realms.store.clone();
                let running: Vec<RealmId> = realms.directory.running().iter().map(|h| h.id).collect();
                blocking(move || report::realms(&store, &running)).await
            }
            Command::Stats => {
                let figures = agora_actors::stats::running(realms).await;
                let store = realms.store.clone();
                blocking(move || report::stats(&store, Some(&figures))).await
            }
            Command::Realm { subdomain, command } => {
                let realm = realms.find(&subdomain).await?.ok_or_else(|| unknown_realm(&subdomain))?;
                realm.addr.send(Administer(command)).await.map_err(mailbox)?
            }
            Command::RealmImported { subdomain } => {
                realms.directory.forget_missing(&subdomain);
                Ok(serde_json::json!({}))
            }
        }
    }

    /// Runs the command on the database directly (no server is running).
    pub fn run_offline(self, store: &Store, config: &ServerConfig) -> AdminResult {
        match self.command()? {
            Command::CreateRealm(new) => {
                let (created, _) = create_realm(store, config, new, clock::now())?;
                Ok(printed(created.realm_id, &created.owner))
            }
            Command::CreateUser { subdomain, new } => {
                let mut state = RealmState::load_by_subdomain(&*store.conn()?, &subdomain)?
                    .ok_or_else(|| unknown_realm(&subdomain))?;
                let created = create_member(&mut state, store, config, new, clock::now())?;
                Ok(printed(state.realm().id, &created))
            }
            Command::Backup { to } => backup(store, &to),
            Command::ListRealms => report::realms(store, &[]),
            Command::Stats => report::stats(store, None),
            Command::Realm { subdomain, command } => {
                let state = RealmState::load_by_subdomain(&*store.conn()?, &subdomain)?
                    .ok_or_else(|| unknown_realm(&subdomain))?;
                admin::execute(&mut Offline { state, store, config }, command, clock::now())
            }
            Command::RealmImported { .. } => Ok(serde_json::json!({})),
        }
    }

    /// Sends the command to the server holding `data_dir`.
    pub fn send_to_server(&self, data_dir: &Path) -> Result<AdminResult, String> {
        self.send(&data_dir.join(SOCKET_FILE))
    }

    /// Runs the command against `data_dir`: through its server if one holds the lock,
    /// otherwise directly (holding the lock meanwhile, so no server starts half-way).
    pub fn run(self, data_dir: &Path, config: &ServerConfig) -> Result<AdminResult, String> {
        datadir::ensure(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
        match datadir::lock(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))? {
            Some(_lock) => {
                // A handful of transactions: each is made durable at once, whatever the
                // server's setting.
                let store = Store::open_with(data_dir, Synchronous::Full)
                    .map_err(|e| format!("cannot open the database: {e}"))?;
                Ok(self.run_offline(&store, config))
            }
            None => self.send(&data_dir.join(SOCKET_FILE)),
        }
    }

    /// Sends the command to a running server's socket.
    fn send(&self, socket: &Path) -> Result<AdminResult, String> {
        let fail = |e: std::io::Error| format!("a server holds {} but its admin socket failed: {e}", socket.display());
        let mut stream = UnixStream::connect(socket).map_err(fail)?;
        let mut line = serde_json::to_string(self).map_err(|e| e.to_string())?;
        line.push('\n');
        stream.write_all(line.as_bytes()).map_err(fail)?;
        let mut reply = String::new();
        BufReader::new(stream).read_line(&mut reply).map_err(fail)?;
        match serde_json::from_str::<Reply>(&reply).map_err(|e| format!("bad reply from the server: {e}"))? {
            Reply::Ok(value) => Ok(Ok(value)),
            Reply::Err { msg, status } => Ok(Err(ApiError { status, ..ApiError::bad_request(msg) })),
        }
    }
}

/// Runs blocking work (SQLite, files) off the async threads.
async fn blocking(f: impl FnOnce() -> AdminResult + Send + 'static) -> AdminResult {
    actix_web::rt::task::spawn_blocking(f).await.map_err(|e| {
        tracing::error!(error = %e, "admin command: blocking task failed");
        ApiError::internal()
    })?
}

/// Writes the backup archive of the database `store` holds and of its directory's uploads.
fn backup(store: &Store, to: &Path) -> AdminResult {
    let data_dir = store.path().parent().unwrap_or(Path::new("."));
    crate::backup::create(store, data_dir, to).map_err(ApiError::bad_request)
}

/// Listens on the data directory's admin socket; `None` (with a warning) if it cannot.
pub fn serve(data_dir: &Path, realms: Realms) -> Option<PathBuf> {
    let path = data_dir.join(SOCKET_FILE);
    // We hold the data directory's lock, so a socket file left here is stale.
    let _ = std::fs::remove_file(&path);
    let listener = match tokio::net::UnixListener::bind(&path) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "admin socket unavailable; administration commands will fail while the server runs");
            return None;
        }
    };
    if let Err(e) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
        tracing::warn!(error = %e, "cannot restrict the admin socket's permissions");
    }
    actix_web::rt::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    actix_web::rt::spawn(answer(stream, realms.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "admin socket accept failed");
                    return;
                }
            }
        }
    });
    Some(path)
}

async fn answer(stream: tokio::net::UnixStream, realms: Realms) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(read);
    let reply = match reader.read_line(&mut line).await {
        Ok(_) => match serde_json::from_str::<AdminRequest>(&line) {
            Ok(request) => match request.run_in_server(&realms).await {
                Ok(value) => Reply::Ok(value),
                Err(e) => Reply::Err { msg: e.msg, status: e.status },
            },
            Err(e) => Reply::Err { msg: format!("bad request: {e}"), status: 400 },
        },
        Err(e) => Reply::Err { msg: format!("cannot read request: {e}"), status: 400 },
    };
    let mut out = serde_json::to_string(&reply).unwrap_or_else(|_| "{}".into());
    out.push('\n');
    let _ = write.write_all(out.as_bytes()).await;
}
