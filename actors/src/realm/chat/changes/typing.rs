//! Typing notifications: `POST /typing` and the `typing` event (Zulip's
//! `zerver/views/typing.py`, `zerver/actions/typing.py`). Nothing is stored: the change
//! is planned and applied, with no transaction.

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{distinct, ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::catalog::{self, EMPTY_TOPIC_DISPLAY_NAME};
use crate::realm::chat::send::check_can_send_to_channel;
use crate::realm::chat::viewer;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};

/// Where the typed message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypingTo {
    /// `type=direct`: the `to` user ids (`None` when absent).
    Direct(Option<Vec<i64>>),
    /// `type=stream`/`channel`: `stream_id` and `topic` (each `None` when absent).
    Channel { stream_id: Option<i64>, topic: Option<String> },
}

/// `POST /typing`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct SetTyping {
    pub user_id: UserId,
    /// `start` or `stop`.
    pub op: String,
    pub to: TypingTo,
}

/// Channels with more active subscribers than this get no typing notifications (Zulip's
/// `MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS`, for performance).
pub const MAX_CHANNEL_SIZE_FOR_TYPING: usize = 100;

/// A boolean personal setting of `user`.
pub(super) fn user_flag(user: &User, name: &str) -> bool {
    catalog::user_setting(name).is_some_and(|s| catalog::user_value(user, s).as_bool().unwrap_or(false))
}

/// `{user_id, email}` as typing events name people.
fn person(user: &User) -> Value {
    json!({"user_id": user.id, "email": user.email})
}

/// A typing notification, checked: its event's type (`typing`, or `typing_edit_message`),
/// body and recipients.
#[derive(Debug, Clone, PartialEq)]
pub struct TypingNotice {
    pub kind: &'static str,
    pub body: Value,
    pub recipients: Vec<UserId>,
}

impl Change for TypingNotice {
    type Output = ();

    fn write(&mut self, _: &Transaction<'_>) -> ApiResult<()> {
        Ok(())
    }

    fn apply(self, _: &mut RealmState) -> Applied<()> {
        Applied::events(vec![Outgoing::to(self.recipients, Event::new(self.kind, self.body))])
    }

    fn writes(&self) -> bool {
        false
    }
}

/// Checks a typing notification: its `typing` event goes to the recipients who receive
/// typing notifications (the sender's other clients included, as in Zulip).
pub fn plan_typing(state: &RealmState, msg: SetTyping) -> ApiResult<TypingNotice> {
    let sender = viewer(state, msg.user_id)?;
    let (fields, audience) = match msg.to {
        TypingTo::Channel { stream_id, topic } => channel_typing(state, sender, stream_id, topic)?,
        TypingTo::Direct(user_ids) => direct_typing(state, sender, user_ids)?,
    };
    let recipients = audience
        .into_iter()
        .filter(|id| state.user(*id).is_some_and(|u| u.is_active && user_flag(u, "receives_typing_notifications")))
        .collect();
    let mut body = json!({"message_type": fields.0, "op": msg.op, "sender": person(sender)});
    if let (Value::Object(body), Value::Object(rest)) = (&mut body, fields.1) {
        body.extend(rest);
    }
    Ok(TypingNotice { kind: "typing", body, recipients })
}

type Typing = ((&'static str, Value), Vec<UserId>);

fn channel_typing(
    state: &RealmState,
    sender: &User,
    stream_id: Option<i64>,
    topic: Option<String>,
) -> ApiResult<Typing> {
    let stream_id = stream_id.ok_or_else(|| ApiError::bad_request("Missing 'stream_id' argument"))?;
    let topic = topic.ok_or_else(|| ApiError::bad_request("Missing topic"))?;
    if !user_flag(sender, "send_stream_typing_notifications") {
        return Err(ApiError::bad_request("User has disabled typing notifications for channel messages"));
    }
    // Zulip's `access_stream_by_id_for_message` (an active channel with content access),
    // then the checks of sending to it.
    let channel = state
        .channel(ChannelId(stream_id))
        .filter(|c| !c.is_archived && state.has_content_access(sender, c))
        .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))?;
    check_can_send_to_channel(state, sender, channel)?;
    // Zulip's `maybe_rename_general_chat_to_empty_topic`: clients without empty topics
    // type in "general chat", which is the empty topic.
    let topic = if topic == EMPTY_TOPIC_DISPLAY_NAME { String::new() } else { topic };
    let fields = json!({"stream_id": channel.id, "topic": topic});
    Ok((("stream", fields), channel_audience(state, channel.id)))
}

/// Who hears of typing in a channel: its active subscribers, nobody past
/// [`MAX_CHANNEL_SIZE_FOR_TYPING`].
pub(super) fn channel_audience(state: &RealmState, channel: ChannelId) -> Vec<UserId> {
    let subscribers = state.active_subscriber_ids(channel);
    if subscribers.len() > MAX_CHANNEL_SIZE_FOR_TYPING {
        return Vec::new();
    }
    subscribers.to_vec()
}

fn direct_typing(state: &RealmState, sender: &User, user_ids: Option<Vec<i64>>) -> ApiResult<Typing> {
    let mut user_ids = user_ids.ok_or_else(|| ApiError::bad_request("Missing 'to' argument"))?;
    if user_ids.is_empty() {
        return Err(ApiError::bad_request("Empty 'to' list"));
    }
    if !user_flag(sender, "send_private_typing_notifications") {
        return Err(ApiError::bad_request("User has disabled typing notifications for direct messages"));
    }
    // Each person once, in the order given (Zulip keeps repeats; a list naming one id
    // many times would make an event as long, delivered as often, to each queue).
    user_ids = distinct(user_ids);
    if !user_ids.contains(&sender.id.0) {
        user_ids.push(sender.id.0);
    }
    let users = user_ids
        .iter()
        .map(|id| state.user(UserId(*id)).ok_or_else(|| ApiError::bad_request(format!("Invalid user ID {id}"))))
        .collect::<ApiResult<Vec<&User>>>()?;
    let fields = json!({"recipients": users.iter().map(|u| person(u)).collect::<Vec<_>>()});
    Ok((("direct", fields), users.iter().map(|u| u.id).collect()))
}

impl Handler<SetTyping> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: SetTyping, _: &mut Self::Context) -> Self::Result {
        let change = plan_typing(&self.state, msg)?;
        self.commit(change)
    }
}
