//! Messages (`/messages...`, `/mark_*_as_read`, `/typing`).

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, Scope};
use agora_actors::ids::{ChannelId, MessageId};
use agora_actors::realm::chat::changes::delete::DeleteMessage;
use agora_actors::realm::chat::changes::history::GetMessageHistory;
use agora_actors::realm::chat::changes::reactions::{AddReaction, RemoveReaction};
use agora_actors::realm::chat::changes::typing::{SetTyping, TypingTo};
use agora_actors::realm::chat::changes::typing_edit::SetEditTyping;
use agora_actors::realm::chat::edit::{PropagateMode, UpdateMessage};
use agora_actors::realm::chat::fetch::{
    parse_anchor_date, Anchor, GetMessage, GetMessages, MatchesNarrow, Range, Rendering,
};
use agora_actors::realm::chat::flags::narrow::UpdateFlagsForNarrow;
use agora_actors::realm::chat::flags::{MarkAllAsRead, MarkChannelAsRead, UpdateMessageFlags};
use agora_actors::realm::chat::narrow::{parse_narrow, NarrowTerm};
use agora_actors::realm::chat::send::{SendMessage, SendTo};
use agora_actors::{server_info, ApiError};
use serde_json::{json, Map, Value};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The message endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/messages/flags").route(Method::POST, update_message_flags).build())
        .service(Endpoint::new("/messages/flags/narrow").route(Method::POST, update_flags_for_narrow).build())
        .service(Endpoint::new("/mark_all_as_read").route(Method::POST, mark_all_as_read).build())
        .service(Endpoint::new("/mark_stream_as_read").route(Method::POST, mark_stream_as_read).build())
        .service(Endpoint::new("/mark_topic_as_read").route(Method::POST, mark_topic_as_read).build())
        .service(
            Endpoint::new(r"/messages/{message_id:\d+}/reactions")
                .route(Method::POST, add_reaction)
                .route(Method::DELETE, remove_reaction)
                .build(),
        )
        .service(Endpoint::new(r"/messages/{message_id:\d+}/history").route(Method::GET, message_history).build())
        .service(Endpoint::new("/typing").route(Method::POST, set_typing).build())
        .service(Endpoint::new(r"/messages/{message_id:\d+}/typing").route(Method::POST, set_edit_typing).build())
        .service(Endpoint::new("/messages").route(Method::POST, send_message).route(Method::GET, get_messages).build())
        .service(Endpoint::new("/messages/matches_narrow").route(Method::GET, matches_narrow).build())
        .service(
            Endpoint::new(r"/messages/{message_id:\d+}")
                .route(Method::GET, get_message)
                .route(Method::DELETE, delete_message)
                .route(Method::PATCH, update_message)
                .build(),
        )
}

/// `POST /messages/flags`.
pub async fn update_message_flags(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let flag = params.required_str("flag")?;
    let messages = message_ids(&params, "messages")?.ok_or_else(|| ApiError::missing_argument("messages"))?;
    let op = params.required_str("op")?;
    let msg = UpdateMessageFlags { user_id: auth.user.user_id, messages, op, flag };
    let data = auth.realm.addr.send(msg).await??;
    Ok(params.success(data))
}

/// A JSON list of message ids.
fn message_ids(params: &Params, name: &str) -> Result<Option<Vec<MessageId>>, ApiError> {
    Ok(params.decode(name, decode::integer_list)?.map(|ids| ids.into_iter().map(MessageId).collect()))
}

/// A message id in the path.
fn message_id(path: &str) -> MessageId {
    MessageId(path_id(path))
}

/// `POST /mark_all_as_read`.
pub async fn mark_all_as_read(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let data = auth.realm.addr.send(MarkAllAsRead { user_id: auth.user.user_id }).await??;
    Ok(params.success(data))
}

/// The required `stream_id` of the mark-as-read endpoints.
fn stream_id(params: &Params) -> Result<ChannelId, ApiError> {
    params.int("stream_id")?.map(ChannelId).ok_or_else(|| ApiError::missing_argument("stream_id"))
}

/// `POST /mark_stream_as_read`.
pub async fn mark_stream_as_read(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let channel_id = stream_id(&params)?;
    auth.realm.addr.send(MarkChannelAsRead { user_id: auth.user.user_id, channel_id, topic: None }).await??;
    Ok(params.ok())
}

/// `POST /mark_topic_as_read`.
pub async fn mark_topic_as_read(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let channel_id = stream_id(&params)?;
    let topic = Some(params.required_str("topic_name")?);
    auth.realm.addr.send(MarkChannelAsRead { user_id: auth.user.user_id, channel_id, topic }).await??;
    Ok(params.ok())
}

