//! Messages (`/messages...`, `/mark_*_as_read`, `/typing`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::ChannelId;
use agora_actors::realm::chat::changes::delete::DeleteMessage;
use agora_actors::realm::chat::changes::history::GetMessageHistory;
use agora_actors::realm::chat::changes::reactions::{AddReaction, RemoveReaction};
use agora_actors::realm::chat::changes::typing::{SetTyping, TypingTo};
use agora_actors::realm::chat::flags::{MarkAllAsRead, MarkChannelAsRead, UpdateMessageFlags};
use agora_actors::ApiError;
use serde_json::{Map, Value};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The message endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/messages/flags").route(Method::POST, update_message_flags).build())
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
        .service(Endpoint::new(r"/messages/{message_id:\d+}").route(Method::DELETE, delete_message).build())
        .service(Endpoint::new("/typing").route(Method::POST, set_typing).build())
}

/// `POST /messages/flags`.
pub async fn update_message_flags(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let flag = params.required_str("flag")?;
    let messages =
        params.decode("messages", decode::integer_list)?.ok_or_else(|| ApiError::missing_argument("messages"))?;
    let op = params.required_str("op")?;
    let msg = UpdateMessageFlags { user_id: auth.user.user_id, messages, op, flag };
    let data = auth.realm.addr.send(msg).await??;
    Ok(params.success(data))
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
        message_id: path_id(&path),
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
        message_id: path_id(&path),
        emoji_name: params.str("emoji_name"),
        emoji_code: params.str("emoji_code"),
        reaction_type: params.str("reaction_type"),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /messages/{message_id}`.
async fn delete_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(DeleteMessage { user_id: auth.user.user_id, message_id: path_id(&path) }).await??;
    Ok(params.ok())
}

/// `GET /messages/{message_id}/history`.
async fn message_history(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = GetMessageHistory {
        user_id: auth.user.user_id,
        message_id: path_id(&path),
        allow_empty_topic_name: params.bool_or("allow_empty_topic_name", false)?,
    };
    let history = auth.realm.addr.send(msg).await??;
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
