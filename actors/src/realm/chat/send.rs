//! Sending messages (`POST /messages`): the recipient, topic and content rules, storage
//! of the message with its per-user rows, and the `message` event.

use std::collections::BTreeSet;

use actix::prelude::*;
use serde_json::{json, Value};

use super::flag;
use super::format::{dm_key, message_dict, Shape};
use super::render::{render, Rendered};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::catalog::{MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH};
use crate::realm::channels::ops::check_channel_name;
use crate::realm::group_setting::GroupSettingValue;
use crate::realm::model::{Channel, Role, User};
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::realm::topics::policies::{set_policy, FOLLOWED};
use crate::store::messages::{self as db, MessageRow, NewMessage};
use crate::store::Store;
use crate::validate;

/// A channel named in `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelRef {
    Id(i64),
    Name(String),
}

/// Direct-message recipients named in `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectRef {
    Ids(Vec<i64>),
    Emails(Vec<String>),
}

/// Where a message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipient {
    Channel(ChannelRef),
    Direct(DirectRef),
}

impl Recipient {
    /// Parses `type` and `to` as Zulip does: a channel is a JSON int (id), a JSON string or
    /// one-element list, or a raw name; direct recipients are a JSON list of ids or of
    /// emails, or comma-separated emails.
    pub fn parse(kind: &str, to: &str) -> ApiResult<Recipient> {
        let parsed = serde_json::from_str::<Value>(to).ok();
        match kind {
            "stream" | "channel" => Ok(Recipient::Channel(parse_channel(parsed, to)?)),
            "private" | "direct" => Ok(Recipient::Direct(parse_direct(parsed, to)?)),
            _ => Err(ApiError::bad_request("Invalid message type")),
        }
    }
}

fn parse_channel(parsed: Option<Value>, raw: &str) -> ApiResult<ChannelRef> {
    let value = match parsed {
        None => return Ok(ChannelRef::Name(raw.to_owned())),
        Some(Value::Array(items)) => match <[Value; 1]>::try_from(items) {
            Ok([only]) => only,
            Err(_) => return Err(ApiError::bad_request("Expected exactly one channel")),
        },
        Some(other) => other,
    };
    match value {
        Value::String(name) => Ok(ChannelRef::Name(name)),
        Value::Number(n) => {
            n.as_i64().map(ChannelRef::Id).ok_or_else(|| ApiError::bad_request("Invalid data type for channel"))
        }
        _ => Err(ApiError::bad_request("Invalid data type for channel")),
    }
}

fn parse_direct(parsed: Option<Value>, raw: &str) -> ApiResult<DirectRef> {
    let split = |text: &str| -> Vec<String> {
        text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
    };
    let items = match parsed {
        None => return Ok(DirectRef::Emails(split(raw))),
        Some(Value::String(text)) => return Ok(DirectRef::Emails(split(&text))),
        Some(Value::Number(n)) => vec![Value::Number(n)],
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ApiError::bad_request("Invalid data type for recipients")),
    };
    if items.iter().all(Value::is_i64) {
        return Ok(DirectRef::Ids(items.iter().filter_map(Value::as_i64).collect()));
    }
    if items.iter().all(Value::is_string) {
        return Ok(DirectRef::Emails(items.iter().filter_map(Value::as_str).map(str::to_owned).collect()));
    }
    if items.iter().all(|v| v.is_i64() || v.is_string()) {
        return Err(ApiError::bad_request("Recipient lists may contain emails or user IDs, but not both."));
    }
    Err(ApiError::bad_request("Invalid data type for recipients"))
}

/// `POST /messages`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<SentMessage>")]
pub struct SendMessage {
    pub sender: UserId,
    pub recipient: Recipient,
    /// `topic` or `subject`, as given.
    pub topic: Option<String>,
    pub content: String,
    /// The sending client's name (from its `User-Agent`).
    pub client: String,
    pub queue_id: Option<String>,
    pub local_id: Option<String>,
    pub read_by_sender: Option<bool>,
}

