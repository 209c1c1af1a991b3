//! What every handler can reach: the organizations and shared services.

use std::sync::Arc;

use agora_actors::config::ServerConfig;
use agora_actors::login::Logins;
use agora_actors::registry::{RealmHandle, Realms};
use agora_actors::secrets::HashCost;
use agora_actors::sessions::Sessions;
use agora_actors::store::Store;
use agora_actors::thumbnailer::Thumbnailer;
use agora_actors::uploads::signing::Signer;
use agora_actors::uploads::Storage;

use super::gate::Limits;
use super::hashing::HashPool;
use super::response::HttpError;

/// Shared state of the HTTP layer (one per server, behind `web::Data`).
pub struct AppState {
    pub realms: Realms,
    pub store: Store,
    pub config: Arc<ServerConfig>,
    pub logins: Logins,
    /// Cost of the password hashes of accounts created through the API.
    pub password_cost: HashCost,
    /// Where every argon2 run goes.
    pub hashing: HashPool,
    /// Body limits and rate limits.
    pub limits: Limits,
    /// Whether requests are measured for the metrics endpoint.
    pub metrics: bool,
    /// Where uploaded files are kept.
    pub storage: Arc<dyn Storage>,
    /// Signs the temporary URLs of uploaded files.
    pub signer: Signer,
    /// Makes the thumbnails of uploaded images.
    pub thumbnailer: Thumbnailer,
    /// Signed-in browsers.
    pub sessions: Arc<Sessions>,
    /// Password reset mails asked for, per address.
    pub reset_mails: std::sync::Mutex<agora_actors::ratelimit::RateLimiter>,
}

impl AppState {
    /// The running realm of a subdomain; `None` if no such realm.
    pub async fn realm(&self, subdomain: &str) -> Result<Option<RealmHandle>, HttpError> {
        Ok(self.realms.find(subdomain).await?)
    }
}
