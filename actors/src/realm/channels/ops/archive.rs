//! Archiving a channel (`DELETE /streams/{id}`) and the default channels
//! (`POST`/`DELETE /default_streams`).

use rusqlite::Transaction;
use serde_json::json;

use super::events::default_streams_event;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, RealmId, UserId};
use crate::realm::channels::access::{administered_channel, visible_channel};
use crate::realm::channels::format;
use crate::realm::model::Channel;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// A channel to archive: it stops being a default channel.
#[derive(Debug, Clone)]
pub struct Archiving {
    realm_id: RealmId,
    channel: Channel,
}

/// Plans `DELETE /streams/{id}`.
pub fn plan_archive(state: &RealmState, acting: UserId, id: ChannelId) -> ApiResult<Archiving> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?;
    let channel = administered_channel(state, actor, id)?;
    if channel.is_archived {
        return Err(ApiError::bad_request("Channel is already deactivated"));
    }
    Ok(Archiving { realm_id: state.realm().id, channel: Channel { is_archived: true, ..channel.clone() } })
}

impl Change for Archiving {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::channels::update(tx, &self.channel)?;
        Ok(store::channels::set_default_channel(tx, self.realm_id, self.channel.id, false)?)
    }

    /// A `stream` update of `is_archived` and a `stream` delete to who may see the channel
    /// (each queue keeps one of the two, by its client's `archived_channels` capability),
    /// and the default channels if it was one.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let id = self.channel.id;
        let audience = state.channel_metadata_audience(id);
        let was_default = state.default_channels().contains(&id);
        state.put_channel(self.channel);
        state.set_default_channel(id, false);
        let name = state.channel(id).map(|c| c.name.clone()).unwrap_or_default();
        let update = json!({"op": "update", "property": "is_archived", "value": true, "stream_id": id, "name": name});
        let mut delete = format::stream_delete_body(&[id]);
        delete["for_archive"] = json!(true);
        let mut events = vec![
            Outgoing::to(audience.clone(), Event::new("stream", update)),
            Outgoing::to(audience, Event::new("stream", delete)),
        ];
        if was_default {
            events.push(default_streams_event(state));
        }
        Applied::events(events)
    }
}

/// A channel becoming a default channel, or no longer one.
#[derive(Debug, Clone, Copy)]
pub struct DefaultChannel {
    realm_id: RealmId,
    channel: ChannelId,
    add: bool,
    /// False when the channel already is (or is not) a default one: nothing changes.
    changes: bool,
}

/// Plans `POST /default_streams` (`add`) and `DELETE /default_streams` (administrators only).
pub fn plan_default_channel(state: &RealmState, acting: UserId, id: ChannelId, add: bool) -> ApiResult<DefaultChannel> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?;
    require_admin(actor.role)?;
    let channel = visible_channel(state, actor, id)?;
    // An archived channel is no longer a default one (archiving removes it) and cannot
    // become one: new users would join a channel they cannot post to.
    if add && channel.is_archived {
        return Err(ApiError::bad_request("Invalid channel ID"));
    }
    if add && channel.invite_only {
        return Err(ApiError::bad_request("Private channels cannot be made default."));
    }
    // Adding a default channel again, or removing a channel that is not one, changes
    // nothing and succeeds, as in Zulip.
    let changes = add != state.default_channels().contains(&id);
    Ok(DefaultChannel { realm_id: state.realm().id, channel: id, add, changes })
}

impl Change for DefaultChannel {
    type Output = ();

    /// Adding a default channel again, or removing one that is not, stores nothing.
    fn writes(&self) -> bool {
        self.changes
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.changes {
            store::channels::set_default_channel(tx, self.realm_id, self.channel, self.add)?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        if !self.changes {
            return Applied::events(Vec::new());
        }
        state.set_default_channel(self.channel, self.add);
        Applied::events(vec![default_streams_event(state)])
    }
}