/// The reply to `POST /messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    pub id: i64,
    /// The topic policy the send set automatically (Zulip's `automatic_new_visibility_policy`).
    pub automatic_new_visibility_policy: Option<i64>,
}

/// Clients for which Zulip marks a sent message read by default.
const READ_BY_SENDER_CLIENTS: [&str; 10] = [
    "website",
    "zulipmobile",
    "zulipelectron",
    "zulipterminal",
    "zulipflutter",
    "zulipdesktop",
    "zulipandroid",
    "zulipios",
    "android",
    "ios",
];

/// Zulip's `Client.default_read_by_sender`: full UI clients mark their own messages read
/// (integrations using a person's key do not).
fn default_read_by_sender(client: &str) -> bool {
    let client = client.to_lowercase();
    READ_BY_SENDER_CLIENTS.contains(&client.as_str())
        || client == "snipe"
        || client.contains("desktop app")
        || client.contains("test suite")
}

/// Zulip's `normalize_body`: trailing whitespace and leading newlines removed, not empty,
/// no null bytes, truncated to the maximum length.
pub fn normalize_content(content: &str) -> ApiResult<String> {
    let body = content.trim_end().trim_start_matches('\n');
    if body.is_empty() {
        return Err(ApiError::bad_request("Message must not be empty"));
    }
    if body.contains('\0') {
        return Err(ApiError::bad_request("Message must not contain null bytes"));
    }
    Ok(truncate(body, MAX_MESSAGE_LENGTH, "\n[message truncated]"))
}

/// Zulip's `truncate_content`: the first characters and `suffix`, within `max` characters.
pub fn truncate(text: &str, max: usize, suffix: &str) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(suffix.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(suffix);
    out
}

/// A topic as sent: stripped, `(no topic)` read as the empty topic, truncated with `...`.
pub fn normalize_topic(topic: &str) -> String {
    truncate(stripped_topic(topic), MAX_TOPIC_LENGTH, "...")
}

/// A topic stripped as Zulip strips it, `(no topic)` read as the empty topic: what Zulip
/// checks for invalid characters, before truncating it.
pub fn stripped_topic(topic: &str) -> &str {
    let topic = validate::python_strip(topic);
    if topic == "(no topic)" {
        ""
    } else {
        topic
    }
}

/// The topic of a channel message (Zulip's `Addressee.for_stream`): given ("Missing
/// topic"), without characters Zulip refuses, normalized.
fn addressed_topic(topic: Option<&str>) -> ApiResult<String> {
    let topic = stripped_topic(topic.ok_or_else(|| ApiError::bad_request("Missing topic"))?);
    validate::check_topic(topic)?;
    Ok(truncate(topic, MAX_TOPIC_LENGTH, "..."))
}

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

/// The channel a message goes to, with Zulip's errors: a name is stripped and must be a
/// valid channel name (`validate_stream_name_with_pm_notification`), then
/// [`check_can_send_to_channel`].
fn channel_for_send<'a>(state: &'a RealmState, sender: &User, target: &ChannelRef) -> ApiResult<&'a Channel> {
    let channel = match target {
        ChannelRef::Id(id) => state.channel(ChannelId(*id)).ok_or_else(|| {
            ApiError::new(ErrorCode::StreamDoesNotExist, 400, format!("Channel with ID '{id}' does not exist"))
                .with("stream_id", *id)
        })?,
        ChannelRef::Name(name) => {
            let name = validate::python_strip(name);
            check_channel_name(name)?;
            state.channel_by_name(name).ok_or_else(|| {
                ApiError::new(ErrorCode::StreamDoesNotExist, 400, format!("Channel '{name}' does not exist"))
                    .with("stream", name)
            })?
        }
    };
    check_can_send_to_channel(state, sender, channel)?;
    Ok(channel)
}

