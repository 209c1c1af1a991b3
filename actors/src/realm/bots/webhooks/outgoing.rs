//! Outgoing webhooks, on the realm actor's side: which new messages trigger an
//! outgoing-webhook bot (Zulip's `get_service_bot_events`: a mention in a channel, or a
//! direct message with the bot), the job each one gives the worker, written in the
//! message's own transaction ([`WithServices`]), and the bot's reply once the worker has it
//! ([`BotReply`]). The worker itself (`crate::outgoing_webhooks`) never touches an actor's
//! thread.

use actix::prelude::*;
use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use crate::error::ApiResult;
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::bot_data::OUTGOING_WEBHOOK_BOT;
use crate::realm::chat::send::{plan_notice, Notice, NoticeTo, PlannedMessage, SentMessage};
use crate::realm::notices::texts;
use crate::realm::notifications::WithPush;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store::bots::{self as db, WebhookJob};

/// One bot a message triggers.
#[derive(Debug, Clone)]
struct Trigger {
    bot: UserId,
    url: String,
    interface: i64,
    /// The request's body but the message's id (known once written).
    request: Map<String, Value>,
}

/// A message send with the outgoing-webhook jobs it triggers.
pub struct WithServices {
    inner: WithPush,
    triggers: Vec<Trigger>,
    realm_id: crate::ids::RealmId,
    reply_to: Value,
}

/// Plans the jobs of a message (none when its sender is a bot, as Zulip avoids loops).
pub fn with_services(state: &RealmState, inner: WithPush) -> WithServices {
    let message = inner.message();
    let triggers = triggers(state, message);
    let reply_to = match (triggers.is_empty(), message.channel_id()) {
        (true, _) => Value::Null,
        (false, Some(channel)) => json!({"channel_id": channel, "topic": message.topic()}),
        (false, None) => json!({"direct": message.recipients()}),
    };
    WithServices { inner, triggers, realm_id: state.realm().id, reply_to }
}

/// The change that sends a planned message as `POST /messages` does: with its push
/// notifications and the outgoing-webhook jobs it triggers. Every way a user's message is
/// sent (the API, scheduled delivery, incoming webhooks) goes through it.
pub fn sending(actor: &RealmActor, planned: PlannedMessage) -> WithServices {
    let context = crate::realm::notifications::PushContext::of(actor);
    with_services(&actor.state, crate::realm::notifications::with_push(&actor.state, planned, context))
}

impl WithServices {
    /// The message sent.
    pub fn message(&self) -> &PlannedMessage {
        self.inner.message()
    }
}

fn triggers(state: &RealmState, message: &PlannedMessage) -> Vec<Trigger> {
    if state.user(message.sender()).is_none_or(|s| s.is_bot) {
        return Vec::new();
    }
    // Only the users the message names can be triggered: its mentions in a channel, its
    // participants in a direct message (both in ascending id order), never a walk of every
    // user on each send.
    let (named, trigger): (Vec<UserId>, &str) = match message.channel_id() {
        Some(_) => (message.mentioned_users().iter().copied().collect(), "mention"),
        None => (message.recipients().to_vec(), "direct_message"),
    };
    let bots = named
        .into_iter()
        .filter_map(|id| state.user(id))
        .filter(|u| u.is_active && u.bot_type == Some(OUTGOING_WEBHOOK_BOT));
    let mut out = Vec::new();
    let mut dict = None;
    for bot in bots {
        let Some(service) = state.bots().service(bot.id) else { continue };
        let dict = dict.get_or_insert_with(|| {
            // Zulip's `finalize_payload(apply_markdown=False, client_gravatar=False,
            // keep_rendered_content=True)`.
            let mut m = message.event_dict(state);
            m.remove("avatar_computable");
            m
        });
        let request = crate::json_object(json!({
            "data": dict.get("content").cloned().unwrap_or_default(),
            "message": dict,
            "bot_email": bot.email,
            "bot_full_name": bot.full_name,
            "token": service.token,
            "trigger": trigger,
        }));
        out.push(Trigger { bot: bot.id, url: service.base_url.clone(), interface: service.interface, request });
    }
    out
}

impl Change for WithServices {
    type Output = SentMessage;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        self.inner.write(tx)?;
        let id = self.inner.message().id();
        let now_ms = crate::clock::now_micros() / 1000;
        for t in &mut self.triggers {
            if let Some(Value::Object(m)) = t.request.get_mut("message") {
                m.insert("id".into(), json!(id));
            }
            let payload = json!({"request": t.request, "reply_to": self.reply_to});
            let job = WebhookJob {
                id: 0,
                realm_id: self.realm_id,
                bot_id: t.bot,
                message_id: id.0,
                url: t.url.clone(),
                interface: t.interface,
                payload,
                attempts: 0,
            };
            db::insert_job(tx, &job, now_ms)?;
        }
        Ok(())
    }

    fn apply(self, state: &mut RealmState) -> Applied<SentMessage> {
        let queued = !self.triggers.is_empty();
        let applied = self.inner.apply(state);
        if queued {
            crate::outgoing_webhooks::wake();
        }
        applied
    }
}

