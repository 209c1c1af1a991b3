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
use super::recipients::{channel_for_send, direct_participants, direct_recipients, initiation_refused};
use super::{SendMessage, SentMessage};
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, MessageId, RealmId, UserId};
use crate::realm::chat::flag;
use crate::realm::chat::format::{dm_key, message_dict, Shape};
use crate::realm::chat::render::{render, Rendered};
use crate::realm::model::{Channel, User, UserTopic};
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{policy_events, FOLLOWED};
use crate::realm::uploads_data::claims::{self, Claims};
use crate::realm::{Applied, Change};
use crate::store::messages::{self as db, MessageRow, NewMessage};

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

/// The topic policy a send sets for its sender (Zulip's `automatically_follow_topics_policy`:
/// 1 on participation, 2 on send, 3 on initiation, 4 never), planned.
#[derive(Debug, Clone, PartialEq)]
pub struct AutomaticFollow {
    /// Only if the message starts the topic.
    pub on_initiation: bool,
    /// The sender's policy row once set (the topic spelled as their existing row has it).
    pub row: UserTopic,
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
    /// A refusal that Zulip checks after that conversation: it stands if the conversation
    /// exists.
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
    /// Set by the write.
    id: MessageId,
    automatic: Option<UserTopic>,
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
    let (target, needs_conversation) = match addressee {
        Addressee::Channel(channel, topic) => {
            let channel = channel_for_send(state, sender, channel)?;
            (Target::Channel(channel, check_topics_policy(state, channel, topic)?), None)
        }
        Addressee::Direct(users) => {
            let participants = direct_participants(state, sender, &users)?;
            (Target::Direct(participants.ids), participants.needs_conversation)
        }
    };
    let rendered = render(state, &content);
    let channel = match &target {
        Target::Channel(channel, _) => Some(*channel),
        Target::Direct(_) => None,
    };
    // A check that needs storage comes before this one: its refusal waits for that answer.
    let refusal = match check_mentions(state, sender, &rendered, channel) {
        Ok(()) => None,
        Err(e) if needs_conversation.is_some() => Some(e),
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
        refusal,
        may_mention_anyone: may_mention_anyone(state, sender.id),
        public_audience,
        echo: msg.queue_id.zip(msg.local_id),
        id: MessageId(0),
        automatic: None,
    })
}

/// The topic policy a send may set for its sender, if any (never for bots, nor when the
/// topic is already followed).
fn automatic_follow(
    state: &RealmState,
    sender: &User,
    channel: ChannelId,
    topic: &str,
    now: i64,
) -> Option<AutomaticFollow> {
    if sender.is_bot {
        return None;
    }
    let follow = sender.settings.get("automatically_follow_topics_policy").and_then(Value::as_i64).unwrap_or(3);
    let on_initiation = match follow {
        1 | 2 => false,
        3 => true,
        _ => return None,
    };
    let existing = state.user_topic(sender.id, channel, topic);
    if existing.is_some_and(|t| t.visibility_policy == FOLLOWED) {
        return None;
    }
    let row = UserTopic {
        user_id: sender.id,
        channel_id: channel,
        topic: existing.map_or_else(|| topic.to_owned(), |r| r.topic.clone()),
        visibility_policy: FOLLOWED,
        last_updated: now,
    };
    Some(AutomaticFollow { on_initiation, row })
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

impl Change for PlannedMessage {
    type Output = SentMessage;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        if let Some(key) = &self.needs_conversation {
            if !db::dm_conversation_exists(tx, key)? {
                return Err(initiation_refused());
            }
        }
        if let Some(refusal) = self.refusal.take() {
            return Err(refusal);
        }
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
        if let Some(follow) = self.follow.take().filter(|f| initiated || !f.on_initiation) {
            // A failure here must not fail the send (the client would send it again): the
            // policy is left as it was.
            match db::put_automatic_user_topic(tx, &follow.row) {
                Ok(()) => self.automatic = Some(follow.row),
                Err(e) => {
                    tracing::error!(error = %e, message.id = %self.id, "could not follow the topic automatically")
                }
            }
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<SentMessage> {
        let row = self.row();
        let message = Value::Object(message_dict(state, &row, &[], Shape::Event));
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
