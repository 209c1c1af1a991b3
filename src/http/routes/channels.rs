//! Channels and subscriptions (`/users/me/subscriptions`, `/channels/create`, `/streams...`, `/get_stream_id`,
//! `/default_streams`), a channel's email address and the deletion of a topic.

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::{ChannelId, UserId};
use agora_actors::realm::catalog;
use agora_actors::realm::channels::{
    ArchiveChannel, ChannelOptions, ChannelQuery, ChannelUpdate, CreateChannel, Principals, QueryChannels,
    SetDefaultChannel, StreamFilter, Subscribe, SubscribeRequest, Unsubscribe, UpdateChannel,
};
use agora_actors::realm::chat::changes::delete_topic::{DeleteTopic, TIME_LIMIT};
use agora_actors::ApiError;
use serde_json::{json, Map, Value};

use super::events::include_subscribers;
use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Admins, Guarded};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use agora_actors::json_object;
use agora_actors::realm::topics::properties::is_hex_color;

/// The channel endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/users/me/subscriptions")
                .route(Method::GET, get_subscriptions)
                .route(Method::POST, subscribe)
                .route(Method::DELETE, unsubscribe)
                .build(),
        )
        .service(Endpoint::new("/channels/create").route(Method::POST, create_channel).build())
        .service(Endpoint::new("/streams").route(Method::GET, get_streams).build())
        .service(
            Endpoint::new(r"/streams/{stream_id:\d+}")
                .route(Method::GET, get_stream)
                .route(Method::PATCH, update_stream)
                .route(Method::DELETE, archive_stream)
                .build(),
        )
        .service(Endpoint::new(r"/streams/{stream_id:\d+}/members").route(Method::GET, get_members).build())
        .service(Endpoint::new(r"/streams/{stream_id:\d+}/email_address").route(Method::GET, get_email_address).build())
        .service(Endpoint::new(r"/streams/{stream_id:\d+}/delete_topic").route(Method::POST, delete_topic).build())
        .service(Endpoint::new("/get_stream_id").route(Method::GET, get_stream_id).build())
        .service(
            Endpoint::new(r"/users/{user_id:\d+}/subscriptions/{stream_id:\d+}")
                .route(Method::GET, get_subscription_status)
                .build(),
        )
        .service(Endpoint::new(r"/users/{user_id:\d+}/channels").route(Method::GET, get_user_channels).build())
        .service(
            Endpoint::new("/default_streams")
                .route(Method::GET, get_default_streams)
                .route(Method::POST, add_default_stream)
                .route(Method::DELETE, remove_default_stream)
                .build(),
        )
}

/// `GET /streams/{stream_id}/email_address`: `sender_id` is a JSON integer. Zulip's
/// `NonNegativeInt` has no message for a negative one (its server fails with a 500); Agora
/// refuses it as an invalid parameter instead, since bad input never gets a 500.
async fn get_email_address(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let sender_id = params.int("sender_id")?;
    if sender_id.is_some_and(|id| id < 0) {
        return Err(ApiError::bad_request("Invalid sender_id").into());
    }
    let query = ChannelQuery::EmailAddress(ChannelId(path_id(&path)), sender_id);
    let data = auth.realm.addr.send(QueryChannels { viewer: auth.user.user_id, query }).await??;
    Ok(params.success(data))
}

/// `POST /streams/{stream_id}/delete_topic` (administrators, checked before `topic_name`):
/// `{"complete": bool}`; `false` asks the client to call again for the rest.
async fn delete_topic(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let topic_name = params.required_str("topic_name")?;
    let msg = DeleteTopic { acting: auth.user.user_id, stream_id: path_id(&path), topic_name, time_limit: TIME_LIMIT };
    let complete = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "complete": complete }))))
}

/// `principals`: a JSON list of user ids or of emails.
fn principals(params: &Params) -> Result<Option<Principals>, ApiError> {
    let Some(value) = params.decode("principals", decode::json)? else { return Ok(None) };
    let items = value.as_array().ok_or_else(|| ApiError::bad_request("principals is not an allowed_type"))?;
    if items.iter().all(Value::is_i64) {
        return Ok(Some(Principals::Ids(items.iter().filter_map(Value::as_i64).collect())));
    }
    let mut emails = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let email = item
            .as_str()
            .ok_or_else(|| ApiError::bad_request(format!("principals[\"list[str]\"][{i}] is not a string")))?;
        emails.push(email.to_owned());
    }
    Ok(Some(Principals::Emails(emails)))
}

/// `message_retention_days`: a number, or `realm_default` / `unlimited` (raw or quoted).
fn retention(params: &Params) -> Option<Value> {
    params.str("message_retention_days").map(|raw| serde_json::from_str(&raw).unwrap_or(Value::String(raw)))
}

