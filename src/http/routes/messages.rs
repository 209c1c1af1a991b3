//! Messages (`/messages...`, `/mark_*_as_read`, `/typing`).

use actix_web::http::Method;
use actix_web::Scope;
use agora_actors::ids::ChannelId;
use agora_actors::realm::chat::flags::{MarkAllAsRead, MarkChannelAsRead, UpdateMessageFlags};
use agora_actors::ApiError;

use super::Endpoint;
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