/// Whether `user` is in the channel's `can_send_message_group`, or is a bot whose owner is
/// (Zulip's `check_stream_access_based_on_can_send_message_group` as
/// `access_stream_for_send_message` applies it).
fn may_post_by_group(state: &RealmState, user: &User, channel: &Channel) -> bool {
    let may_post = |user: &User| state.in_channel_group(channel, "can_send_message_group", user);
    let owner = user.bot_owner_id.and_then(|id| state.user(id)).filter(|_| user.is_bot);
    may_post(user) || owner.is_some_and(may_post)
}

/// Whether `sender` may post to `channel` (Zulip's `access_stream_for_send_message`):
/// `can_send_message_group` (a bot also through its owner), never to an archived
/// channel; anyone to a web-public channel, non-guests to a public one; otherwise only
/// subscribers, bots whose owner is subscribed, and (non-guest) members of the groups
/// granting content access to a channel whose history is shared with subscribers. The
/// rest is "Not authorized to send to channel '…'".
pub fn check_can_send_to_channel(state: &RealmState, sender: &User, channel: &Channel) -> ApiResult<()> {
    if !may_post_by_group(state, sender, channel) {
        return Err(ApiError::bad_request("You do not have permission to post in this channel."));
    }
    let not_authorized = || ApiError::bad_request(format!("Not authorized to send to channel '{}'", channel.name));
    if channel.is_archived {
        return Err(not_authorized());
    }
    let guest = sender.role == Role::Guest;
    let owner_subscribed =
        sender.is_bot && sender.bot_owner_id.is_some_and(|owner| state.is_subscribed(owner, channel.id));
    let by_group = !guest
        && channel.history_public_to_subscribers
        && (state.in_channel_group(channel, "can_subscribe_group", sender)
            || state.in_channel_group(channel, "can_add_subscribers_group", sender));
    if channel.is_web_public
        || !(channel.invite_only || guest)
        || state.is_subscribed(sender.id, channel.id)
        || owner_subscribed
        || by_group
    {
        return Ok(());
    }
    Err(not_authorized())
}

/// The channel's and the organization's topic policies for `topic`.
fn check_topics_policy(state: &RealmState, channel: &Channel, topic: String) -> ApiResult<String> {
    let realm_policy =
        state.realm().settings.get("topics_policy").and_then(Value::as_str).unwrap_or("allow_empty_topic");
    match channel.topics_policy.as_str() {
        "empty_topic_only" if !topic.is_empty() => {
            Err(ApiError::bad_request("Only the general chat topic is allowed in this channel."))
        }
        "disable_empty_topic" if topic.is_empty() => {
            Err(ApiError::bad_request("Sending messages to the general chat is not allowed in this channel."))
        }
        "inherit" if topic.is_empty() && realm_policy == "disable_empty_topic" => {
            Err(ApiError::bad_request("Topics are required in this organization"))
        }
        _ => Ok(topic),
    }
}