/// Where a bot's reply goes: the triggering message's topic, or its direct-message
/// conversation.
pub fn reply_target(reply_to: &Value) -> Option<NoticeTo> {
    if let Some(channel) = reply_to.get("channel_id").and_then(Value::as_i64) {
        let topic = reply_to.get("topic").and_then(Value::as_str).unwrap_or_default();
        return Some(NoticeTo::Channel(ChannelId(channel), topic.to_owned()));
    }
    let users = reply_to.get("direct")?.as_array()?;
    Some(NoticeTo::Direct(users.iter().filter_map(Value::as_i64).map(UserId).collect()))
}

/// Why a bot's owner hears of a request (Zulip's `notify_bot_owner` arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerNote {
    pub status_code: Option<u16>,
    /// The response's body, as Python's `repr` shows it.
    pub response_content: Option<String>,
    pub failure_message: Option<String>,
    /// The exception's type and text.
    pub exception: Option<(String, String)>,
}

impl RealmActor {
    /// A link to a message (Zulip's `message_link_url`).
    fn message_link(&self, message_id: i64, reply_to: &Value) -> String {
        let base = self.config.realm_url(&self.state.realm().subdomain);
        match reply_target(reply_to) {
            Some(NoticeTo::Channel(id, topic)) => {
                let name = self.state.channel(id).map(|c| c.name.as_str()).unwrap_or_default();
                texts::message_url(&base, id, name, &topic, MessageId(message_id))
            }
            Some(NoticeTo::Direct(users)) => {
                let ids: Vec<String> = users.iter().map(|u| u.0.to_string()).collect();
                format!("{base}/#narrow/dm/{}-dm/near/{message_id}", ids.join(","))
            }
            None => base,
        }
    }

    /// Zulip's `notify_bot_owner` message.
    fn owner_note(&self, bot: &str, message_id: i64, reply_to: &Value, note: &OwnerNote) -> String {
        let url = self.message_link(message_id, reply_to);
        let mut text = format!("[A message]({url}) to your bot @_**{bot}** triggered an outgoing webhook.");
        if let Some((kind, exception)) = &note.exception {
            text.push_str(&format!(
                "\nWhen trying to send a request to the webhook service, an exception of type {kind} occurred:\n```\n{exception}\n```"
            ));
        } else if let Some(failure) = &note.failure_message {
            text.push_str(&format!("\n{failure}"));
        } else if note.status_code == Some(407) {
            text.push_str("\nThe URL configured for the webhook is for a private or disallowed network.");
        } else if let Some(code) = note.status_code {
            text.push_str(&format!("\nThe webhook got a response with status code *{code}*."));
        }
        if let Some(content) = &note.response_content {
            text.push_str(&format!("\nThe response contains the following payload:\n```\n{content}\n```"));
        }
        text
    }
}

/// What the worker has for a bot's realm once a request is done: the bot's reply where the
/// message was, and a note to the bot's owner about a failure (a direct message from the
/// bot, as Zulip's `notify_bot_owner`).
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct BotReply {
    pub bot: UserId,
    /// The message that triggered the request.
    pub message_id: i64,
    pub reply_to: Value,
    pub content: Option<String>,
    pub owner_note: Option<OwnerNote>,
}

impl Handler<BotReply> for RealmActor {
    type Result = ApiResult<()>;

    /// Posts as the bot without the channel checks of a send (Zulip's
    /// `send_response_message`); a channel gone since is no error.
    fn handle(&mut self, msg: BotReply, _: &mut Self::Context) -> Self::Result {
        let Some(bot) = self.state.user(msg.bot).filter(|b| b.is_active) else { return Ok(()) };
        let (owner, name) = (bot.bot_owner_id, bot.full_name.clone());
        let mut notices = Vec::new();
        if let (Some(content), Some(to)) = (msg.content, reply_target(&msg.reply_to)) {
            notices.push(Notice::new(msg.bot, to, content));
        }
        if let (Some(note), Some(owner)) = (msg.owner_note, owner) {
            let text = self.owner_note(&name, msg.message_id, &msg.reply_to, &note);
            notices.push(Notice::new(msg.bot, NoticeTo::Direct(vec![owner]), text));
        }
        for notice in notices {
            let listeners = self.all_public_streams_listeners();
            match plan_notice(&self.state, notice, &listeners, crate::clock::now()) {
                Ok(change) => {
                    self.commit(change)?;
                }
                Err(e) => tracing::info!(user.id = %msg.bot, error = %e.msg, "a bot's reply has nowhere to go"),
            }
        }
        Ok(())
    }
}
