//! What every handler can reach: the registry, the realm directory and shared services.

use std::sync::Arc;

use actix::Addr;
use agora_actors::config::ServerConfig;
use agora_actors::login::Logins;
use agora_actors::registry::{Directory, RealmHandle, RealmRegistry, Resolve};
use agora_actors::store::Store;

use super::response::HttpError;

/// Shared state of the HTTP layer (one per server, behind `web::Data`).
pub struct AppState {
    pub registry: Addr<RealmRegistry>,
    pub directory: Directory,
    pub store: Store,
    pub config: Arc<ServerConfig>,
    pub logins: Logins,
}

impl AppState {
    /// The running realm of a subdomain: from the shared directory when its actor is alive,
    /// otherwise through the registry (which loads or restarts it). `None` if no such realm.
    pub async fn realm(&self, subdomain: &str) -> Result<Option<RealmHandle>, HttpError> {
        if let Some(handle) = self.directory.get(subdomain) {
            return Ok(Some(handle));
        }
        if self.directory.is_missing(subdomain) {
            return Ok(None);
        }
        Ok(self.registry.send(Resolve { subdomain: subdomain.to_owned() }).await??)
    }
}