/// The recipients a direct message names, with Zulip's errors for unknown ones.
fn direct_recipients<'s>(state: &'s RealmState, target: &DirectRef) -> ApiResult<Vec<&'s User>> {
    let mut users: Vec<&User> = Vec::new();
    match target {
        DirectRef::Ids(ids) => {
            for id in ids {
                let user =
                    state.user(UserId(*id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID {id}")))?;
                users.push(user);
            }
        }
        DirectRef::Emails(emails) => {
            for email in emails {
                let user = state
                    .user_by_api_email(email)
                    .or_else(|| state.user_by_delivery_email(email))
                    .ok_or_else(|| ApiError::bad_request(format!("Invalid email '{email}'")))?;
                users.push(user);
            }
        }
    }
    if users.is_empty() {
        return Err(ApiError::bad_request("Message must have recipients"));
    }
    Ok(users)
}

/// The participants of a direct message (the sender included): no deactivated recipient
/// (bots included, as in Zulip's `validate_recipient_user_profiles`), and the
/// organization's direct-message permissions ([`check_can_send_direct_message`]).
fn direct_participants(state: &RealmState, store: &Store, sender: &User, users: &[&User]) -> ApiResult<Vec<UserId>> {
    if let Some(gone) = users.iter().find(|u| !u.is_active) {
        return Err(ApiError::bad_request(format!("'{}' is no longer using Zulip.", gone.email)));
    }
    let mut ids: BTreeSet<UserId> = users.iter().map(|u| u.id).collect();
    ids.insert(sender.id);
    let ids: Vec<UserId> = ids.into_iter().collect();
    check_can_send_direct_message(state, store, sender, users, &ids)?;
    Ok(ids)
}

/// Zulip's `check_can_send_direct_message`: bots, and conversations with only bots or
/// oneself, are exempt; otherwise someone in the conversation must be in the
/// organization's `direct_message_permission_group`, and the sender must be in its
/// `direct_message_initiator_group` unless the conversation already has messages.
fn check_can_send_direct_message(
    state: &RealmState,
    store: &Store,
    sender: &User,
    recipients: &[&User],
    participants: &[UserId],
) -> ApiResult<()> {
    if sender.is_bot || recipients.iter().all(|u| u.is_bot || u.id == sender.id) {
        return Ok(());
    }
    if !participants.iter().any(|u| has_realm_permission(state, "direct_message_permission_group", *u)) {
        let nobody = crate::realm::catalog::realm_setting("direct_message_permission_group")
            .and_then(|s| GroupSettingValue::from_json(&s.value(&state.realm().settings, Some(state))))
            == Some(GroupSettingValue::Group(state.nobody_group_id()));
        return Err(ApiError::bad_request(if nobody {
            "Direct messages are disabled in this organization."
        } else {
            "This conversation does not include any users who can authorize it."
        }));
    }
    if has_realm_permission(state, "direct_message_initiator_group", sender.id) {
        return Ok(());
    }
    if db::dm_conversation_exists(&*store.conn()?, &dm_key(participants))? {
        return Ok(());
    }
    Err(ApiError::bad_request("You do not have permission to initiate direct message conversations."))
}

/// Zulip's `Stream.wildcard_mention_threshold`: wildcard mentions reaching more people
/// need `can_mention_many_users_group`.
const WILDCARD_MENTION_THRESHOLD: usize = 15;

/// Whether `user` may use a wildcard mention that reaches `count` people.
fn may_mention_many(state: &RealmState, user: UserId, count: usize) -> bool {
    count <= WILDCARD_MENTION_THRESHOLD || has_realm_permission(state, "can_mention_many_users_group", user)
}

fn channel_of<'a>(target: &Target<'a>) -> Option<&'a Channel> {
    match target {
        Target::Channel(channel, _) => Some(channel),
        Target::Direct(_) => None,
    }
}

/// The mention permissions: channel wildcards in big channels, and each (non-silently)
/// mentioned group's `can_mention_group`.
pub(crate) fn check_mentions(
    state: &RealmState,
    sender: &User,
    rendered: &Rendered,
    channel: Option<&Channel>,
) -> ApiResult<()> {
    if let Some(channel) = channel {
        if rendered.stream_wildcard && !may_mention_many(state, sender.id, state.subscriber_count(channel.id)) {
            return Err(ApiError::new(
                ErrorCode::StreamWildcardMentionNotAllowed,
                400,
                "You do not have permission to use channel wildcard mentions in this channel.",
            ));
        }
    }
    for group in rendered.mentioned_groups.iter().filter_map(|id| state.group(*id)) {
        let allowed = state.group_setting_of(group, "can_mention_group");
        if !state.group_setting_has(&allowed, sender.id) {
            return Err(ApiError::bad_request(format!("You are not allowed to mention user group '{}'.", group.name)));
        }
    }
    Ok(())
}

/// The per-user flags of a new message.
fn recipient_flags(
    sender: UserId,
    recipients: &[UserId],
    rendered: &Rendered,
    group_members: &BTreeSet<UserId>,
    topic_participants: &BTreeSet<UserId>,
    base: i64,
    read_by_sender: bool,
) -> Vec<(UserId, i64)> {
    recipients
        .iter()
        .map(|&user| {
            let mut bits = base | mention_bits(user, rendered, group_members, topic_participants);
            if user == sender && read_by_sender {
                bits |= flag::READ;
            }
            (user, bits)
        })
        .collect()
}

