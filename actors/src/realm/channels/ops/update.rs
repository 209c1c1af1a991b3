//! Changing a channel's settings (`PATCH /streams/{id}`).
//!
//! Every check runs before anything is written, in Zulip's order, but for one the state
//! cannot answer: `empty_topic_only` needs every message of the channel in the empty topic,
//! which the write checks inside its transaction. So that the order of errors stays
//! Zulip's, a refusal found by a later check is then held in the change and reported by
//! the write only once that database check has passed.

use std::collections::BTreeSet;

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::checks::{check_channel_name, check_only_empty_topic, check_topics_policy, clean_description};
use super::checks::{check_topic_creation_with_history, parse_retention, EMPTY_TOPIC_ONLY};
use super::events::default_streams_event;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, RealmId, UserId};
use crate::realm::channels::access::{administered_channel, channel_permission};
use crate::realm::channels::format;
use crate::realm::folders::ops::check_folder_for_channel;
use crate::realm::group_setting::GroupSettingChange;
use crate::realm::model::{Channel, Role, User};
use crate::realm::permissions::{has_realm_permission, require_admin};
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// `PATCH /streams/{id}`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct ChannelUpdate {
    pub new_name: Option<String>,
    pub description: Option<String>,
    pub is_private: Option<bool>,
    pub is_web_public: Option<bool>,
    pub history_public_to_subscribers: Option<bool>,
    pub is_default_stream: Option<bool>,
    pub message_retention_days: Option<Value>,
    pub topics_policy: Option<String>,
    /// `Some(false)` unarchives the channel (`true` is not taken here: `DELETE` archives).
    pub is_archived: Option<bool>,
    /// `Some(None)` takes the channel out of its folder.
    pub folder_id: Option<Option<i64>>,
    /// Raw `{"new": .., "old": ..}` values of the `can_*_group` parameters given.
    pub settings: Vec<(String, Value)>,
}

