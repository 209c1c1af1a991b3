//! [`RealmActor`]: the single writer of one organization.
//!
//! The actor is a thin shell around [`RealmState`]: it adds ordering (its mailbox),
//! persistence (each handler commits before it replies) and fan-out (events go to the
//! listeners of the users allowed to see them, after the commit). Handlers never panic;
//! if the actor dies anyway, the registry starts a fresh one from the database.

use std::collections::HashMap;
use std::sync::Arc;

use actix::prelude::*;
use arc_swap::ArcSwap;
use serde_json::{Map, Value};

use super::format::can_access_delivery_email;
use super::messages::*;
use super::ops::{self, CreatedUser};
use super::snapshot::AuthSnapshot;
use super::state::RealmState;
use crate::config::ServerConfig;
use crate::error::{ApiError, ApiResult};
use crate::events::{Outgoing, PushEvent};
use crate::ids::UserId;
use crate::store::Store;

/// Messages a realm actor queues before senders have to wait (the registry creates its
/// mailbox with this bound). Within it a message is queued the moment it is sent, so
/// arrival order is send order.
pub const MAILBOX_CAPACITY: usize = 1024;

/// The actor owning one organization's state.
pub struct RealmActor {
    state: RealmState,
    store: Store,
    config: Arc<ServerConfig>,
    /// Published after every committed change that affects authentication.
    auth: Arc<ArcSwap<AuthSnapshot>>,
    listeners: HashMap<UserId, Vec<(ListenerId, Recipient<PushEvent>)>>,
    next_listener: u64,
}

impl RealmActor {
    /// An actor for a loaded state; `auth` is the slot HTTP workers read, already holding
    /// the snapshot of `state`.
    pub fn new(state: RealmState, store: Store, config: Arc<ServerConfig>, auth: Arc<ArcSwap<AuthSnapshot>>) -> Self {
        RealmActor { state, store, config, auth, listeners: HashMap::new(), next_listener: 0 }
    }

    fn publish_auth(&self) {
        self.auth.store(Arc::new(AuthSnapshot::of(&self.state)));
    }

    /// Hands each event to every live listener of its users. The event is shared, not
    /// copied, between listeners.
    fn fan_out(&mut self, events: Vec<Outgoing>) {
        for out in events {
            let event = Arc::new(out.event);
            for user_id in out.users {
                if let Some(list) = self.listeners.get_mut(&user_id) {
                    list.retain(|(_, r)| r.connected());
                    for (_, recipient) in list.iter() {
                        recipient.do_send(PushEvent { user_id, event: Arc::clone(&event) });
                    }
                }
            }
        }
    }

    fn viewer(&self, id: UserId) -> ApiResult<&super::model::User> {
        self.state.user(id).ok_or_else(|| {
            tracing::warn!(realm.id = %self.state.realm().id, user.id = %id, "request for a user this realm does not have");
            ApiError::internal()
        })
    }
}

impl Actor for RealmActor {
    type Context = Context<Self>;

    fn started(&mut self, _ctx: &mut Self::Context) {
        tracing::debug!(realm.id = %self.state.realm().id, "realm actor started");
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        tracing::debug!(realm.id = %self.state.realm().id, "realm actor stopped");
    }
}

impl Handler<GetOwnProfile> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetOwnProfile, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        // No messages exist yet; Zulip reports -1 for a user who has none.
        Ok(self.state.own_profile(user, -1))
    }
}

impl Handler<GetUser> for RealmActor {
    type Result = ApiResult<Map<String, Value>>;

    fn handle(&mut self, msg: GetUser, _: &mut Self::Context) -> Self::Result {
        let viewer = self.viewer(msg.viewer)?;
        let target = match &msg.target {
            UserRef::Id(id) => self.state.user(*id),
            UserRef::Email(email) => self
                .state
                .user_by_api_email(email)
                .or_else(|| self.state.user_by_delivery_email(email).filter(|t| can_access_delivery_email(viewer, t))),
        }
        .ok_or_else(|| ApiError::bad_request("No such user"))?;
        Ok(self.state.user_dict(viewer, target, msg.options))
    }
}

impl Handler<CreateUser> for RealmActor {
    type Result = ApiResult<CreatedUser>;

    fn handle(&mut self, msg: CreateUser, _: &mut Self::Context) -> Self::Result {
        let (created, events) = ops::create_user(&mut self.state, &self.store, &self.config, msg.0, ops::now())?;
        self.publish_auth();
        self.fan_out(events);
        Ok(created)
    }
}

impl Handler<RegenerateApiKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: RegenerateApiKey, _: &mut Self::Context) -> Self::Result {
        let key = ops::regenerate_api_key(&mut self.state, &self.store, msg.user_id)?;
        self.publish_auth();
        Ok(key)
    }
}

impl Handler<RegenerateOwnApiKey> for RealmActor {
    type Result = ApiResult<String>;

    fn handle(&mut self, msg: RegenerateOwnApiKey, _: &mut Self::Context) -> Self::Result {
        let key = ops::regenerate_own_api_key(&mut self.state, &self.store, msg.user_id)?;
        self.publish_auth();
        Ok(key)
    }
}

impl Handler<GetServerSettings> for RealmActor {
    type Result = MessageResult<GetServerSettings>;

    fn handle(&mut self, msg: GetServerSettings, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.state.server_settings(&self.config, msg.is_incompatible))
    }
}

impl Handler<SetUserActive> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetUserActive, _: &mut Self::Context) -> Self::Result {
        let events = ops::set_user_active(&mut self.state, &self.store, msg.user_id, msg.active)?;
        self.publish_auth();
        self.fan_out(events);
        Ok(())
    }
}

impl Handler<SetRealmDeactivated> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetRealmDeactivated, _: &mut Self::Context) -> Self::Result {
        let events = ops::set_realm_deactivated(&mut self.state, &self.store, msg.0)?;
        self.publish_auth();
        self.fan_out(events);
        Ok(())
    }
}

impl Handler<AddListener> for RealmActor {
    type Result = MessageResult<AddListener>;

    fn handle(&mut self, msg: AddListener, _: &mut Self::Context) -> Self::Result {
        self.next_listener += 1;
        let id = ListenerId(self.next_listener);
        self.listeners.entry(msg.user_id).or_default().push((id, msg.recipient));
        MessageResult(id)
    }
}

impl Handler<RemoveListener> for RealmActor {
    type Result = ();

    fn handle(&mut self, msg: RemoveListener, _: &mut Self::Context) {
        for list in self.listeners.values_mut() {
            list.retain(|(id, _)| *id != msg.0);
        }
        self.listeners.retain(|_, list| !list.is_empty());
    }
}

impl Handler<StopRealm> for RealmActor {
    type Result = ();

    fn handle(&mut self, _: StopRealm, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