/// `POST /messages/{message_id}/reactions`.
async fn add_reaction(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = AddReaction {
        user_id: auth.user.user_id,
        message_id: message_id(&path),
        emoji_name: params.required_str("emoji_name")?,
        emoji_code: params.str("emoji_code"),
        reaction_type: params.str("reaction_type"),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /messages/{message_id}/reactions`.
async fn remove_reaction(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = RemoveReaction {
        user_id: auth.user.user_id,
        message_id: message_id(&path),
        emoji_name: params.str("emoji_name"),
        emoji_code: params.str("emoji_code"),
        reaction_type: params.str("reaction_type"),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /messages/{message_id}`.
async fn delete_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(DeleteMessage { user_id: auth.user.user_id, message_id: message_id(&path) }).await??;
    Ok(params.ok())
}

/// `PATCH /messages/{message_id}`: edit content, topic or channel.
async fn update_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let mode = params.str("propagate_mode");
    let send_notification_to_old_thread = params.bool_or("send_notification_to_old_thread", false)?;
    let send_notification_to_new_thread = params.bool_or("send_notification_to_new_thread", true)?;
    let msg = UpdateMessage {
        send_notification_to_old_thread,
        send_notification_to_new_thread,
        user_id: auth.user.user_id,
        message_id: message_id(&path),
        content: params.str("content"),
        topic: params.str("topic").or_else(|| params.str("subject")),
        stream_id: params.int("stream_id")?,
        propagate_mode: mode.as_deref().map_or(Ok(PropagateMode::ChangeOne), PropagateMode::parse)?,
        prev_content_sha256: params.str("prev_content_sha256"),
    };
    let detached = auth.realm.addr.send(msg).await??;
    let mut data = Map::new();
    data.insert("detached_uploads".to_owned(), json!(detached));
    Ok(params.success(data))
}

/// `GET /messages/{message_id}/history`.
async fn message_history(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = GetMessageHistory {
        user_id: auth.user.user_id,
        message_id: message_id(&path),
        allow_empty_topic_name: params.bool_or("allow_empty_topic_name", false)?,
    };
    let history = auth.realm.read(msg).await??;
    let mut data = Map::new();
    data.insert("message_history".to_owned(), Value::Array(history));
    Ok(params.success(data))
}

/// One of the values a string parameter allows, else Zulip's "Invalid {name}".
fn choice(params: &Params, name: &str, allowed: &[&str]) -> Result<Option<String>, ApiError> {
    match params.str(name) {
        Some(value) if !allowed.contains(&value.as_str()) => Err(ApiError::bad_request(format!("Invalid {name}"))),
        value => Ok(value),
    }
}

/// `POST /typing`.
async fn set_typing(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let kind = choice(&params, "type", &["direct", "stream", "channel"])?;
    let op = choice(&params, "op", &["start", "stop"])?.ok_or_else(|| ApiError::missing_argument("op"))?;
    // Every parameter is read (and validated) whatever the type, as Zulip declares them all.
    let user_ids = params.decode("to", decode::integer_list)?;
    let (stream_id, topic) = (params.int("stream_id")?, params.str("topic"));
    let to = match kind.as_deref() {
        Some("stream" | "channel") => TypingTo::Channel { stream_id, topic },
        _ => TypingTo::Direct(user_ids),
    };
    auth.realm.addr.send(SetTyping { user_id: auth.user.user_id, op, to }).await??;
    Ok(params.ok())
}

