//! Incoming webhooks (`/api/v1/external/...`): a third party posts its JSON payload with a
//! user's API key (`api_key` in the query string, or HTTP Basic credentials), and the
//! integration's messages are posted as that user (an incoming-webhook bot as a rule).
//! `stream` and `topic` in the query string choose where (Zulip's
//! `check_send_webhook_message`).

use actix_web::http::{header, Method};
use actix_web::{web, HttpMessage, HttpRequest, Scope};
use agora_actors::auth::KeyRejection;
use agora_actors::realm::bots::webhooks::incoming::{alertmanager_messages, json_message, PostWebhookMessages};
use agora_actors::ApiError;
use serde_json::Value;

use super::Endpoint;
use crate::http::auth::{basic_credentials, Refusal, Site};
use crate::http::body::{self, BodyRules};
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// The incoming webhook endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/external/json").public(Method::POST, json_webhook).build())
        .service(Endpoint::new("/external/alertmanager").public(Method::POST, alertmanager_webhook).build())
}

/// A webhook request: its parameters (query string), its user and its JSON payload.
struct Hook {
    params: Params,
    site: Site,
    user: agora_actors::ids::UserId,
    payload: Value,
}

/// Authenticates a webhook request and reads its payload, with Zulip's errors.
async fn hook(req: &HttpRequest, site: Site, payload: web::Payload, state: &AppState) -> Result<Hook, HttpError> {
    let params = Params::from_parts(req.query_string(), Vec::new());
    let realm = site.realm()?;
    let auth = realm.auth();
    let entry = match params.str("api_key") {
        Some(key) => auth.check_webhook_key(&key)?,
        None => match req.headers().get(header::AUTHORIZATION) {
            // As every Basic-authenticated route: Zulip's 401 `UNAUTHORIZED` refusals, a
            // key of another organization explained.
            Some(h) => {
                let (email, key) = basic_credentials(Some(h.as_bytes()))?;
                match auth.check_webhook_basic(&email, &key) {
                    Ok(entry) => entry,
                    Err(KeyRejection::Refused(err)) => return Err(err.into()),
                    Err(KeyRejection::Unknown) => {
                        let refusal = Refusal::UnknownKey { realm_id: realm.id, email, key };
                        return Err(refusal.explain(state).await.into());
                    }
                }
            }
            None => return Err(ApiError::missing_argument("api_key").into()),
        },
    };
    let rules = req.extensions().get::<BodyRules>().copied().unwrap_or(state.limits.params_body);
    let bytes = body::read_all(payload.into_inner(), &rules).await?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| ApiError::bad_request("Malformed JSON"))?;
    Ok(Hook { params, user: entry.user_id, site, payload })
}

/// Posts the messages where the request says.
async fn post(hook: Hook, client: &str, messages: Vec<(String, String)>) -> Result<Success, HttpError> {
    let msg = PostWebhookMessages {
        sender: hook.user,
        client: format!("Zulip{client}Webhook"),
        stream: hook.params.str("stream"),
        topic: hook.params.str("topic"),
        messages,
    };
    hook.site.realm()?.addr.send(msg).await??;
    Ok(hook.params.ok())
}

/// `POST /api/v1/external/json`: Zulip's generic JSON integration.
pub async fn json_webhook(
    req: HttpRequest,
    site: Site,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let hook = hook(&req, site, payload, &state).await?;
    if !hook.payload.is_object() {
        return Err(ApiError::bad_request("Malformed JSON").into());
    }
    let message = json_message(&hook.payload);
    post(hook, "JSON", vec![message]).await
}

/// `POST /api/v1/external/alertmanager`: Prometheus Alertmanager (`name` and `desc` name
/// the label or annotation that gives each alert's topic and description).
pub async fn alertmanager_webhook(
    req: HttpRequest,
    site: Site,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Success, HttpError> {
    let hook = hook(&req, site, payload, &state).await?;
    let name = hook.params.str("name").unwrap_or_else(|| "instance".to_owned());
    let desc = hook.params.str("desc").unwrap_or_else(|| "alertname".to_owned());
    let messages = alertmanager_messages(&hook.payload, &name, &desc)?;
    post(hook, "Alertmanager", messages).await
}
