//! [`Channels`]: the state's channels, subscriptions, folders and topic policies, indexed.

use std::sync::Arc;

use imbl::{HashMap, OrdMap, OrdSet};

use crate::ids::{ChannelId, FolderId, MessageId, UserId};
use crate::realm::model::{Channel, ChannelFolder, Subscription, UserTopic};

/// An organization's channels with their subscriptions, default channels, folders and
/// per-user topic policies, with lookup indexes.
#[derive(Debug, Clone, Default)]
pub struct Channels {
    pub(super) by_id: OrdMap<ChannelId, Arc<Channel>>,
    /// Lower-cased name -> channel.
    pub(super) by_name: HashMap<String, ChannelId>,
    /// Every subscription row (active or not), by (user, channel).
    pub(super) subscriptions: HashMap<(UserId, ChannelId), Arc<Subscription>>,
    /// Active subscribers of each channel.
    pub(super) subscribers: HashMap<ChannelId, OrdSet<UserId>>,
    /// Channels each user is actively subscribed to.
    pub(super) subscribed: HashMap<UserId, OrdSet<ChannelId>>,
    /// Channels each user has a subscription row for (active or not).
    pub(super) rows_of: HashMap<UserId, OrdSet<ChannelId>>,
    pub(super) defaults: OrdSet<ChannelId>,
    pub(super) folders: OrdMap<FolderId, Arc<ChannelFolder>>,
    /// (user, channel, lower-cased topic) -> policy.
    pub(super) user_topics: OrdMap<(UserId, ChannelId, String), Arc<UserTopic>>,
    /// The id of each channel's first message, for channels that have messages.
    pub(super) first_messages: HashMap<ChannelId, MessageId>,
}