/// The mention bits of one recipient for rendered content (sending and editing).
pub(crate) fn mention_bits(
    user: UserId,
    rendered: &Rendered,
    group_members: &BTreeSet<UserId>,
    topic_participants: &BTreeSet<UserId>,
) -> i64 {
    let mut bits = 0;
    if rendered.mentioned_users.contains(&user) {
        bits |= flag::MENTIONED;
    } else if group_members.contains(&user) {
        bits |= flag::GROUP_MENTIONED;
    }
    if rendered.stream_wildcard {
        bits |= flag::STREAM_WILDCARD_MENTIONED;
    }
    if rendered.topic_wildcard && topic_participants.contains(&user) {
        bits |= flag::TOPIC_WILDCARD_MENTIONED;
    }
    bits
}

/// Everyone in the (non-silently) mentioned groups.
pub(crate) fn mentioned_group_members(state: &RealmState, rendered: &Rendered) -> BTreeSet<UserId> {
    if rendered.mentioned_groups.is_empty() {
        return BTreeSet::new();
    }
    state
        .users()
        .filter(|u| rendered.mentioned_groups.iter().any(|g| state.is_member_recursive(*g, u.id)))
        .map(|u| u.id)
        .collect()
}

/// Sends a message: validates it, stores it with its recipients' rows and full-text row in
/// one transaction, and returns its id and the events (the `message` event per distinct
/// flag set, then any automatic topic-follow events). `public_listeners` are the users
/// with a queue registered for `all_public_streams` (the only ones a public message may
/// reach without being sent to them).
pub fn send_message(
    state: &mut RealmState,
    store: &Store,
    msg: &SendMessage,
    public_listeners: &BTreeSet<UserId>,
    now: i64,
) -> ApiResult<(SentMessage, Vec<Outgoing>)> {
    let sender = state.user_or_err(msg.sender)?;
    // Zulip's order: the addressee (topic, recipients), the content, then the destination.
    let addressee = match &msg.recipient {
        Recipient::Channel(channel) => Addressee::Channel(channel, addressed_topic(msg.topic.as_deref())?),
        Recipient::Direct(direct) => Addressee::Direct(direct_recipients(state, direct)?),
    };
    let content = normalize_content(&msg.content)?;
    let target = match addressee {
        Addressee::Channel(channel, topic) => {
            let channel = channel_for_send(state, sender, channel)?;
            Target::Channel(channel, check_topics_policy(state, channel, topic)?)
        }
        Addressee::Direct(users) => Target::Direct(direct_participants(state, store, sender, &users)?),
    };
    let rendered = render(state, &content);
    check_mentions(state, sender, &rendered, channel_of(&target))?;
    let group_members = mentioned_group_members(state, &rendered);
    let read_by_sender = msg.read_by_sender.unwrap_or_else(|| default_read_by_sender(&msg.client));
    let (channel_id, topic, dm, recipients, base) = match &target {
        Target::Channel(channel, topic) => {
            // Deactivated subscribers keep their rows but receive nothing, as in Zulip.
            let mut users: BTreeSet<UserId> =
                state.subscribers(channel.id).filter(|u| state.user(*u).is_some_and(|u| u.is_active)).collect();
            users.insert(sender.id);
            (Some(channel.id), topic.clone(), None, users.into_iter().collect::<Vec<_>>(), 0)
        }
        Target::Direct(users) => (None, String::new(), Some(dm_key(users)), users.clone(), flag::IS_PRIVATE),
    };
    let new = NewMessage {
        realm_id: state.realm().id,
        sender_id: sender.id,
        channel_id,
        topic: &topic,
        content: &content,
        rendered_content: &rendered.html,
        date_sent: now,
        dm_key: dm.as_deref(),
        sending_client: &msg.client,
        has_link: rendered.has_link,
        has_image: rendered.has_image,
        has_attachment: rendered.has_attachment,
    };
    let (id, initiated, flags) = store.write(|tx| {
        let (initiated, participants) = match channel_id {
            Some(channel) => {
                let initiated = !db::topic_has_messages(tx, channel, &topic)?;
                let mut participants: BTreeSet<UserId> = if rendered.topic_wildcard {
                    db::topic_participants(tx, channel, &topic)?.into_iter().collect()
                } else {
                    BTreeSet::new()
                };
                participants.insert(sender.id);
                if rendered.topic_wildcard && !may_mention_many(state, sender.id, participants.len()) {
                    return Err(ApiError::new(
                        ErrorCode::TopicWildcardMentionNotAllowed,
                        400,
                        "You do not have permission to use topic wildcard mentions in this topic.",
                    ));
                }
                (initiated, participants)
            }
            None => (false, recipients.iter().copied().collect()),
        };
        let flags =
            recipient_flags(sender.id, &recipients, &rendered, &group_members, &participants, base, read_by_sender);
        let id = db::insert(tx, &new, &flags)?;
        Ok::<_, ApiError>((id, initiated, flags))
    })?;
    let row = MessageRow {
        id,
        sender_id: sender.id,
        channel_id,
        topic: topic.clone(),
        content: content.clone(),
        rendered_content: rendered.html.clone(),
        date_sent: now,
        dm_key: dm,
        sending_client: msg.client.clone(),
        last_edit_time: None,
        last_moved_time: None,
        edit_history: None,
    };
    let mut events = message_events(state, &row, &flags, msg);
    if let Some(channel) = channel_id.and_then(|c| state.channel(c)).filter(|c| !c.invite_only) {
        events.extend(all_public_streams_event(state, channel, &row, &recipients, public_listeners));
    }
    let sender_id = sender.id;
    let mut automatic = None;
    if let Some(channel) = channel_id {
        state.note_channel_message(channel, id);
        if let Some(policy) = automatic_policy(state, sender_id, channel, &topic, initiated) {
            // The message is committed: a failure here must not turn the send into an
            // error (the client would send it again), so it is logged and the policy
            // left as it was.
            match set_policy(state, store, sender_id, channel, &topic, policy, now) {
                Ok(policy_events) => {
                    events.extend(policy_events);
                    automatic = Some(policy);
                }
                Err(e) => tracing::error!(error = %e, message.id = id, "could not follow the topic automatically"),
            }
        }
    }
    Ok((SentMessage { id, automatic_new_visibility_policy: automatic }, events))
}

