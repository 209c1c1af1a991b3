//! Loading an organization's state from the database (at start, and after a failure).

use rusqlite::Connection;

use super::super::invite_data::Invites;
use super::super::scheduled_data::ScheduledData;
use super::super::uploads_data::UploadsData;
use super::super::user_data::UserData;
use super::RealmState;
use crate::ids::{MessageId, RealmId};
use crate::markdown::linkifier::Linkifiers;
use crate::store::{self, StoreResult};

impl RealmState {
    /// Loads a realm and everything in it.
    pub fn load(conn: &Connection, realm_id: RealmId) -> StoreResult<Option<RealmState>> {
        let Some(realm) = store::realms::by_id(conn, realm_id)? else {
            return Ok(None);
        };
        let mut users = store::users::in_realm(conn, realm_id)?;
        let groups = store::groups::in_realm(conn, realm_id)?;
        let fields = store::profile_fields::in_realm(conn, realm_id)?;
        let mut values = store::profile_fields::values_in_realm(conn, realm_id)?;
        for user in &mut users {
            if let Some(data) = values.remove(&user.id) {
                user.profile_data = data;
            }
        }
        let mut state = RealmState::new(realm, users, groups);
        state.set_profile_fields(fields);
        for channel in store::channels::in_realm(conn, realm_id)? {
            state.put_channel(channel);
        }
        for sub in store::channels::subscriptions_in_realm(conn, realm_id)? {
            state.put_subscription(sub);
        }
        for channel in store::channels::default_channels(conn, realm_id)? {
            state.set_default_channel(channel, true);
        }
        for folder in store::channels::folders_in_realm(conn, realm_id)? {
            state.put_folder(folder);
        }
        for topic in store::channels::user_topics_in_realm(conn, realm_id)? {
            state.put_user_topic(topic);
        }
        state.channels.first_messages =
            store::channels::first_message_ids(conn, realm_id)?.into_iter().map(|(c, id)| (c, MessageId(id))).collect();
        state.last_message_id = store::messages::newest_message_id(conn)?;
        state.user_data = UserData::load(conn, realm_id)?;
        state.invites = Invites::load(conn, realm_id)?;
        state.uploads = UploadsData::load(conn, realm_id)?;
        state.scheduled = ScheduledData::load(conn, realm_id)?;
        for (key, id) in store::submessages::dm_groups_in_realm(conn, realm_id)? {
            state.put_dm_group(key, id);
        }
        state.linkifiers = Linkifiers::new(store::linkifiers::in_realm(conn, realm_id)?);
        state.set_playgrounds(store::playgrounds::in_realm(conn, realm_id)?);
        state.bots = super::super::bot_data::BotsData::from_rows(store::bots::profiles_in_realm(conn, realm_id)?);
        Ok(Some(state))
    }

    /// Loads the realm with this subdomain.
    pub fn load_by_subdomain(conn: &Connection, subdomain: &str) -> StoreResult<Option<RealmState>> {
        match store::realms::by_subdomain(conn, subdomain)? {
            Some(realm) => Self::load(conn, realm.id),
            None => Ok(None),
        }
    }
}