/// A string parameter the Python client sends raw and other clients JSON-quote.
fn loose_str(params: &Params, name: &str) -> Option<String> {
    params.str(name).map(|raw| match serde_json::from_str::<Value>(&raw) {
        Ok(Value::String(s)) => s,
        _ => raw,
    })
}

/// The channel permission parameters given, as raw JSON values.
fn channel_group_settings(params: &Params) -> Result<Vec<(String, Value)>, ApiError> {
    let mut given = Vec::new();
    for permission in catalog::CHANNEL_PERMISSION_SETTINGS {
        if let Some(value) = params.decode(permission.name, decode::json)? {
            given.push((permission.name.to_owned(), value));
        }
    }
    Ok(given)
}

/// The creation settings shared by `POST /users/me/subscriptions` and `/channels/create`.
fn channel_options(params: &Params) -> Result<ChannelOptions, ApiError> {
    let folder_id = match params.decode("folder_id", decode::json)? {
        None | Some(Value::Null) => None,
        Some(v) => Some(decode::as_integer("folder_id", &v)?),
    };
    Ok(ChannelOptions {
        invite_only: params.bool_or("invite_only", false)?,
        is_web_public: params.bool_or("is_web_public", false)?,
        is_default_stream: params.bool_or("is_default_stream", false)?,
        history_public_to_subscribers: params.bool("history_public_to_subscribers")?,
        message_retention_days: retention(params),
        topics_policy: loose_str(params, "topics_policy"),
        folder_id,
        settings: channel_group_settings(params)?,
    })
}

/// The entries of `subscriptions`: `{name, description?, color?}` each, with Zulip's
/// messages for a wrong shape; `color` must be a hex color.
fn subscription_entries(params: &Params) -> Result<SubscriptionEntries, ApiError> {
    let items =
        params.decode("subscriptions", decode::list)?.ok_or_else(|| ApiError::missing_argument("subscriptions"))?;
    let (mut channels, mut colors) = (Vec::new(), BTreeMap::new());
    for (i, item) in items.iter().enumerate() {
        let obj = item.as_object().ok_or_else(|| ApiError::bad_request(format!("subscriptions[{i}] is not a dict")))?;
        let optional = |key: &str| match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::bad_request(format!("subscriptions[{i}][\"{key}\"] is not a string"))),
        };
        let name = optional("name")?.ok_or_else(|| {
            ApiError::bad_request(format!("subscriptions[{i}][\"name\"] field is missing: Field required"))
        })?;
        if let Some(color) = optional("color")? {
            if !is_hex_color(&color) {
                return Err(ApiError::bad_request("color is not a valid hex color code"));
            }
            colors.insert(name.trim().to_lowercase(), color);
        }
        channels.push((name, optional("description")?));
    }
    Ok((channels, colors))
}

/// The channel entries of a subscription request and the colors asked for them.
type SubscriptionEntries = (Vec<(String, Option<String>)>, BTreeMap<String, String>);

/// `POST /users/me/subscriptions`.
async fn subscribe(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let (channels, colors) = subscription_entries(&params)?;
    let announce = params.bool_or("announce", false)?;
    let request = SubscribeRequest {
        channels,
        colors,
        principals: principals(&params)?,
        authorization_errors_fatal: params.bool_or("authorization_errors_fatal", true)?,
        send_new_subscription_messages: params.bool_or("send_new_subscription_messages", true)?,
        announce,
        options: channel_options(&params)?,
    };
    let result = auth.realm.addr.send(Subscribe { acting: auth.user.user_id, request }).await??;
    Ok(params.success(result.to_json()))
}

/// `POST /channels/create`.
async fn create_channel(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let name = params.required_str("name")?;
    let subscribers =
        params.decode("subscribers", decode::integer_list)?.ok_or_else(|| ApiError::missing_argument("subscribers"))?;
    let announce = params.bool_or("announce", false)?;
    let msg = CreateChannel {
        acting: auth.user.user_id,
        name,
        description: params.str("description"),
        subscribers,
        send_new_subscription_messages: params.bool_or("send_new_subscription_messages", true)?,
        announce,
        options: channel_options(&params)?,
    };
    let id = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "id": id }))))
}

/// `DELETE /users/me/subscriptions`.
async fn unsubscribe(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let names = params
        .decode("subscriptions", decode::string_list)?
        .ok_or_else(|| ApiError::missing_argument("subscriptions"))?;
    let msg = Unsubscribe { acting: auth.user.user_id, names, principals: principals(&params)? };
    let out = auth.realm.addr.send(msg).await??;
    Ok(params.success(out))
}

