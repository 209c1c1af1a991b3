//! Zulip's general rate limits, as settings.

use std::time::Duration;

use agora_actors::ratelimit::Rule;

/// Zulip's general rate limits (`DEFAULT_RATE_LIMITING_RULES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRateLimit {
    /// Whether they apply at all.
    pub enabled: bool,
    /// Requests per authenticated user (`api_by_user`).
    pub per_user: Rule,
    /// Requests per client address without valid credentials (`api_by_ip`): public routes,
    /// and requests whose credentials fail.
    pub per_ip: Rule,
}

impl Default for ApiRateLimit {
    fn default() -> Self {
        let minute = Duration::from_secs(60);
        ApiRateLimit {
            enabled: true,
            per_user: Rule { max: 200, window: minute },
            per_ip: Rule { max: 100, window: minute },
        }
    }
}
