//! A message to send, planned from the state ([`plan_send`]), written with its recipients'
//! rows, and applied: the `message` events and an automatic topic follow.

mod internal;

use std::collections::BTreeSet;

use rusqlite::Transaction;
use serde_json::Value;

use super::addressee::{ChannelRef, SendTo};
use super::content::{addressed_topic, check_topics_policy, default_read_by_sender, normalize_content};
use super::events::{all_public_streams_audience, all_public_streams_event, message_events};
use super::mentions::{
    check_mentions, may_mention, may_mention_anyone, mentioned_group_members, recipient_flags, topic_wildcard_refused,
};
use super::recipients::{
    channel_for_send, direct_participants, direct_recipients, initiation_refused, topic_creation_refusal,
};
use super::{SendMessage, SentMessage};
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::realm::chat::flag;
use crate::realm::chat::format::{dm_key, message_dict, Shape};
use crate::realm::chat::render::{render, Rendered};
use crate::realm::chat::widgets::submessage_dict;
use crate::realm::model::{Channel, User, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::policy_events;
use crate::realm::uploads_data::claims::{self, Claims};
use crate::realm::{Applied, Change};
use crate::store::messages::{self as db, MessageRow, NewMessage};
use crate::store::submessages::SubmessageRow;

use super::follow::automatic_follow;
pub use super::follow::AutomaticFollow;
pub use internal::{plan_notice, Notice, NoticeTo};

/// Where a message goes, as Zulip's `Addressee` checks it before the content: the channel
/// as named with its topic, or the direct-message recipients.
enum Addressee<'r, 's> {
    Channel(&'r ChannelRef, String),
    Direct(Vec<&'s User>),
}

/// A validated destination.
enum Target<'a> {
    Channel(&'a Channel, String),
    Direct(Vec<UserId>),
}

/// A message to send, checked against the state. What the state cannot tell is checked
/// when it is written: whether a direct-message conversation already has messages (for
/// senders who may not start one), and who took part in a topic (topic wildcards).
#[derive(Debug, Clone)]
pub struct PlannedMessage {
    realm_id: RealmId,
    sender: UserId,
    channel_id: Option<ChannelId>,
    topic: String,
    content: String,
    rendered: Rendered,
    dm_key: Option<String>,
    client: String,
    date_sent: i64,
    /// The recipients, ascending.
    recipients: Vec<UserId>,
    /// Each recipient's flags; for a channel message the topic wildcard bit goes to topic
    /// participants when written.
    flags: Vec<(UserId, i64)>,
    /// The conversation that must already have messages (the sender may not start one).
    needs_conversation: Option<String>,
    /// The refusal a channel message gets if its topic has no message yet: its sender may
    /// not start topics there (`can_create_topic_group`, FL 441).
    new_topic_refusal: Option<ApiError>,
    /// A refusal that Zulip checks after that conversation or that topic: it stands if the
    /// conversation or the topic exists.
    refusal: Option<ApiError>,
    /// The sender may use wildcard mentions however many people they reach.
    may_mention_anyone: bool,
    follow: Option<AutomaticFollow>,
    /// Other members whose `all_public_streams` queues get the message.
    public_audience: Vec<UserId>,
    /// The sending queue and its local id, echoed in the sender's event.
    echo: Option<(String, String)>,
    /// The uploads the message links and claims.
    claims: Claims,
    /// The `widget` submessage a `/poll` or `/todo` message starts (its content).
    widget: Option<String>,
    /// Set by the write.
    id: MessageId,
    automatic: Option<UserTopic>,
    /// Set by the write: the widget submessage's id, and the group conversation's number.
    widget_id: Option<i64>,
    dm_group: Option<i64>,
}

impl PlannedMessage {
    /// The recipients' flags as planned (before the topic wildcard bits of the write).
    pub fn flags(&self) -> &[(UserId, i64)] {
        &self.flags
    }

    /// The recipients, ascending.
    pub fn recipients(&self) -> &[UserId] {
        &self.recipients
    }

    /// The topic as it will be stored.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The automatic topic follow, if the send may set one.
    pub fn follow(&self) -> Option<&AutomaticFollow> {
        self.follow.as_ref()
    }

    /// The members who get the message through an `all_public_streams` queue.
    pub fn public_audience(&self) -> &[UserId] {
        &self.public_audience
    }

    /// The message's id (once written).
    pub fn id(&self) -> MessageId {
        self.id
    }

    /// Who sends it.
    pub fn sender(&self) -> UserId {
        self.sender
    }

    /// Its channel (none for a direct message).
    pub fn channel_id(&self) -> Option<ChannelId> {
        self.channel_id
    }

    /// Its content as it will be stored (normalized).
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Its rendered content.
    pub fn rendered_html(&self) -> &str {
        &self.rendered.html
    }

    /// The user groups it mentions (not silently).
    pub fn mentioned_groups(&self) -> &std::collections::BTreeSet<crate::ids::GroupId> {
        &self.rendered.mentioned_groups
    }

    /// When it is sent (Unix seconds).
    pub fn date_sent(&self) -> i64 {
        self.date_sent
    }

    /// The users it mentions by name (not silently).
    pub fn mentioned_users(&self) -> &std::collections::BTreeSet<UserId> {
        &self.rendered.mentioned_users
    }

    /// The message object as the `message` event carries it, before it is written (its
    /// `id` is 0 until then).
    pub fn event_dict(&self, state: &RealmState) -> serde_json::Map<String, Value> {
        message_dict(state, &self.row(), &[], Shape::Event)
    }

    /// The conversation that must already have messages for the send to go through.
    pub fn needs_conversation(&self) -> Option<&str> {
        self.needs_conversation.as_deref()
    }
}

/// Plans a message in Zulip's order of checks: the addressee (topic, recipients), the
/// content, the destination (channel permissions and topic policies, or the direct-message
/// permissions), then the mentions. `public_listeners` are the users with a queue
/// registered for `all_public_streams` (the only ones a public message may reach without
/// being sent to them).
pub fn plan_send(
    state: &RealmState,
    msg: SendMessage,
    public_listeners: &BTreeSet<UserId>,
    now: i64,
) -> ApiResult<PlannedMessage> {
    let sender = state.user_or_err(msg.sender)?;
    let addressee = match &msg.to {
        SendTo::Channel(channel) => Addressee::Channel(channel, addressed_topic(msg.topic.as_deref())?),
        SendTo::Direct(direct) => Addressee::Direct(direct_recipients(state, direct)?),
    };
    let content = normalize_content(&msg.content)?;
    let mut new_topic_refusal = None;
    let mut policy_refusal = None;
    let (target, needs_conversation) = match addressee {
        Addressee::Channel(channel, topic) => {
            let channel = channel_for_send(state, sender, channel)?;
            // Zulip checks who may start a topic before the topic policies.
            new_topic_refusal = topic_creation_refusal(state, sender, channel);
            let topic = match check_topics_policy(state, channel, topic.clone()) {
                Ok(topic) => topic,
                Err(e) if new_topic_refusal.is_some() => {
                    policy_refusal = Some(e);
                    topic
                }
                Err(e) => return Err(e),
            };
            (Target::Channel(channel, topic), None)
        }
        Addressee::Direct(users) => {
            let participants = direct_participants(state, sender, &users)?;
            (Target::Direct(participants.ids), participants.needs_conversation)
        }
    };
    let rendered = render(state, &content);
    let content_for_widget = content.clone();
    let channel = match &target {
        Target::Channel(channel, _) => Some(*channel),
        Target::Direct(_) => None,
    };
    // A check that needs storage comes before this one: its refusal waits for that answer.
    let refusal = match check_mentions(state, sender, &rendered, channel) {
        _ if policy_refusal.is_some() => policy_refusal,
        Ok(()) => None,
        Err(e) if needs_conversation.is_some() || new_topic_refusal.is_some() => Some(e),
        Err(e) => return Err(e),
    };
    let group_members = mentioned_group_members(state, &rendered);
    let read_by_sender = msg.read_by_sender.unwrap_or_else(|| default_read_by_sender(&msg.client));
    let (topic, dm, recipients, base) = match target {
        Target::Channel(channel, topic) => {
            // Deactivated subscribers keep their rows but receive nothing, as in Zulip.
            let mut users: BTreeSet<UserId> = state.active_subscribers(channel.id).into_iter().collect();
            users.insert(sender.id);
            (topic, None, users.into_iter().collect::<Vec<_>>(), 0)
        }
        Target::Direct(users) => (String::new(), Some(dm_key(&users)), users, flag::IS_PRIVATE),
    };
    // The topic's other participants are known when written; every direct-message
    // participant takes part in the conversation.
    let participants: BTreeSet<UserId> = match channel {
        Some(_) => BTreeSet::from([sender.id]),
        None => recipients.iter().copied().collect(),
    };
    let mut flags =
        recipient_flags(sender.id, &recipients, &rendered, &group_members, &participants, base, read_by_sender);
    // A muted sender's new messages arrive read for those who muted them, as in Zulip.
    for (user, bits) in &mut flags {
        if state.user_data().has_muted(*user, sender.id) {
            *bits |= flag::READ;
        }
    }
    let public_audience =
        channel.map(|c| all_public_streams_audience(state, c, &recipients, public_listeners)).unwrap_or_default();
    Ok(PlannedMessage {
        realm_id: state.realm().id,
        sender: sender.id,
        channel_id: channel.map(|c| c.id),
        follow: channel.and_then(|c| automatic_follow(state, sender, c.id, &topic, now)),
        claims: claims::plan_send(state, sender, &content, channel),
        topic,
        content,
        rendered,
        dm_key: dm,
        client: msg.client,
        date_sent: now,
        recipients,
        flags,
        needs_conversation,
        new_topic_refusal,
        refusal,
        may_mention_anyone: may_mention_anyone(state, sender.id),
        public_audience,
        echo: msg.queue_id.zip(msg.local_id),
        widget: crate::realm::chat::widgets::data::widget_content(&content_for_widget),
        id: MessageId(0),
        automatic: None,
        widget_id: None,
        dm_group: None,
    })
}

impl PlannedMessage {
    /// The stored message, once written.
    fn row(&self) -> MessageRow {
        MessageRow {
            id: self.id,
            sender_id: self.sender,
            channel_id: self.channel_id,
            topic: self.topic.clone(),
            content: self.content.clone(),
            rendered_content: self.rendered.html.clone(),
            date_sent: self.date_sent,
            dm_key: self.dm_key.clone(),
            sending_client: self.client.clone(),
            last_edit_time: None,
            last_moved_time: None,
            edit_history: None,
        }
    }

    /// Gives the topic's participants the topic wildcard bit (refused if they are too
    /// many for the sender); returns whether the message starts its topic.
    fn topic_wildcard(&mut self, tx: &Transaction<'_>, channel: ChannelId) -> ApiResult<bool> {
        let initiated = !db::topic_has_messages(tx, channel, &self.topic)?;
        if !self.rendered.topic_wildcard {
            return Ok(initiated);
        }
        let mut participants: BTreeSet<UserId> =
            db::topic_participants(tx, channel, &self.topic)?.into_iter().collect();
        participants.insert(self.sender);
        if !may_mention(participants.len(), self.may_mention_anyone) {
            return Err(topic_wildcard_refused());
        }
        for (user, bits) in &mut self.flags {
            if participants.contains(user) {
                *bits |= flag::TOPIC_WILDCARD_MENTIONED;
            }
        }
        Ok(initiated)
    }
}

impl PlannedMessage {
    /// The checks that need storage, as the write runs them, without writing anything
    /// (a message scheduled for later is checked as if it were sent now): the conversation
    /// the sender may not start, the refusal that waits for it, and the topic wildcard's
    /// reach.
    pub fn check_stored(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.check_new_topic(tx)?;
        self.check_conversation(tx)?;
        if let Some(channel) = self.channel_id {
            self.topic_wildcard(tx, channel)?;
        }
        Ok(())
    }

    /// A sender who may not start topics in the channel writes only to existing ones.
    fn check_new_topic(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let (Some(channel), Some(refusal)) = (self.channel_id, &self.new_topic_refusal) {
            if !db::topic_has_messages(tx, channel, &self.topic)? {
                return Err(refusal.clone());
            }
        }
        Ok(())
    }

    fn check_conversation(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(key) = &self.needs_conversation {
            if !db::dm_conversation_exists(tx, key)? {
                return Err(initiation_refused());
            }
        }
        if let Some(refusal) = self.refusal.take() {
            return Err(refusal);
        }
        Ok(())
    }
}

impl Change for PlannedMessage {
    type Output = SentMessage;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.check_new_topic(tx)?;
        self.check_conversation(tx)?;
        let initiated = match self.channel_id {
            Some(channel) => self.topic_wildcard(tx, channel)?,
            None => false,
        };
        let new = NewMessage {
            realm_id: self.realm_id,
            sender_id: self.sender,
            channel_id: self.channel_id,
            topic: &self.topic,
            content: &self.content,
            rendered_content: &self.rendered.html,
            date_sent: self.date_sent,
            dm_key: self.dm_key.as_deref(),
            sending_client: &self.client,
            has_link: self.rendered.has_link,
            has_image: self.rendered.has_image,
            has_attachment: self.rendered.has_attachment,
        };
        self.id = db::insert(tx, &new, &self.flags)?;
        self.claims.write(tx, self.id)?;
        if let Some(key) = self.dm_key.as_deref().filter(|k| k.matches(',').count() >= 2) {
            self.dm_group = Some(crate::store::submessages::ensure_dm_group(tx, self.realm_id, key)?);
        }
        if let Some(widget) = &self.widget {
            self.widget_id = Some(crate::store::submessages::insert(tx, self.id, self.sender, "widget", widget)?);
        }
        let follow = self.follow.take().and_then(|f| {
            let policy = f.policy(initiated)?;
            Some(UserTopic { visibility_policy: policy, ..f.row })
        });
        if let Some(row) = follow {
            // A failure here must not fail the send (the client would send it again): the
            // policy is left as it was.
            match db::put_automatic_user_topic(tx, &row) {
                Ok(()) => self.automatic = Some(row),
                Err(e) => {
                    tracing::error!(error = %e, message.id = %self.id, "could not follow the topic automatically")
                }
            }
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<SentMessage> {
        let row = self.row();
        if let (Some(key), Some(group)) = (&self.dm_key, self.dm_group) {
            state.put_dm_group(key.clone(), group);
        }
        let mut message = message_dict(state, &row, &[], Shape::Event);
        // The widget is on the message from the start (Zulip's `do_widget_post_save_actions`).
        if let (Some(content), Some(id)) = (self.widget.clone(), self.widget_id) {
            let widget =
                SubmessageRow { id, message_id: self.id, sender_id: self.sender, msg_type: "widget".into(), content };
            message.insert("submessages".into(), Value::Array(vec![submessage_dict(&widget)]));
        }
        let message = Value::Object(message);
        let echo = self.echo.as_ref().map(|(queue, local)| (queue.as_str(), local.as_str()));
        let mut events = message_events(&message, self.sender, &self.flags, echo);
        events.extend(all_public_streams_event(&message, self.public_audience));
        events.extend(self.claims.apply(state));
        state.note_message(self.id);
        if let Some(channel) = self.channel_id {
            state.note_channel_message(channel, self.id);
        }
        let automatic = self.automatic.map(|row| {
            let policy = row.visibility_policy;
            state.put_user_topic(row.clone());
            events.extend(policy_events(state, &row, &self.topic));
            policy
        });
        Applied::new(SentMessage { id: self.id, automatic_new_visibility_policy: automatic }, events)
    }
}
