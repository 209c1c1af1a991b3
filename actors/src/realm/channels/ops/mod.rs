//! Channel changes, each planned from the state with Zulip's checks and messages, written
//! in one transaction, then applied with the events for exactly the users allowed to see
//! them.
//!
//! - [`checks`]: names, descriptions, retention, topics policies, permission settings,
//!   principals.
//! - [`new_channel`]: a channel to create, checked against the organization's policies.
//! - [`subscribe`]: subscribing (creating missing channels) and `POST /channels/create`.
//! - [`unsubscribe`]: unsubscribing oneself or others.
//! - [`update`]: `PATCH /streams/{id}`.
//! - [`archive`]: archiving, and the default channels.
//! - [`events`]: the events they share.

pub mod archive;
pub mod checks;
pub mod events;
pub mod new_channel;
pub mod subscribe;
pub mod unsubscribe;
pub mod update;

pub use archive::{plan_archive, plan_default_channel, Archiving, DefaultChannel};
pub use checks::{check_channel_group_setting, check_channel_name, clean_description, parse_retention, Principals};
pub use events::default_streams_event;
pub use new_channel::{ChannelOptions, STREAM_ASSIGNMENT_COLORS};
pub use subscribe::{
    plan_create_channel, plan_subscribe, CreatingChannel, NewChannel, SubscribeRequest, SubscribeResult, Subscribing,
};
pub use unsubscribe::{plan_unsubscribe, Unsubscribing};
pub use update::{plan_update, ChannelChange, ChannelUpdate};

use crate::error::ApiResult;
use crate::events::Outgoing;
use crate::ids::{ChannelId, UserId};
use crate::realm::commit;
use crate::realm::state::RealmState;
use crate::store::Store;

/// Subscribes outside any actor (tests): plans, then commits. The events are returned.
pub fn subscribe(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    req: SubscribeRequest,
    now: i64,
) -> ApiResult<(SubscribeResult, Vec<Outgoing>)> {
    let change = plan_subscribe(state, acting, req, now)?;
    let applied = commit(state, store, change)?;
    Ok((applied.output, applied.events))
}

/// Updates a channel outside any actor (tests): plans, then commits. The events are returned.
pub fn update_channel(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: ChannelId,
    update: ChannelUpdate,
) -> ApiResult<Vec<Outgoing>> {
    let change = plan_update(state, acting, id, update)?;
    Ok(commit(state, store, change)?.events)
}
