//! Bots (`/bots`, `/bots/{bot_id}`, `/bots/{bot_id}/api_key`, `/bots/{bot_id}/api_key/regenerate`) and bot storage
//! (`/bot_storage`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::UserId;
use agora_actors::json_object;
use agora_actors::realm::bots::{
    BotRequest, BotUpdate, CreateBot, DeactivateBot, GetBotKey, ListBots, PutBotStorage, RegenerateBotKey,
    RemoveBotStorage, StorageGet, StoragePut, StorageRemove, UpdateBot,
};
use agora_actors::ApiError;
use serde_json::{json, Map, Value};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::guard::{Bots, Guarded};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The bot endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/bots").route(Method::GET, list_bots).route(Method::POST, create_bot).build())
        .service(
            Endpoint::new(r"/bots/{bot_id:\d+}")
                .route(Method::PATCH, update_bot)
                .route(Method::DELETE, deactivate_bot)
                .build(),
        )
        .service(Endpoint::new(r"/bots/{bot_id:\d+}/api_key").route(Method::GET, get_key).build())
        .service(Endpoint::new(r"/bots/{bot_id:\d+}/api_key/regenerate").route(Method::POST, regenerate_key).build())
        .service(
            Endpoint::new("/bot_storage")
                .route(Method::GET, get_storage)
                .route(Method::PUT, put_storage)
                .route(Method::DELETE, remove_storage)
                .build(),
        )
}

/// Zulip's `check_url` on a JSON-encoded parameter.
fn url(name: &str, raw: &str) -> Result<String, ApiError> {
    let Value::String(url) = decode::json(name, raw)? else {
        return Err(ApiError::bad_request(format!("{name} is not a string")));
    };
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    if !rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.chars().any(char::is_whitespace)) {
        return Err(ApiError::bad_request(format!("{name} is not a URL")));
    }
    Ok(url)
}

/// A JSON object of strings (Zulip's `check_dict(value_validator=check_string)`).
fn string_dict(name: &str, raw: &str) -> Result<Map<String, Value>, ApiError> {
    let map = decode::object(name, raw)?;
    for (key, value) in &map {
        if !value.is_string() {
            return Err(ApiError::bad_request(format!("{name}[\"{key}\"] is not a string")));
        }
    }
    Ok(map)
}

/// `POST /bots`.
pub async fn create_bot(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let request = BotRequest {
        full_name: params.required_str("full_name")?,
        short_name: params.required_str("short_name")?,
        bot_type: params.decode("bot_type", decode::integer)?.unwrap_or(1),
        payload_url: params.decode("payload_url", url)?.unwrap_or_default(),
        service_name: params.str("service_name"),
        config_data: params.decode("config_data", string_dict)?.unwrap_or_default(),
        interface_type: params.decode("interface_type", decode::integer)?.unwrap_or(1),
        default_sending_stream: params.str("default_sending_stream"),
        default_events_register_stream: params.str("default_events_register_stream"),
        default_all_public_streams: params.bool("default_all_public_streams")?,
    };
    let created = auth.realm.addr.send(CreateBot { acting: auth.user.user_id, request }).await??;
    Ok(params.success(json_object(json!({
        "user_id": created.user_id,
        "api_key": created.api_key,
        "avatar_url": created.avatar_url,
        "default_sending_stream": created.default_sending_stream,
        "default_events_register_stream": created.default_events_register_stream,
        "default_all_public_streams": created.default_all_public_streams,
    }))))
}

/// `GET /bots`.
pub async fn list_bots(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let bots = auth.realm.addr.send(ListBots { user: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "bots": bots }))))
}

/// `PATCH /bots/{bot_id}`.
pub async fn update_bot(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let update = BotUpdate {
        full_name: params.str("full_name"),
        short_name: params.str("short_name"),
        bot_owner_id: params.decode("bot_owner_id", decode::integer)?,
        config_data: params.decode("config_data", string_dict)?,
        service_payload_url: params.decode("service_payload_url", url)?,
        service_interface: params.decode("service_interface", decode::integer)?.unwrap_or(1),
        default_sending_stream: params.str("default_sending_stream"),
        default_events_register_stream: params.str("default_events_register_stream"),
        default_all_public_streams: params.bool("default_all_public_streams")?,
    };
    let role = params.decode("role", decode::integer)?;
    let msg = UpdateBot { acting: auth.user.user_id, bot: UserId(path_id(&path)), role, update };
    let reply = auth.realm.addr.send(msg).await??;
    Ok(params.success(reply))
}

/// `DELETE /bots/{bot_id}`.
pub async fn deactivate_bot(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(DeactivateBot { acting: auth.user.user_id, bot: UserId(path_id(&path)) }).await??;
    Ok(params.ok())
}

/// `GET /bots/{bot_id}/api_key`.
pub async fn get_key(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let api_key = auth.realm.addr.send(GetBotKey { acting: auth.user.user_id, bot: UserId(path_id(&path)) }).await??;
    Ok(params.success(json_object(json!({ "api_key": api_key }))))
}

/// `POST /bots/{bot_id}/api_key/regenerate`.
pub async fn regenerate_key(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = RegenerateBotKey { acting: auth.user.user_id, bot: UserId(path_id(&path)) };
    let api_key = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "api_key": api_key }))))
}

/// `GET /bot_storage`.
pub async fn get_storage(req: Guarded<Bots>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let keys = params.decode("keys", decode::string_list)?;
    let storage = auth.realm.read(StorageGet { user: auth.user.user_id, keys }).await??;
    Ok(params.success(json_object(json!({ "storage": storage }))))
}

/// `PUT /bot_storage`.
pub async fn put_storage(req: Guarded<Bots>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let storage = params.decode("storage", string_dict)?.ok_or_else(|| ApiError::missing_argument("storage"))?;
    let entries = storage.into_iter().map(|(k, v)| (k, v.as_str().unwrap_or_default().to_owned())).collect::<Vec<_>>();
    auth.realm.addr.send(PutBotStorage(StoragePut { user: auth.user.user_id, entries })).await??;
    Ok(params.ok())
}

/// `DELETE /bot_storage`.
pub async fn remove_storage(req: Guarded<Bots>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let keys = params.decode("keys", decode::string_list)?;
    auth.realm.addr.send(RemoveBotStorage(StorageRemove { user: auth.user.user_id, keys })).await??;
    Ok(params.ok())
}
