//! Personal channel and topic settings (`/users/me/subscriptions/properties`,
//! `/users/me/subscriptions/{stream_id}`, `/users/me/subscriptions/muted_topics`,
//! `/user_topics`, `/users/me/{stream_id}/topics`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::realm::catalog::MAX_TOPIC_LENGTH;
use agora_actors::realm::topics::policies::FOLLOWED;
use agora_actors::realm::topics::{
    GetChannelTopics, MuteTopic, PropertyChange, SetUserTopic, TopicChannel, UpdateSubscriptionProperties,
};
use agora_actors::{json_object, ApiError};
use serde_json::{json, Value};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The topic endpoints. Path ids are digits only (Zulip's URL patterns), which also keeps
/// `/users/me/subscriptions/{stream_id}` clear of the literal paths beside it.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/users/me/subscriptions/properties").route(Method::POST, update_properties).build())
        .service(Endpoint::new("/users/me/subscriptions/muted_topics").route(Method::PATCH, update_muted_topic).build())
        .service(
            Endpoint::new(r"/users/me/subscriptions/{stream_id:\d+}").route(Method::PATCH, update_property).build(),
        )
        .service(Endpoint::new("/user_topics").route(Method::POST, update_user_topic).build())
        .service(Endpoint::new(r"/users/me/{stream_id:\d+}/topics").route(Method::GET, get_topics).build())
}

/// A required JSON integer parameter.
fn required_int(params: &Params, name: &str) -> Result<i64, ApiError> {
    params.int(name)?.ok_or_else(|| ApiError::missing_argument(name))
}

/// A topic parameter: required, at most `max_topic_length` characters.
fn topic_param(params: &Params) -> Result<String, ApiError> {
    let topic = params.required_str("topic")?;
    if topic.chars().count() > MAX_TOPIC_LENGTH {
        return Err(ApiError::bad_request(format!("topic is too long (limit: {MAX_TOPIC_LENGTH} characters)")));
    }
    Ok(topic)
}

/// `POST /users/me/subscriptions/properties`: `subscription_data` = `[{stream_id,
/// property, value}]`.
pub async fn update_properties(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let data = params
        .decode("subscription_data", decode::list)?
        .ok_or_else(|| ApiError::missing_argument("subscription_data"))?;
    let changes =
        data.iter().enumerate().map(|(i, item)| PropertyChange::from_json(i, item)).collect::<Result<_, _>>()?;
    auth.realm.addr.send(UpdateSubscriptionProperties { user_id: auth.user.user_id, changes }).await??;
    Ok(params.ok())
}

/// `PATCH /users/me/subscriptions/{stream_id}`: one `property` and its `value` (a JSON
/// boolean, else the raw string).
pub async fn update_property(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let stream_id = path_id(&path);
    let property = params.required_str("property")?;
    let raw = params.required_str("value")?;
    let value = match serde_json::from_str::<Value>(&raw) {
        Ok(Value::Bool(b)) => Value::Bool(b),
        _ => Value::String(raw),
    };
    let changes = vec![PropertyChange::new(stream_id, property, &value)?];
    auth.realm.addr.send(UpdateSubscriptionProperties { user_id: auth.user.user_id, changes }).await??;
    Ok(params.ok())
}

/// `PATCH /users/me/subscriptions/muted_topics`: exactly one of `stream_id` and `stream`,
/// `topic`, `op` = `add` | `remove`.
pub async fn update_muted_topic(auth: Authed, params: Params) -> Result<Success, HttpError> {
    // Zulip's parameter order: op, topic, stream, stream_id.
    let mute = match params.required_str("op")?.as_str() {
        "add" => true,
        "remove" => false,
        _ => return Err(ApiError::bad_request("Invalid op").into()),
    };
    let topic = topic_param(&params)?;
    let stream = params.str("stream");
    let stream_id = params.int("stream_id")?;
    let channel = match (stream_id, stream) {
        (Some(id), None) => TopicChannel::Id(id),
        (None, Some(name)) => TopicChannel::Name(name),
        // Zulip's `check_for_exactly_one_stream_arg`: a plain error with the missing-argument
        // text, and its `IncompatibleParametersError`.
        (None, None) => return Err(ApiError::bad_request("Missing 'stream_id' argument").into()),
        (Some(_), Some(_)) => {
            let both = "stream_id, stream";
            let msg = format!("Unsupported parameter combination: {both}");
            return Err(ApiError::bad_request(msg).with("parameters", both).into());
        }
    };
    auth.realm.addr.send(MuteTopic { user_id: auth.user.user_id, channel, topic, mute }).await??;
    Ok(params.ok())
}

/// `POST /user_topics`: `stream_id`, `topic`, `visibility_policy` (0 to 3).
pub async fn update_user_topic(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let stream_id = required_int(&params, "stream_id")?;
    let topic = topic_param(&params)?;
    let visibility_policy = required_int(&params, "visibility_policy")?;
    if !(0..=FOLLOWED).contains(&visibility_policy) {
        return Err(ApiError::not_in_list("visibility_policy").into());
    }
    let msg = SetUserTopic { user_id: auth.user.user_id, stream_id, topic, visibility_policy };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `GET /users/me/{stream_id}/topics`.
pub async fn get_topics(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let stream_id = path_id(&path);
    let allow_empty_topic_name = params.bool_or("allow_empty_topic_name", false)?;
    let msg = GetChannelTopics { user_id: auth.user.user_id, stream_id, allow_empty_topic_name };
    let topics = auth.realm.read(msg).await??;
    Ok(params.success(json_object(json!({ "topics": topics }))))
}
