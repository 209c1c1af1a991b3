//! **Test support only**: realm actor messages that make channels, subscriptions and
//! messages directly, for the integration tests of this area until the channel and message
//! endpoints exist on the same branch. They skip every permission check and send no
//! events; no HTTP route reaches them.

use actix::prelude::*;
use serde_json::Map;

use crate::error::ApiResult;
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::model::{Channel, Subscription};
use crate::realm::ops;
use crate::store;

/// Test support: creates a channel with these subscribers (color `#76ce90`) and returns its
/// id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<ChannelId>")]
pub struct AddChannel {
    pub name: String,
    pub invite_only: bool,
    pub history_public_to_subscribers: bool,
    pub subscribers: Vec<UserId>,
}

/// Test support: subscribes a user to a channel (`active` true) or unsubscribes them.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct SetSubscribed {
    pub user: UserId,
    pub channel: ChannelId,
    pub active: bool,
}

/// Test support: stores a channel message, received by the channel's current subscribers,
/// and returns its id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<i64>")]
pub struct InsertMessage {
    pub sender: UserId,
    pub channel: ChannelId,
    pub topic: String,
    pub content: String,
}

/// Test support: archives a channel.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ArchiveChannel {
    pub channel: ChannelId,
}

fn new_subscription(user: UserId, channel: ChannelId, active: bool) -> Subscription {
    Subscription {
        user_id: user,
        channel_id: channel,
        active,
        color: "#76ce90".into(),
        is_muted: false,
        pin_to_top: false,
        desktop_notifications: None,
        audible_notifications: None,
        push_notifications: None,
        email_notifications: None,
        wildcard_mentions_notify: None,
    }
}

impl Handler<AddChannel> for RealmActor {
    type Result = ApiResult<ChannelId>;

    fn handle(&mut self, msg: AddChannel, _: &mut Self::Context) -> Self::Result {
        let mut channel = Channel {
            id: ChannelId(0),
            name: msg.name,
            description: String::new(),
            rendered_description: String::new(),
            invite_only: msg.invite_only,
            is_web_public: false,
            history_public_to_subscribers: msg.history_public_to_subscribers,
            message_retention_days: None,
            topics_policy: "inherit".into(),
            folder_id: None,
            creator_id: None,
            date_created: ops::now(),
            is_archived: false,
            settings: Map::new(),
        };
        let realm_id = self.state.realm().id;
        let subs = &msg.subscribers;
        let id = self.store.write(|tx| {
            let id = store::channels::insert(tx, realm_id, &channel)?;
            subs.iter().try_for_each(|u| store::channels::put_subscription(tx, &new_subscription(*u, id, true)))?;
            Ok::<_, crate::error::ApiError>(id)
        })?;
        channel.id = id;
        self.state.put_channel(channel);
        for user in subs {
            self.state.put_subscription(new_subscription(*user, id, true));
        }
        self.committed(Vec::new());
        Ok(id)
    }
}

impl Handler<SetSubscribed> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetSubscribed, _: &mut Self::Context) -> Self::Result {
        let sub = match self.state.subscription(msg.user, msg.channel) {
            Some(existing) => Subscription { active: msg.active, ..existing.clone() },
            None => new_subscription(msg.user, msg.channel, msg.active),
        };
        self.store.write(|tx| store::channels::put_subscription(tx, &sub))?;
        self.state.put_subscription(sub);
        self.committed(Vec::new());
        Ok(())
    }
}

impl Handler<InsertMessage> for RealmActor {
    type Result = ApiResult<i64>;

    fn handle(&mut self, msg: InsertMessage, _: &mut Self::Context) -> Self::Result {
        let realm_id = self.state.realm().id;
        let recipients: Vec<UserId> = self.state.subscribers(msg.channel).collect();
        let id = self.store.write(|tx| {
            let id = store::channels::insert_message(
                tx,
                realm_id,
                msg.sender,
                msg.channel,
                &msg.topic,
                &msg.content,
                ops::now(),
            )?;
            store::channels::insert_user_messages(tx, id, &recipients)?;
            Ok::<_, crate::error::ApiError>(id)
        })?;
        Ok(id)
    }
}

impl Handler<ArchiveChannel> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ArchiveChannel, _: &mut Self::Context) -> Self::Result {
        let Some(channel) = self.state.channel(msg.channel) else { return Ok(()) };
        let channel = Channel { is_archived: true, ..channel.clone() };
        self.store.write(|tx| store::channels::update(tx, &channel))?;
        self.state.put_channel(channel);
        self.committed(Vec::new());
        Ok(())
    }
}

/// Test support: a user's subscription row to a channel, as the realm holds it.
#[derive(Message, Debug)]
#[rtype(result = "Option<Subscription>")]
pub struct SubscriptionOf {
    pub user: UserId,
    pub channel: ChannelId,
}

impl Handler<SubscriptionOf> for RealmActor {
    type Result = Option<Subscription>;

    fn handle(&mut self, msg: SubscriptionOf, _: &mut Self::Context) -> Self::Result {
        self.state.subscription(msg.user, msg.channel).cloned()
    }
}