/// `POST /messages/{message_id}/typing`: `op` while editing the message.
async fn set_edit_typing(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let op = choice(&params, "op", &["start", "stop"])?.ok_or_else(|| ApiError::missing_argument("op"))?;
    let msg = SetEditTyping { user_id: auth.user.user_id, message_id: message_id(&path), op };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// The sending client's name (from its `User-Agent`), as `POST /messages` records it.
pub(super) fn client(req: &HttpRequest) -> String {
    let agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    match server_info::client_name(agent) {
        "" => "Unspecified".to_owned(),
        name => name.chars().take(30).collect(),
    }
}

/// `topic`, or its old name `subject`.
pub(super) fn topic_param(params: &Params) -> Option<String> {
    params.str("topic").or_else(|| params.str("subject"))
}

/// `POST /messages`.
pub async fn send_message(auth: Authed, req: HttpRequest, params: Params) -> Result<Success, HttpError> {
    let kind = params.required_str("type")?;
    let to = params.required_str("to")?;
    let to = SendTo::parse(&kind, &to)?;
    let topic = topic_param(&params);
    let content = params.required_str("content")?;
    let client = client(&req);
    let msg = SendMessage {
        sender: auth.user.user_id,
        to,
        topic,
        content,
        client,
        queue_id: params.str("queue_id"),
        local_id: params.str("local_id"),
        read_by_sender: params.bool("read_by_sender")?,
    };
    let sent = auth.realm.addr.send(msg).await??;
    let mut out = Map::new();
    out.insert("id".into(), json!(sent.id));
    if let Some(policy) = sent.automatic_new_visibility_policy {
        out.insert("automatic_new_visibility_policy".into(), json!(policy));
    }
    Ok(params.success(out))
}

/// `narrow`: a JSON list of terms in either form.
fn narrow_param(params: &Params) -> Result<Vec<NarrowTerm>, ApiError> {
    match params.decode("narrow", decode::json)? {
        Some(value) => parse_narrow(&value),
        None => Ok(Vec::new()),
    }
}

/// `apply_markdown`, `client_gravatar` and `allow_empty_topic_name`.
fn rendering(params: &Params) -> Result<Rendering, ApiError> {
    Ok(Rendering {
        apply_markdown: params.bool_or("apply_markdown", true)?,
        client_gravatar: params.bool_or("client_gravatar", true)?,
        allow_empty_topic_name: params.bool_or("allow_empty_topic_name", false)?,
    })
}

/// A non-negative JSON integer parameter.
fn count(params: &Params, name: &str) -> Result<Option<i64>, ApiError> {
    match params.int(name)? {
        Some(n) if n < 0 => Err(ApiError::bad_request(format!("{name} is too small"))),
        other => Ok(other),
    }
}

/// `GET /messages`.
pub async fn get_messages(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let anchor_raw = params.str("anchor");
    let num_before = count(&params, "num_before")?;
    let num_after = count(&params, "num_after")?;
    let include_anchor = params.bool("include_anchor")?;
    let use_first_unread = params.bool("use_first_unread_anchor")?;
    let narrow = narrow_param(&params)?;
    let message_ids = message_ids(&params, "message_ids")?;
    let rendering = rendering(&params)?;
    if message_ids.is_some() {
        let combined = anchor_raw.is_some()
            || num_before.is_some()
            || num_after.is_some()
            || include_anchor.is_some()
            || use_first_unread.is_some();
        if combined {
            return Err(ApiError::bad_request(
                "Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor",
            )
            .into());
        }
    }
    let anchor_date = params.str("anchor_date");
    let anchor = match (&message_ids, use_first_unread.unwrap_or(false), anchor_raw) {
        (Some(_), _, _) | (None, true, _) => Anchor::FirstUnread,
        // FL 445: the first message on or after `anchor_date`.
        (None, false, Some(raw)) if raw == "date" => {
            let date = anchor_date.ok_or_else(|| ApiError::missing_argument("anchor_date"))?;
            Anchor::Date(parse_anchor_date(&date)?)
        }
        (None, false, Some(raw)) => Anchor::parse(&raw)?,
        (None, false, None) => return Err(ApiError::missing_argument("anchor").into()),
    };
    let msg = GetMessages {
        user_id: auth.user.user_id,
        anchor,
        num_before: num_before.unwrap_or(0),
        num_after: num_after.unwrap_or(0),
        include_anchor: include_anchor.unwrap_or(true),
        narrow,
        rendering,
        message_ids,
    };
    let out = auth.realm.read(msg).await??;
    Ok(params.success(out))
}

/// `GET /messages/{message_id}`.
pub async fn get_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = GetMessage { user_id: auth.user.user_id, message_id: message_id(&path), rendering: rendering(&params)? };
    let out = auth.realm.read(msg).await??;
    Ok(params.success(out))
}

/// `GET /messages/matches_narrow`: `msg_ids` and `narrow`.
pub async fn matches_narrow(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let message_ids = message_ids(&params, "msg_ids")?.ok_or_else(|| ApiError::missing_argument("msg_ids"))?;
    let narrow = narrow_param(&params)?;
    if params.str("narrow").is_none() {
        return Err(ApiError::missing_argument("narrow").into());
    }
    let out = auth.realm.read(MatchesNarrow { user_id: auth.user.user_id, message_ids, narrow }).await??;
    Ok(params.success(out))
}

/// `POST /messages/flags/narrow`: parameters read in Zulip's order.
pub async fn update_flags_for_narrow(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let anchor = params.required_str("anchor")?;
    let include_anchor = params.bool_or("include_anchor", true)?;
    let num_before = count(&params, "num_before")?.ok_or_else(|| ApiError::missing_argument("num_before"))?;
    let num_after = count(&params, "num_after")?.ok_or_else(|| ApiError::missing_argument("num_after"))?;
    if params.str("narrow").is_none() {
        return Err(ApiError::missing_argument("narrow").into());
    }
    let narrow = narrow_param(&params)?;
    let op = params.required_str("op")?;
    let flag = params.required_str("flag")?;
    let range = Range { anchor: Anchor::parse(&anchor)?, num_before, num_after, include_anchor };
    let msg = UpdateFlagsForNarrow { user_id: auth.user.user_id, range, narrow, op, flag };
    let data = auth.realm.addr.send(msg).await??;
    Ok(params.success(data))
}
