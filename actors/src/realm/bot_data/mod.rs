//! What bots have beyond their account (Zulip's bot fields of `UserProfile`, `Service` and
//! `BotConfigData`); their `realm_bot` objects and events are in [`events`]. A leaf:
//! features that change bots (the bots feature, account deactivation) share these.

use std::sync::Arc;

use imbl::OrdMap;
use serde_json::{Map, Value};

use crate::ids::{ChannelId, UserId};

pub mod events;

pub use events::{bot_added, bot_dict, bot_owner_user_ids, bot_updated, realm_bots, service_dicts};

/// Bot type of generic bots.
pub const GENERIC_BOT: i64 = 1;
/// Bot type of outgoing-webhook bots.
pub const OUTGOING_WEBHOOK_BOT: i64 = 3;
/// Bot type of embedded bots.
pub const EMBEDDED_BOT: i64 = 4;

/// An outgoing-webhook (or embedded) bot's service (Zulip's `Service`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    /// Where the webhook posts.
    pub base_url: String,
    /// 1 generic, 2 Slack.
    pub interface: i64,
    /// Sent with each request, for the service to check.
    pub token: String,
}

/// A bot's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct BotProfile {
    pub user_id: UserId,
    pub default_sending_stream: Option<ChannelId>,
    pub default_events_register_stream: Option<ChannelId>,
    pub default_all_public_streams: bool,
    pub service: Option<Service>,
    /// Incoming-webhook and embedded bots' configuration.
    pub config_data: Map<String, Value>,
}

impl BotProfile {
    /// The defaults of a bot that has no row.
    pub fn new(user_id: UserId) -> Self {
        BotProfile {
            user_id,
            default_sending_stream: None,
            default_events_register_stream: None,
            default_all_public_streams: false,
            service: None,
            config_data: Map::new(),
        }
    }
}

/// Every bot's profile, by bot.
#[derive(Debug, Clone, Default)]
pub struct BotsData {
    profiles: OrdMap<UserId, Arc<BotProfile>>,
}

impl BotsData {
    /// From the stored rows.
    pub fn from_rows(rows: Vec<BotProfile>) -> Self {
        BotsData { profiles: rows.into_iter().map(|p| (p.user_id, Arc::new(p))).collect() }
    }

    /// A bot's profile (the defaults when it has none).
    pub fn profile(&self, bot: UserId) -> BotProfile {
        self.profiles.get(&bot).map_or_else(|| BotProfile::new(bot), |p| (**p).clone())
    }

    /// A bot's service, if it has one.
    pub fn service(&self, bot: UserId) -> Option<&Service> {
        self.profiles.get(&bot).and_then(|p| p.service.as_ref())
    }

    /// Stores a bot's profile once committed.
    pub(crate) fn put(&mut self, profile: BotProfile) {
        self.profiles.insert(profile.user_id, Arc::new(profile));
    }
}
