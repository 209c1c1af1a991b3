//! Scheduled messages (`/scheduled_messages`, `/scheduled_messages/{scheduled_message_id}`)
//! and reminders (`/reminders`, `/reminders/{reminder_id}`).

use actix_web::http::Method;
use actix_web::{web, HttpRequest, Scope};
use agora_actors::json_object;
use agora_actors::realm::scheduled::{
    CreateReminder, DeleteScheduled, EditScheduledMessage, Kind, ListReminders, ListScheduledMessages, NewReminder,
    NewScheduled, ScheduleMessage, ScheduledEdit, To,
};
use agora_actors::ApiError;
use serde_json::{json, Value};

use super::messages::{client, topic_param};
use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The scheduled messages and reminders endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(
            Endpoint::new("/scheduled_messages")
                .route(Method::GET, list_scheduled_messages)
                .route(Method::POST, schedule_message)
                .build(),
        )
        .service(
            Endpoint::new(r"/scheduled_messages/{scheduled_message_id:\d+}")
                .route(Method::PATCH, edit_scheduled_message)
                .route(Method::DELETE, delete_scheduled_message)
                .build(),
        )
        .service(
            Endpoint::new("/reminders").route(Method::GET, list_reminders).route(Method::POST, create_reminder).build(),
        )
        .service(Endpoint::new(r"/reminders/{reminder_id:\d+}").route(Method::DELETE, delete_reminder).build())
}

/// `to`: a JSON integer (a channel id) or list of integers (user ids).
fn to_param(name: &str, raw: &str) -> Result<To, ApiError> {
    match decode::json(name, raw)? {
        Value::Array(items) => {
            let ids: Option<Vec<i64>> = items.iter().map(Value::as_i64).collect();
            ids.map(To::Many).ok_or_else(|| ApiError::bad_request("Recipient list may only contain user IDs"))
        }
        value => decode::as_integer(name, &value).map(To::One),
    }
}

/// `type`: one of Zulip's recipient types.
fn kind_param(name: &str, raw: &str) -> Result<Kind, ApiError> {
    Kind::parse(raw).map_err(|_| ApiError::bad_request(format!("Invalid {name}")))
}

/// `GET /scheduled_messages`.
async fn list_scheduled_messages(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let list = auth.realm.addr.send(ListScheduledMessages { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "scheduled_messages": list }))))
}

/// `POST /scheduled_messages`: `content`, `read_by_sender`, `to`, `type`,
/// `scheduled_delivery_timestamp` (checked in that order) and `topic`; replies with
/// `scheduled_message_id`.
async fn schedule_message(auth: Authed, req: HttpRequest, params: Params) -> Result<Success, HttpError> {
    let content = params.required_str("content")?;
    let read_by_sender = params.bool("read_by_sender")?;
    let to = params.decode("to", to_param)?.ok_or_else(|| ApiError::missing_argument("to"))?;
    let kind = params.decode("type", kind_param)?.ok_or_else(|| ApiError::missing_argument("type"))?;
    let deliver_at = params
        .int("scheduled_delivery_timestamp")?
        .ok_or_else(|| ApiError::missing_argument("scheduled_delivery_timestamp"))?;
    let message = NewScheduled {
        kind,
        to,
        topic: topic_param(&params),
        content,
        deliver_at,
        read_by_sender,
        client: client(&req),
    };
    let id = auth.realm.addr.send(ScheduleMessage { user_id: auth.user.user_id, message }).await??;
    Ok(params.success(json_object(json!({ "scheduled_message_id": id }))))
}

/// `PATCH /scheduled_messages/{scheduled_message_id}`: any of `content`, `type`,
/// `scheduled_delivery_timestamp`, `to` and `topic`.
async fn edit_scheduled_message(
    auth: Authed,
    req: HttpRequest,
    path: web::Path<String>,
    params: Params,
) -> Result<Success, HttpError> {
    let content = params.str("content");
    let kind = params.decode("type", kind_param)?;
    let deliver_at = params.int("scheduled_delivery_timestamp")?;
    let to = params.decode("to", to_param)?;
    let edit = ScheduledEdit { kind, to, topic: topic_param(&params), content, deliver_at, client: client(&req) };
    let msg = EditScheduledMessage { user_id: auth.user.user_id, id: path_id(&path), edit };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /scheduled_messages/{scheduled_message_id}`.
async fn delete_scheduled_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = DeleteScheduled { user_id: auth.user.user_id, id: path_id(&path), reminder: false };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `GET /reminders`.
async fn list_reminders(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let list = auth.realm.addr.send(ListReminders { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "reminders": list }))))
}

/// `POST /reminders`: `message_id`, `scheduled_delivery_timestamp` and `note`; replies with
/// `reminder_id`.
async fn create_reminder(auth: Authed, req: HttpRequest, params: Params) -> Result<Success, HttpError> {
    let message_id = params.int("message_id")?.ok_or_else(|| ApiError::missing_argument("message_id"))?;
    let deliver_at = params
        .int("scheduled_delivery_timestamp")?
        .ok_or_else(|| ApiError::missing_argument("scheduled_delivery_timestamp"))?;
    let reminder = NewReminder { message_id, deliver_at, note: params.str("note"), client: client(&req) };
    let id = auth.realm.addr.send(CreateReminder { user_id: auth.user.user_id, reminder }).await??;
    Ok(params.success(json_object(json!({ "reminder_id": id }))))
}

/// `DELETE /reminders/{reminder_id}`.
async fn delete_reminder(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = DeleteScheduled { user_id: auth.user.user_id, id: path_id(&path), reminder: true };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}