/// Sends a read and renders its fields.
async fn query(auth: &Authed, params: &Params, query: ChannelQuery) -> Result<Success, HttpError> {
    let out: Map<String, Value> = auth.realm.addr.send(QueryChannels { viewer: auth.user.user_id, query }).await??;
    Ok(params.success(out))
}

/// `GET /users/me/subscriptions`.
async fn get_subscriptions(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let include = params.decode("include_subscribers", include_subscribers)?.unwrap_or_default();
    query(&auth, &params, ChannelQuery::Subscriptions(include)).await
}

/// `GET /streams`.
async fn get_streams(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let d = StreamFilter::default();
    let include_all = params.bool_or("include_all", false)? || params.bool_or("include_all_active", false)?;
    let filter = StreamFilter {
        include_public: params.bool_or("include_public", d.include_public)?,
        include_web_public: params.bool_or("include_web_public", d.include_web_public)?,
        include_subscribed: params.bool_or("include_subscribed", d.include_subscribed)?,
        exclude_archived: params.bool_or("exclude_archived", d.exclude_archived)?,
        include_all,
        include_default: params.bool_or("include_default", d.include_default)?,
        include_owner_subscribed: params.bool_or("include_owner_subscribed", d.include_owner_subscribed)?,
        include_can_access_content: params.bool_or("include_can_access_content", d.include_can_access_content)?,
    };
    query(&auth, &params, ChannelQuery::Streams(filter)).await
}

/// `GET /streams/{stream_id}`.
async fn get_stream(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    query(&auth, &params, ChannelQuery::Stream(ChannelId(path_id(&path)))).await
}

/// `GET /streams/{stream_id}/members`.
async fn get_members(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    query(&auth, &params, ChannelQuery::Members(ChannelId(path_id(&path)))).await
}

/// `GET /get_stream_id`.
async fn get_stream_id(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let name = params.required_str("stream")?;
    query(&auth, &params, ChannelQuery::StreamId(name)).await
}

/// `GET /users/{user_id}/subscriptions/{stream_id}`.
async fn get_subscription_status(
    auth: Authed,
    path: web::Path<(String, String)>,
    params: Params,
) -> Result<Success, HttpError> {
    let (user, stream) = path.into_inner();
    query(&auth, &params, ChannelQuery::IsSubscribed(UserId(path_id(&user)), ChannelId(path_id(&stream)))).await
}

/// `GET /users/{user_id}/channels` (FL 440).
async fn get_user_channels(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    query(&auth, &params, ChannelQuery::UserChannels(UserId(path_id(&path)))).await
}

/// `PATCH /streams/{stream_id}`.
async fn update_stream(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let folder_id = match params.decode("folder_id", decode::json)? {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(decode::as_integer("folder_id", &v)?)),
    };
    let update = ChannelUpdate {
        new_name: params.str("new_name"),
        description: params.str("description"),
        is_private: params.bool("is_private")?,
        is_web_public: params.bool("is_web_public")?,
        history_public_to_subscribers: params.bool("history_public_to_subscribers")?,
        is_default_stream: params.bool("is_default_stream")?,
        message_retention_days: retention(&params),
        topics_policy: loose_str(&params, "topics_policy"),
        is_archived: params.bool("is_archived")?,
        folder_id,
        settings: channel_group_settings(&params)?,
    };
    let msg = UpdateChannel { acting: auth.user.user_id, channel_id: ChannelId(path_id(&path)), update };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /streams/{stream_id}`.
async fn archive_stream(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = ArchiveChannel { acting: auth.user.user_id, channel_id: ChannelId(path_id(&path)) };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `POST /default_streams` and `DELETE /default_streams` (`stream_id`).
async fn set_default(auth: Authed, params: Params, add: bool) -> Result<Success, HttpError> {
    let id = params.int("stream_id")?.ok_or_else(|| ApiError::missing_argument("stream_id"))?;
    let msg = SetDefaultChannel { acting: auth.user.user_id, channel_id: ChannelId(id), add };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `GET /default_streams`.
async fn get_default_streams(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let msg = QueryChannels { viewer: auth.user.user_id, query: ChannelQuery::DefaultStreams };
    Ok(params.success(auth.realm.addr.send(msg).await??))
}

/// `POST /default_streams`.
async fn add_default_stream(auth: Authed, params: Params) -> Result<Success, HttpError> {
    set_default(auth, params, true).await
}

/// `DELETE /default_streams`.
async fn remove_default_stream(auth: Authed, params: Params) -> Result<Success, HttpError> {
    set_default(auth, params, false).await
}
