//! The state's accessors for its smaller parts: users' statuses and mutes, uploads, scheduled
//! items, linkifiers, code playgrounds.

use super::RealmState;
use crate::markdown::linkifier::Linkifiers;
use crate::realm::bot_data::BotsData;
use crate::realm::model::Playground;
use crate::realm::scheduled_data::ScheduledData;
use crate::realm::uploads_data::UploadsData;
use crate::realm::user_data::UserData;

impl RealmState {
    /// Users' statuses, alert words and mutes.
    pub fn user_data(&self) -> &UserData {
        &self.user_data
    }

    /// Users' statuses, alert words and mutes, to change once committed.
    pub(crate) fn user_data_mut(&mut self) -> &mut UserData {
        &mut self.user_data
    }

    /// Attachments and custom emoji.
    pub fn uploads(&self) -> &UploadsData {
        &self.uploads
    }

    pub(crate) fn uploads_mut(&mut self) -> &mut UploadsData {
        &mut self.uploads
    }

    /// Pending scheduled messages and reminders.
    pub fn scheduled(&self) -> &ScheduledData {
        &self.scheduled
    }

    pub(crate) fn scheduled_mut(&mut self) -> &mut ScheduledData {
        &mut self.scheduled
    }

    /// The linkifiers, in their order, compiled.
    pub fn linkifiers(&self) -> &Linkifiers {
        &self.linkifiers
    }

    /// Replaces the linkifiers (compiled by the caller, once per change).
    pub(crate) fn set_linkifiers(&mut self, linkifiers: Linkifiers) {
        self.linkifiers = linkifiers;
    }

    /// The code playgrounds, by id.
    pub fn playgrounds(&self) -> &[Playground] {
        &self.playgrounds
    }

    /// Replaces the code playgrounds (by id).
    pub(crate) fn set_playgrounds(&mut self, playgrounds: Vec<Playground>) {
        self.playgrounds = std::sync::Arc::new(playgrounds);
    }

    /// Bots' default channels, services and configuration.
    pub fn bots(&self) -> &BotsData {
        &self.bots
    }

    pub(crate) fn bots_mut(&mut self) -> &mut BotsData {
        &mut self.bots
    }
}
