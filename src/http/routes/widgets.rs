//! Widgets and what readers do with a message besides reacting: `POST /submessage`,
//! `GET /messages/{message_id}/read_receipts`, `POST /messages/{message_id}/report`.

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::MessageId;
use agora_actors::realm::chat::receipts::GetReadReceipts;
use agora_actors::realm::chat::widgets::AddSubmessage;
use agora_actors::realm::notices::reports::ReportMessage;
use agora_actors::ApiError;
use serde_json::{json, Map};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The widget, read receipt and report endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/submessage").route(Method::POST, add_submessage).build())
        .service(Endpoint::new(r"/messages/{message_id:\d+}/read_receipts").route(Method::GET, read_receipts).build())
        .service(Endpoint::new(r"/messages/{message_id:\d+}/report").route(Method::POST, report_message).build())
}

/// `POST /submessage`.
async fn add_submessage(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let message_id = params.int("message_id")?.ok_or_else(|| ApiError::missing_argument("message_id"))?;
    let msg = AddSubmessage {
        user_id: auth.user.user_id,
        message_id: MessageId(message_id),
        msg_type: params.required_str("msg_type")?,
        content: params.required_str("content")?,
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `GET /messages/{message_id}/read_receipts`.
async fn read_receipts(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = GetReadReceipts { user_id: auth.user.user_id, message_id: MessageId(path_id(&path)) };
    let user_ids = auth.realm.read(msg).await??;
    let mut data = Map::new();
    data.insert("user_ids".to_owned(), json!(user_ids));
    Ok(params.success(data))
}

/// `POST /messages/{message_id}/report`.
async fn report_message(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = ReportMessage {
        user_id: auth.user.user_id,
        message_id: MessageId(path_id(&path)),
        report_type: params.required_str("report_type")?,
        description: params.str("description").unwrap_or_default(),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}