/// The topic policy a send sets for its sender (Zulip's `automatically_follow_topics_policy`:
/// 1 on participation, 2 on send, 3 on initiation, 4 never), if any.
fn automatic_policy(
    state: &RealmState,
    sender: UserId,
    channel: ChannelId,
    topic: &str,
    initiated: bool,
) -> Option<i64> {
    let user = state.user(sender)?;
    if user.is_bot {
        return None;
    }
    let follow = user.settings.get("automatically_follow_topics_policy").and_then(Value::as_i64).unwrap_or(3);
    let wants = match follow {
        1 | 2 => true,
        3 => initiated,
        _ => false,
    };
    let current = state.user_topic(sender, channel, topic).map_or(0, |t| t.visibility_policy);
    (wants && current != FOLLOWED).then_some(FOLLOWED)
}

/// The `message` events: one shared message object, one event per distinct flag set, each
/// to the recipients with those flags. The sender's event carries `sender_queue_id` and
/// `local_id` for the queue layer.
fn message_events(state: &RealmState, row: &MessageRow, flags: &[(UserId, i64)], msg: &SendMessage) -> Vec<Outgoing> {
    let message = Value::Object(message_dict(state, row, &[], Shape::Event));
    let mut groups: Vec<(i64, bool, Vec<UserId>)> = Vec::new();
    for &(user, bits) in flags {
        let is_sender = user == row.sender_id;
        match groups.iter_mut().find(|(b, s, _)| *b == bits && *s == is_sender) {
            Some((_, _, users)) => users.push(user),
            None => groups.push((bits, is_sender, vec![user])),
        }
    }
    groups
        .into_iter()
        .map(|(bits, is_sender, users)| {
            let mut body = json!({"message": message, "flags": super::format::flag_names(bits)});
            if is_sender {
                if let (Some(queue), Some(local)) = (&msg.queue_id, &msg.local_id) {
                    body["sender_queue_id"] = json!(queue);
                    body["local_id"] = json!(local);
                }
            }
            Outgoing::to(users, Event::new("message", body))
        })
        .collect()
}