/// A channel update, planned.
#[derive(Debug)]
pub struct ChannelChange {
    realm_id: RealmId,
    old: Channel,
    channel: Channel,
    /// Each changed property with its new value as events show it, in Zulip's order.
    changed: Vec<(&'static str, Value)>,
    /// `Some(is_default)` when the channel becomes a default channel or stops being one.
    default_change: Option<bool>,
    /// `empty_topic_only` was asked for: the write checks the channel's messages.
    check_empty_topic_only: bool,
    /// A refusal found after that check in Zulip's order, reported once it passed.
    refusal: Option<ApiError>,
}

/// Plans `PATCH /streams/{id}`: validates every change; nothing to write when nothing
/// changes.
pub fn plan_update(
    state: &RealmState,
    acting: UserId,
    id: ChannelId,
    update: ChannelUpdate,
) -> ApiResult<ChannelChange> {
    let actor = state.user(acting).ok_or_else(ApiError::internal)?;
    let old = administered_channel(state, actor, id)?;
    let mut change = ChannelChange {
        realm_id: state.realm().id,
        old: old.clone(),
        channel: old.clone(),
        changed: Vec::new(),
        default_change: None,
        check_empty_topic_only: false,
        refusal: None,
    };
    let (channel, changed) = (&mut change.channel, &mut change.changed);
    if let Some(name) = &update.new_name {
        let name = name.trim();
        check_channel_name(name)?;
        if name == channel.name {
            return Err(ApiError::bad_request("Channel already has that name."));
        }
        if state.channel_by_name(name).is_some_and(|c| c.id != id) {
            return Err(ApiError::bad_request("Channel name is already in use."));
        }
        channel.name = name.to_owned();
        changed.push(("name", json!(name)));
    }
    if let Some(description) = &update.description {
        let description = clean_description(description)?;
        if description != channel.description {
            channel.rendered_description = crate::markdown::render(&description);
            channel.description = description;
            changed.push(("description", json!(channel.description)));
        }
    }
    plan_privacy(state, actor, channel, &update, changed)?;
    if let Some(value) = &update.message_retention_days {
        // Zulip's `update_stream_backend` checks the role before the value.
        if actor.role != Role::Owner {
            return Err(ApiError::must_be_owner());
        }
        let days = parse_retention(value)?;
        if days != channel.message_retention_days {
            channel.message_retention_days = days;
            changed.push(("message_retention_days", json!(days)));
        }
    }
    if update.is_archived == Some(false) {
        plan_unarchive(state, channel, changed)?;
    }
    if let Some(policy) = &update.topics_policy {
        check_topics_policy(state, actor, policy)?;
        change.check_empty_topic_only = policy == EMPTY_TOPIC_ONLY;
        if *policy != channel.topics_policy {
            channel.topics_policy = policy.clone();
            changed.push(("topics_policy", json!(policy)));
        }
    }
    match plan_rest(state, actor, &mut change, &update) {
        Ok(()) => Ok(change),
        Err(refusal) if change.check_empty_topic_only => Ok(ChannelChange { refusal: Some(refusal), ..change }),
        Err(refusal) => Err(refusal),
    }
}

/// The checks after the topics policy: folder, permission settings, default channel.
fn plan_rest(state: &RealmState, actor: &User, change: &mut ChannelChange, update: &ChannelUpdate) -> ApiResult<()> {
    let ChannelChange { old, channel, changed, .. } = change;
    if let Some(folder) = update.folder_id {
        let folder = folder.map(|f| check_folder_for_channel(state, f)).transpose()?;
        if folder != channel.folder_id {
            channel.folder_id = folder;
            changed.push(("folder_id", json!(folder)));
        }
    }
    for (name, raw) in &update.settings {
        let permission = channel_permission(name).ok_or_else(|| ApiError::bad_request(format!("Invalid {name}")))?;
        let setting = GroupSettingChange::from_api(name, raw)?;
        // Spec 2.5: this one needs content access on top of administering the channel.
        if name == "can_add_subscribers_group" && !state.has_content_access(actor, old) {
            return Err(ApiError::bad_request("Invalid channel ID"));
        }
        let current = state.channel_setting(channel, name);
        if !setting.is_change_from(&current, state.nobody_group_id())? {
            continue;
        }
        let value = state.check_group_setting(name, &permission.rule, setting.new)?;
        channel.settings.insert(name.clone(), value.to_json());
        let shown = state.group_setting_api_value(&value).to_json();
        changed.push((permission.name, shown));
    }
    check_topic_creation_with_history(state, channel)?;
    change.default_change = match update.is_default_stream {
        Some(d) if d != state.default_channels().contains(&channel.id) => {
            require_admin(actor.role)?;
            if d && channel.invite_only {
                return Err(ApiError::bad_request("A default channel cannot be private."));
            }
            if d && channel.is_archived {
                return Err(ApiError::bad_request("Invalid channel ID"));
            }
            Some(d)
        }
        _ => None,
    };
    Ok(())
}

/// Unarchiving (Zulip's `do_unarchive_stream`): only an archived channel, and a private one
/// only while someone (even deactivated) is still subscribed.
fn plan_unarchive(
    state: &RealmState,
    channel: &mut Channel,
    changed: &mut Vec<(&'static str, Value)>,
) -> ApiResult<()> {
    if !channel.is_archived {
        return Err(ApiError::bad_request("Channel is not currently deactivated"));
    }
    if channel.invite_only && state.subscribers(channel.id).next().is_none() {
        return Err(ApiError::bad_request("Channel is private and have no subscribers"));
    }
    channel.is_archived = false;
    changed.push(("is_archived", json!(false)));
    Ok(())
}

/// `invite_only`, `history_public_to_subscribers` and `is_web_public` changes.
fn plan_privacy(
    state: &RealmState,
    actor: &User,
    channel: &mut Channel,
    update: &ChannelUpdate,
    changed: &mut Vec<(&'static str, Value)>,
) -> ApiResult<()> {
    if update.is_web_public == Some(true) {
        return Err(ApiError::bad_request("Web-public channels are not enabled."));
    }
    let invite_only = update.is_private.unwrap_or(channel.invite_only);
    if invite_only != channel.invite_only {
        let setting = if invite_only { "can_create_private_channel_group" } else { "can_create_public_channel_group" };
        if !actor.role.is_admin() && !has_realm_permission(state, setting, actor.id) {
            return Err(ApiError::bad_request("Insufficient permission"));
        }
        if invite_only && state.default_channels().contains(&channel.id) && update.is_default_stream != Some(false) {
            return Err(ApiError::bad_request("A default channel cannot be private."));
        }
    }
    let history = if invite_only {
        update.history_public_to_subscribers.unwrap_or(if channel.invite_only {
            channel.history_public_to_subscribers
        } else {
            false
        })
    } else {
        true
    };
    let web_public = update.is_web_public.unwrap_or(channel.is_web_public) && !invite_only;
    // One event per changed property, as Zulip's `do_change_stream_permission`.
    let old = (channel.invite_only, channel.history_public_to_subscribers, channel.is_web_public);
    channel.invite_only = invite_only;
    channel.history_public_to_subscribers = history;
    channel.is_web_public = web_public;
    if old.0 != invite_only {
        changed.push(("invite_only", json!(invite_only)));
    }
    if old.1 != history {
        changed.push(("history_public_to_subscribers", json!(history)));
    }
    if old.2 != web_public {
        changed.push(("is_web_public", json!(web_public)));
    }
    Ok(())
}

impl ChannelChange {
    /// The channel before and after the update.
    pub fn channels(&self) -> (&Channel, &Channel) {
        (&self.old, &self.channel)
    }

    /// Whether the update changes nothing (it still may be refused by the write).
    fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.default_change.is_none()
    }
}

impl Change for ChannelChange {
    type Output = ();

    /// A request that changes nothing stores nothing (unless a check must read messages).
    fn writes(&self) -> bool {
        self.check_empty_topic_only || self.refusal.is_some() || !self.is_empty()
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if self.check_empty_topic_only {
            check_only_empty_topic(tx, self.channel.id)?;
        }
        if let Some(refusal) = self.refusal.take() {
            return Err(refusal);
        }
        if self.is_empty() {
            return Ok(());
        }
        store::channels::update(tx, &self.channel)?;
        if let Some(d) = self.default_change {
            store::channels::set_default_channel(tx, self.realm_id, self.channel.id, d)?;
        }
        Ok(())
    }

    /// One `stream` update event per changed property (plus creation and deletion events
    /// for users who gain or lose sight of the channel).
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        if self.is_empty() {
            return Applied::events(Vec::new());
        }
        let id = self.channel.id;
        let before: BTreeSet<UserId> = state.channel_metadata_audience(id).into_iter().collect();
        state.put_channel(self.channel);
        if let Some(d) = self.default_change {
            state.set_default_channel(id, d);
        }
        Applied::events(update_events(state, id, &self.old, &before, self.changed, self.default_change.is_some()))
    }
}

/// The events of a channel update: `stream` update per property to who may see the
/// channel now, creation for who gained sight, deletion for who lost it.
fn update_events(
    state: &RealmState,
    id: ChannelId,
    old: &Channel,
    before: &BTreeSet<UserId>,
    changed: Vec<(&'static str, Value)>,
    default_changed: bool,
) -> Vec<Outgoing> {
    let Some(channel) = state.channel(id) else { return Vec::new() };
    let after = state.channel_metadata_audience(id);
    let stayed: Vec<UserId> = after.iter().copied().filter(|u| before.contains(u)).collect();
    let gained: Vec<UserId> = after.iter().copied().filter(|u| !before.contains(u)).collect();
    let lost: Vec<UserId> = before.iter().copied().filter(|u| !after.contains(u)).collect();
    let mut events = Vec::new();
    if !lost.is_empty() {
        events.push(Outgoing::to(lost, Event::new("stream", format::stream_delete_body(&[id]))));
    }
    if !gained.is_empty() {
        let dict = Value::Object(format::stream_dict(state, channel));
        events.push(Outgoing::to(gained, Event::new("stream", json!({"op": "create", "streams": [dict]}))));
    }
    let post_policy_before = format::stream_post_policy(state, old);
    // Clients without the `archived_channels` capability had the channel deleted when it
    // was archived: they get it created again, once, as it is after the whole request.
    let unarchived = changed.iter().any(|(property, _)| *property == "is_archived");
    for (property, value) in changed {
        // Zulip names the channel by its name before a rename.
        let name = if property == "name" { old.name.as_str() } else { channel.name.as_str() };
        let mut fields = json!({"op": "update", "property": property, "value": value, "stream_id": id, "name": name});
        if let Value::Object(map) = &mut fields {
            match property {
                "description" => {
                    map.insert("rendered_description".into(), json!(channel.rendered_description));
                }
                "invite_only" => {
                    map.insert("history_public_to_subscribers".into(), json!(channel.history_public_to_subscribers));
                    map.insert("is_web_public".into(), json!(channel.is_web_public));
                }
                _ => {}
            }
        }
        events.push(Outgoing::to(stayed.clone(), Event::new("stream", fields)));
        if property == "can_send_message_group" {
            let policy = format::stream_post_policy(state, channel);
            if policy != post_policy_before {
                let fields = json!({"op": "update", "property": "stream_post_policy", "value": policy, "stream_id": id, "name": channel.name});
                events.push(Outgoing::to(stayed.clone(), Event::new("stream", fields)));
            }
        }
    }
    if unarchived {
        let dict = Value::Object(format::stream_dict(state, channel));
        let body = json!({"op": "create", "streams": [dict], "for_archive": true});
        events.push(Outgoing::to(stayed, Event::new("stream", body)));
    }
    if default_changed {
        events.push(default_streams_event(state));
    }
    events
}