/// The `message` event for the other members' `all_public_streams` queues (the queue
/// layer drops it for the rest), with no flags.
fn all_public_streams_event(
    state: &RealmState,
    channel: &Channel,
    row: &MessageRow,
    recipients: &[UserId],
    public_listeners: &BTreeSet<UserId>,
) -> Option<Outgoing> {
    let others: Vec<UserId> = public_listeners
        .iter()
        .filter(|u| recipients.binary_search(u).is_err())
        .filter_map(|u| state.user(*u))
        .filter(|u| u.is_active && u.role != Role::Guest && state.has_content_access(u, channel))
        .map(|u| u.id)
        .collect();
    if others.is_empty() {
        return None;
    }
    let message = Value::Object(message_dict(state, row, &[], Shape::Event));
    let body = json!({"message": message, "flags": [], "for_all_public_streams": true});
    Some(Outgoing::to(others, Event::new("message", body)))
}

impl Handler<SendMessage> for RealmActor {
    type Result = ApiResult<SentMessage>;

    fn handle(&mut self, msg: SendMessage, _: &mut Self::Context) -> Self::Result {
        let public_listeners = self.all_public_streams_listeners();
        let (sent, events) = send_message(&mut self.state, &self.store, &msg, &public_listeners, crate::clock::now())?;
        self.committed(events);
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_parse_as_zulip_does() {
        assert_eq!(
            Recipient::parse("stream", "general").unwrap(),
            Recipient::Channel(ChannelRef::Name("general".into()))
        );
        assert_eq!(Recipient::parse("channel", "7").unwrap(), Recipient::Channel(ChannelRef::Id(7)));
        assert_eq!(Recipient::parse("channel", "[\"x\"]").unwrap(), Recipient::Channel(ChannelRef::Name("x".into())));
        assert_eq!(Recipient::parse("channel", "[]").unwrap_err().msg, "Expected exactly one channel");
        assert_eq!(
            Recipient::parse("private", "a@x.com, b@x.com").unwrap(),
            Recipient::Direct(DirectRef::Emails(vec!["a@x.com".into(), "b@x.com".into()]))
        );
        assert_eq!(Recipient::parse("direct", "[3, 4]").unwrap(), Recipient::Direct(DirectRef::Ids(vec![3, 4])));
        assert_eq!(
            Recipient::parse("direct", "[3, \"a@x.com\"]").unwrap_err().msg,
            "Recipient lists may contain emails or user IDs, but not both."
        );
    }

    #[test]
    fn content_and_topics_are_normalized() {
        assert_eq!(normalize_content("\n\nhi  \n").unwrap(), "hi");
        assert_eq!(normalize_content("  \n").unwrap_err().msg, "Message must not be empty");
        assert_eq!(normalize_content("a\0b").unwrap_err().msg, "Message must not contain null bytes");
        let long = "x".repeat(MAX_MESSAGE_LENGTH + 5);
        let cut = normalize_content(&long).unwrap();
        assert_eq!(cut.chars().count(), MAX_MESSAGE_LENGTH);
        assert!(cut.ends_with("\n[message truncated]"));
        assert_eq!(normalize_topic("  (no topic) "), "");
        let topic = normalize_topic(&"t".repeat(70));
        assert_eq!(topic, format!("{}...", "t".repeat(57)));
    }
}
